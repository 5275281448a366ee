"""The analysis run: the value of every move of logs, or of what a store holds.

`analyze_paths` validates the logs and analyses every valid hand
(:mod:`replay.analysis`); `to_json` is the contract of docs/analysis.md.
`analyze_store` analyses the stored hands whose analysis is missing, of
another version, or made with fewer sampled deals than asked, and stores
the rows (``force``: every hand). If a running server holds the store, the
rows are made from its kept logs and left in its spool, which the server
loads.

Hands go to a pool of processes, a match a task, or to the workers of a
dask.distributed cluster (docs/scale.md); progress shows on a terminal
(a line every 10 s when the output is a log). The command line, `replay analyze`, is `cli.analyze`.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

import orjson

from replay.analysis import (
    ANALYSIS_VERSION,
    SAMPLES,
    Analyzer,
    HandAnalysis,
    HandInput,
    analysis_tables,
    engine_move,
    inputs_from_report,
)
from replay.analysis.grades import resolve_options
from replay.analysis.refit import fit_store, refit_due
from replay.analysis.stored import stored_inputs
from replay.belief.model import PlayModel, family
from replay.engine import apply, legal_moves, new_hand
from replay.ingest.batch_id import check_code, code_version
from replay.progress import ProgressLine
from replay.reader import UsageError
from replay.store import (
    StoreLocked,
    default_db_path,
    hooks,
    layout,
    load_spool,
    numbered_rows,
    open_store,
    registered,
    transaction,
    write_batch,
)
from replay.store.analysis_blob import repack
from replay.store.models import latest_models
from replay.validate import validate_paths

if TYPE_CHECKING:
    from replay.ingest.pool import ClusterPool

__all__ = [
    "analyse_match",
    "analyze_paths",
    "analyze_store",
    "hand_cost",
    "hardest_first",
    "newest_first",
    "process_pool",
    "replace_analysis",
    "run_tasks",
    "sampled_seconds",
    "stale_matches",
    "stored_inputs",
    "to_json",
]

_ANALYZER: Analyzer | None = None

#: Play models by family of profiles, each with its name ("family:version").
Policies = Mapping[str, tuple[str, PlayModel]]


def analyse_match(inputs: list[HandInput], samples: int, seed: int, version: str = "",
                  policies: Policies | None = None) -> list[HandAnalysis]:  # fmt: skip
    """One match's hands (in a pool worker, a cluster's worker, or here);
    ``version``: the sender's code, which a cluster's worker must run too;
    `policies`: the read grade's play models (none: no read grade)."""
    if version:
        check_code(version)
    global _ANALYZER
    pol = dict(policies or {})
    if _ANALYZER is None or (_ANALYZER.samples, _ANALYZER.seed, _ANALYZER.policies) != (samples, seed, pol):
        _ANALYZER = Analyzer(samples=samples, seed=seed, policies=pol)
    return [_ANALYZER.hand(inp) for inp in inputs]


def read_policies(conn: Any) -> dict[str, tuple[str, PlayModel]]:
    """The store's newest play model of each family that beats "every legal
    move alike" on held-out hands (only those weigh a read grade)."""
    return {fam: (f"{fam}:{m.version}", m.model) for fam, m in latest_models(conn).items() if m.beats_uniform}


class Bar(ProgressLine):
    """Hands graded of all, on a terminal or (a line every 10 s) in a log."""

    def __init__(self, total: int, out: IO[str] | None) -> None:
        super().__init__(total, out, "hands graded")

    def add(self, n: int) -> None:
        self.show(self.done + n)


def process_pool(workers: int) -> ProcessPoolExecutor | None:
    if workers <= 0:
        return None
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("forkserver"))


#: Tasks read ahead and sent hardest first (a window of them at a time, so
#: that memory stays bounded on a store of millions of hands).
SCHEDULE_WINDOW: Final = 512


def hand_cost(inp: HandInput, samples: int) -> float:
    """A hand's predicted analysis cost, in arbitrary units: its game tree
    grows with the tiles dealt to the hands (doubling every three), with
    the branching of its first eight plies, and thirty-fold where three or
    four players each play for themselves (every other seat against the
    mover); the sampled grade multiplies it by the deals a decision. Only
    the order matters: heavy hands go first, so that none is left to one
    busy worker at the end while the others idle (bench/analysis.py
    measures its rank correlation with the real cost).

    >>> from replay.rules import resolve
    >>> from replay.solver import HandContext
    >>> dealt = tuple(tuple(range(k * 7, k * 7 + 7)) for k in range(4))
    >>> intl = HandInput("m", 1, resolve("international"), dealt, (), 0, -1, "", HandContext(), ())
    >>> rumble = HandInput("m", 1, resolve("royal_rumble"), dealt, (), 0, -1, "", HandContext(), ())
    >>> round(hand_cost(intl, 0)), round(hand_cost(intl, 20)), round(hand_cost(rumble, 0))
    (645, 13547, 19352)
    """
    if inp.skip is not None or not inp.dealt:
        return 0.0
    r = inp.rules
    try:
        state = new_hand(r, [list(h) for h in inp.dealt], leader=inp.leader, opening=inp.opening, stock=inp.stock)
        branching = 1
        for _, kind, tile, end in inp.moves[:8]:
            if state.result is not None:
                break
            branching *= len(legal_moves(state))
            state = apply(state, engine_move(state, kind, tile, end)[1])
    except (ValueError, IndexError, TypeError):
        return 0.0
    held = sum(len(h) for h in inp.dealt)
    paranoid = 30.0 if r.sides > 2 else 1.0
    return math.pow(2.0, held / 3) * math.sqrt(branching) * paranoid * (1 + samples)


def hardest_first(tasks: Iterable[tuple[Any, list[HandInput]]], samples: int,
                  window: int = SCHEDULE_WINDOW) -> Iterator[tuple[Any, list[HandInput]]]:  # fmt: skip
    """The tasks, each window of them sorted by predicted cost, dearest first.

    >>> list(hardest_first([("a", []), ("b", [])], 0))
    [('a', []), ('b', [])]
    """
    buf: list[tuple[float, int, tuple[Any, list[HandInput]]]] = []
    for i, task in enumerate(tasks):
        buf.append((-sum(hand_cost(h, samples) for h in task[1]), i, task))
        if len(buf) >= window:
            buf.sort(key=lambda x: (x[0], x[1]))
            yield from (t for _, _, t in buf)
            buf.clear()
    buf.sort(key=lambda x: (x[0], x[1]))
    yield from (t for _, _, t in buf)


def run_tasks(
    tasks: Iterable[tuple[Any, list[HandInput]]], *, samples: int, seed: int, workers: int,
    done: Callable[[Any, list[HandAnalysis]], None], cluster: ClusterPool | None = None,
    policies: Policies | None = None,
) -> None:
    """Analyse each task's hands (a pool of `workers`, or here with 0, or on
    `cluster`) and give each result to `done` with its key, in the order the
    tasks finish; a pool gets them hardest first (:func:`hardest_first`)."""
    pool: Any = cluster if cluster is not None else process_pool(workers)
    if pool is None:
        for key, inputs in tasks:
            done(key, analyse_match(inputs, samples, seed, "", policies))
        return
    version = ""
    if cluster is not None:
        version, workers = code_version(), cluster._max_workers
    before = _exit_on_sigterm()
    try:
        pending: dict[Future[list[HandAnalysis]], Any] = {}
        for key, inputs in hardest_first(tasks, samples):
            pending[pool.submit(analyse_match, inputs, samples, seed, version, policies)] = key
            while len(pending) >= 4 * workers:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for f in finished:
                    done(pending.pop(f), f.result())
        for f in list(pending):
            done(pending.pop(f), f.result())
    except BaseException:  # stopped (SIGTERM, Ctrl-C) or failed: the workers stop now, not after their match
        procs = getattr(pool, "_processes", None) or {}
        for proc in list(procs.values()):
            proc.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    else:
        pool.shutdown(wait=True, cancel_futures=True)
    finally:
        if before is not None:
            signal.signal(signal.SIGTERM, before)


def _exit_on_sigterm() -> Any:
    """In the main thread, SIGTERM raises SystemExit (so that the pool's
    workers are stopped on the way out, not left to finish their matches
    as orphans); the handler it replaced, or None elsewhere."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def stop(signum: int, _frame: Any) -> None:
        raise SystemExit(128 + signum)

    return signal.signal(signal.SIGTERM, stop)


def analyze_paths(
    paths: Sequence[str | os.PathLike[str]], *, samples: int = SAMPLES, seed: int = 0, workers: int = 2,
    progress_out: IO[str] | None = None, cluster: ClusterPool | None = None,
) -> list[tuple[str, list[HandAnalysis]]]:
    """Every match of the logs with its hands' analyses, in the logs' order."""
    report = validate_paths(paths, keep_moves=True)
    per_match = [(m.match, inputs_from_report(m)) for m in report.matches]
    bar = Bar(sum(len(i) for _, i in per_match), progress_out)
    got: dict[str, list[HandAnalysis]] = {}

    def done(key: str, res: list[HandAnalysis]) -> None:
        got[key] = res
        bar.add(len(res))

    try:
        run_tasks(((m, i) for m, i in per_match if i), samples=samples, seed=seed, workers=workers, done=done,
                  cluster=cluster)  # fmt: skip
    finally:
        bar.close()
    return [(m, got.get(m, [])) for m, _ in per_match]


def to_json(results: Sequence[tuple[str, Sequence[HandAnalysis]]], samples: int, seed: int) -> dict[str, Any]:
    """The `--json` contract (docs/analysis.md)."""
    return {
        "version": ANALYSIS_VERSION,
        "samples": samples,
        "seed": seed,
        "matches": [{"match": m, "hands": [h.to_json() for h in hands]} for m, hands in results],
    }


# -- the store ------------------------------------------------------------------------


def stale_matches(conn: Any, samples: int, force: bool, policies: Policies | None = None) -> list[str]:
    """Matches with a finished hand whose analysis is missing, of another
    version, or made with fewer sampled deals than asked; with `policies`,
    also a sampled one whose read grade used another play model than its
    family's now (or none where there is one now)."""
    if force:
        sql = "SELECT match FROM matches WHERE verdict <> 'unreadable' ORDER BY match"
        return [m for (m,) in conn.execute(sql).fetchall()]
    sql = """
        SELECT DISTINCT h.match FROM hands h
        JOIN matches m ON m.match = h.match AND m.replay IS NOT NULL AND m.rules IS NOT NULL
        LEFT JOIN hand_analysis a ON a.match = h.match AND a.hand = h.hand
        WHERE h.result IS NOT NULL
          AND (a.match IS NULL OR a.version <> ? OR (a.skip IS NULL AND a.samples < ?))
        ORDER BY h.match
    """
    stale = {m for (m,) in conn.execute(sql, [ANALYSIS_VERSION, samples]).fetchall()}
    if samples > 0:
        rows = conn.execute("""
            SELECT DISTINCT a.match, m.rules, a.read_model FROM hand_analysis a JOIN matches m USING (match)
            WHERE a.skip IS NULL AND a.samples > 0 AND m.rules IS NOT NULL
        """).fetchall()  # fmt: skip
        want = {fam: name for fam, (name, _) in (policies or {}).items()}
        fams: dict[str, str] = {}
        for m, rules, used in rows:
            fam = fams.get(rules)
            if fam is None:
                try:
                    fam = fams[rules] = family(resolve_options(orjson.loads(rules)))
                except ValueError:
                    continue
            if want.get(fam) != used:
                stale.add(m)
    return sorted(stale)


def newest_first(conn: Any, matches: Sequence[str]) -> list[str]:
    """`matches` in the order they were last stored, the newest first (their
    ``mno``): the background grading takes a new ingest or upload before a
    backlog, so that its owner sees its grades within a round."""
    got = dict(conn.execute("SELECT match, mno FROM matches WHERE list_contains(?, match)", [list(matches)]).fetchall())
    return sorted(matches, key=lambda m: (-(got.get(m) or 0), m))


#: CPU-seconds the sampled grade of one finished hand costs at 20 deals a
#: decision (bench/analysis.py's hands on the 2-core machine here,
#: 2026-12-05, the grade on uniform deals): four players each for himself
#: (royal_rumble) 3.9 s; any other game 0.13-0.33 s (international 0.26,
#: pr_2p 0.33, pr_3p 0.22, domena_2p 0.13). The read grade, where a play
#: model is fitted, costs as much again; both grow with the deals.
SAMPLED_HAND_SECONDS: Final = (0.35, 4.0)


def sampled_seconds(conn: Any, matches: Sequence[str], samples: int, policies: Policies) -> tuple[int, float]:
    """The finished hands of `matches` and the CPU-seconds their sampled grade
    at `samples` deals a decision is predicted to cost (SAMPLED_HAND_SECONDS),
    from the rules alone: a budget's estimate, good to a factor of two."""
    rows = conn.execute(
        "SELECT m.rules, count(*) FROM hands h JOIN matches m USING (match) "
        "WHERE list_contains(?, h.match) AND h.result IS NOT NULL AND m.rules IS NOT NULL GROUP BY m.rules",
        [list(matches)],
    ).fetchall()
    hands, seconds = 0, 0.0
    for rules, n in rows:
        try:
            r = resolve_options(orjson.loads(rules))
        except ValueError:
            continue
        each = SAMPLED_HAND_SECONDS[r.players == 4 and r.teams == "individual"] * samples / 20
        hands += n
        seconds += n * each * (2 if family(r) in policies else 1)
    return hands, seconds


def analyze_store(
    db: str | os.PathLike[str] | None = None, *, samples: int = SAMPLES, seed: int = 0, workers: int = 2,
    force: bool = False, progress_out: IO[str] | None = None, cluster: ClusterPool | None = None,
    budget: float | None = None,
) -> dict[str, Any]:
    """Analyse what the store lacks (see the module doc); a summary.

    With a `budget` (CPU-seconds), only if what it lacks is predicted to cost
    no more (sampled_seconds), and only in a store no server holds; else
    nothing is done and the summary says why: ``deferred`` holds the hands
    and their predicted seconds, or is ``"held"``."""
    db_path = Path(db) if db is not None else default_db_path()
    if not db_path.exists():
        raise UsageError(f"no store at {db_path} (replay ingest makes one)")
    lay = layout(db_path).make()
    try:
        conn = open_store(db_path)
    except StoreLocked:
        if budget is not None:  # the server holds it: its background grading does this
            return {"matches": 0, "hands": 0, "analysed": 0, "skipped": 0, "pending": False, "deferred": "held"}
        return _analyze_kept(lay, samples=samples, seed=seed, workers=workers, progress_out=progress_out,
                             cluster=cluster)  # fmt: skip
    try:
        load_spool(conn, lay.spool)
        if budget is not None:
            # before any refit: a store too big to grade now is not refitted either
            policies = read_policies(conn) if samples > 0 else {}
            hands, seconds = sampled_seconds(conn, stale_matches(conn, samples, force, policies), samples, policies)
            if seconds > budget:
                return {"matches": 0, "hands": 0, "analysed": 0, "skipped": 0, "pending": False,
                        "deferred": {"hands": hands, "seconds": seconds}}  # fmt: skip
        refitted: list[str] = []
        if samples > 0:
            due = refit_due(conn)
            if due:
                refitted = [f"{x['family']}:{x['version']}" for x in fit_store(conn, families=due)]
        policies = read_policies(conn) if samples > 0 else {}
        stale = stale_matches(conn, samples, force, policies)
        count = conn.execute(
            "SELECT count(*) FROM hands WHERE list_contains(?, match)", [stale]
        ).fetchone()
        bar = Bar(int(count[0]) if count else 0, progress_out)
        summary: dict[str, Any] = {"matches": 0, "hands": 0, "analysed": 0, "skipped": 0, "pending": False,
                                   "read_models": sorted(name for name, _ in policies.values()),
                                   "refitted": refitted, "deferred": None}  # fmt: skip
        buffer: list[HandAnalysis] = []

        def flush() -> None:
            if not buffer:
                return
            _replace(conn, analysis_tables(buffer))
            buffer.clear()

        def done(_: str, res: list[HandAnalysis]) -> None:
            summary["matches"] += 1
            summary["hands"] += len(res)
            summary["analysed"] += sum(1 for h in res if h.skip is None)
            summary["skipped"] += sum(1 for h in res if h.skip is not None)
            buffer.extend(res)
            bar.add(len(res))
            if len(buffer) >= 2000:
                flush()

        try:
            run_tasks(stored_inputs(conn, stale), samples=samples, seed=seed, workers=workers, done=done,
                      cluster=cluster, policies=policies)  # fmt: skip
            flush()
        finally:
            bar.close()
        hooks.matches_changed(conn)  # the player insights read the new rows (migration 014)
        conn.execute("CHECKPOINT")
        return summary
    finally:
        conn.close()


def _replace(conn: Any, tables: dict[str, Any]) -> None:
    replace_analysis(conn, tables, f"analyze-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")


def replace_analysis(conn: Any, tables: dict[str, Any], stamp: str) -> None:
    """Put analysis rows (replay.analysis.analysis_tables) in place of the
    same hands' rows, in one transaction, and stamp their matches' analysis
    (the pages' cache key, the insights' refresh). A hand stored again since
    it was read, with another number of plies, is left alone: its new rows
    come with its own analysis."""
    with registered(conn, "_ha", tables["hand_analysis"]), registered(conn, "_ma", tables["move_analysis"]), \
            transaction(conn):  # fmt: skip
        conn.execute(
            "CREATE OR REPLACE TEMP TABLE _dh AS SELECT a.match, a.hand FROM _ha a "
            "JOIN hands h USING (match, hand) WHERE a.skip IS NOT NULL OR h.plies = "
            "(SELECT count(*) FROM _ma m WHERE m.match = a.match AND m.hand = a.hand)"
        )
        for t in ("move_analysis", "hand_analysis"):
            conn.execute(f"DELETE FROM {t} WHERE (match, hand) IN (SELECT match, hand FROM _dh)")
        conn.execute(f"INSERT INTO hand_analysis BY NAME {numbered_rows('_ha', '_dh')}")
        conn.execute(f"INSERT INTO move_analysis BY NAME {numbered_rows('_ma', '_dh', ply=True)}")
        conn.execute("UPDATE matches SET analysis = ? WHERE match IN (SELECT DISTINCT match FROM _dh)", [stamp])
        repack(conn, "_dh")  # the replay's copy (migration 022)
        conn.execute("DROP TABLE _dh")


def _analyze_kept(
    lay: Any, *, samples: int, seed: int, workers: int, progress_out: IO[str] | None,
    cluster: ClusterPool | None = None,
) -> dict[str, Any]:
    """The store is held (a running server): analyse every match of its kept
    logs and leave the rows in its spool as one batch (mode ``analysis``)."""
    kept = sorted(p for p in lay.logs.glob("*.jsonl*") if p.is_file())
    if not kept:
        raise UsageError(f"the store at {lay.db} is held by another process and keeps no logs to analyse")
    results = analyze_paths(kept, samples=samples, seed=seed, workers=workers, progress_out=progress_out,
                            cluster=cluster)  # fmt: skip
    flat = [h for _, hands in results for h in hands]
    batch = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f") + f"-{os.getpid()}-analysis"
    write_batch(lay.spool, batch, analysis_tables(flat), {"mode": "analysis"})
    return {
        "matches": len(results), "hands": len(flat), "analysed": sum(1 for h in flat if h.skip is None),
        "skipped": sum(1 for h in flat if h.skip is not None), "pending": True,
        "read_models": [],  # the models are in the store the server holds: no read grade here
    }  # fmt: skip
