"""Replay pages rendered in worker processes.

Drawing a hand (its board as SVG, every ply's notes as HTML, the page
around them) is pure Python, and the server's one process holds one core
at a time: the GIL. `replay serve` therefore hands the drawing to a small
pool of processes, one per core, which send back the page's bytes; the
server keeps the database, the routing and the caches. Workers are
spawned, never forked: the server runs DuckDB's threads, and a forked
child would inherit their locks. A pool that breaks (a worker killed) is
not fatal: the page is drawn in the server process, as it is without a
pool (the tests and `create_app` by default).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import anyio.to_thread

from api.pages import draw_hand_page
from api.render import HandData

__all__ = ["RenderPool"]


def _ready() -> None:
    """A no-op task: submitted once per worker, to start them all at once."""


def _watch_parent(parent: int) -> None:
    """Worker start-up: leave when the server is gone (after a kill -9 the
    workers would otherwise wait on their task queue for ever)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="render-parent-watch", daemon=True).start()


class RenderPool:
    """``draw_hand_page`` in `workers` processes (0: in the calling process)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None
        if workers > 0:
            ctx = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(
                workers, mp_context=ctx, initializer=_watch_parent, initargs=(os.getpid(),)
            )
            # start every worker now, not on the first page
            for f in [self._pool.submit(_ready) for _ in range(workers)]:
                f.result(timeout=120)

    def page(self, hand: HandData, info: dict[str, Any], seats: list[dict[str, Any]], ply: int | None) -> bytes:
        """The hand's replay page (api.pages.draw_hand_page), waiting for it."""
        pool = self._pool
        if pool is not None:
            try:
                return pool.submit(draw_hand_page, hand, info, seats, ply).result(timeout=60)
            except BrokenProcessPool:
                self._broken(pool)
        return draw_hand_page(hand, info, seats, ply)

    async def page_async(
        self, hand: HandData, info: dict[str, Any], seats: list[dict[str, Any]], ply: int | None
    ) -> bytes:
        """`page` awaited on the event loop: no thread waits for the worker.
        Without a pool, the page is drawn on a thread, not on the loop."""
        pool = self._pool
        if pool is not None:
            try:
                drawn = asyncio.wrap_future(pool.submit(draw_hand_page, hand, info, seats, ply))
                return await asyncio.wait_for(drawn, 60)
            except BrokenProcessPool:
                self._broken(pool)
        return await anyio.to_thread.run_sync(draw_hand_page, hand, info, seats, ply)

    def _broken(self, pool: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._pool is pool:  # draw in-process from now on
                self._pool = None
                pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
