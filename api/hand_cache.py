"""The replay page and its JSON twin, drawn once and kept while their match is unchanged.

A hand is drawn from its match's bundle (`api.queries.match_bundle`), itself
kept (`bundle_cache`): stepping through a match reads the store once. Both
caches are `api.lru.Versioned`: a store load bumps the generation, and an
entry of an older one is kept if its match's version is unchanged. The page
and the twin are drawn by a render worker (`api.pool`) while the event loop
serves others. The caches keep strings and bytes only: millions of small
cached objects would make every full garbage collection a long pause for
all requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import time
from collections.abc import Awaitable, Callable
from typing import Any, cast

import anyio.to_thread

from api import queries as q
from api.connection import LazyCursor
from api.pages import flagged_now
from api.replay_model import HandData
from api.review import for_drawing, line_book

__all__ = ["NoSuchSeat", "cached_page", "cached_twin", "hand_parts", "json_key", "page_version", "stored_page",
           "twin_parts", "version_of", "view_of"]


def hand_parts(b: q.MatchBundle, match: str, hand: int, cur: Any = None
               ) -> tuple[HandData, dict[str, Any], list[dict[str, Any]]] | None:
    """What a hand's page or JSON twin is drawn from: the hand, its header, its
    seats; with a cursor, the hand as the solver replays it too (`review`:
    its principal lines, which the page does not draw)."""
    found = q.hand_of(b, match, hand)
    if found is None:
        return None
    data, info = found
    if cur is not None and data.analysis is not None:
        data = dataclasses.replace(data, review=q.hand_input(cur, b, match, hand))
    return data, info, [{"seat": s.seat, "player": s.player, "name": s.name, "bot": s.bot} for s in data.seats]


def twin_parts(state: Any, match: str, hand: int, key: Any, gen: int, lines: bool
               ) -> tuple[bytes | None, tuple[HandData, dict[str, Any], list[dict[str, Any]]] | None, Any]:
    """What the store says of a JSON twin not cached for this generation: the
    twin itself if its match is unchanged; else the parts it is drawn from
    (`hand_parts`; None if there is no such hand), with its principal lines
    when `lines` (stored, or worked out now and stored: api.review.LineBook),
    and the match's version if it was asked. Blocking: on a thread."""
    with LazyCursor(state.store) as cur:
        mv = version_of(cur, match)
        body = state.hand_cache.revalidate(key, gen, mv)
        if body is not None:
            return body, None, None
        known = state.hand_cache.get(key) is not None  # a stale twin: its version was asked
        b = state.bundle_cache.fetch(match, gen, mv, lambda: q.match_bundle(cur(), match))
        found = hand_parts(b, match, hand, cur() if lines else None) if b is not None else None
        if found is not None and lines:
            found = (for_drawing(line_book(state).attach(found[0], cur())), *found[1:])
        return None, found, mv() if known and found is not None else None


def _twin_at_hand(state: Any, b: q.MatchBundle, match: str, hand: int, lines: bool,
                  found: tuple[HandData, dict[str, Any], list[dict[str, Any]]] | None = None,
                  ) -> tuple[tuple[HandData, dict[str, Any], list[dict[str, Any]]] | None, bool]:
    """What `twin_parts` gives, from what this process holds alone: the
    match's bundle, the solver's replay of its hands, the hand's lines (in
    the line book's memory or its match's stored rows already read). (parts,
    or None if there is no such hand; True), or (None, False) if the store
    must be read or the lines searched. Not blocking. `found`: the hand's
    parts (`hand_parts`) if the caller has them."""
    found = found or hand_parts(b, match, hand)
    if found is None or not lines or found[0].analysis is None:
        return found, True
    if b.analysis and b.packed and not b.inputs:  # the replays not made yet (q.hand_input reads the store)
        return None, False
    data = line_book(state).known(dataclasses.replace(found[0], review=b.inputs.get(hand)))
    if data is None:
        return None, False
    return (for_drawing(data), *found[1:]), True


def version_of(cur: LazyCursor, match: str) -> Callable[[], Any]:
    """The match's version, asked of the store once (both caches may ask)."""
    return functools.cache(lambda: q.match_version(cur(), match))


def page_version(match_version: Callable[[], Any]) -> Callable[[], Any]:
    """A replay page's version: its match's, and who is flagged (a page marks
    its flagged players, and a new grade may flag one with no change to the
    match)."""
    return functools.cache(lambda: (match_version(), flagged_now()))


def stored_page(state: Any, match: str, key: Any, gen: int) -> tuple[bytes | None, q.MatchBundle | None, Any]:
    """What the store says of a page not cached for this generation: the page
    itself if its match is unchanged (and so are the flags), else the match
    (None if unknown) and the page's version if it was asked. Blocking: on a
    thread."""
    with LazyCursor(state.store) as cur:
        mv = version_of(cur, match)
        version = page_version(mv)
        page = state.hand_cache.revalidate(key, gen, version)
        if page is not None:
            return page, None, None
        known = state.hand_cache.get(key) is not None  # a stale page: its version was asked
        b = state.bundle_cache.fetch(match, gen, mv, lambda: q.match_bundle(cur(), match))
        return None, b, version() if known and b is not None else None


def json_key(match: str, hand: int, viewer: int | None) -> tuple[Any, ...]:
    return (match, hand, "json") if viewer is None else (match, hand, "json", viewer)


class NoSuchSeat(Exception):
    """A view of a seat the hand does not have."""


def view_of(raw: str | None) -> int | None:
    """The seat of `?view=seatN` (None for the full view: absent, empty or `all`);
    ValueError for anything else."""
    if raw in (None, "", "all"):
        return None
    assert raw is not None
    if raw.startswith("seat") and raw[4:].isascii() and raw[4:].isdigit() and len(raw) <= 6:
        return int(raw[4:])
    raise ValueError(f"view must be 'all' or 'seatN' (a seat number, e.g. seat2), not {raw!r}")


async def cached_page(state: Any, match: str, hand: int, ply: int | None, viewer: int | None = None) -> bytes | None:
    """The replay page's bytes (cached); None if there is no such hand
    (`NoSuchSeat` if the view is of a seat it does not have).

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
        page, b, ver = await anyio.to_thread.run_sync(stored_page, state, match, key, gen)
        if page is not None or b is None:
            return cast(bytes | None, page)
    found = hand_parts(b, match, hand)
    if found is None:
        return None
    if viewer is not None and viewer >= found[0].players:
        raise NoSuchSeat(f"hand {hand} of match {match!r} has seats 0 to {found[0].players - 1}, not seat {viewer}")
    _ask_grade(state, match, found[0])
    # the flags are the server's to know (a render worker has no store): the seats' own go with the hand
    flags = flagged_now() & {s["player"] for s in found[2]}
    tkey, parts, read = json_key(match, hand, None), None, None
    if _twin_ahead(state, match, hand, viewer, found[0]):
        parts, ok = _twin_at_hand(state, b, match, hand, True, found)
        if not ok:  # its lines and replays read while the page is drawn
            read = asyncio.ensure_future(anyio.to_thread.run_sync(twin_parts, state, match, hand, tkey, gen, True))
            read.add_done_callback(lambda t: t.cancelled() or t.exception())  # seen, should the page fail
    body = cast(bytes, await state.render_pool.page(*found, ply, viewer, flags))
    state.hand_cache.put(key, (gen, ver, body))
    if parts is not None or read is not None:
        # a job of its own, queued once the page is drawn: drawn in the page's
        # job, it made every page wait for its twin too (p95 of pages and
        # twins 190-310 ms against 120-130 at the same CPU, bench/api.py at 1M)
        _expect(state, tkey, gen, asyncio.ensure_future(_draw_twin(state, match, hand, None, tkey, gen, parts, read)))
    return body


def _ask_grade(state: Any, match: str, data: HandData) -> None:
    """A finished hand drawn without the grade on what each player could
    know: its match is graded before the rest of the store
    (api.deepen.Deepener.want), so that its match page, or this page
    drawn again, has it within seconds."""
    deepener = getattr(state, "deepener", None)
    if deepener is None or data.analysis is None or data.analysis.get("samples") or not deepener.is_alive():
        return
    deepener.want(match)


#: Seconds since a JSON twin was last asked for during which a whole view's
#: twin is drawn as soon as its page is.
TWINS_RECENT = 30.0


def _twin_ahead(state: Any, match: str, hand: int, viewer: int | None, data: HandData) -> bool:
    """Whether to draw the page's JSON twin now, before it is asked for: the
    page's script asks for it as soon as it shows a graded move (the whole
    view of a graded hand), and clients that run it are about (a twin was
    asked for within `TWINS_RECENT` seconds: pages fetched alone, by a link
    checker or a crawler, cost no twin). Drawn from the page's parts, it
    needs no second shaping of the hand; a twin of the match's first page
    reads its lines and replays on a thread meanwhile."""
    pool = getattr(state, "render_pool", None)
    if viewer is not None or data.analysis is None or not data.finished or pool is None or not pool.live:
        return False
    if time.monotonic() - getattr(state, "twins_asked", -TWINS_RECENT) >= TWINS_RECENT:
        return False
    key = json_key(match, hand, None)
    return state.hand_cache.get(key) is None and key not in _pending(state)


def _pending(state: Any) -> dict[tuple[Any, ...], tuple[int, asyncio.Task[bytes | None]]]:
    """The twins drawn after their pages, not back yet: (generation, task) by key."""
    got: dict[tuple[Any, ...], tuple[int, asyncio.Task[bytes | None]]] | None = getattr(state, "twins_pending", None)
    if got is None:
        got = state.twins_pending = {}
    return got


def _expect(state: Any, key: tuple[Any, ...], gen: int, later: asyncio.Task[bytes | None]) -> None:
    """Keep the twin `later` will give under `key`, and say it is on its way until then."""
    pending = _pending(state)
    pending[key] = (gen, later)

    def done(task: asyncio.Task[bytes | None]) -> None:  # a failure is seen here: its request draws it again
        if pending.get(key, (0, None))[1] is task:
            del pending[key]
        if not task.cancelled():
            task.exception()

    later.add_done_callback(done)


async def cached_twin(state: Any, match: str, hand: int, viewer: int | None = None) -> bytes | None:
    """The replay page's JSON twin (cached): every ply as `viewer` saw it
    and, in the whole view, the principal lines; None if there is no such
    hand (`NoSuchSeat` if the view is of a seat it does not have).

    The store is read on a thread (the match's bundle is kept: stepping
    through a match reads it once), the twin drawn by a render worker.
    Stepping through a match, what the twin is drawn from is at hand: no
    thread then (20 clients kept anyio's 4 threads queued, and a match's
    first page waited behind its neighbours' twins).
    """
    key = json_key(match, hand, viewer)
    gen = state.store.generation
    body = state.hand_cache.fresh(key, gen)
    if body is not None:
        return cast(bytes, body)
    state.twins_asked = time.monotonic()
    on_way = _pending(state).get(key)
    if on_way is not None and on_way[0] == gen:  # asked for as soon as its page was drawn
        # should that drawing have failed, the twin is drawn again below (the
        # pool handles a lost worker; a failure of the drawing itself recurs there)
        with contextlib.suppress(Exception):
            return await asyncio.shield(on_way[1])
    return await _draw_twin(state, match, hand, viewer, key, gen)


async def _draw_twin(state: Any, match: str, hand: int, viewer: int | None, key: tuple[Any, ...], gen: int,
                     parts: tuple[HandData, dict[str, Any], list[dict[str, Any]]] | None = None,
                     read: Awaitable[tuple[bytes | None, Any, Any]] | None = None) -> bytes | None:
    """The JSON twin drawn (and cached) now, not cached for `gen`, from its
    `parts` (`_twin_at_hand`) if the caller has them, or from what `read`
    (`twin_parts` on a thread, under way) gives; else from what the server
    holds if it can, else from the store on a thread."""
    ver = None
    if parts is None:
        if read is None:
            b = state.bundle_cache.fresh(match, gen) if state.hand_cache.get(key) is None else None
            parts, ok = _twin_at_hand(state, b, match, hand, viewer is None) if b is not None else (None, False)
            if not ok:
                read = anyio.to_thread.run_sync(twin_parts, state, match, hand, key, gen, viewer is None)
        if read is not None:
            body, parts, ver = await read
            if body is not None:
                return body
    if parts is None:
        return None
    if viewer is not None and viewer >= parts[0].players:
        raise NoSuchSeat(f"hand {hand} of match {match!r} has seats 0 to {parts[0].players - 1}, not seat {viewer}")
    body = cast(bytes, await state.render_pool.twin(*parts, viewer))
    state.hand_cache.put(key, (gen, ver, body))
    return body
