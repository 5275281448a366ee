"""The work of a pool worker: a chunk of whole matches in, one batch out.

A :class:`Task` carries the lines of some whole matches (:class:`Item`, or
their bytes in shared memory, :mod:`replay.ingest.shm`), the kept files they
were read from and the first leaders their rematches need. :func:`work`
parses and validates them (a clean match by the C scanner and
:func:`replay.validate.fast_path.fast_report`, any other line by line through
:func:`replay.validate.validate_match`), makes the batch's Arrow tables and
writes them into the spool, or sends them back as bytes to a run elsewhere.
The :class:`Result` says what the batch holds.

:func:`revalidate` validates some matches again from all their kept files:
the store's loader calls it for a match whose lines are spread over the
batches of different runs.
"""

from __future__ import annotations

import gc
import multiprocessing
import time
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from replay import events as ev
from replay.accel import native
from replay.analysis import analyze_tables
from replay.canonical_reader import scan_buffer
from replay.findings import Finding, MatchReport
from replay.ingest import shm
from replay.ingest.batch_id import check_code
from replay.ingest.lines import file_finding, match_key, parse_raw, read_match_records, record_match
from replay.reader import BadLine, EventLine, Record
from replay.store import encode_tables, hooks, line_digests, write_batch
from replay.store.rows import Frames, first_leader
from replay.validate import line_finding as validate_line_finding
from replay.validate import validate_match
from replay.validate.fast_path import fast_report

__all__ = ["Item", "Result", "Task", "revalidate", "work"]


@dataclass(slots=True)
class Item:
    """The lines of one match for a worker: raw lines joined by newlines."""

    key: bytes
    blob: bytes
    lines: array[int]
    segments: list[tuple[int, int]]  # (file index, first line index in it)
    parent: bytes | None = None  # the match it is a rematch of


@dataclass(slots=True)
class Task:
    """One chunk for a worker: the lines of some whole matches, and what their batch needs."""

    batch: str
    mode: str
    spool: str | None  # None: the batch's files come back as bytes (a worker elsewhere)
    files: list[tuple[str, str, str]]  # (label, sha256, kept path) by file index
    items: list[Item] = field(default_factory=list)
    refetch: list[tuple[bytes, list[int]]] = field(default_factory=list)  # read again from files
    leaders: dict[str, int | None] = field(default_factory=dict)
    # the items' blobs in a shared memory segment (replay.ingest.shm): its name
    # and each blob's (start, end); the items then carry empty blobs
    shared: tuple[str, array[int]] | None = None
    # the pid of the process that loads the batch itself (store.write_batch's owner)
    owner: int | None = None
    # (samples, seed) of the hand analysis (replay.analysis) the batch carries; None: none
    analysis: tuple[int, int] | None = None
    kind: str = "ingest"  # or "validate": the reports come back, no batch is made
    version: str = ""  # the sender's code (replay.ingest.batch_id.code_version), checked by a worker
    order: str = ""  # the batch's place among those of its run (a content-named batch)
    # the run it is part of: its last batch names it, and a loader of the spool
    # loads them together (replay.store.load.load_spool)
    run: str = ""


@dataclass(slots=True)
class Result:
    """What a worker made of a task."""

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


def _item_records(item: Item, files: Sequence[tuple[str, str, str]]) -> Iterator[Record]:
    raws = item.blob.split(b"\n")
    bounds = [start for _, start in item.segments[1:]] + [len(raws)]
    for (fi, start), stop in zip(item.segments, bounds, strict=True):
        label = files[fi][0]
        for i in range(start, stop):
            yield parse_raw(raws[i], label, item.lines[i])


def _fast_item(
    item: Item, files: Sequence[tuple[str, str, str]], leaders: Mapping[str, int | None], frames: Frames | None
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
    if match_key(src.match) != item.key:
        return None
    rep = fast_report(src, rematch_leaders=leaders, moves=frames.columns if frames is not None else None)
    if rep is not None:
        # the scanner numbered the lines of the match's blob: the seeds' lines in the file
        lines = item.lines
        rep = replace(rep, seed_lines=tuple((h, f, lines[n - 1]) for h, f, n in rep.seed_lines))
        if frames is not None:
            frames.add(rep, {sha: src.count})
    return rep


def work(task: Task) -> Result:
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
        for item, blob in zip(task.items, shm.receive(*task.shared), strict=True):
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


def _work_batch(task: Task) -> Result:
    clock = time.process_time
    stages: defaultdict[str, float] = defaultdict(float)
    where = {label: sha for label, sha, _ in task.files}
    top: dict[bytes, list[Finding]] = {}
    bad: dict[bytes, dict[str, int]] = {}
    validating = task.kind == "validate"
    frames = Frames(task.batch, where) if not validating else None
    reports: list[MatchReport] = []
    line_finding = validate_line_finding if validating else file_finding
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
            m = record_match(rec)
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
            out_leaders[match_key(m)] = lead
            if frames is not None:
                frames.add(rep, Counter(where[r.file] for r in recs))
            else:
                reports.append(rep)
            hands += len(rep.hands)
            summary.append((key, rep.verdict, len(rep.hands), tuple(f.code for f in rep.findings)))

    for item in task.items:
        t0 = clock()
        rep = _fast_item(item, task.files, leaders, frames)
        if rep is not None:  # a clean match, validated hand by hand (replay.validate.fast_path)
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
            key = wanted.get(m, match_key(m))
            check(key, take(key, recs))
    if frames is None:
        return Result(task.batch, hands, summary, out_leaders, top, bad, "", dict(stages), reports=reports)
    t0 = clock()
    _digests(task, frames)
    stages["digests"] += clock() - t0
    t0 = clock()
    tables = frames.tables()
    if task.analysis is not None:
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
    if task.run:
        meta["run"] = task.run
    stages["frames"] += t1 - t0
    if task.spool is None:  # the owner of the spool writes it (Run._collect)
        parts = encode_tables(tables)
        stages["write"] += clock() - t1
        return Result(task.batch, hands, summary, out_leaders, top, bad, "", dict(stages),
                       parts=parts, manifest=meta)  # fmt: skip
    path = write_batch(Path(task.spool), task.batch, tables, meta, owner=task.owner)
    stages["write"] += clock() - t1
    return Result(task.batch, hands, summary, out_leaders, top, bad, str(path), dict(stages))


def _digests(task: Task, frames: Frames) -> None:
    """Each hand's log lines hashed once, here, where they are at hand: stored with the
    hand, they are a certificate's Merkle leaves (replay.store.line_digests). The
    matches read again from their files (``refetch``) are hashed from those files."""
    with duckdb.connect(config={"threads": 1}) as conn:
        if task.items:
            frames.add_digests(line_digests.digests(b"\n".join(item.blob for item in task.items), conn=conn))
        if task.refetch:
            fis = sorted({fi for _, idx in task.refetch for fi in idx})
            wanted = {key.decode("utf-8", "surrogatepass") for key, _ in task.refetch}
            frames.add_digests(line_digests.of_files([Path(task.files[fi][2]) for fi in fis], wanted, conn))


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
    frames.add_digests(line_digests.of_files([p for _, p, _ in files], set(wanted)))
    for m in sorted(wanted):
        recs = records.get(m)
        if not recs:
            raise FileNotFoundError(f"no line of match {m!r} in its kept files")
        frames.add(validate_match(recs, rematch_leaders=leaders), Counter(where[r.file] for r in recs))
    tables = frames.tables()
    if manifest.get("analysis"):  # the batch analyses its hands: these too
        samples, seed = manifest["analysis"]
        tables.update(analyze_tables(tables, samples, seed))
    return tables



hooks.use_revalidator(revalidate)  # the store's loader validates through it
