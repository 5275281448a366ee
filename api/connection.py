"""The server's store: its one DuckDB connection, the spool it loads, and the
generation every cache is keyed by; a cursor opened only when needed."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import duckdb

from replay import ingest
from replay.store import layout, load_spool, open_store, pending_batches

__all__ = ["Cursor", "LazyCursor", "Store"]

Cursor = duckdb.DuckDBPyConnection


class Store:
    """The DuckDB connection, the spool loader and the generation counter."""

    def __init__(self, db_path: str | os.PathLike[str], spool_dir: str | os.PathLike[str] | None) -> None:
        self.db_path = str(db_path)
        self.spool_dir = Path(spool_dir) if spool_dir else None
        self.conn = _open(self.db_path)
        self.generation = 0
        self.quiet: int | None = None  # the generation the last load found nothing to do at
        self.load_lock = threading.RLock()
        self.gen_lock = threading.Lock()

    def cursor(self) -> Cursor:
        return self.conn.cursor()

    def bump(self) -> None:
        """The store changed: every cached page keyed by the old generation is stale."""
        with self.gen_lock:
            self.generation += 1

    def load(self, *, force: bool = False) -> int:
        """Load pending spool batches; returns how many loaded (0 without a spool).

        A load with nothing in the spool still brings the kept reports,
        ratings and insights up to date (another writer of this process,
        the background grader or a delete, may have made them stale): a few
        queries, some 60 ms at a million hands. So, unless `force`d, it is
        skipped while the spool is empty and the store has not changed
        (its generation) since a load last found nothing to do.
        """
        spool = self.spool_dir
        if spool is None and force:
            spool = layout(self.db_path).spool
        if spool is None:
            return 0
        with self.load_lock:  # the store's owner loads what ingest wrote
            if not force and self.quiet == self.generation and not pending_batches(spool):
                return 0
            seen = self.generation  # a change made while this load runs is seen by the next
            cur = self.conn.cursor()
            try:
                n = int(load_spool(cur, spool))
            finally:
                cur.close()
            if n:
                self.bump()
            else:
                self.quiet = seen
        return n


def _ingest_memory() -> str | None:
    """The memory limit `replay.ingest.ingest` opens the database with.

    DuckDB hands a second same-process connection to a file only if its
    config matches the first one's, so the server opens the store exactly as
    ingest does, and an upload is ingested in-process through the same
    database instance.
    """
    return ingest.MEMORY_LIMIT


def _open(db_path: str) -> Cursor:
    return open_store(db_path, memory_limit=_ingest_memory())


class LazyCursor:
    """A cursor opened on first use and closed at the end: a page served from
    the cache needs none (a route's cursor dependency costs every request)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.cur: Cursor | None = None

    def __call__(self) -> Cursor:
        if self.cur is None:
            self.cur = self.store.cursor()
        return self.cur

    def __enter__(self) -> LazyCursor:
        return self

    def __exit__(self, *_: object) -> None:
        if self.cur is not None:
            self.cur.close()
