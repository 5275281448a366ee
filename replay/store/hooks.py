"""What the store calls after its commits, without knowing who listens.

The store is the one writer of its tables, but some tables are kept by
packages above it: the kept player reports, the ratings and the insights
(``reports``). They subscribe here, once, at the composition root (the
``replay`` command, the app factory: ``reports.derived.subscribe()``), and
the store calls them after each load or delete:

- :func:`on_players`: after the player tables changed (on the writer's
  connection, after the player derivation);
- :func:`on_matches`: after matches were added, replaced or deleted (on a
  cursor of its own, in a thread beside the player derivation: see
  :func:`matches_changed_beside`).

The loader also validates matches again when their lines are spread over
runs; how is the ingest's business (``replay.ingest.revalidate``), which it
hands in with :func:`use_revalidator`.

>>> subs = Subscribers()
>>> seen = []
>>> keep = subs.on_players(lambda conn: seen.append(conn) or 2)
>>> keep is subs.on_players(keep)  # subscribing twice is subscribing once
True
>>> subs.players_changed("conn"), seen
(2, ['conn'])
>>> subs.unsubscribe(keep)
>>> subs.players_changed("conn")
0
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import duckdb
import pyarrow as pa

__all__ = [
    "Keeper",
    "Revalidator",
    "Subscribers",
    "matches_changed",
    "matches_changed_beside",
    "on_matches",
    "on_players",
    "players_changed",
    "revalidate",
    "unsubscribe",
    "use_revalidator",
]

#: A subscriber: brings what it keeps up to date with the store; a count of
#: what it did (players, matches), or anything else.
Keeper = Callable[[Any], object]


class Revalidator(Protocol):
    """Validate stored matches again from all their kept files (match -> sha256s):
    the tables of their rows, as a batch would bring them."""

    def __call__(
        self, conn: duckdb.DuckDBPyConnection, data_dir: Path, wanted: Mapping[str, set[str]],
        batch: str, manifest: Mapping[str, Any],
    ) -> dict[str, pa.Table]: ...


class Subscribers:
    """A registry of subscribers (the store's is this module's functions)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._players: list[Keeper] = []
        self._matches: list[Keeper] = []

    def _add(self, to: list[Keeper], keep: Keeper) -> Keeper:
        with self._lock:
            if keep not in to:
                to.append(keep)
        return keep

    def on_players(self, keep: Keeper) -> Keeper:
        """Call ``keep(conn)`` after the player tables changed (usable as a decorator)."""
        return self._add(self._players, keep)

    def on_matches(self, keep: Keeper) -> Keeper:
        """Call ``keep(cursor)`` after matches changed, beside the player derivation."""
        return self._add(self._matches, keep)

    def unsubscribe(self, keep: Keeper) -> None:
        """Stop calling ``keep``."""
        with self._lock:
            for subs in (self._players, self._matches):
                if keep in subs:
                    subs.remove(keep)

    def _run(self, subs: list[Keeper], conn: Any) -> int:
        with self._lock:
            todo = list(subs)
        done = 0
        for keep in todo:
            got = keep(conn)
            done += got if isinstance(got, int) else 0
        return done

    def players_changed(self, conn: Any) -> int:
        """Run the :meth:`on_players` subscribers, in order; the sum of their counts."""
        return self._run(self._players, conn)

    def matches_changed(self, conn: Any) -> int:
        """Run the :meth:`on_matches` subscribers, in order; the sum of their counts."""
        return self._run(self._matches, conn)

    @contextlib.contextmanager
    def matches_changed_beside(self, conn: duckdb.DuckDBPyConnection) -> Iterator[None]:
        """:meth:`matches_changed` in a thread, on a cursor (and so a transaction)
        of its own, while the block runs; waited for (and its error raised) at
        the end. The ratings read only what a load committed (matches, seats,
        hands) and are Python on the GIL, the player tables and reports mostly
        DuckDB and polars off it: side by side they take the time of the longer."""
        with self._lock:
            idle = not self._matches
        if idle:
            yield
            return
        with conn.cursor() as cur, ThreadPoolExecutor(1, thread_name_prefix="replay-ratings") as pool:
            done = pool.submit(self.matches_changed, cur)
            yield
            done.result()


_store = Subscribers()
on_players = _store.on_players
on_matches = _store.on_matches
unsubscribe = _store.unsubscribe
players_changed = _store.players_changed
matches_changed = _store.matches_changed
matches_changed_beside = _store.matches_changed_beside

_lock = threading.Lock()
_revalidator: list[Revalidator] = []


def use_revalidator(revalidator: Revalidator) -> None:
    """Validate matches again with ``revalidator`` (the ingest's)."""
    with _lock:
        _revalidator[:] = [revalidator]


def revalidate(
    conn: duckdb.DuckDBPyConnection, data_dir: Path, wanted: Mapping[str, set[str]],
    batch: str, manifest: Mapping[str, Any],
) -> dict[str, pa.Table]:
    """The rows of ``wanted`` validated again, by the revalidator handed in."""
    with _lock:
        got = list(_revalidator)
    if not got:
        raise RuntimeError("the store must validate matches again, and no one handed it a "
                           "revalidator: import replay.ingest first")  # fmt: skip
    return got[0](conn, data_dir, wanted, batch, manifest)
