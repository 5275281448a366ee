"""The main process of a run: bytes routed to matches, chunks to the pool.

The main process never parses JSON on the hot path: a server line's type
and match id are byte slices (:func:`replay.ingest.lines.fast_key`), and the
C router (``replay._native.route``) hands back runs of lines already
grouped by match. Anything else takes the slow path (the reader's full
parse). A match is ready at its ``match_end``; whole matches fill a chunk,
which goes to the pool as a :class:`replay.ingest.worker.Task`. Memory holds
the matches still being read, a chunk or two of finished ones, and nothing
else.

A rematch waits for the match it follows (its first leader decides the
rematch's first lead): in the same chunk, in a side chunk sent once the
earlier match's result is back, or from the store. The chunks depend only
on the lines read, so a batch is named by its content
(:mod:`replay.ingest.batch_id`). Lines of a match read after it was sent
off make it read again, whole, at the end of the run.

Results come back to :class:`Run`, which hands their batches to the loader
(:class:`replay.ingest.load.Loader`) and writes the run's last batch: the
``log_files`` rows and the lines of no match.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from array import array
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, wait
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import duckdb
import orjson

from replay.accel import native
from replay.analysis import analysis_weight
from replay.findings import Finding, MatchReport
from replay.ingest import shm
from replay.ingest.batch_id import Shard, code_version
from replay.ingest.keep import KeptFile
from replay.ingest.lines import fast_key, file_finding, is_blank, match_key, parse_raw, record_match
from replay.ingest.load import Loader, Progress
from replay.ingest.worker import Item, Result, Task, work
from replay.reader import (
    MAX_LINE_BYTES,
    BadLine,
    BrokenFile,
    EventLine,
    read_chunks,
    split_lines,
    whole_lines,
)
from replay.rules import RulesError, resolve
from replay.store import Layout, one, write_batch, write_encoded
from replay.store.rows import file_table, findings_table
from replay.validate import line_finding as validate_line_finding

__all__ = ["CHUNK_HANDS", "ROUTE_BYTES", "Run", "match_weight"]

#: Hands per batch: a transaction of the loader and a task of the pool.
CHUNK_HANDS: Final = 10000
#: Bytes the C router reads at a time (cut at a line end).
ROUTE_BYTES: Final = 8 * 1024 * 1024


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

    def item(self, key: bytes) -> Item:
        return Item(key, b"\n".join(self.raws), self.lines, self.segments, self.parent)


def _parent_of(p: _Pending) -> bytes | None:
    if p.start is None:
        return None
    try:
        obj = orjson.loads(p.start)
    except orjson.JSONDecodeError:
        return None
    parent = obj.get("rematch_of") if isinstance(obj, dict) else None
    return match_key(parent) if isinstance(parent, str) and parent else None


@functools.lru_cache(maxsize=1024)
def _weight_of(profile: str, rules: bytes) -> int:
    """:func:`replay.analysis.analysis_weight` of a match's profile and rule overrides (1 if they do not resolve)."""
    try:
        return analysis_weight(resolve(profile, orjson.loads(rules) or None))
    except (RulesError, ValueError, TypeError):
        return 1


def match_weight(start: bytes | None, hands: int) -> int:
    """How many pair-game hands the analysis of a match's `hands` costs,
    from its match_start line (its hands, if the line does not say).

    >>> match_weight(b'{"type": "match_start", "profile": "royal_rumble", "rules": {}}', 7)
    224
    >>> match_weight(b'{"type": "match_start", "profile": "international"}', 7), match_weight(None, 0)
    (7, 1)
    """
    try:
        obj = orjson.loads(start) if start is not None else None
    except orjson.JSONDecodeError:
        obj = None
    if not isinstance(obj, dict) or not isinstance(obj.get("profile"), str):
        return max(hands, 1)
    rules = obj.get("rules")
    return max(hands, 1) * _weight_of(obj["profile"], orjson.dumps(rules, option=orjson.OPT_SORT_KEYS))


class Run:
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
        progress: Progress,
        durable: Callable[[Collection[str] | None], None] | None = None,
        kind: str = "ingest",
        analysis: tuple[int, int] | None = None,
    ) -> None:
        self.lay = lay
        self.kind = kind  # "ingest", or "validate" (no store: the reports come back)
        self.analysis = analysis
        # a pool elsewhere (replay.ingest.pool): tasks carry their bytes, results
        # bring the batches' files, and this process writes them
        self.remote = bool(getattr(pool, "remote", False))
        self.version = code_version()
        self.line_finding = validate_line_finding if kind == "validate" else file_finding
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
            shm.Segments() if pool is not None and not self.remote and shm.available() else None
        )
        self.held: dict[Future[Result], shm.Held] = {}
        self.loader = Loader(conn, lay.data, durable) if conn is not None and lay is not None else None
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
        self.chunk: list[Item] = []
        self.chunk_keys: set[bytes] = set()
        self.chunk_size = 0
        # the side chunk: rematches of matches sent off in earlier chunks (_ready)
        self.side: list[Item] = []
        self.side_keys: set[bytes] = set()
        self.side_size = 0
        self.side_closed: list[tuple[list[Item], set[bytes]]] = []  # with the leaders they need
        self.sending = False
        self.parked: dict[bytes, list[tuple[bytes, _Pending]]] = {}
        self.waiting: set[bytes] = set()  # keys parked behind a parent
        self.leaders: dict[bytes, int | None] = {}
        self.inflight: dict[Future[Result], int] = {}
        self.refs: dict[Future[Result], frozenset[str]] = {}  # the kept files of each batch
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
            for data in whole_lines(_counting(read_chunks(kf.kept), lambda k: self._tick(base, k, kf, gz)), ROUTE_BYTES):
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
        except BrokenFile as exc:
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
        fast = fast_key(raw)
        if fast is None:
            if is_blank(raw):
                return
            rec = parse_raw(raw, label, n)
            m = record_match(rec)
            if m is None:
                self._top(fi, rec)  # type: ignore[arg-type]
                return
            key = match_key(m)
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
            for raw in split_lines(_counting(read_chunks(kf.kept), lambda k: self._tick(base, k, kf, gz))):
                n += 1
                self._route_line(fi, label, raw, n)
                tick += 1
                if tick >= 4096:
                    tick = 0
                    self._collect(block=False)
        except BrokenFile as exc:
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
        names of their batches (replay.ingest.batch_id), are the same whatever the
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
            self.side_size += self._size(p)
        else:
            self.chunk.append(p.item(key))
            self.chunk_keys.add(key)
            self.chunk_size += self._size(p)
        self.done[key] = tuple(fi for fi, _ in p.segments)
        for child in self.parked.pop(key, []):  # children follow in the same chunk
            self.waiting.discard(child[0])
            self._put(*child, side)

    def _size(self, p: _Pending) -> int:
        """A match's share of a chunk: its hands; with the analysis, weighed by
        what they cost to analyse (a royal_rumble hand as 32 pair-game
        hands), so that costly matches are spread over the chunks and no
        worker is left with most of the work at the end."""
        return match_weight(p.start, p.hands) if self.analysis is not None else max(p.hands, 1)

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
        self, refetch: list[tuple[bytes, list[int]]] | None = None, *, items: list[Item] | None = None
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
        task = Task(batch, mode, spool, list(self.task_files), items, refetch or [], leaders,
                     owner=self.owner, analysis=self.analysis, kind=self.kind, version=self.version,
                     order=order if batch != order else "", run=self.run_id)  # fmt: skip
        # the kept files the batch refers to: its commit waits for them to be durable
        refs = frozenset(self.task_files[fi][1] for fi in fis)
        if self.durable is not None:
            self.durable(refs)
        while len(self.inflight) >= self.max_inflight:
            self._collect(block=True)
        if self.pool is None:
            fut: Future[Result] = Future()
            fut.set_result(work(task))
        else:
            held = None
            if self.segments is not None and task.items:
                held = self.segments.put([it.blob for it in task.items])
            if held is not None:
                task.shared = (held.name, held.spans)
                for it in task.items:
                    it.blob = b""
            fut = self.pool.submit(work, task)
            if held is not None:
                self.held[fut] = held
        self.inflight[fut] = self.seq
        self.refs[fut] = refs
        self._collect(block=False)

    def _name(
        self, items: list[Item], fis: list[int], leaders: Mapping[str, int | None],
        refetch: list[tuple[bytes, list[int]]],
    ) -> str:
        """The chunk's batch named by its content (replay.ingest.batch_id): its files, its
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

    def _refetch_items(self, refetch: list[tuple[bytes, list[int]]]) -> list[Item]:
        """The whole lines of matches read again (what read_match_records reads
        in the worker), as items: for a worker that has no kept copies."""
        wanted = {key for key, _ in refetch}
        fis = sorted({fi for _, idx in refetch for fi in idx})
        got: dict[bytes, _Pending] = {}
        for fi in fis:
            kf = self.files[fi]
            n = 0
            with contextlib.suppress(BrokenFile):  # the break is a finding of the file
                for raw in split_lines(read_chunks(kf.kept)):
                    n += 1
                    if raw is None:
                        continue
                    fast = fast_key(raw)
                    if fast is not None:
                        key: bytes | None = fast[0]
                    elif is_blank(raw):
                        continue
                    else:
                        m = record_match(parse_raw(raw, kf.path, n))
                        key = None if m is None else match_key(m)
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

    def _write(self, res: Result) -> str:
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

    def _keep(self, res: Result) -> None:
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
        # the run's other batches, loaded with this one or not at all (replay.store.load_spool),
        # and the files it read (named when the run is refused)
        meta: dict[str, Any] = {"mode": self.mode, "files": {}, "run": self.run_id,
                                "run_batches": list(self.batches), "read": {f.sha256: f.path for f in self.files}}
        batch = order
        if self.mode == "add":  # named by the files it records (replay.ingest.batch_id)
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


def _counting(chunks: Iterator[bytes], tick: Callable[[int], None]) -> Iterator[bytes]:
    got = 0
    for chunk in chunks:
        got += len(chunk)
        tick(got)
        yield chunk
