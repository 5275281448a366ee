"""`replay train-key PLAYER`: a player's own key for their training answers (`api.player_key`)."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from api.player_key import PLAYER_KEY_PATHS, player_key
from cli.errors import CommandError

__all__ = ["add_train_key_parser"]


def add_train_key_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "train-key",
        help="a player's own key for their training answers",
        description="Print the key with which PLAYER answers their training positions and puzzles "
        "without the server's token: an HMAC of the player id under the token, so the server's "
        "REPLAY_TOKEN must be set here as it is for `replay serve`. The same key every time; "
        "changing the token revokes every player's key.",
    )
    p.add_argument("player", help="the player id, as the store writes it")
    p.add_argument("--json", action="store_true", help="the key, its header and its writes as JSON")
    p.set_defaults(func=run_train_key)


def run_train_key(args: argparse.Namespace) -> int:
    token = os.environ.get("REPLAY_TOKEN")
    if not token:
        raise CommandError("set REPLAY_TOKEN to the server's write token: a player's key is derived from it", 2)
    key = player_key(token, args.player)
    if args.json:
        print(json.dumps({"player": args.player, "key": key, "header": f"Authorization: Bearer {key}",
                          "writes": sorted(PLAYER_KEY_PATHS)}))
    else:
        print(key)
    return 0
