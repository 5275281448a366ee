"""`replay export --parquet DIR`: the store as a Parquet dataset (`replay.export`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cli.common import opened_store
from cli.words import count
from replay.export import export_parquet
from replay.store import default_db_path

__all__ = ["add_export_parser", "run_export"]


def add_export_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "export",
        help="export the store as a hive-partitioned Parquet dataset",
        description="Write every table of the store as Parquet files under DIR/<table>/, the "
        "per-match tables partitioned by profile and UTC day (DIR/moves/profile=P/day=D/). "
        "DuckDB: read_parquet('DIR/moves/**/*.parquet', hive_partitioning=true); polars: "
        "pl.scan_parquet('DIR/moves/**/*.parquet', hive_partitioning=True).",
    )
    p.add_argument("--parquet", required=True, metavar="DIR", help="the dataset's folder (replaced if an export)")
    p.add_argument("--db", default=None, help="database file (default $REPLAY_DB or ./data/replay.duckdb)")
    p.set_defaults(func=run_export)


def run_export(args: argparse.Namespace) -> int:
    """`replay export`: 0 when written; 1 if the store is held or DIR is not an export."""
    db = Path(args.db) if args.db else default_db_path()
    if not db.exists():
        sys.stderr.write(f"replay export: no store at {db}\n")
        return 1
    with opened_store(db, read_only=True, locked="the database is in use (stop the server first): {exc}", code=1) as conn:
        try:
            rows = export_parquet(conn, args.parquet)
        except FileExistsError as exc:
            sys.stderr.write(f"replay export: {exc}\n")
            return 1
    total = sum(rows.values())
    sys.stderr.write(f"exported {count(total, 'row')} of {count(len(rows), 'table')} to {args.parquet}\n")
    return 0
