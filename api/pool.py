"""Replay pages rendered in worker processes.

Drawing a hand (its board as SVG, every ply's notes as HTML) is pure Python, and
the server's one process holds one core at a time: the GIL. `replay serve`
therefore hands the drawing to a small pool of processes, one per core,
and keeps the database, the routing and the page templates. Workers are
spawned, never forked: the server runs DuckDB's threads, and a forked
child would inherit their locks. A pool that breaks (a worker killed) is
not fatal: the page is drawn in the server process, as it is without a
pool (the tests and `create_app` by default).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from api.render import HandData, hand_sections

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
    """``hand_sections`` in `workers` processes (0: in the calling process)."""

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

    def sections(self, hand: HandData) -> tuple[str, list[str]]:
        """The hand's board and every ply's HTML section (api.render.hand_sections)."""
        pool = self._pool
        if pool is not None:
            try:
                return pool.submit(hand_sections, hand).result(timeout=60)
            except BrokenProcessPool:
                self._broken(pool)
        return hand_sections(hand)

    def _broken(self, pool: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._pool is pool:  # draw in-process from now on
                self._pool = None
                pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
