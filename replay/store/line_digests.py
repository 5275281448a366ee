"""Each hand's log lines as one digest: what a certificate's Merkle leaf hashes.

A hand's lines are every line of its match that names that hand
(``"hand": n``); hand 0 holds the match's lines that name no hand. Each
line is taken as the server wrote it less its end of line (lines end at LF;
a CR before it is cut), in ``seq`` order (a line without an integer seq
last; ties by the bytes), joined by LF; the digest is the hex SHA-256 of
that text (docs/certificate.md, "Completeness").

Which match, hand and seq a line names is read by DuckDB's JSON functions
(``json_extract_string``; a hand or seq that is not an integer reads as
none): a line that is not UTF-8 JSON, or names no match, belongs to no
hand. One function (``digests``) reads them, for the ingest (a worker's
matches, as it stores them with their hands) and for a certificate's
verification (the kept files read again), so the two cannot differ on a
line.

It is fast because a server writes a hand's lines one after the other, in
seq order: DuckDB reads only the three keys of each line; a hand whose lines
sit together in seq order is hashed in one call over its slice of the text,
and only a hand whose lines are spread or out of order is gathered line by
line and sorted.
"""

from __future__ import annotations

import gzip
import hashlib
import mmap
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["SCHEMA", "digests", "empty", "of_files"]

#: The digests' columns: one row per (match, hand) found.
SCHEMA: Final = pa.schema([("match", pa.string()), ("hand", pa.int32()), ("digest", pa.string()),
                           ("lines", pa.int64())])  # fmt: skip

_KEYS: Final = """
SELECT i, j[1] AS match, coalesce(try_cast(j[2] AS INTEGER), 0) AS hand, try_cast(j[3] AS BIGINT) AS seq
FROM (SELECT i, try(json_extract_string(line, ['$.match', '$.hand', '$.seq'])) AS j FROM _lines)
WHERE j[1] IS NOT NULL
"""
_NO_SEQ: Final = np.iinfo(np.int64).max  # a line without a seq sorts last


def empty() -> pa.Table:
    return SCHEMA.empty_table()


def _line_ends(buf: np.ndarray) -> np.ndarray:
    """Where each line ends (its LF, or the end of the text), found a slice at a time:
    one comparison of the whole text would allocate as much again, page by page."""
    step = 1 << 22
    out = np.empty(min(step, len(buf)), bool)
    parts = []
    for k in range(0, len(buf), step):
        chunk = buf[k : k + step]
        got = out[: len(chunk)]
        np.equal(chunk, 10, out=got)
        parts.append(np.flatnonzero(got) + k)
    ends = np.concatenate(parts) if parts else np.empty(0, np.int64)
    if len(buf) and buf[-1] != 10:
        ends = np.append(ends, len(buf))
    return ends.astype(np.int64)


def _is_utf8(text: bytes | mmap.mmap) -> bool:
    try:
        str(memoryview(text), "utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _utf8(text: bytes | mmap.mmap, starts: np.ndarray, ends: np.ndarray) -> bytes | mmap.mmap:
    """``text`` for DuckDB: a line that is not UTF-8 blanked out (spaces: no JSON, no hand),
    the offsets kept."""
    if _is_utf8(text):
        return text
    out = bytearray(text)
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        try:
            str(text[s:e], "utf-8")
        except UnicodeDecodeError:
            out[s:e] = b" " * (e - s)
    return bytes(out)


@dataclass(frozen=True, eq=False)
class _Part:
    """One text's lines and the hands they name."""

    text: bytes | mmap.mmap
    starts: np.ndarray
    ends: np.ndarray
    keys: pa.Table  # i, match, hand, seq of the lines that name a match
    seq: np.ndarray  # every line's seq (none: last)
    groups: pa.Table  # match, hand, lines, digest ("": not together in seq order)


def _scan(text: bytes | mmap.mmap, matches: Collection[str] | None, conn: duckdb.DuckDBPyConnection) -> _Part:
    ends = _line_ends(np.frombuffer(text, np.uint8))
    starts = np.empty_like(ends)
    starts[:1] = 0
    starts[1:] = ends[:-1] + 1
    n = len(ends)
    # each line with its LF (JSON whitespace), so that the strings tile the text: no copy
    offsets = np.append(starts, len(text)).astype(np.int64)
    lines = pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(_utf8(text, starts, ends)))
    step = 1 << 16  # batches DuckDB reads in parallel
    batches = [pa.RecordBatch.from_arrays([pa.array(np.arange(k, min(k + step, n), dtype=np.int64)),
                                           lines.slice(k, step)], ["i", "line"]) for k in range(0, n, step)]  # fmt: skip
    conn.register("_lines", pa.Table.from_batches(batches, pa.schema([("i", pa.int64()), ("line", pa.large_string())])))
    try:
        keys = conn.sql(_KEYS).to_arrow_table()
    finally:
        conn.unregister("_lines")
    if matches is not None:
        keys = keys.filter(pc.is_in(keys.column("match"), pa.array(list(matches), pa.string())))
    seq = np.full(n, _NO_SEQ, np.int64)
    seq[keys.column("i").to_numpy()] = keys.column("seq").fill_null(_NO_SEQ).to_numpy()
    groups = keys.group_by(["match", "hand"], use_threads=False).aggregate(
        [("i", "min"), ("i", "max"), ("i", "count"), ("seq", "count")]
    )
    first = groups.column("i_min").to_numpy()
    last = groups.column("i_max").to_numpy()
    count = groups.column("i_count").to_numpy()
    falls = np.zeros(n, np.int64)  # lines up to each whose seq is not above the one before
    if n > 1:
        np.cumsum(seq[1:] <= seq[:-1], out=falls[1:])
    together = (last - first + 1 == count) & (falls[last] == falls[first])
    together &= groups.column("seq_count").to_numpy() == count
    mv = memoryview(text)
    sha = hashlib.sha256
    digest = [
        sha(mv[a:b]).hexdigest() if ok else ""
        for a, b, ok in zip(starts[first].tolist(), ends[last].tolist(), together.tolist(), strict=True)
    ]
    out = pa.table({"match": groups.column("match"), "hand": groups.column("hand").cast(pa.int32()),
                    "lines": groups.column("i_count"), "digest": pa.array(digest, pa.string())})  # fmt: skip
    return _Part(text, starts, ends, keys, seq, out)


def _gather(parts: list[_Part], wanted: set[tuple[str, int]]) -> dict[tuple[str, int], str]:
    """The digests of hands whose lines are spread (over a text, or over texts): gathered and sorted."""
    lines: dict[tuple[str, int], list[tuple[int, bytes]]] = {k: [] for k in wanted}
    names = pa.array(sorted({m for m, _ in wanted}), pa.string())
    for part in parts:
        sub = part.keys.filter(pc.is_in(part.keys.column("match"), names))
        for i, m, h in zip(*(sub.column(c).to_pylist() for c in ("i", "match", "hand")), strict=True):
            got = lines.get((m, h))
            if got is not None:
                got.append((int(part.seq[i]), bytes(part.text[part.starts[i] : part.ends[i]])))
    return {k: hashlib.sha256(b"\n".join(b for _, b in sorted(v))).hexdigest() for k, v in lines.items()}


def _combine(parts: list[_Part]) -> pa.Table:
    if not parts:
        return empty()
    groups = pa.concat_tables([p.groups for p in parts])
    if not groups.num_rows:
        return empty()
    per = groups.group_by(["match", "hand"], use_threads=False).aggregate(
        [("lines", "sum"), ("digest", "max"), ("digest", "count")]
    )
    alone = pc.equal(per.column("digest_count"), 1)
    ready = pc.and_(alone, pc.not_equal(per.column("digest_max"), ""))
    spread = per.filter(pc.invert(ready))
    digest = per.column("digest_max")
    if spread.num_rows:
        wanted = set(zip(spread.column("match").to_pylist(), spread.column("hand").to_pylist(), strict=True))
        got = _gather(parts, wanted)
        keys = zip(per.column("match").to_pylist(), per.column("hand").to_pylist(), strict=True)
        digest = pa.array([got.get(k, d) for k, d in zip(keys, digest.to_pylist(), strict=True)], pa.string())
    return pa.table({"match": per.column("match"), "hand": per.column("hand"), "digest": digest,
                     "lines": per.column("lines_sum").cast(pa.int64())}, schema=SCHEMA)  # fmt: skip


def _connect(conn: duckdb.DuckDBPyConnection | None) -> duckdb.DuckDBPyConnection:
    return conn if conn is not None else duckdb.connect(config={"threads": 2})


def digests(
    text: bytes, matches: Collection[str] | None = None, conn: duckdb.DuckDBPyConnection | None = None
) -> pa.Table:
    """match, hand, digest, lines of every hand in ``text`` (lines cut at LF), or of ``matches``' hands.

    >>> t = digests(b'{"match":"m","seq":2,"hand":1}\\r\\n{"match":"m","seq":1,"hand":1}\\nnot json\\n')
    >>> t.column("lines").to_pylist(), t.column("digest")[0].as_py()[:12]
    ([2], '7ad6390cad01')
    >>> hashlib.sha256(b'{"match":"m","seq":1,"hand":1}\\n{"match":"m","seq":2,"hand":1}').hexdigest()[:12]
    '7ad6390cad01'
    """
    if b"\r" in text:
        text = text.replace(b"\r\n", b"\n")
    if not text:
        return empty()
    db = _connect(conn)
    try:
        return _combine([_scan(text, matches, db)])
    finally:
        if conn is None:
            db.close()


def _open(path: Path) -> bytes | mmap.mmap | None:
    """A log file's text: mapped (no copy) unless it is gzip or has CRs to cut; None when empty."""
    with path.open("rb") as f:
        if f.read(2) == b"\x1f\x8b":
            f.seek(0)
            data = gzip.decompress(f.read())
            return (data.replace(b"\r\n", b"\n") if b"\r" in data else data) or None
        if not path.stat().st_size:
            return None
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    if mm.find(b"\r") >= 0:
        data = mm[:].replace(b"\r\n", b"\n")
        mm.close()
        return data
    return mm


def of_files(
    paths: Iterable[Path], matches: Collection[str] | None = None, conn: duckdb.DuckDBPyConnection | None = None
) -> pa.Table:
    """The digests of the hands in log files (a match's lines may span them), file by file."""
    db = _connect(conn)
    parts = []
    try:
        for path in paths:
            text = _open(path)
            if text is not None:
                parts.append(_scan(text, matches, db))
        return _combine(parts)
    finally:
        if conn is None:
            db.close()
