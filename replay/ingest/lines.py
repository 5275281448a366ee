"""A log line's match, read from its bytes, and the lines of some matches.

A server line starts ``{"type":"X","match":"ID"``, so the type and match id
are byte slices (:func:`fast_key`); any other line is parsed as the reader
parses it (:func:`parse_raw`). The line splitting and gzip handling are the
reader's, so that line numbers and broken files count exactly as in
``replay validate``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

from replay.findings import Finding
from replay.reader import (
    BadLine,
    BrokenFile,
    EventLine,
    Record,
    not_utf8,
    parse_line,
    read_chunks,
    split_lines,
)

__all__ = [
    "fast_key",
    "file_finding",
    "is_blank",
    "match_key",
    "parse_raw",
    "read_match_records",
    "record_match",
]

_TYPE: Final = b'{"type":"'
_MATCH: Final = b'","match":"'


def fast_key(raw: bytes) -> tuple[bytes, bytes] | None:
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


def parse_raw(raw: bytes, label: str, n: int) -> Record:
    """One non-blank line as the reader reads it."""
    if raw[-1:] == b"\r":
        raw = raw[:-1]
    try:
        text = raw.decode()
    except UnicodeDecodeError as exc:
        return not_utf8(raw, exc, label, n)
    return parse_line(text, label, n)


def is_blank(raw: bytes) -> bool:
    """A line of spaces and tabs only: no record at all."""
    return not (raw[:-1] if raw[-1:] == b"\r" else raw).strip(b" \t")


def record_match(rec: Record) -> str | None:
    """The match a record names, if any."""
    return rec.event.match if isinstance(rec, EventLine) else rec.match


def match_key(match: str) -> bytes:
    """A match id as the routing keys it: the bytes of the line."""
    return match.encode("utf-8", "surrogatepass")


def file_finding(rec: BadLine) -> Finding:
    """A line of no match, worded as validate.group_records does."""
    return Finding(rec.code, f"{rec.file}: {rec.message}", rec.hand, rec.seq, rec.file, rec.line, rec.match)


def read_match_records(
    files: Sequence[tuple[str, Path]], wanted: Iterable[str]
) -> dict[str, list[Record]]:
    """The records of the wanted matches in (label, path) files, in read order.

    Only the lines of those matches are parsed (the match id is read from
    the bytes first), so a big kept file costs a scan, not a parse.
    """
    keys = {match_key(m): m for m in wanted}
    out: dict[str, list[Record]] = {m: [] for m in keys.values()}
    for label, path in files:
        n = 0
        with contextlib.suppress(BrokenFile):  # the break is a finding of the file
            for raw in split_lines(read_chunks(path)):
                n += 1
                if raw is None:
                    continue
                fast = fast_key(raw)
                if fast is not None:
                    m = keys.get(fast[0])
                    if m is None:
                        continue
                    rec = parse_raw(raw, label, n)
                    got = record_match(rec)
                    if got is not None:
                        out.setdefault(got, []).append(rec)
                elif not is_blank(raw):
                    rec = parse_raw(raw, label, n)
                    got = record_match(rec)
                    if got is not None and match_key(got) in keys:
                        out[got].append(rec)
    return out
