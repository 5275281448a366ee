"""The principal lines of a hand's decisions, kept once worked out (migration 020).

One row per hand: the lines and reasons the JSON twin serves (as JSON text,
written and read as is: what they say is :mod:`api.review`'s business) and
the stamp of what they were worked out from. The stamp starts with the
match's own (the batch that stored it and the analysis run, which change
whenever the match or its analysis is stored again); the caller appends
what else the lines depend on (the analysis version, its sampled deals,
the line code's version). A row whose stamp is not the current one is
stale: :func:`stored_lines` does not return it, and :func:`put_lines`
replaces it and drops the match's other stale rows.

This module is the table's one writer.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

__all__ = ["match_stamp", "prune_lines", "put_lines", "stored_lines"]

#: The match's part of a stamp, as SQL over `matches` (alias m).
_MATCH_STAMP = "m.batch || '|' || coalesce(m.analysis, '')"


def match_stamp(cur: Any, match: str) -> str | None:
    """The match's part of a stamp (None if the match is not stored)."""
    row = cur.execute(f"SELECT {_MATCH_STAMP} FROM matches m WHERE m.match = ?", [match]).fetchone()
    return None if row is None else str(row[0])


def stored_lines(cur: Any, match: str, hand: int) -> tuple[str | None, str | None, str | None]:
    """(the match's stamp, the stored row's stamp, its lines as JSON text) in
    one read; (None, None, None) if the match is not stored, the last two None
    if the hand has no row. The caller compares the stamps."""
    row = cur.execute(
        f"""SELECT {_MATCH_STAMP}, l.stamp, l.lines::VARCHAR FROM matches m
            LEFT JOIN hand_lines l ON l.match = m.match AND l.hand = ? WHERE m.match = ?""",
        [hand, match]).fetchone()  # fmt: skip
    return (None, None, None) if row is None else (row[0], row[1], row[2])


def put_lines(cur: Any, match: str, hand: int, mstamp: str, tail: str, lines: str,
              now: dt.datetime | None = None) -> None:  # fmt: skip
    """Keep a hand's lines (JSON text) under the stamp `mstamp|tail`
    (`mstamp`: :func:`match_stamp`'s, read before the lines were worked
    out), in place of any older row of the hand; the match's rows of another
    match stamp (an older store or analysis of it) go too."""
    cur.execute("DELETE FROM hand_lines WHERE match = ? AND NOT starts_with(stamp, ?)", [match, mstamp + "|"])
    cur.execute("INSERT OR REPLACE INTO hand_lines VALUES (?, ?, ?, ?, ?)",
                [match, hand, f"{mstamp}|{tail}", lines, now or dt.datetime.now(dt.UTC)])


def prune_lines(cur: Any) -> int:
    """Drop the rows no view can use any more: their match is gone, or was
    stored or analysed again since. How many went."""
    before = cur.execute("SELECT count(*) FROM hand_lines").fetchone()[0]
    cur.execute(
        f"""DELETE FROM hand_lines l WHERE NOT EXISTS (
                SELECT 1 FROM matches m WHERE m.match = l.match AND starts_with(l.stamp, {_MATCH_STAMP} || '|'))""")
    after = cur.execute("SELECT count(*) FROM hand_lines").fetchone()[0]
    return int(before - after)
