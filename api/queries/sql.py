"""What the reads share: the cursor type, rows as dicts, times as text."""

from __future__ import annotations

from typing import Any

import duckdb

from replay.store.replay_blob import TS

Cursor = duckdb.DuckDBPyConnection

_TS = TS  # as the packed replays hold them


def ts_utc(col: str) -> str:
    # TIMESTAMPTZ shown in UTC whatever the session's zone
    return f"strftime(timezone('UTC', {col}), '{_TS}')"


def dict_rows(cur: Cursor, sql: str, params: list[Any] | dict[str, Any] | None = None) -> list[dict[str, Any]]:
    res = cur.execute(sql, params or [])
    cols = [d[0] for d in res.description]
    return [dict(zip(cols, r, strict=True)) for r in res.fetchall()]


def int_scalar(cur: Cursor, sql: str, params: list[Any] | None = None) -> int:
    # fetchall, not fetchone: DuckDB 2 keeps a half-read result open on the cursor
    rows = cur.execute(sql, params or []).fetchall()
    return int(rows[0][0]) if rows and rows[0][0] is not None else 0


def one_row(cur: Cursor, sql: str, params: list[Any] | dict[str, Any] | None = None) -> dict[str, Any] | None:
    rows = dict_rows(cur, sql, params)
    return rows[0] if rows else None


MATCH_COLS = f"""
    m.match, m.table_id, m.profile, m.verdict, m.result, m.winner, m.score, m.players,
    m.hands, m.errors, m.warnings, {ts_utc("m.started")} AS started, {ts_utc("m.ended")} AS ended
"""

#: A finding's message while its hand is on: it may name a hidden tile ("holds 63").
WITHHELD = "details withheld until the hand is over"


def _absolute(col: str) -> str:
    return f"({col} LIKE '/%' OR regexp_matches({col}, '^[A-Za-z]:[\\\\/]'))"


def shown_file(col: str) -> str:
    """SQL: a finding's file as the pages name it. Ingest names a file from
    the folder given (replay.reader.display_names); a store filled before
    kept the path as given, and an absolute one keeps only its file name
    here: no page shows where the server keeps its files."""
    return f"CASE WHEN {_absolute(col)} THEN regexp_extract({col}, '[^/\\\\]*$') ELSE {col} END"


def shown_message(message: str, col: str) -> str:
    """SQL: a finding's message with its file (a line of no match starts "FILE: ")
    named as `shown_file` names it."""
    return f"CASE WHEN {_absolute(col)} THEN replace({message}, {col}, {shown_file(col)}) ELSE {message} END"
