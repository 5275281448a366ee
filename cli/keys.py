"""`replay keys`: the desk's Ed25519 signing key (`reports.certificate.keys`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from cli.errors import CommandError
from replay.store import default_db_path
from reports.certificate import keys

__all__ = ["add_keys_parser", "data_dir_of"]


def data_dir_of(db: str | None) -> Path:
    """The data folder: the folder of the store's file."""
    return Path(db or default_db_path()).parent


def add_keys_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "keys",
        help="the desk's signing key",
        description="The desk's Ed25519 key, which signs certificates. The private key is kept in "
        "the data folder (keys/desk_ed25519.pem, mode 0600) and never served; the public key is "
        "shown on /certificates and at /api/certificates/key.",
    )
    sub = p.add_subparsers(dest="keys_command", metavar="ACTION", required=True)
    init = sub.add_parser("init", help="make the key pair (once)")
    init.add_argument("--db", default=None, help="database file; the keys go in its folder")
    init.set_defaults(func=run_init)
    show = sub.add_parser("show", help="print the public key")
    show.add_argument("--db", default=None, help="database file; the keys are in its folder")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=run_show)


def run_init(args: argparse.Namespace) -> int:
    data = data_dir_of(args.db)
    try:
        pub = keys.init_keys(data)
    except keys.KeyExists as exc:
        raise CommandError(f"{exc}; it is never overwritten (move it away to make another)", 1) from exc
    private, public = keys.key_paths(data)
    sys.stdout.write(f"private key: {private} (mode 0600; keep it, never share it)\n"
                     f"public key:  {public}\nkey id: {pub.key_id}\n{pub.pem}")  # fmt: skip
    return 0


def run_show(args: argparse.Namespace) -> int:
    pub = keys.load_public(data_dir_of(args.db))
    if pub is None:
        raise CommandError("no desk key: run `replay keys init`", 1)
    sys.stdout.write(json.dumps(pub.to_dict(), indent=1) + "\n" if args.json else f"key id: {pub.key_id}\n{pub.pem}")
    return 0
