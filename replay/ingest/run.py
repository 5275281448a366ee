"""`replay ingest` and `replay reingest`: logs in, validated rows out, into DuckDB.

:func:`ingest` keeps the files given (:mod:`replay.ingest.keep`), and a
:class:`replay.ingest.route.Run` routes their lines to the pool
(:mod:`replay.ingest.pool`) and the batches back to the loader
(:mod:`replay.ingest.load`). :func:`reingest` does it again from every kept
file, replacing what was stored.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any, Final

import duckdb
import pyarrow as pa

from replay.ingest.keep import Durable, KeptFile, keep_file, links_work
from replay.ingest.load import IngestSummary, Progress
from replay.ingest.pool import ClusterPool, connect, make_pool
from replay.ingest.route import CHUNK_HANDS, Run
from replay.reader import NOT_A_LOG, display_names, iter_paths
from replay.store import (
    Layout,
    Refusal,
    StoreLocked,
    arrow_on_malloc,
    clean_tmp,
    default_db_path,
    layout,
    load_spool,
    one,
    open_store,
    pending_batches,
    stored_files,
)

__all__ = [
    "ANALYSIS_CHUNK_HANDS",
    "ANALYSIS_CHUNK_WEIGHT",
    "AUTO_BUDGET",
    "AUTO_SAMPLES",
    "INGEST_SAMPLES",
    "MEMORY_LIMIT",
    "ingest",
    "reingest",
]

#: Hands per batch when the batch carries the hands' analysis, at the least.
ANALYSIS_CHUNK_HANDS: Final = 100
#: A batch that carries the analysis closes at this many pair-game hands
#: (a hand weighed by replay.analysis.analysis_weight, divided by 1 + the
#: sampled deals): about three seconds of one core, so that a few costly
#: matches (royal_rumble's) land in batches of their own and two workers
#: share them; with 500, the README's first command took 15.6 s wall
#: instead of 12.9 (docs/analysis.md, "Scheduling and progress").
ANALYSIS_CHUNK_WEIGHT: Final = 250
#: Sampled deals per decision of the analysis made while the batches are
#: validated (`--analysis-samples N`): none, the perfect-information grade
#: of every move (about 10 ms a hand) travels with them. `replay ingest`
#: then adds the sampled grade itself, AUTO_SAMPLES deals a decision, when
#: what the store lacks is predicted to cost at most AUTO_BUDGET
#: CPU-seconds (replay.analysis.run.sampled_seconds: about a hundred pair
#: hands, or seven of royal_rumble); a bigger ingest leaves it to the
#: server's background grading (`replay serve`, api.deepen), or to
#: `replay analyze --db --samples N` in one go: the README's 1,037 sample
#: hands would take some 1,000 CPU-seconds (docs/analysis.md).
INGEST_SAMPLES: Final = 0
#: Sampled deals a decision `replay ingest` grades a small ingest with (the
#: server's background grading gives as many: api.serve.DEEPEN).
AUTO_SAMPLES: Final = 20
#: CPU-seconds of predicted sampled grading `replay ingest` does itself.
AUTO_BUDGET: Final = 30.0
#: DuckDB's memory while ingesting (its cache; the run streams), the
#: derivation of the player tables at the end included. That is when the
#: main process peaks: 1,156 MiB of anonymous memory at 1M hands, against
#: 1,313 with 512 MB and more with 768 MB
#: (one sorted insert of all the rows spilled below that; the inserts are of
#: 8 batches' rows each now, store.HELD_RUN_FILES, and their sorts take the
#: same CPU at 256 MB). The server opens the store with it too (a second
#: connection to a file in one process must be configured alike).
MEMORY_LIMIT: Final = "256MB"


def _writer(db: Path, threads: int | None) -> duckdb.DuckDBPyConnection:
    conn = open_store(db, threads=threads, memory_limit=MEMORY_LIMIT)
    # Bulk loading: checkpoint (rewrite the WAL into the file) every 128 MB,
    # not every 16 MB (it halved the load time). The moves go to the file at
    # their commit; the WAL holds the hands, matches and smaller tables, about
    # 400 MB at 1M hands. Checkpointed during the run (about 3 times at 1M),
    # they are compressed while the workers work, not in an 8 s checkpoint
    # at the end with one core idle (1M hands: 125.6 s and 122.8 s, against
    # 134.8 s with 2 GB, 130.2 s with 256 MB, 133.0 s with 64 MB). Each one
    # rewrites the matches' last row group, replays included (a table of
    # 82,000 rows at 1M hands is one row group), which is why more are not
    # better. Before the loads ran on one thread, a checkpoint also merged
    # the moves' partly filled row groups again, and mid-run checkpoints cost
    # more than they saved. The WAL keeps every commit durable either way.
    conn.execute("SET checkpoint_threshold = '128MB'")
    return conn


def _open_owner(db: Path, threads: int | None) -> duckdb.DuckDBPyConnection | None:
    try:
        return _writer(db, threads)
    except StoreLocked:
        return None


def _summarize(run: Run, summary: IngestSummary) -> None:
    summary.files = len(run.files) + summary.files_known
    summary.lines = sum(run.lines)
    summary.batches = len(run.batches)
    summary.bad_lines = sum(run.top_bad) + sum(
        n for per in run.worker_bad.values() for n in per.values()
    )
    for verdict, hands, codes in run.results.values():
        summary.matches += 1
        summary.hands += hands
        summary.verdicts[verdict] += 1
        summary.findings.update(codes)
    for fs in (*run.top.values(), *run.worker_top.values()):
        summary.findings.update(f.code for f in fs)
        summary.not_logs += [f"{f.file}: {f.message[f.message.find(NOT_A_LOG):]}"
                             for f in fs if f.code == "MALFORMED_LINE" and NOT_A_LOG in f.message]


def _checkpoint(conn: duckdb.DuckDBPyConnection) -> None:
    """Write the WAL into the file, unless readers of the same database (a
    server's pages, for an upload) are in a transaction: what was stored is
    committed all the same, and DuckDB checkpoints by itself later."""
    with contextlib.suppress(duckdb.TransactionException):
        conn.execute("CHECKPOINT")


def _load_spool(conn: duckdb.DuckDBPyConnection, lay: Layout, summary: IngestSummary) -> int:
    """Load what waits in the spool; a batch refused is told in the summary."""
    refused: list[Refusal] = []
    n = load_spool(conn, lay.spool, refused=refused)
    summary.refused += [r.line() for r in refused]
    return n


def _store_summary(conn: duckdb.DuckDBPyConnection, run: Run, summary: IngestSummary) -> None:
    """The verdicts and findings of the run's matches as stored (with SEED_REUSED
    and matches completed from earlier files)."""
    ids = sorted(k.decode("utf-8", "surrogatepass") for k in run.results)
    if not ids:
        return
    table = pa.table({"match": pa.array(ids, pa.string())})
    conn.register("_run_ids", table)
    try:
        summary.verdicts = Counter(dict(conn.execute(
            "SELECT verdict, count(*) FROM matches JOIN _run_ids USING (match) GROUP BY verdict"
        ).fetchall()))  # fmt: skip
        per_match = Counter(dict(conn.execute(
            "SELECT code, count(*) FROM findings JOIN _run_ids USING (match) GROUP BY code"
        ).fetchall()))  # fmt: skip
    finally:
        conn.unregister("_run_ids")
    for fs in (*run.top.values(), *run.worker_top.values()):
        per_match.update(f.code for f in fs)
    summary.findings = per_match


def _execute(
    lay: Layout,
    files: Iterable[KeptFile],
    *,
    mode: str,
    conn: duckdb.DuckDBPyConnection | None,
    pool: Any,
    chunk_hands: int,
    progress_out: IO[str] | None,
    summary: IngestSummary,
    extra_paths: Mapping[str, list[str]] | None = None,
    durable: Callable[[Collection[str] | None], None] | None = None,
    total_bytes: int | None = None,
    analysis: tuple[int, int] | None = None,
) -> IngestSummary:
    """Route, validate and store `files`, taken as they come (the next one
    may still be being kept); `durable(shas)` returns once the kept copies of
    those files (of all when None) are durable, and is called before the
    store first refers to them. `extra_paths`
    may still grow while `files` are taken; `total_bytes` is for the
    progress bar (the files' sizes by default)."""
    if extra_paths is None:
        extra_paths = {}
    t0 = time.perf_counter()
    if isinstance(files, Sequence):
        total_bytes = sum(f.size for f in files) if total_bytes is None else total_bytes
    else:
        assert total_bytes is not None, "the size of files still to come"
    source = iter(files)
    first = next(source, None)
    if first is None:  # nothing new: nothing is written
        summary.loaded = conn is not None
        return summary
    progress = Progress(total_bytes, progress_out)
    workers = getattr(pool, "_max_workers", 0)
    if analysis is not None:  # a hand's analysis costs a hundred times its validation and more: smaller tasks
        chunk_hands = min(chunk_hands, max(ANALYSIS_CHUNK_HANDS, ANALYSIS_CHUNK_WEIGHT // (1 + analysis[0])))
    run = Run(lay, itertools.chain((first,), source), mode=mode, conn=conn, pool=pool, workers=max(workers, 1),
               chunk_hands=chunk_hands, progress=progress, durable=durable, analysis=analysis)  # fmt: skip
    try:
        t_route = time.thread_time()
        run.route()
        final = run.final_batch(extra_paths)
        summary.stages["route (main)"] = time.thread_time() - t_route
        if run.loader is not None:
            run.loader.jobs.put((final, None))  # its log_files rows name every file
    finally:
        run.close()
        progress.close()
        if pool is not None:
            # every result is in: the workers' memory (about 450 MiB for two)
            # goes back before the loader derives the player tables, the
            # run's peak (DuckDB's 768 MB)
            pool.shutdown(wait=True, cancel_futures=True)
        if run.segments is not None:  # no worker reads them any more
            run.segments.close()
        if run.loader is not None:
            run.loader.finish()  # re-raises what the loader ran into
    _summarize(run, summary)
    for k in ("parse", "validate", "frames", "write", "analysis"):
        if k in run.stages or k != "analysis":
            summary.stages[f"{k} (workers)"] = run.stages[k]
    if run.remote:
        summary.stages["spool (main)"] = run.spooled
    if run.loader is not None:
        summary.stages["load (wall)"] = run.loader.seconds
        summary.stages["derive (wall)"] = run.loader.derive_seconds
        summary.stages["reports (wall)"] = run.loader.report_seconds
    if conn is not None:
        _load_spool(conn, lay, summary)  # batches of a run killed before this one
        _store_summary(conn, run, summary)
        summary.loaded = True
        t_ck = time.perf_counter()
        _checkpoint(conn)
        summary.stages["checkpoint (wall)"] = time.perf_counter() - t_ck
        return summary
    # The holder may be gone by now (another ingest that ended): try once more.
    late = _open_owner(lay.db, None)
    if late is not None:
        try:
            _load_spool(late, lay, summary)
            _store_summary(late, run, summary)
            summary.loaded = True
        finally:
            late.close()
    else:
        summary.pending = len(pending_batches(lay.spool))
    summary.seconds = time.perf_counter() - t0
    return summary


@arrow_on_malloc()
def ingest(
    paths: Sequence[str | os.PathLike[str]],
    *,
    db: str | os.PathLike[str] | None = None,
    workers: int = 2,
    chunk_hands: int = CHUNK_HANDS,
    progress_out: IO[str] | None = None,
    cluster: str | ClusterPool | None = None,
    analysis: tuple[int, int] | None = None,
    labels: Mapping[str, str] | None = None,
) -> IngestSummary:
    """Ingest log files and folders into the store at ``db`` (the flow: :mod:`replay.ingest`).

    ``labels`` names files otherwise than by the path given (an upload's
    temporary file by the name it was sent with), as findings and
    ``log_files`` show them.

    If another process holds the database, the validated batches stay in
    the spool for it (``summary.loaded`` is False). With ``analysis``
    (samples, seed), the workers analyse every hand too (replay.analysis).
    Raises :class:`replay.reader.UsageError` for a path that does not exist or a
    folder with no log in it. A file that is no table log is stored as one
    bad line and named in ``summary.not_logs``. With ``cluster`` (an
    address, or a :class:`replay.ingest.pool.ClusterPool`) the shards are
    validated (and analysed) there instead of in ``workers`` processes.
    """
    if isinstance(cluster, str):
        with connect(cluster) as remote:
            return ingest(paths, db=db, chunk_hands=chunk_hands, progress_out=progress_out, cluster=remote,
                          analysis=analysis, labels=labels)  # fmt: skip
    t0 = time.perf_counter()
    db_path = Path(db) if db is not None else default_db_path()
    found = list(iter_paths(paths))
    lay = layout(db_path).make()
    clean_tmp(lay)
    pool = cluster if cluster is not None else make_pool(workers)  # first: before any thread exists
    conn = None
    durable: Durable | None = None
    summary = IngestSummary(db=str(db_path))
    try:
        conn = _open_owner(db_path, (workers or None) if cluster is None else None)
        if conn is not None:
            _load_spool(conn, lay, summary)
        kept: dict[str, KeptFile] = {}
        extra_paths: dict[str, list[str]] = {}
        known: set[str] = set()
        # two files at a time: hashing lets go of the GIL (a 450 MB file:
        # sha256 1.0 s, write 0.3); the run routes each file as soon as it is
        # kept, while the next ones are hashed and copied, and the fsyncs
        # follow in a thread of their own (Durable)
        sync = not links_work(lay.logs)
        keepers = ThreadPoolExecutor(2, thread_name_prefix="keep")
        # findings and pages name a file from the folder given, never by the server's path
        named = {**display_names(paths, found), **(labels or {})}
        futures = [keepers.submit(keep_file, p, lay, sync=sync, label=named.get(os.fspath(p))) for p in found]
        durable = Durable(futures, lay)
        durable.start()

        def todo() -> Iterator[KeptFile]:
            """The kept files in order, as they come; none twice, none stored before."""
            for fut in futures:
                kf = fut.result()
                if kf.sha256 in kept:
                    extra_paths.setdefault(kf.sha256, []).append(kf.path)
                    continue
                kept[kf.sha256] = kf
                if conn is not None and one(conn, "SELECT 1 FROM log_files WHERE sha256 = ?", [kf.sha256]):
                    known.add(kf.sha256)
                    continue
                yield kf

        try:
            _execute(lay, todo(), mode="add", conn=conn, pool=pool, chunk_hands=chunk_hands,
                     progress_out=progress_out, summary=summary, extra_paths=extra_paths,
                     durable=durable.wait, total_bytes=sum(os.path.getsize(p) for p in found),
                     analysis=analysis)  # fmt: skip
        finally:
            keepers.shutdown(wait=True, cancel_futures=True)
        summary.files_known = len(known)
        durable.wait()  # a run with nothing to store never asked
        if conn is not None:
            _record_paths(conn, kept, known, {s: ps for s, ps in extra_paths.items() if s in known})
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        if conn is not None:
            conn.close()
        if durable is not None:
            durable.join()
            durable.drop()
    summary.seconds = time.perf_counter() - t0
    return summary


def _record_paths(
    conn: duckdb.DuckDBPyConnection,
    kept: Mapping[str, KeptFile],
    known: set[str],
    extra: Mapping[str, list[str]],
) -> None:
    """Paths a stored file was read from again (nothing else changes)."""
    rows = [(sha, kf.path) for sha, kf in kept.items() if sha in known]
    rows += [(sha, p) for sha, ps in extra.items() for p in ps]
    for sha, p in rows:
        conn.execute(
            "UPDATE log_files SET paths = list_append(paths, ?) "
            "WHERE sha256 = ? AND NOT list_contains(paths, ?)",
            [p, sha, p],
        )


@arrow_on_malloc()
def reingest(
    *,
    db: str | os.PathLike[str] | None = None,
    workers: int = 2,
    chunk_hands: int = CHUNK_HANDS,
    progress_out: IO[str] | None = None,
    cluster: str | ClusterPool | None = None,
    analysis: tuple[int, int] | None = None,
) -> IngestSummary:
    """Validate everything again from the kept files and replace the derived rows.

    Needs the database for writing (raises :class:`StoreLocked` otherwise).
    ``cluster`` and ``analysis`` as for :func:`ingest`.
    """
    if isinstance(cluster, str):
        with connect(cluster) as remote:
            return reingest(db=db, chunk_hands=chunk_hands, progress_out=progress_out, cluster=remote,
                            analysis=analysis)  # fmt: skip
    t0 = time.perf_counter()
    db_path = Path(db) if db is not None else default_db_path()
    lay = layout(db_path).make()
    pool = cluster if cluster is not None else make_pool(workers)  # first: before any thread exists
    try:
        conn = _writer(db_path, (workers or None) if cluster is None else None)
    except BaseException:
        if pool is not None:
            pool.shutdown(wait=True)
        raise
    summary = IngestSummary(db=str(db_path))
    try:
        _load_spool(conn, lay, summary)
        rows = stored_files(conn)
        labels = Counter(r["path"] for r in rows)
        files = [
            KeptFile(
                r["path"] if labels[r["path"]] == 1 else f"{r['path']}#{r['sha256'][:12]}",
                r["sha256"], r["size"], r["stored"], lay.data / r["stored"],
            )
            for r in rows
        ]  # fmt: skip
        _execute(lay, files, mode="replace", conn=conn, pool=pool, chunk_hands=chunk_hands,
                 progress_out=progress_out, summary=summary, analysis=analysis)  # fmt: skip
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        conn.close()
    summary.seconds = time.perf_counter() - t0
    return summary
