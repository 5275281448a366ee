"""`replay ingest` / `replay reingest`: logs in, validated rows out, into DuckDB.

The flow of one run::

    files ──keep (sha256 + copy to data/logs/)──► kept copies
          ──route (main process: bytes only)───► lines grouped by match;
                                                  a match is ready at its match_end
          ──chunks of whole matches──► process pool: parse, validate_match,
                                       Arrow frames, one Arrow batch in spool/
          ──loader thread (if we own the DB)──► store.load_batches: each batch as it
                                       comes, 8 a transaction, committed once the
                                       kept copies they name are durable
          ──final batch──► log_files rows and the lines of no match

The main process never parses JSON on the hot path: a server line starts
``{"type":"X","match":"ID"``, so the type and match id are byte slices.
Anything else takes the slow path (the reader's full parse). Parsing and
validation, the expensive part, run in the workers; memory holds the
matches still in progress, a chunk or two of finished ones, and nothing
else.

A rematch waits for the match it follows (its first leader decides the
rematch's first lead): in the same chunk, in a side chunk sent once the
earlier match's result is back, or from the store. The chunks depend only
on the lines read, so a batch is named by its content (replay.shards).

With ``--cluster`` (replay.cluster) the pool is a dask.distributed cluster:
the tasks carry their lines, the results the batch's files, written into
the spool here (docs/scale.md).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import hashlib
import itertools
import multiprocessing
import os
import queue
import sys
import tempfile
import threading
import time
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import (
    FIRST_COMPLETED,
    Future,
    ProcessPoolExecutor,
    ThreadPoolExecutor,
    wait,
)
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Final

import duckdb
import orjson
import pyarrow as pa

from replay import events as ev
from replay import handoff
from replay.accel import native
from replay.cluster import ClusterError, ClusterPool
from replay.fastmatch import fast_report
from replay.frames import Frames, file_table, findings_table, first_leader

# The reader's line splitting and gzip handling, so that line numbers and
# broken files count exactly as in `replay validate`.
from replay.reader import (  # noqa: PLC2701
    MAX_LINE_BYTES,
    NOT_A_LOG,
    BadLine,
    EventLine,
    Record,
    UsageError,
    _Broken,
    _chunks,
    _not_utf8,
    _split,
    _whole_lines,
    iter_paths,
    parse_line,
)
from replay.report import FileReport, Finding, MatchReport, ValidationReport
from replay.scan import scan_buffer
from replay.shards import CodeMismatch, Shard, check_code, code_version
from replay.store import (
    GROUP_BATCHES,
    HeldRows,
    Layout,
    StoreLocked,
    arrow_on_malloc,
    clean_tmp,
    default_db_path,
    derive_player_rows,
    encode_tables,
    fsync_path,
    keep_reports,
    layout,
    load_batches,
    load_spool,
    one,
    open_store,
    pending_batches,
    ratings_beside,
    stored_files,
    write_batch,
    write_encoded,
)
from replay.validate import line_finding as _validate_line_finding
from replay.validate import seed_reuse, validate_match, with_findings

__all__ = [
    "IngestSummary",
    "KeptFile",
    "add_ingest_parsers",
    "ingest",
    "keep_file",
    "read_match_records",
    "reingest",
    "revalidate",
    "run_ingest",
    "run_reingest",
    "validate_routed",
]

#: Hands per batch: a transaction of the loader and a task of the pool.
CHUNK_HANDS: Final = 10000
#: Hands per batch when the batch carries the hands' analysis, at the least
#: (500 without sampling, about ten seconds a batch; fewer with).
ANALYSIS_CHUNK_HANDS: Final = 100
#: Sampled deals per decision of the analysis made at ingest (`--analysis-samples`):
#: none by default. The perfect-information grade of every move costs about
#: 20 ms a hand; ten sampled deals a decision cost ten times that (200 ms a
#: hand, bench/analysis.py), so the server adds them in the background
#: (`replay serve --deepen`), or `replay analyze --db --samples N` in one go.
INGEST_SAMPLES: Final = 0
#: Bytes the C router reads at a time (cut at a line end).
ROUTE_BYTES: Final = 8 * 1024 * 1024

_TYPE: Final = b'{"type":"'
#: DuckDB's memory while ingesting (its cache; the run streams), the
#: derivation of the player tables at the end included. That is when the
#: main process peaks: 1,156 MiB of anonymous memory at 1M hands, against
#: 1,313 with 512 MB and more with 768 MB, which it had until session 9
#: (one sorted insert of all the rows spilled below that; the inserts are of
#: 8 batches' rows each now, store.HELD_RUN_FILES, and their sorts take the
#: same CPU at 256 MB).
_MEMORY: Final = "256MB"
_GZIP: Final = b"\x1f\x8b"
_MATCH: Final = b'","match":"'


# -- kept files ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KeptFile:
    """A log file as read: its label (the path given), hash and kept copy.

    ``kept`` is where its bytes are read from: the copy under its name, or
    (``temp``) a copy not yet durable, which `_Durable` syncs and links under
    its name while the run goes on.
    """

    path: str
    sha256: str
    size: int
    stored: str  # relative to the data directory
    kept: Path
    temp: bool = False


def keep_file(
    path: str | os.PathLike[str], lay: Layout, *, sync: bool = True, label: str | None = None
) -> KeptFile:
    """Copy a file into data/logs/<sha256>.jsonl[.gz], hashing in the same pass
    (so the copy is exactly the bytes hashed, even if the file grows).
    ``label``: the name findings give the file (default: the path given).

    A name under logs/ only ever holds a durable copy. With ``sync=False`` a
    new copy is left in its temporary file (``temp``), for `_Durable`.
    """
    lay.logs.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=lay.logs, prefix=f".{os.getpid()}.", suffix=".tmp")
    tmp = Path(name)
    h = hashlib.sha256()
    size = 0
    head = b""
    with open(path, "rb") as src, os.fdopen(fd, "wb") as dst:
        while block := src.read(1 << 20):
            if not size:
                head = block[:2]
            h.update(block)
            dst.write(block)
            size += len(block)
        dst.flush()
        if sync:
            os.fsync(dst.fileno())
    sha = h.hexdigest()
    stored = f"logs/{sha}" + (".jsonl.gz" if head == _GZIP else ".jsonl")
    target = lay.data / stored
    name = label or os.fspath(path)
    if target.exists():
        tmp.unlink()
    elif not sync:
        return KeptFile(name, sha, size, stored, tmp, temp=True)
    else:
        os.replace(tmp, target)
        fsync_path(lay.logs)
    return KeptFile(name, sha, size, stored, target)


def _links_work(where: Path) -> bool:
    """Whether `where` (the logs folder) takes hard links: `_Durable` needs them."""
    where.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=where, prefix=f".{os.getpid()}.", suffix=".tmp")
    os.close(fd)
    probe = Path(name)
    other = probe.with_name(probe.name + ".link.tmp")
    try:
        os.link(probe, other)
    except OSError:
        return False
    else:
        other.unlink()
        return True
    finally:
        probe.unlink(missing_ok=True)


class _Durable(threading.Thread):
    """Syncs the run's new kept copies and links each under its name, off the
    critical path (a 450 MB file: write 0.3 s, fsync 0.8 s; at 1M hands the
    fsyncs were 10 s of the run's start, every worker idle).

    ``files`` are kept files, or futures of files still being kept (taken in
    order, as they come). The run reads the temporary copies meanwhile.
    `wait` is the barrier: the store refers to a kept file only after it
    is durable under its name (a batch's commit waits for the files of that
    batch, not for all of them). `drop` removes the temporary names at the
    end; a run killed first leaves them to `clean_tmp`.
    """

    def __init__(self, files: Iterable[KeptFile | Future[KeptFile]], lay: Layout) -> None:
        super().__init__(name="replay-durable", daemon=True)
        self.source = list(files)
        self.files: list[KeptFile] = []  # the temporary copies seen
        self.lay = lay
        self.error: BaseException | None = None
        self.ready: set[str] = set()  # the sha256 of every file durable under its name
        self.over = False
        self.cond = threading.Condition()

    def run(self) -> None:
        try:
            for item in self.source:
                f = item.result() if isinstance(item, Future) else item
                if f.temp:
                    self.files.append(f)
                    fsync_path(f.kept)
                    with contextlib.suppress(FileExistsError):  # the same bytes twice in the run
                        os.link(f.kept, self.lay.data / f.stored)
                    fsync_path(self.lay.logs)  # the new name is durable too
                with self.cond:
                    self.ready.add(f.sha256)
                    self.cond.notify_all()
        except BaseException as exc:  # raised by wait(), in the run's thread
            self.error = exc
        finally:
            with self.cond:
                self.over = True
                self.cond.notify_all()

    def wait(self, shas: Collection[str] | None = None) -> None:
        """Return once the kept copies of ``shas`` (of every file when None)
        are durable under their names, or raise why not.

        A sha256 the run does not keep was durable before it: it is waited
        for as every file is.
        """
        if self.ident is None:  # never started: nothing to wait for
            return
        with self.cond:
            self.cond.wait_for(lambda: self.over or (shas is not None and self.ready.issuperset(shas)))
            if shas is not None and self.ready.issuperset(shas):
                return
        if self.error is not None:
            raise self.error

    def drop(self) -> None:
        for item in self.source:
            if isinstance(item, Future):
                if not item.done() or item.cancelled() or item.exception() is not None:
                    continue
                item = item.result()
            if item.temp:
                item.kept.unlink(missing_ok=True)


# -- lines of one match ----------------------------------------------------------


def _fast_key(raw: bytes) -> tuple[bytes, bytes] | None:
    """(match id, type) of a line in the server's own layout, else None.

    Exact: the id has no escapes, and no second "match" key follows (JSON
    readers keep the last one); anything else is read by the slow path.
    """
    if raw.startswith(_TYPE):
        j = raw.find(b'"', 9)
        if raw.startswith(_MATCH, j):
            k = raw.find(b'"', j + 11)
            if k > j + 11:
                key = raw[j + 11 : k]
                if key.isascii() and b"\\" not in key and raw.find(b'"match"', k) < 0:
                    return key, raw[9:j]
    return None


def _parse(raw: bytes, label: str, n: int) -> Record:
    """One non-blank line as the reader reads it."""
    if raw[-1:] == b"\r":
        raw = raw[:-1]
    try:
        text = raw.decode()
    except UnicodeDecodeError as exc:
        return _not_utf8(raw, exc, label, n)
    return parse_line(text, label, n)


def _is_blank(raw: bytes) -> bool:
    return not (raw[:-1] if raw[-1:] == b"\r" else raw).strip(b" \t")


def _rec_match(rec: Record) -> str | None:
    return rec.event.match if isinstance(rec, EventLine) else rec.match


def _key(match: str) -> bytes:
    return match.encode("utf-8", "surrogatepass")


def _line_finding(rec: BadLine) -> Finding:
    """A line of no match, worded as validate.group_records does."""
    return Finding(rec.code, f"{rec.file}: {rec.message}", rec.hand, rec.seq, rec.file, rec.line, rec.match)


def read_match_records(
    files: Sequence[tuple[str, Path]], wanted: Iterable[str]
) -> dict[str, list[Record]]:
    """The records of the wanted matches in (label, path) files, in read order.

    Only the lines of those matches are parsed (the match id is read from
    the bytes first), so a big kept file costs a scan, not a parse.
    """
    keys = {_key(m): m for m in wanted}
    out: dict[str, list[Record]] = {m: [] for m in keys.values()}
    for label, path in files:
        n = 0
        with contextlib.suppress(_Broken):  # the break is a finding of the file
            for raw in _split(_chunks(path)):
                n += 1
                if raw is None:
                    continue
                fast = _fast_key(raw)
                if fast is not None:
                    m = keys.get(fast[0])
                    if m is None:
                        continue
                    rec = _parse(raw, label, n)
                    got = _rec_match(rec)
                    if got is not None:
                        out.setdefault(got, []).append(rec)
                elif not _is_blank(raw):
                    rec = _parse(raw, label, n)
                    got = _rec_match(rec)
                    if got is not None and _key(got) in keys:
                        out[got].append(rec)
    return out


# -- the work of a pool worker ---------------------------------------------------


@dataclass(slots=True)
class _Item:
    """The lines of one match for a worker: raw lines joined by newlines."""

    key: bytes
    blob: bytes
    lines: array[int]
    segments: list[tuple[int, int]]  # (file index, first line index in it)
    parent: bytes | None = None  # the match it is a rematch of


@dataclass(slots=True)
class _Task:
    batch: str
    mode: str
    spool: str | None  # None: the batch's files come back as bytes (a worker elsewhere)
    files: list[tuple[str, str, str]]  # (label, sha256, kept path) by file index
    items: list[_Item] = field(default_factory=list)
    refetch: list[tuple[bytes, list[int]]] = field(default_factory=list)  # read again from files
    leaders: dict[str, int | None] = field(default_factory=dict)
    # the items' blobs in a shared memory segment (replay.handoff): its name
    # and each blob's (start, end); the items then carry empty blobs
    shared: tuple[str, array[int]] | None = None
    # the pid of the process that loads the batch itself (store.write_batch's owner)
    owner: int | None = None
    # (samples, seed) of the hand analysis (replay.analysis) the batch carries; None: none
    analysis: tuple[int, int] | None = None
    kind: str = "ingest"  # or "validate": the reports come back, no batch is made
    version: str = ""  # the sender's code (replay.shards.code_version), checked by a worker
    order: str = ""  # the batch's place among those of its run (a content-named batch)


@dataclass(slots=True)
class _Result:
    batch: str
    hands: int
    summary: list[tuple[bytes, str, int, tuple[str, ...]]]  # key, verdict, hands, codes
    leaders: dict[bytes, int | None]
    top: dict[bytes, list[Finding]]  # lines of no match, by routing key
    bad: dict[bytes, dict[str, int]]  # bad lines by routing key and sha256
    path: str
    stages: dict[str, float]  # CPU seconds: parse, validate, frames, write
    # a worker elsewhere: the batch's files as bytes (store.encode_tables) and manifest
    parts: dict[str, bytes] | None = None
    manifest: dict[str, Any] | None = None
    reports: list[MatchReport] | None = None  # kind "validate": the matches' reports


def _item_records(item: _Item, files: Sequence[tuple[str, str, str]]) -> Iterator[Record]:
    raws = item.blob.split(b"\n")
    bounds = [start for _, start in item.segments[1:]] + [len(raws)]
    for (fi, start), stop in zip(item.segments, bounds, strict=True):
        label = files[fi][0]
        for i in range(start, stop):
            yield _parse(raws[i], label, item.lines[i])


def _fast_item(
    item: _Item, files: Sequence[tuple[str, str, str]], leaders: Mapping[str, int | None], frames: Frames | None
) -> MatchReport | None:
    """The report of a clean match read by the C scanner, its moves in
    ``frames.columns`` (none kept without frames); None when it must be
    parsed and validated line by line."""
    if native is None or len(item.segments) != 1:
        return None
    label, sha, _ = files[item.segments[0][0]]
    fs = scan_buffer(item.blob, label)
    if fs.top or len(fs.sources) != 1:
        return None
    (src,) = fs.sources.values()
    if _key(src.match) != item.key:
        return None
    rep = fast_report(src, rematch_leaders=leaders, moves=frames.columns if frames is not None else None)
    if rep is not None:
        # the scanner numbered the lines of the match's blob: the seeds' lines in the file
        lines = item.lines
        rep = replace(rep, seed_lines=tuple((h, f, lines[n - 1]) for h, f, n in rep.seed_lines))
        if frames is not None:
            frames.add(rep, {sha: src.count})
    return rep


def _work(task: _Task) -> _Result:
    """Parse, validate and write one batch (runs in a pool worker).

    Match by match: one match's parsed lines are alive at a time, the
    reports (and their moves) until the batch is written.

    The cyclic GC is off meanwhile: parsing and validating allocate
    millions of small tracked objects while the batch's reports stay
    alive, and every full collection would walk all of them again (it
    more than doubled the time). Reports hold no cycles; refcounting
    frees them, and a collection between tasks catches the rest. What
    survives it (modules, tables, caches) is frozen out of later
    collections: walking it again took 35 ms a task, 1 ms without.
    """
    check_code(task.version)
    if task.shared is not None:
        for item, blob in zip(task.items, handoff.receive(*task.shared), strict=True):
            item.blob = blob
        task.shared = None
    gc.collect()
    if multiprocessing.parent_process() is not None:  # a pool worker, not an in-process run
        gc.freeze()
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _work_batch(task)
    finally:
        if enabled:
            gc.enable()


def _work_batch(task: _Task) -> _Result:
    clock = time.process_time
    stages: defaultdict[str, float] = defaultdict(float)
    where = {label: sha for label, sha, _ in task.files}
    top: dict[bytes, list[Finding]] = {}
    bad: dict[bytes, dict[str, int]] = {}
    validating = task.kind == "validate"
    frames = Frames(task.batch, where) if not validating else None
    reports: list[MatchReport] = []
    line_finding = _validate_line_finding if validating else _line_finding
    leaders = dict(task.leaders)
    out_leaders: dict[bytes, int | None] = {}
    summary: list[tuple[bytes, str, int, tuple[str, ...]]] = []
    hands = 0

    def take(key: bytes, recs: Iterable[Record]) -> dict[str, list[Record]]:
        groups: dict[str, list[Record]] = {}
        for rec in recs:
            if rec.__class__ is BadLine:
                sha = where[rec.file]
                per = bad.setdefault(key, {})
                per[sha] = per.get(sha, 0) + 1
            m = _rec_match(rec)
            if m is None:
                top.setdefault(key, []).append(line_finding(rec))  # type: ignore[arg-type]
            else:
                groups.setdefault(m, []).append(rec)
        return groups

    def check(key: bytes, groups: dict[str, list[Record]]) -> None:
        nonlocal hands
        for m, recs in groups.items():
            rep = validate_match(recs, rematch_leaders=leaders, keep_moves=not validating)
            lead = first_leader(rep)
            leaders[m] = lead
            out_leaders[_key(m)] = lead
            if frames is not None:
                frames.add(rep, Counter(where[r.file] for r in recs))
            else:
                reports.append(rep)
            hands += len(rep.hands)
            summary.append((key, rep.verdict, len(rep.hands), tuple(f.code for f in rep.findings)))

    for item in task.items:
        t0 = clock()
        rep = _fast_item(item, task.files, leaders, frames)
        if rep is not None:  # a clean match, validated hand by hand (replay.fastmatch)
            lead = first_leader(rep)
            leaders[rep.match] = out_leaders[item.key] = lead
            hands += len(rep.hands)
            summary.append((item.key, rep.verdict, len(rep.hands), ()))
            if frames is None:
                reports.append(rep)
            stages["validate"] += clock() - t0
            continue
        groups = take(item.key, _item_records(item, task.files))
        t1 = clock()
        check(item.key, groups)
        stages["parse"] += t1 - t0
        stages["validate"] += clock() - t1
    if task.refetch:
        t0 = clock()
        wanted = {key.decode("utf-8", "surrogatepass"): key for key, _ in task.refetch}
        fis = sorted({fi for _, idx in task.refetch for fi in idx})
        got = read_match_records([(task.files[fi][0], Path(task.files[fi][2])) for fi in fis], wanted)
        stages["parse"] += clock() - t0
        for m, recs in got.items():
            key = wanted.get(m, _key(m))
            check(key, take(key, recs))
    if frames is None:
        return _Result(task.batch, hands, summary, out_leaders, top, bad, "", dict(stages), reports=reports)
    t0 = clock()
    tables = frames.tables()
    if task.analysis is not None:
        from replay.analysis import analyze_tables

        t_an = clock()
        tables.update(analyze_tables(tables, *task.analysis))
        stages["analysis"] += clock() - t_an
        t0 += clock() - t_an  # the frames stage is the frames alone
    t1 = clock()
    used = {sha for _, sha, _ in frames.file_lines}
    listed = {sha: {"path": lb, "kept": kept} for lb, sha, kept in task.files if sha in used}
    meta: dict[str, Any] = {"mode": task.mode, "files": listed}
    if task.analysis is not None:
        meta["analysis"] = list(task.analysis)
    if task.order:
        meta["order"] = task.order
    stages["frames"] += t1 - t0
    if task.spool is None:  # the owner of the spool writes it (_Run._collect)
        parts = encode_tables(tables)
        stages["write"] += clock() - t1
        return _Result(task.batch, hands, summary, out_leaders, top, bad, "", dict(stages),
                       parts=parts, manifest=meta)  # fmt: skip
    path = write_batch(Path(task.spool), task.batch, tables, meta, owner=task.owner)
    stages["write"] += clock() - t1
    return _Result(task.batch, hands, summary, out_leaders, top, bad, str(path), dict(stages))


def _kept_by_name(data_dir: Path, sha: str) -> Path:
    found = sorted(data_dir.glob(f"logs/{sha}.jsonl*"))
    if not found:
        raise FileNotFoundError(f"kept log {sha} is missing from {data_dir / 'logs'}")
    return found[0]


def revalidate(
    conn: duckdb.DuckDBPyConnection,
    data_dir: Path,
    wanted: Mapping[str, set[str]],
    batch: str,
    manifest: Mapping[str, Any],
) -> dict[str, pa.Table]:
    """Validate matches again from all their kept files (match -> sha256s).

    Used by the loader when a match's lines are spread over batches of
    different runs. Rematches get their first leader from the store.
    """
    shas = sorted(set().union(*wanted.values()))
    known = {
        sha: (path, stored)
        for sha, path, stored in conn.execute(
            "SELECT sha256, path, stored FROM log_files WHERE list_contains(?, sha256)", [shas]
        ).fetchall()
    }
    listed = manifest.get("files", {})
    files: list[tuple[str, Path, str]] = []
    labels: Counter[str] = Counter()
    for sha in shas:
        if sha in known:
            label, stored = known[sha]
            path = data_dir / stored
        elif sha in listed:
            label, path = listed[sha]["path"], Path(listed[sha]["kept"])
            if not path.exists():  # the run's temporary copy, gone when it ended
                path = _kept_by_name(data_dir, sha)
        else:
            path = _kept_by_name(data_dir, sha)
            label = str(path)
        labels[label] += 1
        files.append((label, path, sha))
    # Two different files read from one path (a rotated log): tell them apart.
    files = [(f"{lb}#{sha[:12]}" if labels[lb] > 1 else lb, p, sha) for lb, p, sha in files]
    where = {lb: sha for lb, _, sha in files}
    records = read_match_records([(lb, p) for lb, p, _ in files], wanted)
    parents = {
        rec.event.rematch_of
        for recs in records.values()
        for rec in recs
        if isinstance(rec, EventLine) and isinstance(rec.event, ev.MatchStart) and rec.event.rematch_of
    }
    leaders: dict[str, int | None] = {}
    if parents:
        leaders = dict(
            conn.execute(
                "SELECT match, first_leader FROM matches WHERE list_contains(?, match)", [sorted(parents)]
            ).fetchall()
        )
    frames = Frames(batch, where)
    for m in sorted(wanted):
        recs = records.get(m)
        if not recs:
            raise FileNotFoundError(f"no line of match {m!r} in its kept files")
        frames.add(validate_match(recs, rematch_leaders=leaders), Counter(where[r.file] for r in recs))
    tables = frames.tables()
    if manifest.get("analysis"):  # the batch analyses its hands: these too
        from replay.analysis import analyze_tables

        samples, seed = manifest["analysis"]
        tables.update(analyze_tables(tables, samples, seed))
    return tables


# -- the main process: routing lines to matches ----------------------------------


class _Pending:
    """Lines of a match still being read."""

    __slots__ = ("fi", "hands", "lines", "parent", "raws", "segments", "start")

    def __init__(self, fi: int) -> None:
        self.fi = fi
        self.raws: list[bytes] = []  # lines, or runs of lines joined by newlines
        self.lines = array("q")  # the number of each line
        self.segments: list[tuple[int, int]] = [(fi, 0)]
        self.hands = 0
        self.start: bytes | None = None  # the match_start line (rematch_of)
        self.parent: bytes | None = None

    def add(self, fi: int, raw: bytes, n: int) -> None:
        if fi != self.fi:
            self.fi = fi
            self.segments.append((fi, len(self.lines)))
        self.raws.append(raw)
        self.lines.append(n)

    def item(self, key: bytes) -> _Item:
        return _Item(key, b"\n".join(self.raws), self.lines, self.segments, self.parent)


def _parent_of(p: _Pending) -> bytes | None:
    if p.start is None:
        return None
    try:
        obj = orjson.loads(p.start)
    except orjson.JSONDecodeError:
        return None
    parent = obj.get("rematch_of") if isinstance(obj, dict) else None
    return _key(parent) if isinstance(parent, str) and parent else None


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

    def lines_out(self) -> list[str]:
        v = self.verdicts
        out = [f"error: {what}" for what in self.not_logs]
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
            out.append(f"stored in {self.db} ({self.batches} batches)")
        else:
            out.append(
                f"{self.db} is open in another process (the server?): {self.pending} batches "
                "left in the spool; it loads them"
            )
        return out


class _Progress:
    """One line on a terminal (stderr, only if a tty): hands validated,
    hands/s and ETA. The total is estimated from the hands read so far and
    the share of the bytes read (the pool is a few chunks behind the reading)."""

    def __init__(self, total_bytes: int, out: IO[str] | None) -> None:
        self.total = max(total_bytes, 1)
        self.out = out if out is not None and out.isatty() else None
        self.t0 = time.monotonic()
        self.last = 0.0

    def show(self, done_bytes: float, read: int, done: int, *, force: bool = False) -> None:
        if self.out is None:
            return
        now = time.monotonic()
        if not force and now - self.last < 0.25:
            return
        self.last = now
        share = min(done_bytes / self.total, 1.0)
        expected = max(read / share if share > 0.001 else 0.0, done, 1.0)
        frac = min(done / expected, 1.0)
        dt = now - self.t0
        rate = done / dt if dt > 0 else 0.0
        eta = f"{int((expected - done) / rate) // 60}:{int((expected - done) / rate) % 60:02d}" if rate else "?"
        bar = "#" * int(frac * 30)
        self.out.write(
            f"\r[{bar:<30}] {frac:6.1%}  {done:>10,} hands  {rate:>8,.0f} hands/s  ETA {eta:>5}  "
            f"(read {share:.0%}) "
        )
        self.out.flush()

    def close(self) -> None:
        if self.out is not None:
            self.out.write("\n")
            self.out.flush()


class _Loader(threading.Thread):
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
                with ratings_beside(self.conn):  # the ratings meanwhile, beside both
                    self._timed(derive_player_rows, self.conn, reports=False, held=self.held)
                    self.held.drop()
                    t1 = time.perf_counter()
                    if self.error is None:
                        self._timed(keep_reports, self.conn)
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

    def __init__(self, loader: _Loader, first: tuple[Path, frozenset[str] | None]) -> None:
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


class _Run:
    """One ingest (or reingest) run: routing, the pool, the loader."""

    def __init__(
        self,
        lay: Layout | None,
        files: Iterable[KeptFile],
        *,
        mode: str,
        conn: duckdb.DuckDBPyConnection | None,
        pool: Any,
        workers: int,
        chunk_hands: int,
        progress: _Progress,
        durable: Callable[[Collection[str] | None], None] | None = None,
        kind: str = "ingest",
        analysis: tuple[int, int] | None = None,
    ) -> None:
        self.lay = lay
        self.kind = kind  # "ingest", or "validate" (no store: the reports come back)
        self.analysis = analysis
        # a pool elsewhere (replay.cluster): tasks carry their bytes, results
        # bring the batches' files, and this process writes them
        self.remote = bool(getattr(pool, "remote", False))
        self.version = code_version()
        self.line_finding = _validate_line_finding if kind == "validate" else _line_finding
        self.first: dict[bytes, tuple[int, int]] = {}  # (file index, line) a match starts at
        self.reports: dict[bytes, list[MatchReport]] = {}  # kind "validate"
        self.spooled = 0.0  # seconds writing the batches workers elsewhere sent
        self.source = files  # taken one at a time by route()
        self.files: list[KeptFile] = []  # routed or being routed, by file index
        self.mode = mode
        self.conn = conn
        self.lookup = conn.cursor() if conn is not None else None
        self.chunk_hands = chunk_hands
        self.progress = progress
        self.run_id = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f") + f"-{os.getpid()}"
        self.seq = 0
        self.task_files: list[tuple[str, str, str]] = []  # (label, sha256, kept path) by file index
        self.pool = pool
        # one more chunk fills meanwhile; workers elsewhere have a few more
        # queued while they work (the bytes take their time to travel; each
        # chunk out is some 36 MB held here until its result is back)
        self.max_inflight = workers + min(workers, 4) if self.remote else workers
        # the chunks' bytes go to the workers through shared memory, not the pipe
        self.segments = (
            handoff.Segments() if pool is not None and not self.remote and handoff.available() else None
        )
        self.held: dict[Future[_Result], handoff.Held] = {}
        self.loader = _Loader(conn, lay.data, durable) if conn is not None and lay is not None else None
        # this process loads its batches itself: they need not be durable
        # (store.write_batch's owner); for another holder of the store they must be
        self.owner = os.getpid() if self.loader is not None else None
        if self.loader is not None:
            self.loader.start()
        # with no loader, another process loads the spool: the barrier is
        # before the first batch is made
        self.durable = durable if self.loader is None else None
        # routing state
        self.groups: dict[bytes, _Pending] = {}
        self.done: dict[bytes, tuple[int, ...]] = {}  # dispatched: its files
        self.reopened: set[bytes] = set()
        self.chunk: list[_Item] = []
        self.chunk_keys: set[bytes] = set()
        self.chunk_size = 0
        # the side chunk: rematches of matches sent off in earlier chunks (_ready)
        self.side: list[_Item] = []
        self.side_keys: set[bytes] = set()
        self.side_size = 0
        self.side_closed: list[tuple[list[_Item], set[bytes]]] = []  # with the leaders they need
        self.sending = False
        self.parked: dict[bytes, list[tuple[bytes, _Pending]]] = {}
        self.waiting: set[bytes] = set()  # keys parked behind a parent
        self.leaders: dict[bytes, int | None] = {}
        self.inflight: dict[Future[_Result], int] = {}
        self.refs: dict[Future[_Result], frozenset[str]] = {}  # the kept files of each batch
        self.lines: list[int] = []  # by file index
        self.top: dict[int, list[Finding]] = {}  # lines of no match read by main, by file
        self.top_bad: list[int] = []
        self.worker_top: dict[bytes, list[Finding]] = {}
        self.worker_bad: dict[bytes, dict[str, int]] = {}
        self.results: dict[bytes, tuple[str, int, tuple[str, ...]]] = {}
        self.hands_done = 0  # validated (results back)
        self.hands_read = 0  # deals routed: the pace of the run (the pool is at most 3 chunks behind)
        self.bytes_done = 0.0
        self.batches: list[str] = []
        self.stages: defaultdict[str, float] = defaultdict(float)

    # -- routing

    def route(self) -> None:
        for fi, kf in enumerate(self.source):
            self.files.append(kf)
            self.task_files.append((kf.path, kf.sha256, str(kf.kept)))
            self.lines.append(0)
            self.top_bad.append(0)
            self._route_file(fi, kf)
            self.bytes_done = sum(f.size for f in self.files)
        for key in list(self.groups):  # unfinished matches: validated as they are
            self._ready(key, self.groups.pop(key))
        self._flush()
        self._close_side()
        while self.inflight or self.parked or self.side_closed:
            if self.inflight:
                self._collect(block=True)
            elif self.side_closed:  # a leader that never came: go without it
                self._send_side(force=True)
            else:  # a parent that never came (or a cycle): go without it
                for key in list(self.parked):
                    for child in self.parked.pop(key):
                        self.waiting.discard(child[0])
                        self._add(*child)
            self._flush()
            self._close_side()
        if self.reopened:
            self._refetch()

    def _route_file(self, fi: int, kf: KeptFile) -> None:
        if native is not None:
            self._route_native(fi, kf)
        else:
            self._route_python(fi, kf)

    def _route_native(self, fi: int, kf: KeptFile) -> None:
        """_route_python with the line loop in C (replay._native.route): runs of
        lines that have a routing key come back grouped by match; each other
        line is routed here, one at a time, as _route_python would."""
        assert native is not None
        groups = self.groups
        label = kf.path
        gz = kf.stored.endswith(".gz")
        base = self.bytes_done
        n = 0
        try:
            for data in _whole_lines(_counting(_chunks(kf.kept), lambda k: self._tick(base, k, kf, gz)), ROUTE_BYTES):
                off = 0
                while True:
                    off, n, got = native.route(data, off, n, MAX_LINE_BYTES)
                    for key, blob, numbers, deals, ended, start in got:
                        p = self._pending(key, fi)
                        if p is None:
                            continue
                        p.raws.append(blob)
                        p.lines.frombytes(numbers)
                        p.hands += deals
                        self.hands_read += deals
                        if start is not None and p.start is None:
                            p.start = start
                        if ended:
                            del groups[key]
                            self._ready(key, p)
                    self._collect(block=False)
                    if off >= len(data):
                        break
                    stop = data.find(b"\n", off)
                    stop = len(data) if stop < 0 else stop
                    n += 1
                    raw = data[off:stop]
                    off = stop + 1
                    self._route_line(fi, label, raw if len(raw) <= MAX_LINE_BYTES else None, n)
        except _Broken as exc:
            n += 1
            self._top(fi, BadLine(label, n, "MALFORMED_LINE", f"line {n}: {exc}", None, None, None,
                                  exc.partial.decode(errors="replace")))  # fmt: skip
        self.lines[fi] = n

    def _pending(self, key: bytes, fi: int) -> _Pending | None:
        """The match being read under ``key`` (new if need be), its segments
        following ``fi``; None for lines after the match was sent off (it is
        read again, whole, at the end of the run)."""
        p = self.groups.get(key)
        if p is None:
            done = self.done.get(key)
            if done is not None:
                self.reopened.add(key)
                if fi not in done:
                    self.done[key] = (*done, fi)
                return None
            p = self.groups[key] = _Pending(fi)
        elif p.fi != fi:
            p.fi = fi
            p.segments.append((fi, len(p.lines)))
        return p

    def _route_line(self, fi: int, label: str, raw: bytes | None, n: int) -> None:
        """One line (None: longer than MAX_LINE_BYTES), as read without its newline."""
        if raw is None:
            self._top(fi, BadLine(label, n, "MALFORMED_LINE",
                f"line {n}: longer than {MAX_LINE_BYTES} bytes", None, None, None, ""))  # fmt: skip
            return
        fast = _fast_key(raw)
        if fast is None:
            if _is_blank(raw):
                return
            rec = _parse(raw, label, n)
            m = _rec_match(rec)
            if m is None:
                self._top(fi, rec)  # type: ignore[arg-type]
                return
            key = _key(m)
            kind = rec.event.type.encode() if isinstance(rec, EventLine) else b""
        else:
            key, kind = fast
        p = self._pending(key, fi)
        if p is None:
            return
        p.add(fi, raw, n)
        if kind == b"deal":
            p.hands += 1
            self.hands_read += 1
        elif kind == b"match_end":
            del self.groups[key]
            self._ready(key, p)
        elif kind == b"match_start" and p.start is None:
            p.start = raw

    def _route_python(self, fi: int, kf: KeptFile) -> None:
        """Without the C router: every line through _route_line."""
        label = kf.path
        gz = kf.stored.endswith(".gz")
        base = self.bytes_done
        n = tick = 0
        try:
            for raw in _split(_counting(_chunks(kf.kept), lambda k: self._tick(base, k, kf, gz))):
                n += 1
                self._route_line(fi, label, raw, n)
                tick += 1
                if tick >= 4096:
                    tick = 0
                    self._collect(block=False)
        except _Broken as exc:
            n += 1
            self._top(fi, BadLine(label, n, "MALFORMED_LINE", f"line {n}: {exc}", None, None, None,
                                  exc.partial.decode(errors="replace")))  # fmt: skip
        self.lines[fi] = n

    def _tick(self, base: float, got: int, kf: KeptFile, gz: bool) -> None:
        # gzip: the uncompressed size is unknown; assume 8:1 and stay inside the file
        share = got / 8 if gz else got
        self.bytes_done = base + min(share, kf.size * 0.99)
        self.progress.show(self.bytes_done, self.hands_read, self.hands_done)

    def _top(self, fi: int, rec: BadLine) -> None:
        self.top.setdefault(fi, []).append(self.line_finding(rec))
        self.top_bad[fi] += 1

    # -- dispatch

    def _ready(self, key: bytes, p: _Pending) -> None:
        """A match is complete (or the run is over): into the chunk, or after
        the match it is a rematch of.

        Where a match goes depends only on the lines read (and the store),
        never on when results come back: so the chunks, and the content
        names of their batches (replay.shards), are the same whatever the
        workers' pace. A rematch of a match still being read follows it into
        its chunk; one of a match sent off in an earlier chunk goes into
        the side chunks, each sent once the leaders it needs are back.
        """
        parent = p.parent = _parent_of(p)
        if parent is not None and parent not in self.chunk_keys:
            if parent in self.groups or parent in self.waiting:
                self.parked.setdefault(parent, []).append((key, p))
                self.waiting.add(key)
                return
            if parent in self.done:
                self._add(key, p, side=True)
                return
            if parent not in self.leaders:  # not in this run (so far): the store may have it
                self.leaders[parent] = self._stored_leader(parent)
        self._add(key, p)

    def _stored_leader(self, parent: bytes) -> int | None:
        if self.lookup is None:
            return None
        row = one(self.lookup, "SELECT first_leader FROM matches WHERE match = ?",
                  [parent.decode("utf-8", "surrogatepass")])  # fmt: skip
        return None if row is None or row[0] is None else int(row[0])

    def _add(self, key: bytes, p: _Pending, *, side: bool = False) -> None:
        """The match, and the rematches parked behind it, into a chunk (the side
        chunk with ``side``); the chunk goes once it is full."""
        self._put(key, p, side)
        if side:
            if self.side_size >= self.chunk_hands:
                self._close_side()
        elif self.chunk_size >= self.chunk_hands:
            self._flush()

    def _put(self, key: bytes, p: _Pending, side: bool) -> None:
        if self.kind == "validate":
            self.first.setdefault(key, (p.segments[0][0], p.lines[0] if p.lines else 0))
        if side:
            self.side.append(p.item(key))
            self.side_keys.add(key)
            self.side_size += max(p.hands, 1)
        else:
            self.chunk.append(p.item(key))
            self.chunk_keys.add(key)
            self.chunk_size += max(p.hands, 1)
        self.done[key] = tuple(fi for fi, _ in p.segments)
        for child in self.parked.pop(key, []):  # children follow in the same chunk
            self.waiting.discard(child[0])
            self._put(*child, side)

    def _close_side(self) -> None:
        """The side chunk is complete: it goes once its leaders are back."""
        if not self.side:
            return
        needs = {it.parent for it in self.side if it.parent is not None and it.parent not in self.side_keys}
        self.side_closed.append((self.side, needs))
        self.side, self.side_keys, self.side_size = [], set(), 0
        self._send_side()

    def _send_side(self, *, force: bool = False) -> None:
        """Send the closed side chunks whose leaders are all back (with ``force``,
        the first one, whatever it waits for)."""
        if self.sending:  # flushing collects, and collecting comes back here
            return
        self.sending = True
        try:
            while True:
                ready = [i for i, (_, needs) in enumerate(self.side_closed) if force or needs <= self.leaders.keys()]
                if not ready:
                    return
                items, _ = self.side_closed.pop(ready[0])
                self._flush(items=items)
                if force:  # one at a time: the next may need this one's leaders
                    return
        finally:
            self.sending = False

    def _flush(
        self, refetch: list[tuple[bytes, list[int]]] | None = None, *, items: list[_Item] | None = None
    ) -> None:
        """Send a chunk: the one filling (``items``: a side chunk; ``refetch``:
        matches to read again whole)."""
        if items is None:
            items = self.chunk
            self.chunk, self.chunk_keys, self.chunk_size = [], set(), 0
        if not items and not refetch:
            return
        self.seq += 1
        order = f"{self.run_id}-{self.seq:06d}"
        # Refetched matches are few: they get every leader known.
        parents = set(self.leaders) if refetch else {it.parent for it in items}
        leaders = {
            k.decode("utf-8", "surrogatepass"): self.leaders[k]
            for k in parents
            if k is not None and k in self.leaders
        }
        mode = self.mode if not refetch else "replace"
        fis = {fi for it in items for fi, _ in it.segments} | {fi for _, idx in refetch or () for fi in idx}
        # named by content in an `add` run (a reingest is there to do it all again)
        named = self.mode == "add" and self.kind == "ingest"
        batch = self._name(items, sorted(fis), leaders, refetch or []) if named else order
        if refetch and self.remote:  # a worker elsewhere cannot read the kept copies
            items = self._refetch_items(refetch)
            refetch = None
        spool = None if self.remote or self.lay is None else str(self.lay.spool)
        task = _Task(batch, mode, spool, list(self.task_files), items, refetch or [], leaders,
                     owner=self.owner, analysis=self.analysis, kind=self.kind, version=self.version,
                     order=order if batch != order else "")  # fmt: skip
        # the kept files the batch refers to: its commit waits for them to be durable
        refs = frozenset(self.task_files[fi][1] for fi in fis)
        if self.durable is not None:
            self.durable(refs)
        while len(self.inflight) >= self.max_inflight:
            self._collect(block=True)
        if self.pool is None:
            fut: Future[_Result] = Future()
            fut.set_result(_work(task))
        else:
            held = None
            if self.segments is not None and task.items:
                held = self.segments.put([it.blob for it in task.items])
            if held is not None:
                task.shared = (held.name, held.spans)
                for it in task.items:
                    it.blob = b""
            fut = self.pool.submit(_work, task)
            if held is not None:
                self.held[fut] = held
        self.inflight[fut] = self.seq
        self.refs[fut] = refs
        self._collect(block=False)

    def _name(
        self, items: list[_Item], fis: list[int], leaders: Mapping[str, int | None],
        refetch: list[tuple[bytes, list[int]]],
    ) -> str:
        """The chunk's batch named by its content (replay.shards): its files, its
        matches' lines in them (or the matches read again whole from them), the
        leaders it is given."""
        shard = Shard(self.mode if not refetch else "replace")
        local = {fi: i for i, fi in enumerate(fis)}
        for fi in fis:
            label, sha, _ = self.task_files[fi]
            shard.file(label, sha)
        for k in sorted(leaders):
            shard.leader(k, leaders[k])
        for it in items:
            shard.match(it.key, [(local[fi], i) for fi, i in it.segments], it.lines.tobytes(), it.parent)
        for key, idx in refetch:
            shard.extra("refetch", key.hex(), *(str(local[fi]) for fi in idx))
        if self.analysis is not None:  # the batch carries its hands' analysis
            shard.extra("analysis", *map(str, self.analysis))
        return shard.name()

    def _refetch_items(self, refetch: list[tuple[bytes, list[int]]]) -> list[_Item]:
        """The whole lines of matches read again (what read_match_records reads
        in the worker), as items: for a worker that has no kept copies."""
        wanted = {key for key, _ in refetch}
        fis = sorted({fi for _, idx in refetch for fi in idx})
        got: dict[bytes, _Pending] = {}
        for fi in fis:
            kf = self.files[fi]
            n = 0
            with contextlib.suppress(_Broken):  # the break is a finding of the file
                for raw in _split(_chunks(kf.kept)):
                    n += 1
                    if raw is None:
                        continue
                    fast = _fast_key(raw)
                    if fast is not None:
                        key: bytes | None = fast[0]
                    elif _is_blank(raw):
                        continue
                    else:
                        m = _rec_match(_parse(raw, kf.path, n))
                        key = None if m is None else _key(m)
                    if key in wanted:
                        assert key is not None
                        p = got.get(key)
                        if p is None:
                            p = got[key] = _Pending(fi)
                        p.add(fi, raw, n)
        return [got[key].item(key) for key, _ in refetch if key in got]

    def _collect(self, *, block: bool) -> None:
        if block:
            done, _ = wait(self.inflight, return_when=FIRST_COMPLETED)
        else:
            done = {f for f in self.inflight if f.done()}
        for fut in sorted(done, key=self.inflight.__getitem__):
            if fut not in self.inflight:
                # taken by a nested call: the parked children below are
                # submitted from inside this loop, and their submission collects
                continue
            del self.inflight[fut]
            refs = self.refs.pop(fut)
            held = self.held.pop(fut, None)
            if held is not None and self.segments is not None:
                self.segments.release(held)
            res = fut.result()
            if res.parts is not None:
                res.path = self._write(res)
            self.batches.append(res.batch)
            self.hands_done += res.hands
            for k, v in res.stages.items():
                self.stages[k] += v
            for key, verdict, hands, codes in res.summary:
                self.results[key] = (verdict, hands, codes)
            for key in {k for k, *_ in res.summary} | set(res.top) | set(res.bad):
                # a key's latest batch is the truth (a refetch replaces); keep only what is there
                _put(self.worker_top, key, res.top.get(key))
                _put(self.worker_bad, key, res.bad.get(key))
            self.leaders.update(res.leaders)
            if res.reports is not None:
                self._keep(res)
            if self.loader is not None and res.path:
                self.loader.jobs.put((Path(res.path), refs))
        if done and self.side_closed:
            self._send_side()
        self.progress.show(self.bytes_done, self.hands_read, self.hands_done)

    def _write(self, res: _Result) -> str:
        """A batch a worker elsewhere made: into this spool, unless the store has
        it already (its name is its content: a re-run writes nothing new)."""
        assert self.lay is not None and res.parts is not None
        if self.lookup is not None and one(self.lookup, "SELECT 1 FROM batches WHERE batch = ?", [res.batch]):
            return ""
        t0 = time.perf_counter()
        path = write_encoded(self.lay.spool, res.batch, res.parts, res.manifest or {}, owner=self.owner)
        res.parts = None
        self.spooled += time.perf_counter() - t0
        return str(path)

    def _keep(self, res: _Result) -> None:
        """The reports of a validate run, by routing key (a refetch replaces)."""
        assert res.reports is not None
        got: dict[bytes, list[MatchReport]] = {}
        for (key, *_), rep in zip(res.summary, res.reports, strict=True):
            got.setdefault(key, []).append(rep)
        self.reports.update(got)

    def _refetch(self) -> None:
        """Matches with lines after their match_end: read again whole, replaced."""
        keys = sorted(self.reopened)
        # Each task scans the files once for its matches: few tasks, big enough.
        for i in range(0, len(keys), 2000):
            self._flush([(k, list(self.done[k])) for k in keys[i : i + 2000]])
        while self.inflight:
            self._collect(block=True)

    # -- the end

    def final_batch(self, extra_paths: Mapping[str, list[str]]) -> Path:
        bad = [0] * len(self.files)
        index = {f.sha256: i for i, f in enumerate(self.files)}
        for per in self.worker_bad.values():
            for sha, count in per.items():
                bad[index[sha]] += count
        now = datetime.now(UTC)
        rows = [
            {"sha256": f.sha256, "path": f.path, "paths": [f.path, *extra_paths.get(f.sha256, [])],
             "size": f.size, "read_at": now,
             "lines": self.lines[i], "bad_lines": self.top_bad[i] + bad[i], "stored": f.stored}
            for i, f in enumerate(self.files)
        ]  # fmt: skip
        where = {f.path: f.sha256 for f in self.files}
        top = [f for i in sorted(self.top) for f in self.top[i]]
        top += [f for key in sorted(self.worker_top) for f in self.worker_top[key]]
        self.seq += 1
        order = f"{self.run_id}-{self.seq:06d}"
        meta: dict[str, Any] = {"mode": self.mode, "files": {}}
        batch = order
        if self.mode == "add":  # named by the files it records (replay.shards)
            shard = Shard(self.mode, kind="files")
            for f in self.files:
                shard.extra(f.sha256, f.stored, *sorted({f.path, *extra_paths.get(f.sha256, [])}))
            batch, meta["order"] = shard.name(), order
        self.batches.append(batch)
        if self.durable is not None:  # for another holder, who may load it at once
            self.durable(None)
        assert self.lay is not None
        return write_batch(
            self.lay.spool,
            batch,
            {"log_files": file_table(rows), "file_findings": findings_table(((None, f) for f in top), where)},
            meta,
            owner=self.owner,
        )

    def close(self) -> None:
        for fut in self.inflight:
            fut.cancel()
        if self.lookup is not None:
            self.lookup.close()


def _put(d: dict[bytes, Any], key: bytes, value: Any) -> None:
    if value:
        d[key] = value
    else:
        d.pop(key, None)


#: Workers yield the CPU to the main process: its loader, one transaction at a
#: time, is the run's critical path, and the workers can only run ahead of it.
_WORKER_NICE: Final = 10


def _watch_parent(parent: int) -> None:
    """Pool initializer: leave when the ingest that forked us is gone (kill -9
    leaves workers blocked on their task queue otherwise)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="replay-parent-watch", daemon=True).start()
    with contextlib.suppress(OSError):
        os.nice(_WORKER_NICE)


def _make_pool(workers: int) -> ProcessPoolExecutor | None:
    """The validating processes, forked at once, before this process opens the
    database or starts a thread: a fork is cheap (nothing to import again,
    pages shared) and safe while the process is still single-threaded."""
    if workers <= 0:
        return None
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("fork"),
        initializer=_watch_parent,
        initargs=(os.getpid(),),
    )
    pool.submit(os.getpid).result()  # fork start: every worker is launched on first use
    return pool


def _counting(chunks: Iterator[bytes], tick: Callable[[int], None]) -> Iterator[bytes]:
    got = 0
    for chunk in chunks:
        got += len(chunk)
        tick(got)
        yield chunk


# -- the commands ------------------------------------------------------------------


def _writer(db: Path, threads: int | None) -> duckdb.DuckDBPyConnection:
    conn = open_store(db, threads=threads, memory_limit=_MEMORY)
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


def _summarize(run: _Run, summary: IngestSummary) -> None:
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


def _store_summary(conn: duckdb.DuckDBPyConnection, run: _Run, summary: IngestSummary) -> None:
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
    progress = _Progress(total_bytes, progress_out)
    workers = getattr(pool, "_max_workers", 0)
    if analysis is not None:  # a hand's analysis costs a hundred times its validation and more: smaller tasks
        chunk_hands = min(chunk_hands, max(ANALYSIS_CHUNK_HANDS, 500 // (1 + analysis[0])))
    run = _Run(lay, itertools.chain((first,), source), mode=mode, conn=conn, pool=pool, workers=max(workers, 1),
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
        load_spool(conn, lay.spool)  # batches of a run killed before this one
        _store_summary(conn, run, summary)
        summary.loaded = True
        t_ck = time.perf_counter()
        conn.execute("CHECKPOINT")
        summary.stages["checkpoint (wall)"] = time.perf_counter() - t_ck
        return summary
    # The holder may be gone by now (another ingest that ended): try once more.
    late = _open_owner(lay.db, None)
    if late is not None:
        try:
            load_spool(late, lay.spool)
            _store_summary(late, run, summary)
            summary.loaded = True
        finally:
            late.close()
    else:
        summary.pending = len(pending_batches(lay.spool))
    summary.seconds = time.perf_counter() - t0
    return summary


def validate_routed(paths: Sequence[str | os.PathLike[str]], pool: Any) -> ValidationReport:
    """`replay validate` with the matches validated by ``pool`` (a cluster):
    the same report as :func:`replay.validate.validate_paths`.

    The files are read where they are (nothing is kept) and routed as an
    ingest routes them; the workers send back each match's report (moves
    not kept, as the command line's). SEED_REUSED, which compares all the
    matches, is found here, and the matches come in the order validate
    gives them (of their first line, file by file).
    """
    found = list(iter_paths(paths))
    files = []
    for i, path in enumerate(found):
        try:
            size = path.stat().st_size
        except OSError:  # read as validate reads it: the error is a finding of the file
            size = 0
        # no kept copy: the "sha256" only tells the files apart
        files.append(KeptFile(os.fspath(path), f"#{i}", size, os.fspath(path), path))
    run = _Run(None, files, mode="add", conn=None, pool=pool, workers=max(getattr(pool, "_max_workers", 1), 1),
               chunk_hands=CHUNK_HANDS, progress=_Progress(1, None), kind="validate")  # fmt: skip
    try:
        run.route()
    finally:
        run.close()
    place = {f.path: i for i, f in enumerate(files)}
    bad = [0] * len(files)
    for per in run.worker_bad.values():
        for sha, n in per.items():
            bad[int(sha[1:])] += n
    reports = [rep for key in sorted(run.reports, key=run.first.__getitem__) for rep in run.reports[key]]
    reuse = seed_reuse(reports)
    top = [f for fs in (*run.top.values(), *run.worker_top.values()) for f in fs]
    top.sort(key=lambda f: (place.get(f.file or "", len(files)), f.line or 0))
    return ValidationReport(
        files=tuple(FileReport(f.path, run.lines[i], run.top_bad[i] + bad[i]) for i, f in enumerate(files)),
        findings=tuple(top),
        matches=tuple(with_findings(r, reuse.get(r.match, [])) for r in reports),
    )


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
    """Ingest log files and folders into the store at ``db`` (see the module doc).

    ``labels`` names files otherwise than by the path given (an upload's
    temporary file by the name it was sent with), as findings and
    ``log_files`` show them.

    If another process holds the database, the validated batches stay in
    the spool for it (``summary.loaded`` is False). With ``analysis``
    (samples, seed), the workers analyse every hand too (replay.analysis).
    Raises :class:`replay.reader.UsageError` for a path that does not exist or a
    folder with no log in it. A file that is no table log is stored as one
    bad line and named in ``summary.not_logs``. With ``cluster`` (an
    address, or a :class:`replay.cluster.ClusterPool`) the shards are
    validated (and analysed) there instead of in ``workers`` processes.
    """
    if isinstance(cluster, str):
        from replay.cluster import connect

        with connect(cluster) as remote:
            return ingest(paths, db=db, chunk_hands=chunk_hands, progress_out=progress_out, cluster=remote,
                          analysis=analysis, labels=labels)  # fmt: skip
    t0 = time.perf_counter()
    db_path = Path(db) if db is not None else default_db_path()
    found = list(iter_paths(paths))
    lay = layout(db_path).make()
    clean_tmp(lay)
    pool = cluster if cluster is not None else _make_pool(workers)  # first: before any thread exists
    conn = None
    durable: _Durable | None = None
    summary = IngestSummary(db=str(db_path))
    try:
        conn = _open_owner(db_path, (workers or None) if cluster is None else None)
        if conn is not None:
            load_spool(conn, lay.spool)
        kept: dict[str, KeptFile] = {}
        extra_paths: dict[str, list[str]] = {}
        known: set[str] = set()
        # two files at a time: hashing lets go of the GIL (a 450 MB file:
        # sha256 1.0 s, write 0.3); the run routes each file as soon as it is
        # kept, while the next ones are hashed and copied, and the fsyncs
        # follow in a thread of their own (_Durable)
        sync = not _links_work(lay.logs)
        keepers = ThreadPoolExecutor(2, thread_name_prefix="keep")
        named = labels or {}
        futures = [keepers.submit(keep_file, p, lay, sync=sync, label=named.get(os.fspath(p))) for p in found]
        durable = _Durable(futures, lay)
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
        from replay.cluster import connect

        with connect(cluster) as remote:
            return reingest(db=db, chunk_hands=chunk_hands, progress_out=progress_out, cluster=remote,
                            analysis=analysis)  # fmt: skip
    t0 = time.perf_counter()
    db_path = Path(db) if db is not None else default_db_path()
    lay = layout(db_path).make()
    pool = cluster if cluster is not None else _make_pool(workers)  # first: before any thread exists
    try:
        conn = _writer(db_path, (workers or None) if cluster is None else None)
    except BaseException:
        if pool is not None:
            pool.shutdown(wait=True)
        raise
    summary = IngestSummary(db=str(db_path))
    try:
        load_spool(conn, lay.spool)
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


def add_ingest_parsers(subparsers: Any) -> None:
    """Add `ingest` and `reingest` to an argparse subparsers object."""

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--db", default=None,
                       help="database file (default $REPLAY_DB or ./data/replay.duckdb)")  # fmt: skip
        p.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1),
                       help="validating processes (default 2; 0: in this process)")  # fmt: skip
        p.add_argument("--chunk-hands", type=int, default=CHUNK_HANDS, help=argparse.SUPPRESS)
        p.add_argument("--cluster", metavar="ADDRESS", default=None,
                       help="validate on a dask.distributed cluster: a scheduler address "
                       "(tcp://host:8786), or local[:N] for N worker processes here "
                       "(docs/scale.md)")  # fmt: skip
        p.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
        p.add_argument("--no-analysis", action="store_true",
                       help="do not analyse the hands (replay analyze --db can do it later)")  # fmt: skip
        p.add_argument("--analysis-samples", type=int, default=INGEST_SAMPLES, metavar="N",
                       help=f"sampled deals per decision of the analysis (default {INGEST_SAMPLES}: "
                       "perfect information only; the server adds them in the background, and "
                       "replay analyze --db --samples 100 in one go)")  # fmt: skip
        p.add_argument("--seed", type=int, default=0, help="the analysis's sampling seed (default 0)")
        p.add_argument("--analyze-anyway", action="store_true", help=argparse.SUPPRESS)  # without the C solver

    p = subparsers.add_parser(
        "ingest",
        help="validate log files and store them in the database",
        description="Validate table logs and store everything (logs kept by sha256, matches, "
        "hands, moves, findings) in DuckDB. Ingesting a file twice changes nothing.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help=".jsonl / .jsonl.gz files or folders")
    common(p)
    p.set_defaults(func=run_ingest)
    p = subparsers.add_parser(
        "reingest",
        help="validate the kept logs again and rebuild the stored results",
        description="Validate every kept log file again (e.g. after a rules fix) and replace "
        "the stored matches, hands, moves and findings.",
    )
    common(p)
    p.set_defaults(func=run_reingest)


def _analysis_arg(args: argparse.Namespace) -> tuple[int, int] | None:
    if args.no_analysis:
        return None
    if not 0 <= args.analysis_samples <= 10000:
        raise UsageError("--analysis-samples must be 0..10000")
    if native is None and not args.analyze_anyway:
        # the pure-Python solver takes seconds a hand (the C one 20 ms)
        sys.stderr.write("replay: the C solver is not compiled here (or REPLAY_PURE is set): the hands are "
                         "not analysed (replay analyze --db does it, slowly; --analyze-anyway here)\n")  # fmt: skip
        return None
    return args.analysis_samples, args.seed


def _report(summary: IngestSummary, quiet: bool) -> None:
    if not quiet:
        for line in summary.lines_out():
            sys.stderr.write(line + "\n")


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments `ingest` and `reingest` share, from the command line."""
    return {"db": args.db, "workers": args.workers, "chunk_hands": args.chunk_hands,
            "progress_out": None if args.quiet else sys.stderr, "cluster": args.cluster,
            "analysis": _analysis_arg(args)}  # fmt: skip


def run_ingest(args: argparse.Namespace) -> int:
    """`replay ingest`: 0 when everything read is stored (or spooled), whatever
    the verdicts; 1 when a file is no table log at all (the rest is stored);
    2 for a path that does not exist or a folder with no log (UsageError), or
    a cluster that cannot be used."""
    try:
        summary = ingest(args.paths, **_options(args))
    except (ClusterError, CodeMismatch) as exc:
        sys.stderr.write(f"replay ingest: {exc}\n")
        return 2
    _report(summary, args.quiet)
    if summary.not_logs and args.quiet:  # errors are said even when quiet
        for what in summary.not_logs:
            sys.stderr.write(f"error: {what}\n")
    return 1 if summary.not_logs else 0


def run_reingest(args: argparse.Namespace) -> int:
    """`replay reingest`: 0 when done, 1 if the database is held by another
    process, 2 for a cluster that cannot be used."""
    try:
        summary = reingest(**_options(args))
    except (ClusterError, CodeMismatch) as exc:
        sys.stderr.write(f"replay reingest: {exc}\n")
        return 2
    except StoreLocked as exc:
        sys.stderr.write(f"replay reingest: the database is in use (stop the server first): {exc}\n")
        return 1
    _report(summary, args.quiet)
    return 0
