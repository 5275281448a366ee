"""The main process's side of a run that owns the store: loading, progress, summary.

:class:`Loader` loads the batches as the workers finish them (a thread:
DuckDB releases the GIL, so loading overlaps routing), several to a
transaction, each committed once the kept copies it refers to are durable;
at the end it derives the player tables and reports once for the run.
:class:`Progress` is the bar on a terminal, :class:`IngestSummary` what a
run did.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import duckdb

from replay.progress import ProgressLine
from replay.store import (
    GROUP_BATCHES,
    HeldRows,
    derive_player_rows,
    hooks,
    load_batches,
    one,
)

__all__ = ["IngestSummary", "Loader", "Progress"]


@dataclass(slots=True)
class IngestSummary:
    """What a run did (printed at the end of `replay ingest`)."""

    files: int = 0
    files_known: int = 0  # already in the store: not read again
    lines: int = 0
    bad_lines: int = 0
    matches: int = 0
    hands: int = 0
    verdicts: Counter[str] = field(default_factory=Counter)
    findings: Counter[str] = field(default_factory=Counter)
    batches: int = 0
    loaded: bool = False  # loaded into the database (else left in the spool)
    pending: int = 0  # batches left in the spool
    seconds: float = 0.0
    db: str = ""
    stages: dict[str, float] = field(default_factory=dict)  # seconds spent, by stage
    not_logs: list[str] = field(default_factory=list)  # "FILE: not a table log: why", one a file
    refused: list[str] = field(default_factory=list)  # spool batches refused, each as a line saying why

    def lines_out(self) -> list[str]:
        v = self.verdicts
        out = [f"error: {what}" for what in self.not_logs]
        out += [f"error: {what}" for what in self.refused]
        out += [
            f"files: {self.files} ({self.files_known} already stored), "
            f"{self.lines:,} lines, {self.bad_lines:,} bad",
            f"matches: {self.matches:,} ({v['valid']:,} valid, {v['invalid']:,} invalid, "
            f"{v['unreadable']:,} unreadable), {self.hands:,} hands",
        ]
        if self.findings:
            out.append("findings: " + ", ".join(f"{c} {n:,}" for c, n in sorted(self.findings.items())))
        else:
            out.append("findings: none")
        rate = self.hands / self.seconds if self.seconds else 0.0
        out.append(f"time: {self.seconds:.1f} s ({rate:,.0f} hands/s)")
        if self.stages:
            out.append("stages: " + ", ".join(f"{k} {v:.1f} s" for k, v in self.stages.items()))
        if self.loaded:
            out.append(f"stored in {self.db} ({self.batches} batch{'' if self.batches == 1 else 'es'})")
        else:
            out.append(
                f"{self.db} is open in another process (the server?): {self.pending} "
                f"batch{'' if self.pending == 1 else 'es'} "
                "left in the spool; it loads them"
            )
        return out


class Progress:
    """Hands validated (and analysed), hands/s and the time left: a bar on a
    terminal, a line every 10 s in a log. The total is estimated from the
    hands read so far and the share of the bytes read (the pool is a few
    chunks behind the reading)."""

    def __init__(self, total_bytes: int, out: IO[str] | None) -> None:
        self.bytes = max(total_bytes, 1)
        self.line = ProgressLine(1, out, "hands")

    def show(self, done_bytes: float, read: int, done: int, *, force: bool = False) -> None:
        share = min(done_bytes / self.bytes, 1.0)
        expected = max(read / share if share > 0.001 else 0.0, done, 1.0)
        if force:
            self.line.last = float("-inf")
        self.line.show(done, total=expected, extra=f" (read {share:.0%})")

    def close(self) -> None:
        self.line.close()


class Loader(threading.Thread):
    """Loads finished batches into the database while the run goes on
    (DuckDB releases the GIL: loading overlaps routing)."""

    def __init__(self, conn: duckdb.DuckDBPyConnection, data_dir: Path,
                 durable: Callable[[Collection[str] | None], None] | None = None) -> None:
        super().__init__(name="replay-loader", daemon=True)
        self.conn = conn.cursor()
        self.data_dir = data_dir
        self.held = HeldRows(data_dir / "spool")  # the batches' player rows, for the end
        self.durable = durable  # waited for before a load, for the files it refers to
        # a batch and the kept files it refers to (None: every file of the run)
        self.jobs: queue.Queue[tuple[Path, frozenset[str] | None] | None] = queue.Queue()
        self.error: BaseException | None = None
        self.loaded = 0
        self.seconds = 0.0  # wall time spent loading
        self.groups = 0  # transactions
        self.derive_seconds = 0.0  # of which deriving the player tables
        self.report_seconds = 0.0  # and working out the kept player reports

    def run(self) -> None:
        # The run's loads on one DuckDB thread: on two, its parallel inserts
        # leave partly filled row groups in every table, which the checkpoint
        # at the end of the run merges again, decompressing and compressing
        # them (its vacuum): 3.2 CPU-s per 125,000 hands, 0.1 on one thread,
        # for 0.6 CPU-s less loading too. The derivation gets both back.
        threads = self._set_threads(1)
        while (first := self.jobs.get()) is not None:
            if self.error is not None:
                continue  # the rest only goes; the error is the main thread's
            group = _Group(self, first)
            self.loaded += self._timed(
                load_batches, self.conn, group, self.data_dir, derive=False, held=self.held,
                before_commit=group.ready,
            )
            self.seconds -= group.waited
            if group.last:
                break
        self._set_threads(threads)
        if self.error is None:  # the player tables, once for the run
            t0 = time.perf_counter()
            try:
                with hooks.matches_changed_beside(self.conn):  # the ratings meanwhile, beside both
                    self._timed(derive_player_rows, self.conn, reports=False, held=self.held)
                    self.held.drop()
                    t1 = time.perf_counter()
                    if self.error is None:
                        self._timed(hooks.players_changed, self.conn)
            except BaseException as exc:
                self.error = self.error or exc
            self.derive_seconds, self.report_seconds = t1 - t0, time.perf_counter() - t1

    def _set_threads(self, n: int) -> int:
        """Give DuckDB ``n`` threads; the number it had (an error is kept for the main thread)."""
        try:
            row = one(self.conn, "SELECT current_setting('threads')")
            self.conn.execute(f"SET threads = {int(n)}")
            return int(row[0]) if row else n
        except BaseException as exc:
            self.error = self.error or exc
            return n

    def _timed(self, work: Callable[..., int], *args: Any, **kwargs: Any) -> int:
        """work(*args, **kwargs), its time counted; an error is kept for the main thread."""
        t0 = time.perf_counter()
        try:
            return work(*args, **kwargs)
        except BaseException as exc:
            self.error = exc
            return 0
        finally:
            self.seconds += time.perf_counter() - t0
            self.groups += 1

    def finish(self) -> None:
        self.jobs.put(None)
        self.join()
        self.held.drop()
        self.conn.close()
        if self.error is not None:
            raise self.error


class _Group:
    """One transaction's batches as they arrive, up to GROUP_BATCHES (fewer
    at the end of the run): each is loaded as soon as it is there, and the
    group commits once it is complete, so that what a load costs whatever
    its size is paid once for them all, and the loader does not sit idle
    while a group fills (at the end of the run only the last batch is left).
    """

    def __init__(self, loader: Loader, first: tuple[Path, frozenset[str] | None]) -> None:
        self.loader = loader
        self.first: tuple[Path, frozenset[str] | None] | None = first
        self.refs: set[str] | None = set(first[1]) if first[1] is not None else None
        self.taken = 0
        self.last = False  # the run's last batch came
        self.waited = 0.0  # seconds waiting for batches

    def __iter__(self) -> Iterator[Path]:
        while self.taken < GROUP_BATCHES:
            job = self.first
            self.first = None
            if job is None:
                t0 = time.perf_counter()
                job = self.loader.jobs.get()
                self.waited += time.perf_counter() - t0
                if job is None:
                    self.last = True
                    return
                self.refs = None if self.refs is None or job[1] is None else self.refs | job[1]
            self.taken += 1
            yield job[0]

    def ready(self) -> None:
        """Before the commit: the kept copies the group refers to are durable
        (the first batches load while the last files are still synced)."""
        if self.loader.durable is not None:
            self.loader.durable(self.refs)
