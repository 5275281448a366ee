"""The store as a hive-partitioned Parquet dataset (`replay export --parquet DIR`).

One DuckDB file holds one machine's store. Past that (or to hand the data
to other tools) the store is exported as Parquet files that DuckDB,
polars, Spark and Arrow read in place::

    DIR/_export.json                         what was exported, rows per table
    DIR/<table>/profile=<p>/day=<YYYY-MM-DD>/data_0.parquet
    DIR/log_files/data_0.parquet             (tables of no match: one file)

The per-match tables are partitioned by the match's profile and the UTC
day it started (``__HIVE_DEFAULT_PARTITION__`` where unknown, as the lines
of no match in ``findings``): a query of one profile or one week reads
those folders only. Read it with::

    SELECT count(*) FROM read_parquet('DIR/moves/**/*.parquet', hive_partitioning = true)
    pl.scan_parquet("DIR/moves/**/*.parquet", hive_partitioning=True)

The export is written beside DIR and put in its place at the end, so a
reader never sees half of one; an earlier export in DIR is replaced (a
folder that is not an export is refused).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import duckdb

from replay.store import schema_version

__all__ = ["MARKER", "PARTITIONED", "UNPARTITIONED", "export_parquet"]

#: Tables of one row set per match, partitioned by the match's profile and day.
PARTITIONED: Final = (
    "matches", "seats", "hands", "moves", "findings", "seeds", "match_files", "player_seats", "player_held",
    "move_analysis", "hand_analysis",
)  # fmt: skip
#: Tables of no match, one file each.
UNPARTITIONED: Final = ("log_files", "players", "batches")
#: Columns left out: the replay page's packed rows and analysis (the other tables hold them).
LEFT_OUT: Final = {"matches": ("replay", "analysis_body")}
#: The file that says a folder is an export (and what is in it).
MARKER: Final = "_export.json"
#: A partition key's folder name for NULL (Hive's, which DuckDB and polars read as NULL).
_NULL: Final = "__HIVE_DEFAULT_PARTITION__"
#: Rows a Parquet row group holds (DuckDB's default is 122,880).
ROW_GROUP: Final = 122_880


def _lit(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _columns(conn: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    drop = LEFT_OUT.get(table, ())
    return [f't."{r[0]}"' for r in conn.execute(f"DESCRIBE {table}").fetchall() if r[0] not in drop]


def export_parquet(conn: duckdb.DuckDBPyConnection, out: str | os.PathLike[str]) -> dict[str, int]:
    """Export the store ``conn`` holds into ``out``; rows written per table."""
    target = Path(out)
    if target.exists() and not (target / MARKER).exists():
        raise FileExistsError(f"{target} exists and is not an export of the store: not replaced")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.tmp-"))
    try:
        rows: dict[str, int] = {}
        for table in PARTITIONED:
            cols = ", ".join(_columns(conn, table))
            rows[table] = _count(conn, table)
            # profile and day of each row's match; a row of no match has neither
            select = (
                f"SELECT {cols}, m.profile AS profile, CAST(timezone('UTC', m.started) AS DATE) AS day "
                f"FROM {table} t LEFT JOIN (SELECT match, profile, started FROM matches) m USING (match)"
            )
            options = f"FORMAT parquet, ROW_GROUP_SIZE {ROW_GROUP}, COMPRESSION zstd"
            if rows[table]:
                conn.execute(f"COPY ({select}) TO {_lit(tmp / table)} ({options}, PARTITION_BY (profile, day))")
            else:  # one empty file, so that a glob of the table finds its columns
                where = tmp / table / f"profile={_NULL}" / f"day={_NULL}"
                where.mkdir(parents=True)
                conn.execute(f"COPY ({select} LIMIT 0) TO {_lit(where / 'data_0.parquet')} ({options})")
        for table in UNPARTITIONED:
            (tmp / table).mkdir()
            cols = ", ".join(_columns(conn, table))
            conn.execute(
                f"COPY (SELECT {cols} FROM {table} t) TO {_lit(tmp / table / 'data_0.parquet')} "
                f"(FORMAT parquet, ROW_GROUP_SIZE {ROW_GROUP}, COMPRESSION zstd)"
            )
            rows[table] = _count(conn, table)
        manifest: dict[str, Any] = {
            "exported_at": datetime.now(UTC).isoformat(),
            "schema_version": schema_version(conn),
            "partitioned_by": ["profile", "day"],
            "partitioned": list(PARTITIONED),
            "unpartitioned": list(UNPARTITIONED),
            "left_out": {t: list(c) for t, c in LEFT_OUT.items()},
            "rows": rows,
        }
        (tmp / MARKER).write_text(json.dumps(manifest, indent=2) + "\n")
        _swap(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return rows


def _count(conn: duckdb.DuckDBPyConnection, table: str) -> int:
    row = conn.execute(f"SELECT count(*) FROM {table}").fetchall()
    return int(row[0][0])


def _swap(new: Path, target: Path) -> None:
    """Put ``new`` where ``target`` is (an earlier export goes)."""
    if not target.exists():
        os.rename(new, target)
        return
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    os.rename(target, old)
    os.rename(new, target)
    shutil.rmtree(old, ignore_errors=True)
