"""`replay audit`: the fairness audit of a window of stored hands (`reports.audit`)."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from typing import Any

import numpy as np

from cli.common import emit, opened_store
from replay.store import default_db_path
from reports.audit import Filters, audit_window, format_text, load_window

__all__ = ["add_audit_parser", "run_audit"]


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from None


def add_audit_parser(subparsers: Any) -> None:
    """Add `audit` to the `replay` command's subparsers (sets `func`)."""
    p = subparsers.add_parser(
        "audit",
        help="fairness audit of a window of stored hands",
        description="Deterministic checks of every hand of a window (seeds, deals, draws, lead "
        "draws, reused seeds, 28 tiles) and the statistical battery over its deals. Exit 0 for "
        "PASS, 1 for WEAK/FAIL or a deterministic failure, 2 for a usage error, a store that "
        "cannot be read, or NO DATA (no hand matches the filters).",
    )
    p.add_argument("--db", default=None, help="database file (default $REPLAY_DB or ./data/replay.duckdb)")
    p.add_argument("--table", help="table id")
    p.add_argument("--profile", help="profile name")
    p.add_argument("--player", help="hands where this player (id or name) held a seat")
    p.add_argument("--match", help="one match id")
    p.add_argument("--from", dest="date_from", type=_date, metavar="DATE", help="hands started on or after DATE (UTC)")
    p.add_argument("--to", dest="date_to", type=_date, metavar="DATE", help="hands started on or before DATE (UTC)")
    p.add_argument("--limit", type=int, default=500, help="failing hands to list (default 500)")
    p.add_argument("--json", action="store_true", help="print the JSON report")
    p.set_defaults(func=run_audit)


def run_audit(args: argparse.Namespace) -> int:
    """`replay audit`: the report's exit code (see `reports.audit`)."""
    db = args.db or default_db_path()
    filters = Filters(args.table, args.profile, args.player, args.match, args.date_from, args.date_to)
    locked = (
        "{db} is locked by another process (the server or an ingest holds it for writing; DuckDB "
        "lets readers in only when no process writes). Use the running server's /api/fairness, "
        "or stop it and retry."
    )
    # hold the file only while reading: the server may want it
    with opened_store(db, read_only=True, locked=locked, unreadable="cannot read {db}") as conn:
        window = load_window(conn, filters)
    report = audit_window(window, limit=args.limit)
    emit(args.json, report.to_dict, lambda: format_text(report), default=_json_value)
    if report.empty:
        for note in report.notes:
            sys.stderr.write(f"replay audit: {note}\n")
    return report.exit_code


def _json_value(o: Any) -> Any:
    """What `json` does not write itself: numpy scalars, dates."""
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, dt.date | dt.datetime):
        return o.isoformat()
    raise TypeError(f"not JSON: {type(o).__name__}")
