"""Each hand's log lines, as the digests the Merkle leaves hash: stored, or read again from files.

The ingest hashes each hand's lines once and stores the digest with the
hand (``replay.store.line_digests``, migration 018); ``stored`` reads those
of a certificate's matches, and hashes the kept files again only for
matches stored before that (their digests are NULL). ``digests`` reads
log files again with the same function: the store's own kept files
(``data/<store>/logs/<sha256>.jsonl``, ``match_files`` says which hold a
match) when a certificate is verified from the store, or the original
logs (``replay certificate verify --logs``), so a third party with the
files recomputes every leaf.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa

from replay.store import layout, line_digests

__all__ = ["digests", "log_paths", "stored", "store_files"]


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
    got = conn.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
    return layout(got[0][0]).data if got and got[0][0] else None


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
    if not files or not matches:
        return _empty()
    out = pl.from_arrow(line_digests.of_files(files, set(matches)))
    assert isinstance(out, pl.DataFrame)
    return out.with_columns(pl.col("lines").cast(pl.Int64)) if out.height else _empty()


def _empty() -> pl.DataFrame:
    return pl.DataFrame(schema={"match": pl.String, "hand": pl.Int32, "digest": pl.String, "lines": pl.Int64})


def stored(conn: duckdb.DuckDBPyConnection, data_dir: Path, matches: Sequence[str]) -> pl.DataFrame:
    """match, hand, digest, lines of ``matches``' hands (and hand 0 of each) as stored with them;
    the hands of matches stored without digests are hashed from their kept files."""
    if not matches:
        return _empty()
    conn.register("_cert_matches", pa.table({"match": pa.array(list(matches), pa.string())}))
    try:
        rows: pl.DataFrame = conn.sql(
            """SELECT match, 0::INTEGER AS hand, log_digest AS digest, log_lines::BIGINT AS lines
               FROM matches SEMI JOIN _cert_matches USING (match)
               UNION ALL
               SELECT match, hand, log_digest, log_lines::BIGINT FROM hands SEMI JOIN _cert_matches USING (match)"""
        ).pl()
    finally:
        conn.unregister("_cert_matches")
    have: pl.DataFrame = rows.filter(pl.col("digest").is_not_null())
    old = rows.filter(pl.col("digest").is_null()).get_column("match").unique().sort().to_list()
    if not old:
        return have
    files, _ = store_files(conn, data_dir, old)
    return pl.concat([have.filter(~pl.col("match").is_in(old)), digests(files, old)])
