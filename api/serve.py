"""`replay serve`: run the web app over the store, as the database's one owner.

The server opens the DuckDB file read-write and keeps it: `replay ingest`
run meanwhile cannot open it, so it leaves Parquet batches in the spool,
and the server loads them at start, every 2 seconds and after uploads.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from typing import Any

from replay.accel import native
from replay.store import StoreLocked, default_db_path, layout, open_store

#: Sampled deals a decision the server gives stored hands in the background (replay serve --deepen).
DEEPEN = 20


def add_serve_parser(subparsers: Any) -> None:
    """Add `serve` to an argparse subparsers object (sets `func=run_serve`)."""
    p = subparsers.add_parser(
        "serve",
        help="serve replays, player reports and findings over HTTP",
        description="Serve the web pages and JSON API over the store. Write endpoints "
        "(upload, delete) need REPLAY_TOKEN set in the environment.",
    )
    p.add_argument("--db", default=None, help="database file (default $REPLAY_DB or data/replay.duckdb)")
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
    p.set_defaults(func=run_serve)


def _quiet_gc() -> None:
    """Fewer, cheaper garbage collections in the server process.

    A full collection walks every object of the process (FastAPI, pydantic,
    polars, DuckDB and the caches) with the GIL held: measured under load it
    paused every request for up to 300 ms. What exists after start-up is
    moved out of the collector's sight (`gc.freeze`), and collections run
    less often.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 50, 50)


def run_serve(args: argparse.Namespace) -> int:
    """Start uvicorn; returns its exit status (2 if the database is held elsewhere)."""
    # the web stack (uvicorn, FastAPI, the reports' SciPy) takes seconds to
    # import: only a server pays for it, not every `replay` command's parser
    import uvicorn  # noqa: PLC0415

    from api.app import create_app  # noqa: PLC0415

    db = args.db or str(default_db_path())
    lay = layout(db)
    try:
        open_store(db).close()  # create or migrate now, and fail early if another process holds it
    except StoreLocked as exc:
        print(f"replay serve: {db} is open in another process: {exc}", file=sys.stderr)
        return 2
    workers = args.render_workers if args.render_workers is not None else (os.cpu_count() or 1)
    deepen = max(0, args.deepen) if native is not None else 0  # the pure-Python solver: seconds a hand
    app = create_app(db, spool_dir=lay.spool, load_every=args.load_every, render_workers=max(0, workers),
                     threads=max(1, args.threads), deepen=deepen)
    _quiet_gc()
    # A thread back from DuckDB (which runs without the GIL) waits for the
    # thread holding it to let go, up to the switch interval (5 ms by default),
    # and a match's replay makes five such reads: measured under 20 clients,
    # 1 ms cut the p95 of a match's first hand from about 200 to 140 ms.
    sys.setswitchinterval(0.001)
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"replay serve: http://{host}:{args.port}/  (database {db})", flush=True)
    if not os.environ.get("REPLAY_TOKEN"):
        print("replay serve: REPLAY_TOKEN is not set: uploads and deletes are refused", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
