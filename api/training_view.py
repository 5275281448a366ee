"""A decision shown as its seat saw it, and what it is worth once answered:
the training and puzzle pages' position and reveal.

`position` draws the table as the seat to move saw it just before the
decision (its own tiles, the line, the others' tile counts, what their
passes showed, the moves so far) with the legal moves to choose from, and
nothing else: no value, no best move, no tile of another seat. `reveal`
gives, once a move is picked, every move's values, the best one, the move
played at the table, the principal lines and their reasons (the hand is
over: everything may be shown), and the points the pick lost.
"""

from __future__ import annotations

from typing import Any

from api import queries as q
from api.board import table_svg
from api.connection import LazyCursor
from api.hand_cache import hand_parts, version_of
from api.hand_page import build_plies
from api.replay_model import HandData
from api.review import best_move, lines_of, scoring_of
from api.tile_svg import ply_style

__all__ = ["hand_data", "position", "reveal"]


def hand_data(state: Any, match: str, hand: int) -> tuple[HandData, dict[str, Any], list[dict[str, Any]]] | None:
    """A stored hand (through the replay's bundle cache). Blocking: on a thread."""
    with LazyCursor(state.store) as cur:
        gen = state.store.generation
        version = version_of(cur, match)
        b = state.bundle_cache.fetch(match, gen, version, lambda: q.match_bundle(cur(), match))
        return hand_parts(b, match, hand, cur()) if b is not None else None


def _graded(data: HandData, ply: int) -> dict[str, Any] | None:
    if data.analysis is None or not data.finished:
        return None
    return next((p for p in data.analysis["plies"] if p["ply"] == ply), None)


def position(data: HandData, ply: int) -> dict[str, Any] | None:
    """Decision `ply` of a finished, analysed hand as its seat saw it (None if no such decision)."""
    p = _graded(data, ply)
    if p is None or p["forced"]:
        return None
    seat = p["seat"]
    plies = build_plies(data, viewer=seat)
    if not 0 < ply < len(plies):
        return None
    shown = plies[:ply]  # up to the position before the move
    board = table_svg(shown, data.seats, data.players, data.teams) + ply_style(ply - 1, ply - 1)
    before = shown[-1].to_json()
    return {
        "match": data.match, "hand": data.hand, "ply": ply, "seat": seat,
        "moves": [a["move"] for a in p["alternatives"]],
        "history": [x.title for x in shown[1:]],
        "position": {k: before[k] for k in ("line", "ends", "hands", "counts", "pips", "stock", "voids")},
        "board": board,
    }


def reveal(data: HandData, ply: int, move: str) -> dict[str, Any] | None:
    """What decision `ply` was worth, once `move` is picked (None if no such decision or move)."""
    p = _graded(data, ply)
    if p is None or p["forced"]:
        return None
    alts = {a["move"]: a for a in p["alternatives"]}
    if move not in alts:
        return None
    sampled = bool(p["samples"]) and all(a["pimc"] is not None for a in p["alternatives"])
    key = "pimc" if sampled else "dd"
    best = best_move(p)
    assert best is not None
    loss = float(alts[best][key]) - float(alts[move][key])
    ln = lines_of(data).get(ply, {})
    return {
        "match": data.match, "hand": data.hand, "ply": ply, "seat": p["seat"], "move": move,
        "best": best, "played": p["played"], "loss": round(loss, 2),
        "graded": "could know" if sampled else "perfect information",
        "alternatives": p["alternatives"], "class_played": p["class"],
        "line_played": ln.get("line_played"), "line_best": ln.get("line_best"), "why": ln.get("why", []),
        "themes": ln.get("themes", []), "scoring": scoring_of(data),
    }
