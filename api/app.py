"""The web app: pages and their JSON twins over the DuckDB store.

`create_app(db_path, token=None)` builds a FastAPI app whose lifespan opens
the one DuckDB connection (read-write: the server owns the file) and, when
given a spool folder, loads ingest batches at start, every `load_every`
seconds and after each upload. Endpoints are plain `def`s (FastAPI runs
them in its thread pool; DuckDB releases the GIL) and each takes its own
cursor from the connection; the replay page alone is an async Starlette
route, which awaits its drawing by a render worker (api.pool).

Writes (POST, DELETE) need `Authorization: Bearer <REPLAY_TOKEN>`; the
guard runs before any body is read, and caps the body size.

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
import datetime as dt
import functools
import gzip
import hashlib
import hmac
import os
import re
import tempfile
import threading
import time
import zlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Annotated, Any, Literal, cast

import anyio.to_thread
import duckdb
import orjson
from fastapi import Depends, FastAPI, File, HTTPException, Query, Request, UploadFile
from fastapi import Path as PathParam
from fastapi.exception_handlers import http_exception_handler, request_validation_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline
from markupsafe import Markup
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api import exports, fairness, insights
from api import queries as q
from api.charts import cumulative_svg, trend_svg
from api.hand_page import hand_json
from api.lru import LRU
from api.pages import render, u, warm
from api.pool import RenderPool
from api.replay_model import HandData
from reports.player import ReportFilters, kept_report, player_report

HERE = Path(__file__).parent
MAX_UPLOAD = 20 * 1024 * 1024  # raw bytes of one uploaded file
MAX_INFLATED = 200 * 1024 * 1024  # what a .jsonl.gz may expand to (gzip bombs)
_MULTIPART_SLACK = 64 * 1024
TOKEN_HELP = (
    "write endpoints are disabled: no token is set. Start the server with the "
    "environment variable REPLAY_TOKEN=<a long random secret> and send "
    "'Authorization: Bearer <that secret>' with every POST and DELETE."
)

Cursor = duckdb.DuckDBPyConnection


# --- write guard: auth before the body is read, and a body size cap ----------------


class _TooBig(Exception):
    pass


class WriteGuard:
    """Pure ASGI middleware for POST/PUT/PATCH/DELETE: bearer token, then a body cap."""

    def __init__(self, app: ASGIApp, token: Callable[[], str | None], limit: int) -> None:
        self.app = app
        self.token = token
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        expected = self.token()
        if not expected:
            await _send_json(send, 403, {"detail": TOKEN_HELP})
            return
        headers = dict(scope["headers"])
        auth = headers.get(b"authorization", b"").decode("latin-1")
        scheme, _, given = auth.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), expected.encode()):
            await _send_json(
                send, 401, {"detail": "send 'Authorization: Bearer <REPLAY_TOKEN>'"},
                extra=[(b"www-authenticate", b"Bearer")],
            )
            return
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.limit:
            await _send_json(send, 413, {"detail": _too_big_msg(self.limit)})
            return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.limit:
                    raise _TooBig
            return msg

        async def watch(msg: Message) -> None:
            nonlocal started
            if msg["type"] == "http.response.start":
                started = True
            await send(msg)

        try:
            await self.app(scope, counted, watch)
        except _TooBig:
            if not started:
                await _send_json(send, 413, {"detail": _too_big_msg(self.limit)})


def _too_big_msg(limit: int) -> str:
    return f"upload too large: at most {MAX_UPLOAD // (1024 * 1024)} MB per file (body limit {limit} bytes)"


async def _send_json(send: Send, status: int, body: dict[str, Any], extra: list[tuple[bytes, bytes]] | None = None) -> None:
    data = orjson.dumps(body)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + (extra or [])})
    await send({"type": "http.response.body", "body": data})


# --- empty query fields: a filter form's "any" -----------------------------------------


class EmptyParams:
    """Pure ASGI middleware: a query parameter with an empty value is no parameter.

    A filter form sends every field, the empty ones too (``?verdict=&date_from=``);
    empty means "any" on every page and JSON twin alike, so those are dropped
    before the route reads its parameters. A query without one is untouched
    (three byte searches on the replay page's path).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            qs: bytes = scope.get("query_string", b"")
            if qs and (b"=&" in qs or qs.endswith(b"=") or b"&&" in qs):
                kept = [p for p in qs.split(b"&") if p and not p.endswith(b"=")]
                scope = {**scope, "query_string": b"&".join(kept)}
        await self.app(scope, receive, send)


def _is_page(request: Request) -> bool:
    """A web page (HTML), not the JSON API or its docs."""
    path = request.url.path
    return not (path.startswith("/api/") or path.startswith("/static") or path in (
        "/openapi.json", "/docs", "/redoc", "/docs/oauth2-redirect"))


def _field_errors(exc: RequestValidationError) -> str:
    """The validation errors as one sentence: field, what is wrong, the value sent."""
    parts = []
    for err in exc.errors():
        loc = [str(x) for x in err.get("loc", ()) if x not in ("query", "path", "body")]
        given = err.get("input")
        shown = f" (got {given!r})" if isinstance(given, str | int | float) else ""
        parts.append(f"{'.'.join(loc) or 'request'}: {err.get('msg', 'invalid')}{shown}")
    return "; ".join(parts)


async def _on_bad_request(request: Request, exc: Exception) -> Response:
    """A bad parameter on a page gets the HTML error page, on the API the JSON 422."""
    assert isinstance(exc, RequestValidationError)
    if _is_page(request):
        return page("error.html", status=422, title="Bad request", back=request.url.path,
                    message=f"This page cannot show that: {_field_errors(exc)}.")
    return await request_validation_exception_handler(request, exc)


async def _on_http_error(request: Request, exc: Exception) -> Response:
    """An error of a page (not found, a bad date) as the HTML error page; JSON for the API."""
    assert isinstance(exc, StarletteHTTPException)
    if _is_page(request) and exc.status_code >= 400 and request.method in ("GET", "HEAD"):
        titles = {404: "Not found", 405: "Method not allowed", 422: "Bad request"}
        message = str(exc.detail)
        if exc.status_code == 404 and message == "Not Found":  # no route at all
            message = f"There is no page at {request.url.path}."
        return page("error.html", status=exc.status_code, title=titles.get(exc.status_code, "Error"),
                    message=message, back=request.url.path if exc.status_code == 422 else None)
    return await http_exception_handler(request, exc)


# --- the store: one connection, spool loading ----------------------------------------


class Store:
    """The DuckDB connection, the spool loader and the generation counter."""

    def __init__(self, db_path: str | os.PathLike[str], spool_dir: str | os.PathLike[str] | None) -> None:
        self.db_path = str(db_path)
        self.spool_dir = Path(spool_dir) if spool_dir else None
        self.conn = _open(self.db_path)
        self.generation = 0
        self.load_lock = threading.RLock()
        self.gen_lock = threading.Lock()

    def cursor(self) -> Cursor:
        return self.conn.cursor()

    def bump(self) -> None:
        """The store changed: every cached page keyed by the old generation is stale."""
        with self.gen_lock:
            self.generation += 1

    def load(self, *, force: bool = False) -> int:
        """Load pending spool batches; returns how many loaded (0 without a spool)."""
        spool = self.spool_dir
        if spool is None and force:
            from replay.store import layout

            spool = layout(self.db_path).spool
        if spool is None:
            return 0
        from replay.store import load_spool  # the store's owner loads what ingest wrote

        with self.load_lock:
            cur = self.conn.cursor()
            try:
                n = int(load_spool(cur, spool))
            finally:
                cur.close()
            if n:
                self.bump()
        return n


def _ingest_memory() -> str | None:
    """The memory limit `replay.ingest.ingest` opens the database with.

    DuckDB hands a second same-process connection to a file only if its
    config matches the first one's, so the server opens the store exactly as
    ingest does, and an upload is ingested in-process through the same
    database instance.
    """
    from replay import ingest

    return getattr(ingest, "_MEMORY", None)


def _open(db_path: str) -> Cursor:
    from replay.store import open_store

    return open_store(db_path, memory_limit=_ingest_memory())


# --- app ---------------------------------------------------------------------------


def create_app(
    db_path: str | os.PathLike[str],
    token: str | None = None,
    *,
    spool_dir: str | os.PathLike[str] | None = None,
    load_every: float = 2.0,
    render_workers: int = 0,
    threads: int | None = None,
    deepen: int = 0,
) -> FastAPI:
    """The app over the store at `db_path`. `token` defaults to $REPLAY_TOKEN.

    With `spool_dir`, batches that `replay ingest` leaves there (it cannot
    open a database the server holds) are loaded at start and every
    `load_every` seconds. With `render_workers`, replay pages are drawn in
    that many processes (api.pool); without, in this one. With `threads`, at
    most that many requests run their route at once (the rest wait their turn).
    With `deepen`, stored hands analysed with fewer sampled deals a decision
    get that many, in the background (api.deepen).
    """

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store = Store(db_path, spool_dir)
        app.state.store = store
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
        if store.spool_dir is not None:
            with contextlib.suppress(Exception):
                store.load()

            def tick() -> None:
                while not stop.wait(load_every):
                    with contextlib.suppress(Exception):  # a bad batch must not kill the loop
                        store.load()

            timer = threading.Thread(target=tick, name="spool-loader", daemon=True)
            timer.start()
        deepener = None
        if deepen > 0:
            from api.deepen import Deepener

            deepener = app.state.deepener = Deepener(store, deepen)
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
            store.conn.close()

    # the API docs (/docs, /redoc) from the scripts fastapi-offline ships: no CDN
    app = FastAPIOffline(
        title="Dominoes audit desk",
        summary="Replays, player reports and findings of validated table logs",
        lifespan=lifespan,
        favicon_url="/static/favicon.svg",
    )
    secret = token if token is not None else os.environ.get("REPLAY_TOKEN") or None
    app.state.token = secret
    app.state.hand_cache = Versioned(512)
    app.state.bundle_cache = Versioned(64)  # the matches being stepped through now
    app.state.player_cache = Versioned(256)
    app.state.summary_cache = Versioned(1)
    app.add_middleware(WriteGuard, token=lambda: app.state.token, limit=MAX_UPLOAD + _MULTIPART_SLACK)
    app.add_middleware(EmptyParams)
    app.add_exception_handler(RequestValidationError, _on_bad_request)
    app.add_exception_handler(StarletteHTTPException, _on_http_error)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    # the downloads first: /api/matches/{id}/log.jsonl before /api/matches/{id:path}
    app.include_router(exports.router)
    _routes(app)
    app.include_router(fairness.router)
    app.include_router(insights.router)
    return app


# --- helpers for the routes ---------------------------------------------------------


async def cursor(request: Request) -> AsyncIterator[Cursor]:
    """One cursor per request, closed after it.

    Async on purpose: opening a cursor is a quick call, and a sync generator
    dependency would cost two thread-pool hops per request.
    """
    cur = request.app.state.store.cursor()
    try:
        yield cur
    finally:
        cur.close()


Cur = Annotated[Cursor, Depends(cursor)]

def page(name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
    return HTMLResponse(render(name, **ctx), status_code=status)


def not_found(what: str) -> HTMLResponse:
    return page("error.html", status=404, title="Not found", message=what)


def _json(data: Any) -> Response:
    return Response(orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS), media_type="application/json")


Verdict = Literal["valid", "invalid", "unreadable"]
Severity = Literal["error", "warning"]
PageNo = Annotated[int, Query(alias="page", ge=1, le=100_000)]
MAX_HAND, MAX_PLY = 1_000_000, 10_000
HandNo = Annotated[int, PathParam(ge=0, le=MAX_HAND)]
Text = Annotated[str | None, Query(max_length=200)]


class Versioned(LRU):
    """An LRU whose entries stay valid across store generations while the data
    they were made from is unchanged.

    A spool load (every 2 s while an ingest runs) bumps the generation; an
    entry made at an older generation is checked with a cheap version query
    (the batch that stored the match, or a digest over a player's matches)
    before it is recomputed.
    """

    def fresh(self, key: Any, gen: int) -> Any:
        """The value kept under `key` for generation `gen`, else None."""
        got = self.get(key)
        return got[2] if got is not None and got[0] == gen else None

    def revalidate(self, key: Any, gen: int, version: Callable[[], Any]) -> Any:
        """The value of an entry from an older generation whose data's version
        is unchanged (stamped `gen` now), else None."""
        got = self.get(key)
        if got is None or got[0] == gen:
            return None if got is None else got[2]
        ver = version()
        if ver is not None and got[1] == ver:
            self.put(key, (gen, ver, got[2]))
            return got[2]
        return None

    def fetch(self, key: Any, gen: int, version: Callable[[], Any], make: Callable[[], Any]) -> Any:
        """The value under `key`, made by `make()` unless kept and still true.

        A first visit skips the version query; the entry is then checked
        (and its version learnt) at the first generation change.
        """
        got = self.get(key)
        if got is not None and got[0] == gen:
            return got[2]
        ver = version() if got is not None else None
        if got is not None:
            if ver is None:  # gone from the store
                return None
            if got[1] == ver:
                self.put(key, (gen, ver, got[2]))
                return got[2]
        value = make()
        if value is not None:
            self.put(key, (gen, ver, value))
        return value


class _LazyCursor:
    """A cursor opened on first use and closed at the end: a page served from
    the cache needs none (a route's cursor dependency costs every request)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.cur: Cursor | None = None

    def __call__(self) -> Cursor:
        if self.cur is None:
            self.cur = self.store.cursor()
        return self.cur

    def __enter__(self) -> _LazyCursor:
        return self

    def __exit__(self, *_: object) -> None:
        if self.cur is not None:
            self.cur.close()


def _hand_parts(b: q.MatchBundle, match: str, hand: int) -> tuple[HandData, dict[str, Any], list[dict[str, Any]]] | None:
    """What a hand's page or JSON twin is drawn from: the hand, its header, its seats."""
    found = q.hand_of(b, match, hand)
    if found is None:
        return None
    data, info = found
    return data, info, [{"seat": s.seat, "player": s.player, "name": s.name, "bot": s.bot} for s in data.seats]


def _hand_view(state: Any, match: str, hand: int, key: Any, draw: Callable[..., Any]) -> Any:
    """A hand drawn by `draw(data, info, seats)`, cached under `key`; None if unknown.

    Blocking (it may read the store): on a thread. The cache keeps strings
    and bytes only: millions of small cached objects would make every full
    garbage collection a long pause for all requests.
    """
    with _LazyCursor(state.store) as cur:
        gen = state.store.generation
        version = _version_of(cur, match)

        def make() -> Any:
            b = state.bundle_cache.fetch(match, gen, version, lambda: q.match_bundle(cur(), match))
            found = _hand_parts(b, match, hand) if b is not None else None
            return draw(*found) if found is not None else None

        return state.hand_cache.fetch(key, gen, version, make)


def _version_of(cur: _LazyCursor, match: str) -> Callable[[], Any]:
    """The match's version, asked of the store once (both caches may ask)."""
    return functools.cache(lambda: q.match_version(cur(), match))


def _stored_page(state: Any, match: str, key: Any, gen: int) -> tuple[bytes | None, q.MatchBundle | None, Any]:
    """What the store says of a page not cached for this generation: the page
    itself if its match is unchanged, else the match (None if unknown) and its
    version if it was asked. Blocking: on a thread."""
    with _LazyCursor(state.store) as cur:
        version = _version_of(cur, match)
        page = state.hand_cache.revalidate(key, gen, version)
        if page is not None:
            return page, None, None
        known = state.hand_cache.get(key) is not None  # a stale page: its version was asked
        b = state.bundle_cache.fetch(match, gen, version, lambda: q.match_bundle(cur(), match))
        return None, b, version() if known and b is not None else None


def _json_key(match: str, hand: int, viewer: int | None) -> tuple[Any, ...]:
    return (match, hand, "json") if viewer is None else (match, hand, "json", viewer)


class _NoSuchSeat(Exception):
    """A view of a seat the hand does not have."""


def _view_of(raw: str | None) -> int | None:
    """The seat of `?view=seatN` (None for the full view: absent, empty or `all`);
    ValueError for anything else."""
    if raw in (None, "", "all"):
        return None
    assert raw is not None
    if raw.startswith("seat") and raw[4:].isascii() and raw[4:].isdigit() and len(raw) <= 6:
        return int(raw[4:])
    raise ValueError(f"view must be 'all' or 'seatN' (a seat number, e.g. seat2), not {raw!r}")


async def _hand_page(state: Any, match: str, hand: int, ply: int | None, viewer: int | None = None) -> bytes | None:
    """The replay page's bytes (cached); None if there is no such hand
    (`_NoSuchSeat` if the view is of a seat it does not have).

    The page is drawn by a render worker while the event loop serves other
    requests. Stepping through a match, the next hand's match is cached: no
    thread and no store read then; else the store is read on a thread first.
    """
    key = (match, hand, "html", ply) if viewer is None else (match, hand, "html", ply, viewer)
    gen = state.store.generation
    page = state.hand_cache.fresh(key, gen)
    if page is not None:
        return cast(bytes, page)
    ver = None
    b = state.bundle_cache.fresh(match, gen) if state.hand_cache.get(key) is None else None
    if b is None:
        page, b, ver = await anyio.to_thread.run_sync(_stored_page, state, match, key, gen)
        if page is not None or b is None:
            return cast(bytes | None, page)
    found = _hand_parts(b, match, hand)
    if found is None:
        return None
    if viewer is not None and viewer >= found[0].players:
        raise _NoSuchSeat(f"hand {hand} of match {match!r} has seats 0 to {found[0].players - 1}, not seat {viewer}")
    body = await state.render_pool.page(*found, ply, viewer)
    state.hand_cache.put(key, (gen, ver, body))
    return body


def _summary(request: Request, cur: Cursor) -> dict[str, Any]:
    """The home page's counts and lists, worked out once per store generation
    (ten counts and three sorts over every match: 78 ms at 1M hands)."""
    state = request.app.state
    gen = state.store.generation
    got: dict[str, Any] | None = state.summary_cache.fresh("summary", gen)
    if got is None:
        got = q.summary(cur)
        state.summary_cache.put("summary", (gen, None, got))
    return got


def _player_view(request: Request, cur: Cursor, player: str,
                 filters: ReportFilters | None = None) -> dict[str, Any] | None:
    """The player's report: kept at load time, or worked out here when none is
    kept (yet), or kept by a store older than its cumulative points; with
    `filters`, worked out here (both cached until the player's matches change)."""
    state = request.app.state

    def make() -> dict[str, Any] | None:
        if filters:
            return player_report(cur, player, filters)
        kept = kept_report(cur, player)
        return kept if kept is not None and "cumulative" in kept else player_report(cur, player)

    report: dict[str, Any] | None = state.player_cache.fetch(
        (player, filters) if filters else player, state.store.generation,
        lambda: q.player_version(cur, player), make,
    )
    return report



_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def _check_gzip(path: Path) -> None:
    """Refuse a .gz that is broken or inflates past MAX_INFLATED (read in chunks)."""
    total = 0
    try:
        with gzip.open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                total += len(chunk)
                if total > MAX_INFLATED:
                    raise HTTPException(
                        413, f"decompressed size exceeds {MAX_INFLATED // (1024 * 1024)} MB"
                    )
    except (OSError, EOFError, zlib.error) as exc:
        raise HTTPException(400, f"not a readable gzip file: {exc}") from None


def _ingest_upload(request: Request, upload: UploadFile, cur: Cursor) -> dict[str, Any]:
    name = Path(upload.filename or "upload.jsonl").name
    if not (name.endswith(".jsonl") or name.endswith(".jsonl.gz")):
        raise HTTPException(415, "upload a .jsonl or .jsonl.gz table log")
    safe = _SAFE_NAME.sub("_", name)[-120:]
    store: Store = request.app.state.store
    with tempfile.TemporaryDirectory(prefix="replay-upload-") as tmp:
        path = Path(tmp) / safe
        size = 0
        digest = hashlib.sha256()
        with path.open("wb") as out:
            while chunk := upload.file.read(1 << 20):
                size += len(chunk)
                if size > MAX_UPLOAD:
                    raise HTTPException(413, _too_big_msg(MAX_UPLOAD))
                digest.update(chunk)
                out.write(chunk)
        with path.open("rb") as fh:
            gz = fh.read(2) == b"\x1f\x8b"
        if gz:  # by content, not by name: the reader sniffs the magic bytes too
            _check_gzip(path)
        t0 = time.perf_counter()
        known = _run_ingest(request, path, f"upload:{name}")
        took = time.perf_counter() - t0
    store.bump()
    sha = digest.hexdigest()
    got = q.file_counts(cur, sha)
    rows = q.matches_by_id(cur, got.pop("ids"))
    for r in rows:
        r["url"] = u("matches", r["match"])
    out = {
        "file": name,
        "size": size,
        "sha256": sha,
        "seconds": round(took, 3),
        "already_stored": known,
        "matches": rows,
        **got,
    }
    if not rows:  # junk, or a log of no match: say what was found in it
        c = got["counts"]
        why = f"; {got['problems'][0]['message']}" if got["problems"] else ""
        out["warning"] = (f"no match in {name}: {c['lines']:,} line{'s' if c['lines'] != 1 else ''}, "
                          f"{c['bad_lines']:,} bad{why}")
    return out


def _run_ingest(request: Request, path: Path, label: str) -> bool:
    """Validate and store one file in-process (its findings name it `label`);
    True if it was stored before."""
    from replay.ingest import ingest

    store: Store = request.app.state.store
    # ingest writes Parquet batches to the spool (and loads them if it can
    # open the database); either way the owner's load below picks them up
    with store.load_lock:
        try:
            summary = ingest([path], db=store.db_path, workers=0, labels={os.fspath(path): label})
        except duckdb.ConnectionException as exc:  # the store was opened another way
            raise HTTPException(503, f"the store cannot take an in-process ingest now: {exc}") from None
    store.load(force=True)
    return summary.files_known > 0


# --- routes ----------------------------------------------------------------------------


def _routes(app: FastAPI) -> None:  # noqa: C901 - one place that lists every route
    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def home(request: Request, cur: Cur) -> HTMLResponse:
        return page("home.html", nav="home", **_summary(request, cur))

    @app.get("/api/summary")
    def api_summary(request: Request, cur: Cur) -> Response:
        return _json(_summary(request, cur))

    # matches
    def _matches(cur: Cursor, player: str | None, table: str | None, profile: str | None,
                 verdict: str | None, date_from: dt.date | None, date_to: dt.date | None,
                 page_no: int, per_page: int, sort: str | None = None, order: str | None = None) -> dict[str, Any]:
        return q.list_matches(cur, player=player, table=table, profile=profile, verdict=verdict,
                              date_from=date_from, date_to=date_to, page=page_no, per_page=per_page,
                              sort=sort, order=order)

    @app.get("/matches", response_class=HTMLResponse, include_in_schema=False)
    def matches_page(
        cur: Cur, player: Text = None, table: Text = None, profile: Text = None,
        verdict: Verdict | None = None, date_from: dt.date | None = None,
        date_to: dt.date | None = None, page_no: PageNo = 1,
        sort: exports.MatchSort | None = None, order: exports.Order | None = None,
    ) -> HTMLResponse:
        data = _matches(cur, player, table, profile, verdict, date_from, date_to, page_no, 50, sort, order)
        filters = {"player": player, "table": table, "profile": profile, "verdict": verdict,
                   "date_from": date_from, "date_to": date_to}
        return page("matches.html", nav="matches", filters=filters, choices=q.filter_choices(cur),
                    sorting=q.sort_state(q.MATCH_SORTS, sort, order), **data)

    @app.get("/api/matches")
    def api_matches(
        cur: Cur, player: Text = None, table: Text = None, profile: Text = None,
        verdict: Verdict | None = None, date_from: dt.date | None = None,
        date_to: dt.date | None = None, page_no: PageNo = 1,
        per_page: Annotated[int, Query(ge=1, le=500)] = 50,
        sort: exports.MatchSort | None = None, order: exports.Order | None = None,
    ) -> Response:
        return _json(_matches(cur, player, table, profile, verdict, date_from, date_to, page_no, per_page,
                              sort, order))

    # hands (before the match routes: a match id may hold "/", so "{match_id:path}").
    # The replay page is a plain Starlette route: FastAPI's parameter solving
    # and its thread hop cost a millisecond of the server's one core per page,
    # as much as the rest of the request (bench/api.py; the page has no schema)
    async def hand_page(request: Request) -> Response:
        match_id, hand = request.path_params["match_id"], request.path_params["hand"]
        raw = request.query_params.get("ply") or None
        if raw is not None and not (raw.isascii() and raw.isdigit() and int(raw) <= MAX_PLY):
            return page("error.html", status=422, title="Bad request",
                        message=f"ply must be a whole number from 0 to {MAX_PLY}, not {raw!r}")
        try:
            viewer = _view_of(request.query_params.get("view"))
            body = (await _hand_page(request.app.state, match_id, hand, raw and int(raw), viewer)
                    if hand <= MAX_HAND else None)
        except (ValueError, _NoSuchSeat) as exc:
            return page("error.html", status=422, title="Bad request", message=str(exc))
        if body is None:
            return not_found(f"no hand {hand} in match {match_id!r}")
        return HTMLResponse(body)

    app.add_route("/matches/{match_id:path}/hands/{hand:int}", hand_page, methods=["GET"], include_in_schema=False)

    @app.get("/api/matches/{match_id:path}/hands/{hand}")
    def api_hand(request: Request, match_id: str, hand: HandNo,
                 view: Annotated[str | None, Query(
                     max_length=10, pattern=r"^(all|seat\d{1,2})?$",
                     description="`seatN`: only what seat N knew at each ply; `all` (the default): "
                                 "everything the hand allows")] = None) -> Response:
        viewer = _view_of(view)

        def draw(data: HandData, info: dict[str, Any], seats: list[dict[str, Any]]) -> bytes:
            if viewer is not None and viewer >= data.players:
                raise HTTPException(422, f"hand {hand} of match {match_id!r} has seats 0 to "
                                         f"{data.players - 1}, not seat {viewer}")
            return hand_json(data, info, seats, viewer)

        body = _hand_view(request.app.state, match_id, hand, _json_key(match_id, hand, viewer), draw)
        if body is None:
            raise HTTPException(404, f"no hand {hand} in match {match_id!r}")
        return Response(body, media_type="application/json")

    @app.get("/matches/{match_id:path}", response_class=HTMLResponse, include_in_schema=False)
    def match_page(cur: Cur, match_id: str) -> HTMLResponse:
        data = q.match_detail(cur, match_id)
        if data is None:
            return not_found(f"no match {match_id!r} in the store")
        return page("match.html", nav="matches", **data)

    @app.get("/api/matches/{match_id:path}")
    def api_match(cur: Cur, match_id: str) -> Response:
        data = q.match_detail(cur, match_id)
        if data is None:
            raise HTTPException(404, f"no match {match_id!r}")
        return _json(data)

    @app.delete("/api/matches/{match_id:path}")
    def api_delete_match(request: Request, cur: Cur, match_id: str) -> Response:
        if not q.delete_match(cur, match_id):
            raise HTTPException(404, f"no match {match_id!r}")
        from replay.store import keep_ratings

        keep_ratings(cur)  # the ratings after it are rated again without it
        request.app.state.store.bump()
        return _json({"deleted": match_id})

    # players
    @app.get("/players", response_class=HTMLResponse, include_in_schema=False)
    def players_page(cur: Cur, q_: Annotated[str | None, Query(alias="q", max_length=200)] = None,
                     page_no: PageNo = 1, sort: exports.PlayerSort | None = None,
                     order: exports.Order | None = None) -> HTMLResponse:
        return page("players.html", nav="players", q=q_, sorting=q.sort_state(q.PLAYER_SORTS, sort, order),
                    **q.list_players(cur, q=q_, page=page_no, sort=sort, order=order))

    @app.get("/api/players")
    def api_players(cur: Cur, q_: Annotated[str | None, Query(alias="q", max_length=200)] = None,
                    page_no: PageNo = 1, per_page: Annotated[int, Query(ge=1, le=1000)] = 100,
                    sort: exports.PlayerSort | None = None, order: exports.Order | None = None) -> Response:
        return _json(q.list_players(cur, q=q_, page=page_no, per_page=per_page, sort=sort, order=order))

    @app.get("/players/{player:path}", response_class=HTMLResponse, include_in_schema=False)
    def player_page(request: Request, cur: Cur, player: str, profile: Text = None, partner: Text = None,
                    date_from: Annotated[str | None, Query(max_length=40)] = None,
                    date_to: Annotated[str | None, Query(max_length=40)] = None) -> HTMLResponse:
        try:
            # a form's date: "" is no date (parsed as the fairness page parses its form)
            day = fairness._day
            chosen = ReportFilters(profile or None, day(date_from, "date_from"), day(date_to, "date_to"),
                                   partner or None)
        except HTTPException as exc:
            return page("error.html", status=422, title="Bad request", message=exc.detail)
        everything = _player_view(request, cur, player)
        if everything is None:
            return not_found(f"no player {player!r} in the store")
        rep = _player_view(request, cur, player, chosen) if chosen else everything
        assert rep is not None
        points = [(t["bucket"], t["points_per_hand"], t["win_rate"]) for t in rep["trend"]]
        return page("player.html", nav="players", r=rep, all=everything, filters=chosen.to_dict(),
                    trend=Markup(trend_svg(points)), cumulative=Markup(cumulative_svg(rep["cumulative"])),
                    **insights.player_extras(cur, player, request, chosen))

    @app.get("/api/players/{player:path}")
    def api_player(request: Request, cur: Cur, player: str,
                   profile: Annotated[str | None, Query(max_length=200, description="hands of this profile only")] = None,
                   partner: Annotated[str | None, Query(max_length=200, description="hands beside this partner (a player id) only")] = None,
                   date_from: Annotated[dt.date | None, Query(description="hands started on or after (UTC)")] = None,
                   date_to: Annotated[dt.date | None, Query(description="hands started on or before (UTC)")] = None,
                   ) -> Response:
        chosen = ReportFilters(profile or None, date_from, date_to, partner or None)
        if chosen and _player_view(request, cur, player) is None:
            raise HTTPException(404, f"no player {player!r}")
        rep = _player_view(request, cur, player, chosen or None)
        if rep is None:
            raise HTTPException(404, f"no player {player!r}")
        return _json({**rep, "ratings": insights.player_ratings(cur, player, request),
                      "skill": insights.player_skill(request, cur, player, chosen)})

    # findings
    @app.get("/findings", response_class=HTMLResponse, include_in_schema=False)
    def findings_page(cur: Cur, code: Text = None, severity: Severity | None = None,
                      match: Text = None, page_no: PageNo = 1, sort: exports.FindingSort | None = None,
                      order: exports.Order | None = None) -> HTMLResponse:
        data = q.list_findings(cur, code=code, severity=severity, match=match, page=page_no,
                               sort=sort, order=order)
        return page("findings.html", nav="findings", sorting=q.sort_state(q.FINDING_SORTS, sort, order),
                    filters={"code": code, "severity": severity, "match": match}, **data)

    @app.get("/api/findings")
    def api_findings(cur: Cur, code: Text = None, severity: Severity | None = None,
                     match: Text = None, page_no: PageNo = 1,
                     per_page: Annotated[int, Query(ge=1, le=1000)] = 100,
                     sort: exports.FindingSort | None = None, order: exports.Order | None = None) -> Response:
        return _json(q.list_findings(cur, code=code, severity=severity, match=match,
                                     page=page_no, per_page=per_page, sort=sort, order=order))

    # upload
    @app.get("/upload", response_class=HTMLResponse, include_in_schema=False)
    def upload_page(request: Request) -> HTMLResponse:
        return page("upload.html", nav="upload", token_set=bool(request.app.state.token),
                    max_mb=MAX_UPLOAD // (1024 * 1024), max_inflated_mb=MAX_INFLATED // (1024 * 1024))

    @app.post("/api/upload")
    def api_upload(request: Request, cur: Cur, file: Annotated[UploadFile, File()]) -> Response:
        return _json(_ingest_upload(request, file, cur))

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> RedirectResponse:
        return RedirectResponse("/static/favicon.svg")
