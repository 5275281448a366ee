"""Learn from your mistakes: a player's costly decisions, on a spaced-repetition schedule.

The positions are the player's own decisions that the analysis classed
(inaccuracy or worse: the loss is clear on the evidence, docs/analysis.md),
worst and clearest first: by class, then by the evidence (every agreeing
deal scored, then sampled, then perfect information only), then by points
lost. A position answered once becomes a card that the FSRS scheduler
(the `fsrs` package, its default parameters, no fuzzing so that a schedule
is reproducible) brings back: due cards first, soonest first, then new
positions. An answer is rated by the points it loses on the grade the
position has: the best move is Good, a loss under the inaccuracy line
Hard, anything worse Again.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any, Final

from fsrs import Card, Rating, Scheduler

from replay.analysis.grades import THRESHOLDS
from replay.store.training import cards_of, put_card
from reports.skill import seat_ranges

__all__ = ["NEW_PER_ROUND", "answer", "candidates", "queue", "rate"]

#: New positions offered a round, after the due ones.
NEW_PER_ROUND: Final = 10

_SCHEDULER: Final = Scheduler(enable_fuzzing=False)
_RANK: Final = "CASE a.class WHEN 'blunder' THEN 3 WHEN 'mistake' THEN 2 ELSE 1 END"


def candidates(cur: Any, player: str, limit: int = 200) -> list[dict[str, Any]]:
    """The player's classed decisions, worst and clearest first."""
    rows = cur.execute(f"""
        WITH r AS ({seat_ranges("WHERE s.player = ?")})
        SELECT a.match, a.hand, a.ply, a.seat, a.class, round(coalesce(a.pimc_loss, a.dd_loss), 2) AS loss,
               CASE WHEN a.exact THEN 'every deal' WHEN a.samples > 0 THEN 'sampled'
                    ELSE 'perfect information' END AS evidence, mt.profile
        FROM move_analysis a
        JOIN r ON r.match = a.match AND r.seat = a.seat AND a.hand >= r.from_hand AND a.hand < r.to_hand
        JOIN matches mt ON mt.match = a.match
        WHERE NOT a.forced AND a.class IS NOT NULL
        ORDER BY {_RANK} DESC, a.exact DESC, a.samples > 0 DESC, loss DESC, a.match, a.hand, a.ply
        LIMIT ?""", [player, limit]).fetchall()
    keys = ("match", "hand", "ply", "seat", "class", "loss", "evidence", "profile")
    return [dict(zip(keys, r, strict=True)) for r in rows]


def queue(cur: Any, player: str, now: dt.datetime) -> dict[str, Any]:
    """The player's round: the cards due, soonest first, then new positions;
    with every card's schedule."""
    cards = cards_of(cur, player)
    carded = {(c["match"], c["hand"], c["ply"]) for c in cards}
    due = [c for c in cards if c["due"] <= now]
    fresh = [c for c in candidates(cur, player) if (c["match"], c["hand"], c["ply"]) not in carded][:NEW_PER_ROUND]
    return {"player": player,
            "due": [_card_row(c) for c in due], "new": fresh,
            "cards": [_card_row(c) for c in cards],
            "counts": {"cards": len(cards), "due": len(due), "new": len(fresh)}}


def _card_row(c: dict[str, Any]) -> dict[str, Any]:
    return {"match": c["match"], "hand": c["hand"], "ply": c["ply"], "due": c["due"].isoformat(),
            "answers": c["answers"], "last_move": c["last_move"], "last_rating": c["last_rating"]}


def _card_id(player: str, key: tuple[str, int, int]) -> int:
    """A card's id: a function of the player and the position (the scheduler only keeps it)."""
    digest = hashlib.sha256(f"{player}|{key[0]}|{key[1]}|{key[2]}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


def rate(loss: float, scoring: str) -> Rating:
    """The rating of an answer that loses `loss` points.

    >>> rate(0.0, "pips").name, rate(3.0, "pips").name, rate(12.0, "pips").name
    ('Good', 'Hard', 'Again')
    """
    if loss <= 1e-9:
        return Rating.Good
    if loss < THRESHOLDS.get(scoring, THRESHOLDS["pips"])[0] - 1e-9:
        return Rating.Hard
    return Rating.Again


def answer(cur: Any, player: str, key: tuple[str, int, int], move: str, loss: float, scoring: str,
           now: dt.datetime) -> dict[str, Any]:  # fmt: skip
    """Schedule a position again after the player answered `move` (losing `loss`): its new card."""
    match, hand, ply = key
    old = next((c for c in cards_of(cur, player) if (c["match"], c["hand"], c["ply"]) == key), None)
    card = Card.from_json(old["card"]) if old is not None else Card(card_id=_card_id(player, key))
    rating = rate(loss, scoring)
    card, _ = _SCHEDULER.review_card(card, rating, review_datetime=now)
    assert card.due is not None
    put_card(cur, player, match, hand, ply, card.to_json(), card.due, move, int(rating), now)
    return {"rating": rating.name.lower(), "due": card.due.isoformat(), "stability": round(card.stability or 0, 3),
            "difficulty": round(card.difficulty or 0, 3), "answers": (old["answers"] if old else 0) + 1}
