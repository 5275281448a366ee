"""`replay certify` and `replay certificate prove|verify` (`reports.certificate`)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from cli.common import opened_store
from cli.errors import CommandError
from cli.keys import data_dir_of
from replay.ingest import ingest
from replay.store import default_db_path
from reports.certificate import keys, lines
from reports.certificate.build import Scope
from reports.certificate.issue import CERTIFICATES, issue, issued
from reports.certificate.verify import Verification, check_proof, parse_hand, prove, verify_folder

__all__ = ["add_certify_parsers"]

_LOCKED = (
    "{db} is locked by another process (the server or an ingest holds it for writing). Issue "
    "from the server's /certificates page, or stop it and retry."
)


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from None


def add_certify_parsers(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "certify",
        help="issue a signed fairness certificate for a period",
        description="Write the certificate of a period (HTML, PDF, JSON, the Merkle leaves and a "
        "signature) into --out and into the data folder's certificates/. Needs the desk's key "
        "(`replay keys init`). Exit 0 for PASS, 1 for WEAK, FAIL or NO DATA, 2 for a usage error.",
    )
    p.add_argument("--db", default=None, help="database file (default $REPLAY_DB or ./data/replay.duckdb)")
    p.add_argument("--from", dest="date_from", type=_date, metavar="DATE", help="first day (UTC)")
    p.add_argument("--to", dest="date_to", type=_date, metavar="DATE", help="last day (UTC, included)")
    p.add_argument("--month", metavar="YYYY-MM", help="a calendar month instead of --from/--to")
    p.add_argument("--table", help="one table only")
    p.add_argument("--profile", help="one profile only")
    p.add_argument("--out", type=Path, help="folder to write the certificate to (also filed in the data folder)")
    p.add_argument("--no-pdf", action="store_true", help="skip the PDF (WeasyPrint)")
    p.set_defaults(func=run_certify)

    c = subparsers.add_parser("certificate", help="prove a hand's inclusion, or verify a certificate")
    sub = c.add_subparsers(dest="certificate_command", metavar="ACTION", required=True)
    pr = sub.add_parser("prove", help="print the inclusion proof of one hand (MATCH/HAND)")
    pr.add_argument("hand", metavar="HAND_ID", help="MATCH/HAND, e.g. m-1000-0001/3")
    pr.add_argument("--cert", type=Path, help="certificate folder (default: the newest filed one holding the hand)")
    pr.add_argument("--db", default=None, help="database file (its folder holds the filed certificates)")
    pr.set_defaults(func=run_prove)
    v = sub.add_parser(
        "verify",
        help="check a certificate (signature, files, every figure) or an inclusion proof",
        description="Check DIR's signature and files; with --db recompute the Merkle root and every "
        "figure from the store; with --logs alone a store is built from the original logs "
        "and every leaf and figure recomputed from them; name what differs. With --proof FILE, check an inclusion proof (and, with --db or --logs, the "
        "hand's lines). Exit 0 when everything checks, 1 otherwise.",
    )
    v.add_argument("dir", nargs="?", type=Path, metavar="DIR", help="the certificate folder")
    v.add_argument("--db", default=None, help="recompute everything from this store")
    v.add_argument("--logs", nargs="+", metavar="PATH", help="recompute the leaves from these logs")
    v.add_argument("--key", type=Path, help="the desk's public key (PEM); default: the data folder's")
    v.add_argument("--proof", type=Path, help="an inclusion proof (the JSON `prove` prints)")
    v.add_argument("--json", action="store_true")
    v.set_defaults(func=run_verify)


def _scope(args: argparse.Namespace) -> Scope:
    if args.month:
        if args.date_from or args.date_to:
            raise CommandError("--month or --from/--to, not both", 2)
        try:
            return Scope.month(args.month, args.table, args.profile)
        except ValueError:
            raise CommandError(f"not a month (YYYY-MM): {args.month!r}", 2) from None
    if not (args.date_from and args.date_to):
        raise CommandError("give the period: --from DATE --to DATE, or --month YYYY-MM", 2)
    if args.date_to < args.date_from:
        raise CommandError("--to is before --from", 2)
    return Scope(args.date_from, args.date_to, args.table, args.profile)


def run_certify(args: argparse.Namespace) -> int:
    scope = _scope(args)
    db = args.db or default_db_path()
    data = data_dir_of(args.db)
    if not keys.key_paths(data)[0].exists():
        raise CommandError(f"no desk key in {data / 'keys'}: run `replay keys init` first", 2)
    with opened_store(db, read_only=True, locked=_LOCKED, unreadable="cannot read {db}") as conn:
        got = issue(conn, data, scope, args.out, pdf=not args.no_pdf)
    v = got.content["verdict"]
    sys.stdout.write(f"certificate {got.id}: {v['verdict']}{'' if v['complete'] else ' (data incomplete)'}\n"
                     f"merkle root {got.content['completeness']['merkle_root']}\nwritten to {got.folder}\n")  # fmt: skip
    return 0 if v["verdict"] == "PASS" else 1


def run_prove(args: argparse.Namespace) -> int:
    try:
        match, hand = parse_hand(args.hand)
    except ValueError as exc:
        raise CommandError(str(exc), 2) from exc
    data = data_dir_of(args.db)
    folders = [args.cert] if args.cert else [data / CERTIFICATES / r["id"] for r in issued(data)]
    for folder in folders:
        try:
            proof = prove(folder, match, hand)
        except KeyError:
            continue
        except OSError as exc:
            raise CommandError(f"{folder}: {exc}", 2) from exc
        sys.stdout.write(json.dumps(proof, indent=1) + "\n")
        return 0
    raise CommandError(f"no certificate holds hand {match}/{hand}", 1)


def _desk_key(args: argparse.Namespace) -> keys.PublicKey | None:
    if args.key:
        return keys.public_from_pem(args.key.read_bytes())
    return keys.load_public(data_dir_of(args.db))


def run_verify(args: argparse.Namespace) -> int:
    if args.proof:
        return _verify_proof(args)
    if args.dir is None:
        raise CommandError("give the certificate folder DIR (or --proof FILE)", 2)
    if not args.dir.is_dir():
        raise CommandError(f"{args.dir}: no such folder", 2)
    logs = [Path(p) for p in args.logs] if args.logs else None
    if args.db:
        with opened_store(args.db, read_only=True, locked=_LOCKED, unreadable="cannot read {db}") as conn:
            result = verify_folder(args.dir, desk_key=_desk_key(args), conn=conn,
                                   data_dir=data_dir_of(args.db), logs=logs)  # fmt: skip
    elif logs:
        result = _verify_from_logs(args, logs)
    else:
        result = verify_folder(args.dir, desk_key=_desk_key(args))
    if args.json:
        sys.stdout.write(json.dumps(result.to_dict(), indent=1) + "\n")
    else:
        for line in result.checked:
            sys.stdout.write(f"ok: {line}\n")
        for line in result.notes:
            sys.stdout.write(f"note: {line}\n")
        for line in result.problems:
            sys.stdout.write(f"DIFFERS: {line}\n")
        sys.stdout.write("certificate verified\n" if result.ok else "certificate NOT verified\n")
    return 0 if result.ok else 1


def _verify_from_logs(args: argparse.Namespace, logs: list[Path]) -> Verification:
    """Every figure recomputed from a store built from the logs alone, in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="replay-verify-") as tmp:
        db = Path(tmp) / "replay.duckdb"
        ingest([str(p) for p in logs], db=db, workers=0)
        with opened_store(db, read_only=True, locked=_LOCKED, unreadable="cannot read {db}") as conn:
            result = verify_folder(args.dir, desk_key=_desk_key(args), conn=conn, data_dir=Path(tmp), logs=logs)
    result.notes.append("figures recomputed from a store of these logs alone: those that depend on the rest "
                        "of the desk's store (seeds reused by matches outside them, lines of no match) may differ")  # fmt: skip
    return result


def _verify_proof(args: argparse.Namespace) -> int:
    try:
        proof = json.loads(args.proof.read_text())
    except (OSError, ValueError) as exc:
        raise CommandError(f"{args.proof}: {exc}", 2) from exc
    digest = None
    if args.logs:
        found = lines.digests(lines.log_paths(args.logs), [proof["match"]])
        row = found.filter((found["match"] == proof["match"]) & (found["hand"] == proof["hand"]))
        digest = row["digest"][0] if row.height else ""
    elif args.db:
        data = data_dir_of(args.db)
        with opened_store(args.db, read_only=True, locked=_LOCKED, unreadable="cannot read {db}") as conn:
            files, _ = lines.store_files(conn, data, [proof["match"]])
        found = lines.digests(files, [proof["match"]])
        row = found.filter((found["match"] == proof["match"]) & (found["hand"] == proof["hand"]))
        digest = row["digest"][0] if row.height else ""
    problems = check_proof(proof, digest)
    if args.dir:
        stated = json.loads((args.dir / "certificate.json").read_text())["completeness"]["merkle_root"]
        if stated != proof["merkle_root"]:
            problems.append(f"the proof's root is not certificate {args.dir.name}'s")
    for p in problems:
        sys.stdout.write(f"DIFFERS: {p}\n")
    sys.stdout.write("proof verified\n" if not problems else "proof NOT verified\n")
    return 0 if not problems else 1
