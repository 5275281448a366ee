"""The web app: pages and their JSON twins over the DuckDB store.

`create_app(db_path, token=None)` (this module holds only it) builds a FastAPI app whose lifespan opens
the one DuckDB connection (read-write: the server owns the file) and, when
given a spool folder, loads ingest batches at start, every `load_every`
seconds and after each upload. Endpoints are plain `def`s (FastAPI runs
them in its thread pool; DuckDB releases the GIL) and each takes its own
cursor from the connection; the replay page alone is an async Starlette
route, which awaits its drawing by a render worker (api.pool).

Writes (POST, DELETE) need `Authorization: Bearer <REPLAY_TOKEN>`; the
guard runs before any body is read, and caps the body size (api.middleware).
The routes are one `APIRouter` per resource in `api.routes`; what they
share is `api.deps`.

Pages and their JSON twins:

    /                                  /api/summary
    /matches?player&table&profile&verdict&date_from&date_to&sort&order&page
                                       /api/matches (same filters, per_page)
    /matches/{match}                   /api/matches/{match}   (DELETE too)
    /matches/{match}/hands/{n}?ply=N&view=seatK
                                       /api/matches/{match}/hands/{n}?view=seatK
    /players?q&sort&order              /api/players
    /players/{player}?profile&date_from&date_to&partner
                                       /api/players/{player} (same filters)
    /findings?code&severity&match&sort&order
                                       /api/findings
    /leaderboard, /pair                api.insights (ratings)
    /upload                            POST /api/upload (multipart `file`)

Downloads (api.exports, docs/exports.md): /api/<list>.csv and .parquet for
matches, hands, moves, findings and players; /api/matches/{match}/log.jsonl.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio.to_thread
import duckdb
from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException as StarletteHTTPException

from api import exports, fairness, insights, schemas
from api.connection import Store
from api.deepen import Deepener
from api.errors import on_bad_request, on_http_error
from api.lru import Versioned
from api.middleware import MAX_UPLOAD, MULTIPART_SLACK, EmptyParams, WriteGuard
from api.pages import mark_flagged, warm
from api.pool import RenderPool
from api.routes import certificates, docs, findings, graded, home, matches, players, review, upload
from reports import derived

__all__ = ["create_app"]

HERE = Path(__file__).parent


def close_store(conn: Any, wait: float = 5.0) -> bool:
    """Close the store's connection at shutdown; whether it closed. A thread
    that outlived its stop (the background grader's, given two seconds) may
    still be opening a cursor from it, and DuckDB refuses to close a busy
    connection rather than wait: try again for `wait` seconds, then leave it
    (the write-ahead log is replayed when the store is next opened) rather
    than fail the shutdown.

    >>> class Busy:
    ...     tries = 0
    ...     def close(self):
    ...         self.tries += 1
    ...         if self.tries < 3:
    ...             raise duckdb.ResourceInUseException("connection is busy with another call")
    >>> c = Busy()
    >>> close_store(c, wait=2.0), c.tries
    (True, 3)
    """
    deadline = time.monotonic() + wait
    while True:
        try:
            conn.close()
            return True
        except duckdb.ResourceInUseException:
            if time.monotonic() >= deadline:
                logging.getLogger("replay.serve").warning("the store was still busy at shutdown: left unclosed")
                return False
            time.sleep(0.05)


def create_app(
    db_path: str | os.PathLike[str],
    token: str | None = None,
    *,
    spool_dir: str | os.PathLike[str] | None = None,
    load_every: float = 2.0,
    render_workers: int = 0,
    threads: int | None = None,
    deepen: int = 0,
    deepen_workers: int | None = None,
) -> FastAPI:
    """The app over the store at `db_path`. `token` defaults to $REPLAY_TOKEN.

    With `spool_dir`, batches that `replay ingest` leaves there (it cannot
    open a database the server holds) are loaded at start and every
    `load_every` seconds. With `render_workers`, replay pages are drawn in
    that many processes (api.pool); without, in this one. With `threads`, at
    most that many requests run their route at once (the rest wait their turn).
    With `deepen`, stored hands analysed with fewer sampled deals a decision
    get that many, in the background (api.deepen), in `deepen_workers`
    processes at the lowest priority (None: one per core).
    """

    derived.subscribe()  # the reports' tables follow the store's loads and deletes

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store = Store(db_path, spool_dir)
        app.state.store = store
        mark_flagged(insights.FlaggedPlayers(store))  # a flag badge beside every flagged player's name
        if threads:
            # the sync routes run on anyio's thread pool (40 threads by
            # default): a few threads keep the requests in line, first come
            # first served, where 20 threads at once would share the GIL and
            # each take the time of all of them
            anyio.to_thread.current_default_thread_limiter().total_tokens = threads
        app.state.render_pool = RenderPool(render_workers)
        warm()  # the templates, before the first request
        stop = threading.Event()
        timer: threading.Thread | None = None
        deepener = None
        if deepen > 0:
            deepener = app.state.deepener = Deepener(store, deepen, workers=deepen_workers)
        if store.spool_dir is not None:
            with contextlib.suppress(Exception):
                store.load()

            def tick() -> None:
                while not stop.wait(load_every):
                    with contextlib.suppress(Exception):  # a bad batch must not kill the loop
                        if store.load() and deepener is not None:
                            deepener.take_new()  # an ingest's matches before the backlog

            timer = threading.Thread(target=tick, name="spool-loader", daemon=True)
            timer.start()
        if deepener is not None:
            deepener.start()
        try:
            yield
        finally:
            stop.set()
            if deepener is not None:
                deepener.close()
            if timer is not None:
                timer.join(timeout=5)
            app.state.render_pool.close()
            # a line writer (api.review.LineBook) may be mid-write: it holds the load lock
            held = store.load_lock.acquire(timeout=5)
            try:
                close_store(store.conn)
            finally:
                if held:
                    store.load_lock.release()

    # the API docs (/docs, /redoc) from the scripts fastapi-offline ships: no CDN
    app = FastAPIOffline(
        title="Dominoes audit desk",
        summary="Replays, player reports and findings of validated table logs",
        description=schemas.DESCRIPTION,
        openapi_tags=schemas.TAGS,
        lifespan=lifespan,
        favicon_url="/static/favicon.svg",
    )
    secret = token if token is not None else os.environ.get("REPLAY_TOKEN") or None
    app.state.token = secret
    app.state.hand_cache = Versioned(512)
    app.state.bundle_cache = Versioned(64)  # the matches being stepped through now
    app.state.player_cache = Versioned(256)
    app.state.summary_cache = Versioned(1)
    app.add_middleware(WriteGuard, token=lambda: app.state.token, limit=MAX_UPLOAD + MULTIPART_SLACK)
    app.add_middleware(EmptyParams)
    app.add_exception_handler(RequestValidationError, on_bad_request)
    app.add_exception_handler(StarletteHTTPException, on_http_error)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    # the downloads first: /api/matches/{id}/log.jsonl before /api/matches/{id:path}
    app.include_router(exports.router)
    app.include_router(review.router)  # before players: /api/players/{id}/costliest
    for routes in (home, matches, players, findings, upload, certificates):
        app.include_router(routes.router)
    app.include_router(fairness.router)
    app.include_router(insights.router)
    app.include_router(docs.router)  # the glossary and docs/*.md as pages
    app.include_router(graded.router)  # /moves: the graded moves behind a page's counts
    return app
