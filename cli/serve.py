"""`replay serve`: the web app over the store (`api.serve`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from api.serve import DEEPEN, serve
from replay.store import default_db_path

__all__ = ["add_serve_parser", "run_serve"]


def add_serve_parser(subparsers: Any) -> None:
    """Add `serve` to an argparse subparsers object (sets `func=run_serve`)."""
    p = subparsers.add_parser(
        "serve",
        help="serve replays, player reports and findings over HTTP",
        description="Serve the web pages and JSON API over the store. Write endpoints "
        "(upload, delete) need REPLAY_TOKEN set in the environment.",
    )
    p.add_argument("--db", default=None, help="database file (default $REPLAY_DB or data/replay.duckdb)")
    p.add_argument("--create", action="store_true",
                   help="start an empty store when the database file does not exist (without it: refused)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--load-every", type=float, default=2.0, help="seconds between spool loads (default 2)")
    p.add_argument(
        "--render-workers", type=int, default=None,
        help="processes that draw replay pages (default: one per core; 0 draws in the server process)",
    )  # fmt: skip
    p.add_argument(
        "--threads", type=int, default=4,
        help="requests that run their route at once; the rest wait in line (default 4)",
    )  # fmt: skip
    p.add_argument(
        "--deepen", type=int, default=DEEPEN, metavar="N",
        help=f"give stored hands N sampled deals a decision in the background, at the lowest "
        f"priority (default {DEEPEN}; 0: off; replay analyze --db does it in one go)",
    )  # fmt: skip
    p.add_argument(
        "--deepen-workers", type=int, default=None, metavar="N",
        help="processes that grade in the background, at the lowest priority (default: one per core)",
    )  # fmt: skip
    p.set_defaults(func=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    """`replay serve`: uvicorn's exit status (2 if the database is held elsewhere,
    or does not exist and `--create` was not given: a mistyped path must not
    serve an empty store as if it were the real one)."""
    db = Path(args.db or default_db_path())
    if not args.create and not db.exists():
        sys.stderr.write(f"replay serve: no store at {db}. `replay ingest LOGS --db {db}` makes one; "
                         "--create starts an empty one there.\n")
        return 2
    return serve(str(db), host=args.host, port=args.port, load_every=args.load_every,
                 render_workers=args.render_workers, threads=args.threads, deepen=args.deepen,
                 deepen_workers=args.deepen_workers)  # fmt: skip
