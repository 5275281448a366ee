"""Thin reads of the store's rows (the API's and the tests')."""

from __future__ import annotations

from typing import Any

import duckdb

from replay.store.rows import TABLES
from replay.store.schema import one

__all__ = [
    "get_findings",
    "get_hands",
    "get_match",
    "get_moves",
    "stored_files",
    "table_counts",
]


# -- thin reads for the API ------------------------------------------------------


def _dicts(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    cols = [d[0] for d in cur.description or ()]
    return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]


def table_counts(conn: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Rows of every store table."""
    out = {}
    for t in (*TABLES, "log_files", "players", "batches"):
        row = one(conn, f"SELECT count(*) FROM {t}")
        out[t] = int(row[0]) if row else 0
    return out


def get_match(conn: duckdb.DuckDBPyConnection, match: str) -> dict[str, Any] | None:
    rows = _dicts(conn.execute("SELECT * FROM matches WHERE match = ?", [match]))
    return rows[0] if rows else None


def get_hands(conn: duckdb.DuckDBPyConnection, match: str) -> list[dict[str, Any]]:
    return _dicts(conn.execute("SELECT * FROM hands WHERE match = ? ORDER BY hand", [match]))


def get_moves(conn: duckdb.DuckDBPyConnection, match: str, hand: int) -> list[dict[str, Any]]:
    return _dicts(
        conn.execute("SELECT * FROM moves WHERE match = ? AND hand = ? ORDER BY ply", [match, hand])
    )


def get_findings(conn: duckdb.DuckDBPyConnection, match: str | None) -> list[dict[str, Any]]:
    """A match's findings, or (``None``) the lines that belong to no match."""
    if match is None:
        return _dicts(conn.execute("SELECT * FROM findings WHERE match IS NULL ORDER BY file, line"))
    return _dicts(
        conn.execute(
            "SELECT * FROM findings WHERE match = ? ORDER BY hand NULLS FIRST, seq NULLS FIRST, code",
            [match],
        )
    )


def stored_files(conn: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """The kept log files, oldest read first."""
    return _dicts(conn.execute("SELECT * FROM log_files ORDER BY read_at, sha256"))
