"""Reading logs through the C scanner: canonical lines in bulk, the rest one by one.

The game server writes every event in one layout (its keys in log order,
no spaces, plain strings). `replay._native.scan` reads the lines written
exactly so, a buffer at a time, and groups them by match without making a
Python object per line: plays, passes and draws are packed into bytes,
deals, hand ends and reveals become small tuples. Every other line (other
event types, any other layout, any bad line) is read here by
:mod:`replay.reader`, exactly as :class:`~replay.reader.LogReader` reads
it. A match is *fast* when all its lines were read by the scanner or are
clean events at the places the scanner kept for them, in one file, in seq
order; :mod:`replay.validate.fast_path` then validates it at the level of hands,
and any match it cannot vouch for is validated line by line as before.
:meth:`Source.records` gives back exactly the records LogReader would have
made, so both paths see the same input.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from replay.accel import native
from replay.findings import FileReport, Finding
from replay.reader import (
    MALFORMED_LINE,
    MAX_LINE_BYTES,
    BadLine,
    BrokenFile,
    EventLine,
    Record,
    any_line,
    iter_paths,
    read_chunks,
    whole_lines,
)

__all__ = [
    "DEAL",
    "HAND_END",
    "MOVE",
    "OTHER",
    "REVEAL",
    "Segment",
    "Source",
    "scan_buffer",
    "scan_paths",
]

# Kinds of the scanner's event tuples (the enum of _native.h).
PLAY, PASS, DRAW, DEAL, HAND_END, REVEAL, OTHER = range(7)

#: A packed move: line, offset of the line, offset of its ts, seq, hand,
#: kind, seat, tile, end (0 left, 1 right, 2 null; + 4 x the first digit
#: of the tile as written).
MOVE: Final = struct.Struct("=iiiiiBbbb")  # native order, as _native.c writes it

#: Bytes handed to the scanner at a time (cut at a line end).
BUFFER_BYTES: Final = 32 * 1024 * 1024


@dataclass(slots=True)
class Segment:
    """What one scanner call read of one match: its events and packed moves.

    Offsets in the tuples and moves are into ``data``, the buffer scanned.
    """

    data: bytes
    events: list[tuple[Any, ...]]
    moves: bytes
    count: int
    first_seq: int
    last_seq: int
    first_ts: str
    last_ts: str
    ordered: bool


@dataclass(slots=True)
class Source:
    """Every line of one match in one file: scanner segments and other records.

    ``others`` are the records read in Python that belong to this match,
    with their line numbers; ``placed`` maps the line of each scanner
    placeholder (an event the scanner left to Python) to its record.
    """

    match: str
    file: str
    first_line: int
    segments: list[Segment] = field(default_factory=list)
    others: list[tuple[int, Record]] = field(default_factory=list)
    placed: dict[int, Record] = field(default_factory=dict)
    holes: int = 0  # scanner placeholders

    @property
    def fast(self) -> bool:
        """All lines canonical or placed clean, seqs 0, 1, 2, ... and times in order."""
        segs = self.segments
        if not segs or not self.holes == len(self.placed) == len(self.others) or segs[0].first_seq != 0:
            return False
        prev: Segment | None = None
        for seg in segs:
            if not seg.ordered:
                return False
            if prev is not None and (
                seg.first_seq != prev.last_seq + 1
                or len(seg.first_ts) != len(prev.last_ts)
                or seg.first_ts < prev.last_ts
            ):
                return False
            prev = seg
        return True

    @property
    def count(self) -> int:
        """Lines of the match in this file."""
        return sum(s.count for s in self.segments) + len(self.others) - len(self.placed)

    def records(self) -> list[Record]:
        """The match's records in line order, as LogReader reads them."""
        file = self.file
        got: dict[int, Record] = {}
        for seg in self.segments:
            data = seg.data
            for ev in seg.events:
                line = ev[1]
                if ev[0] == OTHER:
                    continue  # read in Python: in `others`
                got[line] = _read_at(data, ev[2], file, line)
            for mv in MOVE.iter_unpack(seg.moves):
                got[mv[0]] = _read_at(data, mv[1], file, mv[0])
        for line, rec in self.others:
            got[line] = rec
        return [got[k] for k in sorted(got)]


def _read_at(data: bytes, off: int, file: str, line: int) -> Record:
    end = data.find(b"\n", off)
    raw = data[off : end if end >= 0 else len(data)]
    rec = any_line(raw, file, line)
    assert rec is not None  # the scanner never keeps a blank line
    return rec


# -- one file ------------------------------------------------------------------


def _buffers(path: Path) -> Iterator[bytes]:
    """The file's bytes in pieces of whole lines (see reader.whole_lines)."""
    return whole_lines(read_chunks(path), BUFFER_BYTES)


@dataclass(slots=True)
class _FileScan:
    stats: FileReport
    sources: dict[str, Source]  # in order of each match's first line
    top: list[Finding]  # lines of no match


def _scan_file(path: Path) -> _FileScan:
    return _scan(os.fspath(path), _buffers(path))


def scan_buffer(data: bytes, file: str) -> _FileScan:
    """The lines of one buffer (e.g. the lines of one match that ingest routed),
    numbered from 1, read as from a file named ``file``."""
    return _scan(file, iter((data,)))


def _scan(file: str, buffers: Iterator[bytes]) -> _FileScan:
    assert native is not None
    sources: dict[str, Source] = {}
    loose: list[tuple[int, Record]] = []  # read in Python, in line order
    lines = 0
    placeholders: dict[int, tuple[str, int, str]] = {}  # line -> (match, seq, ts)

    def take(data: bytes) -> None:
        nonlocal lines
        n, others, matches = native.scan(data, lines, MAX_LINE_BYTES)
        lines = n
        for mid, (first, ordered, events, moves, count, s0, s1, t0, t1) in matches.items():
            src = sources.get(mid)
            if src is None:
                src = sources[mid] = Source(mid, file, first)
            src.segments.append(Segment(data, events, moves, count, s0, s1, t0, t1, bool(ordered)))
            for ev in events:
                if ev[0] == OTHER:  # (OTHER, line, off, seq, ts, moves before it)
                    placeholders[ev[1]] = (mid, ev[3], ev[4])
                    src.holes += 1
        for line, start, end in others:
            raw = data[start:end] if end - start <= MAX_LINE_BYTES else None
            rec = any_line(raw, file, line)
            if rec is not None:
                loose.append((line, rec))

    try:
        for data in buffers:
            take(data)
    except BrokenFile as exc:
        lines += 1
        raw_text = exc.partial.decode(errors="replace")
        loose.append((lines, BadLine(file, lines, MALFORMED_LINE, f"line {lines}: {exc}", None, None, None, raw_text)))

    top, bad = _place(file, loose, sources, placeholders)
    _unclaim(sources, placeholders)
    ordered = dict(sorted(sources.items(), key=lambda kv: kv[1].first_line))
    return _FileScan(FileReport(file, lines, bad), ordered, top)


def _place(file: str, loose: list[tuple[int, Record]], sources: dict[str, Source],
           placeholders: dict[int, tuple[str, int, str]]) -> tuple[list[Finding], int]:
    """The lines read in Python given to their matches' sources (a new source
    for a match the scanner did not see), in line order: the findings of lines
    of no match, and the count of bad lines."""
    top: list[Finding] = []
    bad = 0
    for line, rec in loose:
        if isinstance(rec, BadLine):
            bad += 1
            if rec.match is None:
                top.append(_line_finding(rec))
                continue
            mid = rec.match
        else:
            mid = rec.event.match
        src = sources.get(mid)
        if src is None:
            src = sources[mid] = Source(mid, file, line)
        elif line < src.first_line:
            src.first_line = line
        src.others.append((line, rec))
        want = placeholders.get(line)
        # the event must be what the scanner saw: a key given twice is read
        # by pydantic as its last value (then the line-by-line path decides)
        if want is not None and isinstance(rec, EventLine) and want == (mid, rec.event.seq, rec.event.ts):
            src.placed[line] = rec
    return top, bad


def _unclaim(sources: dict[str, Source], placeholders: dict[int, tuple[str, int, str]]) -> None:
    """Give up the scanner's claim on a line Python read as another match's, or
    as no match's (a head the scanner took for canonical, then a bare CR and
    more JSON after it, say): the line leaves that match's segments, which
    then go line by line, and a match left with no line is no match at all,
    as for the pure reader."""
    for line, (mid, _, _) in placeholders.items():
        src = sources.get(mid)
        if src is None or any(n == line for n, _ in src.others):
            continue
        for seg in src.segments:
            at = next((i for i, ev in enumerate(seg.events) if ev[0] == OTHER and ev[1] == line), None)
            if at is not None:
                del seg.events[at]
                seg.count -= 1
                seg.ordered = False
                src.holes -= 1
                break
        lines = [ev[1] for seg in src.segments for ev in seg.events]
        lines += [mv[0] for seg in src.segments for mv in MOVE.iter_unpack(seg.moves)]
        lines += [n for n, _ in src.others]
        if not lines:
            del sources[mid]
        else:
            src.first_line = min(lines)


def _line_finding(rec: BadLine) -> Finding:
    return Finding(rec.code, rec.message, rec.hand, rec.seq, rec.file, rec.line, rec.match)


# -- paths ---------------------------------------------------------------------


def scan_paths(
    paths: Iterable[str | os.PathLike[str]],
) -> tuple[list[FileReport], dict[str, list[Source]], list[Finding]]:
    """Files, each match's sources (one per file it is in, in reading order), top findings.

    Matches come in the order of their first line in the first file that
    has them, as :func:`replay.validate.group_records` orders them.
    """
    files: list[FileReport] = []
    by_match: dict[str, list[Source]] = {}
    top: list[Finding] = []
    for path in iter_paths(paths):
        fs = _scan_file(path)
        files.append(fs.stats)
        for mid, src in fs.sources.items():
            by_match.setdefault(mid, []).append(src)
        top.extend(fs.top)
    return files, by_match, top
