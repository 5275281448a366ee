"""Training progress and puzzle tries in the store (migration 017).

Plain rows in and out: the scheduling (reports.training) and the choice of
puzzles (reports.puzzles) live above the store.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

__all__ = ["cards_of", "put_card", "put_try", "solve_rates"]


def cards_of(cur: Any, player: str) -> list[dict[str, Any]]:
    """Every card of a player, soonest due first."""
    rows = cur.execute(
        """SELECT match, hand, ply, card::VARCHAR, due, answers, last_move, last_rating, updated
           FROM train_cards WHERE player = ? ORDER BY due, match, hand, ply""", [player]).fetchall()
    keys = ("match", "hand", "ply", "card", "due", "answers", "last_move", "last_rating", "updated")
    return [dict(zip(keys, r, strict=True)) for r in rows]


def put_card(cur: Any, player: str, match: str, hand: int, ply: int, card: str, due: dt.datetime,
             move: str, rating: int, now: dt.datetime) -> None:  # fmt: skip
    """Insert or update a player's card after an answer."""
    cur.execute(
        """INSERT INTO train_cards VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?)
           ON CONFLICT (player, match, hand, ply) DO UPDATE SET card = excluded.card, due = excluded.due,
               answers = train_cards.answers + 1, last_move = excluded.last_move,
               last_rating = excluded.last_rating, updated = excluded.updated""",
        [player, match, hand, ply, card, due, move, rating, now])


def put_try(cur: Any, match: str, hand: int, ply: int, player: str | None, move: str, solved: bool,
            now: dt.datetime) -> None:  # fmt: skip
    cur.execute("INSERT INTO puzzle_tries VALUES (?, ?, ?, ?, ?, ?, ?)", [match, hand, ply, player, move, solved, now])


def solve_rates(cur: Any) -> dict[tuple[str, int, int], tuple[int, int]]:
    """(tries, solved) by puzzle."""
    rows = cur.execute("SELECT match, hand, ply, count(*), count(*) FILTER (WHERE solved) FROM puzzle_tries "
                       "GROUP BY ALL").fetchall()
    return {(m, h, p): (n, s) for m, h, p, n, s in rows}
