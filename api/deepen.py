"""The server adds the sampled grade to stored hands, in the background.

`replay ingest` grades every move under perfect information (exact, about
20 ms a hand); the grade on what each player could know costs ten times
that and more (one search per sampled deal), so the server that owns the
store adds it while it runs (a small ingest has it already: `replay
ingest` grades what costs at most half a minute): a thread picks a few
matches whose analysis has fewer sampled deals than asked, the last
stored first (so a new upload is graded before a backlog), processes of its own (one per core, at
the lowest priority, so that pages keep their cores: the scheduler gives a
request's thread its core back from them) analyse them again with that
many deals, a match to a process, and each match's rows replace the old
ones in one transaction as soon as it is done, under the store's load lock
(api.connection.Store). Matches stored while a round runs (an upload, a
spool batch: `take_new`) stop the round from starting more of its own and
are graded at once on one more process, so that their grades come in
seconds rather than after the matches begun or a backlog; so is a match
someone opens without its sampled grade (`want`: its page says it is
being graded, and how long that should take, and shows the grades when
they come); with nothing left to grade, the thread waits for them (or
`idle` seconds). Pages see them at once: a match's cache key holds its
analysis stamp (api.queries.match_version).

A match stored again meanwhile (a new batch) is not overwritten: a hand's
rows are taken only if the stored hand has as many plies as the analysis.
The player insights (reports.skill) are refreshed with the new rows after
the first round, then at most every 10, 20, 40 and from then on 60 seconds
while it samples, and when it runs out of work.

A round that fails is logged and the sampling goes on (a new process if
its process died); a match whose rounds failed three times is left alone
until the server restarts.

The thread keeps its pace, in memory: the decisions and hands each round
graded and how long the round took, over the last `PACE_WINDOW` seconds.
The pages divide what is left by it (api.grading); before its first round
ends, or after an idle stretch longer than the window, it has no pace and
the pages say so rather than guess.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import threading
import time
from collections import Counter, deque
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from replay.analysis import analysis_tables
from replay.analysis.refit import fit_store, refit_due
from replay.analysis.run import (
    analyse_match,
    hardest_first,
    newest_first,
    read_policies,
    replace_analysis,
    sampled_seconds,
    stale_matches,
    stored_inputs,
)
from reports.skill import refresh_insights

__all__ = ["PACE_WINDOW", "WANTED", "Deepener", "Pace"]

log = logging.getLogger("replay.deepen")

#: Failed rounds after which a match is left alone (until the server restarts).
GIVE_UP = 3

#: Seconds between two refreshes of the player insights while it samples (each
#: reads the moves of the matches sampled since: about a second at 1M hands).
#: The first comes after the first round and the gap doubles from 10 s up to
#: this, so that a new store's cheat signals show within a minute.
INSIGHTS_EVERY = 60.0


#: Matches asked for by the pages (`Deepener.want`) kept waiting at once: a
#: match's own grading takes seconds to a minute on the one process the
#: asked-for and new matches share, and a crawler opening every page must not
#: turn the backlog's order into its own; the oldest ask is dropped (that
#: match keeps its place in the backlog).
WANTED = 8

#: Seconds of recent rounds the pace is measured over: long enough to hold a
#: few rounds (a round is four matches, tens of seconds), short enough to
#: follow a store whose hands grow longer or a machine that gets busier.
PACE_WINDOW = 600.0


class Pace:
    """The rounds graded lately: (start, end, hands, decisions), monotonic seconds.

    >>> p = Pace()
    >>> p.per_second(now=0.0) is None  # no round done yet: no pace
    True
    >>> p.add(0.0, 10.0, hands=4, decisions=80)
    >>> p.add(10.0, 30.0, hands=6, decisions=120)
    >>> p.per_second(now=30.0)
    (0.3333, 6.6667)
    >>> p.per_second(now=30.0 + PACE_WINDOW + 1) is None  # nothing recent
    True
    """

    def __init__(self, window: float = PACE_WINDOW) -> None:
        self.window = window
        self.rounds: deque[tuple[float, float, int, int]] = deque()
        self.lock = threading.Lock()  # the deepen thread adds, request threads read

    def add(self, start: float, end: float, *, hands: int, decisions: int) -> None:
        with self.lock:
            self.rounds.append((start, end, hands, decisions))
            while self.rounds and self.rounds[0][1] < end - self.window:
                self.rounds.popleft()

    def per_second(self, now: float | None = None) -> tuple[float, float] | None:
        """Hands and decisions graded a second over the rounds that ended in
        the last window (their busy time: an idle wait is no grading time);
        None when no round ended in it."""
        now = time.monotonic() if now is None else now
        with self.lock:
            recent = [r for r in self.rounds if r[1] >= now - self.window]
        busy = sum(end - start for start, end, _, _ in recent)
        if not recent or busy <= 0:
            return None
        hands = sum(r[2] for r in recent)
        decisions = sum(r[3] for r in recent)
        return round(hands / busy, 4), round(decisions / busy, 4)


def _nice() -> None:
    with contextlib.suppress(OSError):  # not allowed here: run as is
        os.nice(19)


class Deepener(threading.Thread):
    """Analyse again, with `samples` deals a decision, what the store has with fewer."""

    def __init__(self, store: Any, samples: int, *, matches: int = 4, workers: int | None = None, idle: float = 20.0,
                 seed: int = 0) -> None:  # fmt: skip
        super().__init__(name="deepen", daemon=True)
        self.store = store
        self.samples = samples
        self.workers = max(1, workers if workers is not None else os.cpu_count() or 1)
        self.matches = matches  # a round: this many matches a process
        self.idle = idle
        self.seed = seed
        self.stop = threading.Event()
        self.news = threading.Event()  # new matches stored: the round under way takes no more
        self.done = 0  # hands given the sampled grade
        self.pool: ProcessPoolExecutor | None = None
        self.express: Executor | None = None  # one more process, for matches stored during a round (made when needed)
        self.last_mno = 0  # the last match stored when the round began
        self.pending = False  # sampled rows the player insights have not summed yet
        self.batch: list[str] = []  # the matches of the round under way
        self.jobs: dict[Future[Any], str] = {}  # the round's jobs (express ones too), by match
        self.lock = threading.Lock()  # `wanted` and `active`: request threads read and add
        self.wanted: dict[str, None] = {}  # matches the pages asked for, the oldest ask first
        self.active: dict[str, tuple[float, float]] = {}  # asked-for matches being graded: (began, predicted s)
        self.failures: Counter[str] = Counter()  # rounds failed, by match
        self.refreshed = time.monotonic()
        self.gap = 0.0  # seconds before the next refresh of the insights
        self.round = 0  # rounds begun
        self.pace = Pace()

    def run(self) -> None:
        ctx = multiprocessing.get_context("forkserver")
        self.pool = ProcessPoolExecutor(self.workers, mp_context=ctx, initializer=_nice)
        try:
            while not self.stop.is_set():
                try:
                    worked = self._round()
                except Exception as exc:  # the server goes on, and so does the sampling, without them
                    if self.stop.is_set():
                        break  # stopped mid-round (close() ended its process)
                    for m in self.batch:
                        self.failures[m] += 1
                        self._graded(m)  # asked for: its page asks again
                    log.exception("the background sampling failed on %s (a match is left alone after %d "
                                  "failures)", ", ".join(self.batch), GIVE_UP)  # fmt: skip
                    if isinstance(exc, BrokenProcessPool):  # a process died: new ones
                        self.pool.shutdown(wait=False, cancel_futures=True)
                        self.pool = ProcessPoolExecutor(self.workers, mp_context=ctx, initializer=_nice)
                        if self.express is not None:
                            self.express.shutdown(wait=False, cancel_futures=True)
                            self.express = None
                    self.stop.wait(self.idle)
                    continue
                if not worked:  # nothing left: until new matches are stored, or the idle time passes
                    self.news.wait(self.idle)
                    self.news.clear()  # the next round reads what was stored
        finally:
            self._end_processes()
            self.pool.shutdown(wait=False, cancel_futures=True)
            if self.express is not None:
                self.express.shutdown(wait=False, cancel_futures=True)

    def _end_processes(self) -> None:
        """A hand being analysed is given up: its process would outlive the server."""
        for pool in (self.pool, self.express):
            for proc in list((getattr(pool, "_processes", None) or {}).values()):
                with contextlib.suppress(Exception):
                    proc.terminate()

    def _refit(self, cur: Any) -> None:
        """Refit the play models whose families gained enough hands (under the
        store's load lock: it writes play_models); a failure is logged, and
        the grading goes on with the models it has."""
        try:
            due = refit_due(cur)
            if due:
                with self.store.load_lock:
                    fits = fit_store(cur, families=due)
                self.store.bump()
                log.info("refitted play models: %s", ", ".join(f"{f['family']}:{f['version']}" for f in fits))
        except Exception:  # noqa: BLE001 - a refit must not stop the grading
            log.exception("refitting the play models failed")

    def _round(self) -> bool:
        """Sample a few matches and store them; False when nothing is left."""

        assert self.pool is not None
        self.news.clear()  # what is stored from now on is seen by this round's choice or its loop
        cur = self.store.cursor()
        try:
            self._refit(cur)
            policies = read_policies(cur)  # the newest play models: a refit regrades what used an older one
            stale = [m for m in stale_matches(cur, self.samples, False, policies) if self.failures[m] < GIVE_UP]
            stale = newest_first(cur, stale)  # a new upload before a backlog
            asked = self._asked(stale)  # and a match someone is looking at before both
            stale = asked + [m for m in stale if m not in asked]
            row = cur.execute("SELECT coalesce(max(mno), 0) FROM matches").fetchone()
            self.last_mno = int(row[0]) if row else 0
            # rounds of one, two, then `matches` matches a process: the first grades
            # (and a pace for the pages) come within seconds of the start
            self.batch = stale[: max(len(asked), min(self.matches, 1 << min(self.round, 8)) * self.workers)]
            self.round += 1
            inputs = list(stored_inputs(cur, self.batch)) if self.batch else []
            predicted = self._predict(cur, asked, policies)
        finally:
            cur.close()
        if not inputs:
            self._insights()  # what it sampled, summed before it waits
            return False
        results: list[Any] = []
        began = time.monotonic()
        # the asked-for first, then the dearest first, so that the round does not end on one process
        first = [t for t in inputs if t[0] in predicted]
        rest = hardest_first([t for t in inputs if t[0] not in predicted], self.samples)
        self.jobs = {self.pool.submit(analyse_match, hands, self.samples, self.seed, "", policies): m
                     for m, hands in [*first, *rest]}  # fmt: skip
        self._began(predicted)
        left = set(self.jobs)
        while left:
            if self.stop.is_set():
                for j in left:
                    j.cancel()
                return False
            if self.news.is_set():  # new or asked-for matches start at once; those of the round not begun wait
                self.news.clear()
                left = self._express(policies, left)
            done, left = wait(left, timeout=0.25, return_when=FIRST_COMPLETED)
            for job in done:  # stored as each match is done: an upload's grades need not wait for the round
                got = job.result()
                self._store(analysis_tables(got))
                self._graded(self.jobs.get(job))
                results.extend(got)
        if not results:
            return True
        graded = [h for h in results if h.skip is None]
        self.done += len(graded)
        self.pace.add(began, time.monotonic(), hands=len(graded),
                      decisions=sum(1 for h in graded for p in h.plies if not p.forced))
        self.pending = True
        if time.monotonic() - self.refreshed >= self.gap:
            self._insights()
        return True

    def _express(self, policies: Any, left: set[Future[Any]]) -> set[Future[Any]]:
        """The round's jobs still to wait for, after sending to a process of
        their own (the round's may be busy with a match that takes a minute)
        the matches stored since the round began and those the pages asked
        for, not graded yet: an upload's grades come in seconds, and so do
        those of a match someone opens. If there are any, the round's jobs
        not begun are given up (their matches wait for a later round)."""
        cur = self.store.cursor()
        try:
            new = {m for (m,) in cur.execute("SELECT match FROM matches WHERE mno > ?", [self.last_mno]).fetchall()}
            stale = [m for m in stale_matches(cur, self.samples, False, policies) if self.failures[m] < GIVE_UP]
            asked = self._asked(stale)
            busy = {m for j, m in self.jobs.items() if not j.cancelled()}
            fresh = [m for m in [*asked, *(m for m in stale if m in new and m not in asked)] if m not in busy]
            if not fresh:
                return left
            left = {j for j in left if not j.cancel()}  # the round starts no more of its own
            busy = {m for j, m in self.jobs.items() if not j.cancelled()}  # begun meanwhile: they stay
            fresh = [m for m in fresh if m not in busy]
            inputs = list(stored_inputs(cur, fresh)) if fresh else []
            predicted = self._predict(cur, [m for m in fresh if m in asked], policies)
        finally:
            cur.close()
        if not inputs:
            return left
        if self.express is None:
            self.express = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("forkserver"),
                                               initializer=_nice)  # fmt: skip
        self.batch += fresh  # a failure counts against them too
        jobs = {self.express.submit(analyse_match, hands, self.samples, self.seed, "", policies): m
                for m, hands in inputs}  # fmt: skip
        self.jobs.update(jobs)
        self._began(predicted)
        return left | set(jobs)

    def _asked(self, stale: list[str]) -> list[str]:
        """The matches the pages asked for that still lack the grade, the
        oldest ask first; the others are forgotten."""
        wait = set(stale)
        with self.lock:
            for m in [m for m in self.wanted if m not in wait]:
                del self.wanted[m]
            return list(self.wanted)

    def _predict(self, cur: Any, matches: list[str], policies: Any) -> dict[str, float]:
        """The seconds the sampled grade of each of `matches` should take: its
        CPU-seconds (replay.analysis.run.sampled_seconds, a factor of two
        either way), stretched where the round's processes and the one for
        asked-for matches outnumber the cores (3 on 2: 1.5 times)."""
        share = max(1.0, (self.workers + 1) / (os.cpu_count() or 1))
        return {m: share * sampled_seconds(cur, [m], self.samples, policies)[1] for m in matches}

    def _began(self, predicted: dict[str, float]) -> None:
        now = time.monotonic()
        with self.lock:
            for m, seconds in predicted.items():
                self.active[m] = (now, seconds)

    def _graded(self, match: str | None) -> None:
        with self.lock:
            self.wanted.pop(match or "", None)
            self.active.pop(match or "", None)

    def want(self, match: str) -> None:
        """Someone opened `match` (a page, its JSON) and it lacks the sampled
        grade: grade it before anything else, on the process uploads use
        (the round under way starts no more of its own), or first in the
        next round. At most `WANTED` asks wait; the oldest is dropped."""
        with self.lock:
            if match in self.wanted or match in self.active:
                return
            self.wanted[match] = None
            waiting = [m for m in self.wanted if m not in self.active]
            for m in waiting[: max(0, len(waiting) - WANTED)]:
                del self.wanted[m]
        self.news.set()

    def asked(self, match: str) -> dict[str, Any] | None:
        """Where an asked-for `match` stands: ``{"state": "grading", "seconds":
        s, "predicted": p}`` once its process has it (`s` seconds ago, `p`
        CPU-seconds predicted in all), ``{"state": "next"}`` before; None if
        it was not asked for (or is graded)."""
        with self.lock:
            got = self.active.get(match)
            if got is not None:
                return {"state": "grading", "seconds": round(time.monotonic() - got[0], 1), "predicted": got[1]}
            return {"state": "next"} if match in self.wanted else None

    def _store(self, tables: dict[str, Any]) -> None:
        with self.store.load_lock:
            cur = self.store.cursor()
            try:
                replace_analysis(cur, tables, f"deepen-{time.strftime('%Y%m%dT%H%M%S')}-{self.samples}")
            finally:
                cur.close()
            self.store.bump()

    def _insights(self) -> None:
        """The player insights (reports.skill, migration 014) brought up to date
        with the rows sampled since the last time: the omniscience index needs
        the sampled grade."""
        if not self.pending:
            return
        with self.store.load_lock:
            cur = self.store.cursor()
            try:
                refresh_insights(cur)
            finally:
                cur.close()
        self.pending = False
        self.refreshed = time.monotonic()
        self.gap = min(INSIGHTS_EVERY, max(10.0, 2 * self.gap))
        self.store.bump()

    def take_new(self) -> None:
        """New matches were stored (an upload, a spool batch): the round under
        way starts no more of its matches and grades the new ones at once on
        a process of its own, so that their grades come in seconds, not after
        the matches begun (a royal_rumble match takes a minute) or a backlog."""
        self.news.set()

    def close(self, wait: float = 2.0) -> None:
        """Stop now: the round under way is given up (its process ended
        here, not when the hand is done: that can take minutes)."""
        self.stop.set()
        self.news.set()  # out of its idle wait
        self._end_processes()
        self.join(timeout=wait)
