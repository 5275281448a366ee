"""Each hand's log lines, read again from log files, as the digests the Merkle leaves hash.

The store keeps every log file it read (``data/<store>/logs/<sha256>.jsonl``, or
``.jsonl.gz``) and which files hold each match's lines (``match_files``).
DuckDB reads those files as lines (one VARCHAR column: the delimiter is
the unit separator 0x1F, which JSON never holds raw), in parallel, picks
each line's match, hand and seq with its JSON functions, and hashes each
hand's lines joined by LF in seq order (``sha256(string_agg(...))``). A
line counts as often as the files hold it (the kept files are distinct by
content, so a line is twice only if a match was sent twice); a line that
is not JSON, or names no match, belongs to no hand.

The same query runs over the original logs (``replay certificate verify
--logs``), so a third party with the files can recompute every leaf.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

import duckdb
import polars as pl
import pyarrow as pa

from replay.store import layout

__all__ = ["digests", "log_paths", "store_files"]

_LINES_SQL: Final = r"""
WITH l AS (
    SELECT line, try(json_extract_string(line, ['$.match', '$.hand', '$.seq'])) AS j
    FROM read_csv($files, columns = {{'line': 'VARCHAR'}}, delim = E'\x1f', header = false, quote = '',
                  escape = '', auto_detect = false, strict_mode = false, null_padding = false)
    WHERE line IS NOT NULL
),
d AS (
    SELECT j[1] AS match, coalesce(try_cast(j[2] AS INTEGER), 0) AS hand,
           sha256(string_agg(line, E'\n' ORDER BY try_cast(j[3] AS BIGINT), line)) AS digest,
           count(*)::BIGINT AS lines
    FROM l WHERE j[1] IS NOT NULL
    GROUP BY 1, 2
)
SELECT * FROM d SEMI JOIN {wanted} w USING (match)
"""


def log_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files, and the ``.jsonl`` / ``.jsonl.gz`` files under folders, sorted."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out += sorted(q for q in p.rglob("*") if q.name.endswith((".jsonl", ".jsonl.gz")))
        else:
            out.append(p)
    return out


def _kept_in(conn: duckdb.DuckDBPyConnection) -> Path | None:
    """The folder the store's kept logs are named from (its own folder,
    ``replay.store.layout``), or None for a store with no file."""
    got = conn.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchone()
    return layout(got[0]).data if got and got[0] else None


def store_files(conn: duckdb.DuckDBPyConnection, data_dir: Path, matches: Sequence[str]) -> tuple[list[Path], list[str]]:
    """The kept files holding ``matches``' lines, and the stored names of those missing on disk."""
    rows = conn.execute(
        "SELECT DISTINCT lf.stored FROM match_files mf JOIN log_files lf USING (sha256) "
        "WHERE list_contains($m, mf.match) ORDER BY 1",
        {"m": list(matches)},
    ).fetchall()
    present: list[Path] = []
    missing: list[str] = []
    base = _kept_in(conn) or data_dir
    for (stored,) in rows:
        path = base / stored
        if path.is_file():
            present.append(path)
        else:
            missing.append(str(stored))
    return present, missing


def digests(files: Sequence[Path], matches: Sequence[str]) -> pl.DataFrame:
    """match, hand, digest (hex), lines: every hand of ``matches`` found in ``files``."""
    empty = pl.DataFrame(schema={"match": pl.String, "hand": pl.Int32, "digest": pl.String, "lines": pl.Int64})
    if not files or not matches:
        return empty
    conn = duckdb.connect()
    try:
        conn.execute("SET enable_progress_bar = false")
        conn.register("_wanted", pa.table({"match": pa.array(list(matches), pa.string())}))
        sql = _LINES_SQL.format(wanted="_wanted")
        out = conn.sql(sql, params={"files": [str(f) for f in files]}).pl()
    finally:
        conn.close()
    return out if out.height else empty
