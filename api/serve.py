"""The web app run over the store, as the database's one owner (`replay serve`).

The server opens the DuckDB file read-write and keeps it: `replay ingest`
run meanwhile cannot open it, so it leaves Parquet batches in the spool,
and the server loads them at start, every 2 seconds and after uploads.
The command line, `replay serve`, is `cli.serve`.
"""

from __future__ import annotations

import gc
import os
import sys

from replay.accel import native
from replay.store import StoreLocked, default_db_path, layout, open_store

#: Sampled deals a decision the server gives stored hands in the background (replay serve --deepen).
DEEPEN = 20


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


def serve(
    db: str | None = None, *, host: str = "127.0.0.1", port: int = 8000, load_every: float = 2.0,
    render_workers: int | None = None, threads: int = 4, deepen: int = DEEPEN,
) -> int:
    """Start uvicorn; returns its exit status (2 if the database is held elsewhere).
    `render_workers` None: one per core."""
    # here, not at the top: `replay ingest` and the other commands build the
    # parser of `replay serve` too, and need neither uvicorn nor the app
    import uvicorn  # noqa: PLC0415

    from api.app import create_app  # noqa: PLC0415

    db = db or str(default_db_path())
    lay = layout(db)
    try:
        open_store(db).close()  # create or migrate now, and fail early if another process holds it
    except StoreLocked as exc:
        print(f"replay serve: {db} is open in another process: {exc}", file=sys.stderr)
        return 2
    workers = render_workers if render_workers is not None else (os.cpu_count() or 1)
    deepen = max(0, deepen) if native is not None else 0  # the pure-Python solver: seconds a hand
    app = create_app(db, spool_dir=lay.spool, load_every=load_every, render_workers=max(0, workers),
                     threads=max(1, threads), deepen=deepen)
    _quiet_gc()
    # A thread back from DuckDB (which runs without the GIL) waits for the
    # thread holding it to let go, up to the switch interval (5 ms by default),
    # and a match's replay makes five such reads: measured under 20 clients,
    # 1 ms cut the p95 of a match's first hand from about 200 to 140 ms.
    sys.setswitchinterval(0.001)
    shown = f"[{host}]" if ":" in host else host
    print(f"replay serve: http://{shown}:{port}/  (database {db})", flush=True)
    if not os.environ.get("REPLAY_TOKEN"):
        print("replay serve: REPLAY_TOKEN is not set: uploads and deletes are refused", flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")
    return 0
