"""The conformance corpus: how its files write positions and moves, and the
brute-force minimax that checks its endgame values.

A position is a `replay.engine.HandState` without its rules (the line names
its table): a dict of the other fields. A move is a code: ``2 * tile + end``
for a play (the end as `replay.engine` means it, so on the hand's first tile
it says where the high half goes), -1 a pass, -2 a draw, -3 a lead yield.
A successor is written as a digest of its position (:func:`digest`).

Three files, JSON Lines, made by scripts/make_conformance.py:

* ``hands.jsonl``: a hand played at random from its deal; for every
  position on the way its legal moves (in `legal_moves` order) and the
  digest of the position each leads to; the final position and its score
  as the first hand of a match.
* ``matches.jsonl``: the first hands of a match: each deal's lead, the moves,
  the hand's score and the match after it.
* ``endgames.jsonl``: positions with few tiles left, a seat and a hand's
  match context, and each legal move's exact value from that seat's side
  (the best line for everyone: `brute`).

>>> from replay.engine import PASS, PLAYS
>>> [code(m) for m in (PLAYS[27][1], PASS)], move(55)
([55, -1], Play(tile='66', end='right'))
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from replay.engine import DRAW, PASS, PLAYS, YIELD, HandState, Move, Play, apply, legal_moves
from replay.match import new_match, score_hand
from replay.rules import Rules

HERE = Path(__file__).resolve().parent
FILES = ("hands", "matches", "endgames")

PASS_CODE, DRAW_CODE, YIELD_CODE = -1, -2, -3
_TOKENS = {PASS_CODE: PASS, DRAW_CODE: DRAW, YIELD_CODE: YIELD}
_CODES = {PASS: PASS_CODE, DRAW: DRAW_CODE, YIELD: YIELD_CODE}

#: HandState's fields after `rules`, in order.
FIELDS: tuple[str, ...] = HandState._fields[1:]


def code(m: Move) -> int:
    return 2 * m.tile + m.end if isinstance(m, Play) else _CODES[m]


def move(c: int) -> Move:
    return PLAYS[c >> 1][c & 1] if c >= 0 else _TOKENS[c]


def to_json(s: HandState) -> dict[str, Any]:
    return {f: getattr(s, f) for f in FIELDS}


def from_json(rules: Rules, d: dict[str, Any]) -> HandState:
    vals: list[Any] = []
    for f in FIELDS:
        v = d[f]
        vals.append(tuple(v) if isinstance(v, list) else v)
    return HandState(rules, *vals)


def digest(s: HandState) -> str:
    """Eight hex digits of the position (every field but the rules)."""
    return hashlib.blake2b(repr(tuple(s[1:])).encode(), digest_size=4).hexdigest()


def successors(s: HandState) -> tuple[list[int], list[str]]:
    """The legal moves of a position, as codes, and the digests of where they lead."""
    moves = legal_moves(s)
    return [code(m) for m in moves], [digest(apply(s, m)) for m in moves]


def points_value(rules: Rules, points: tuple[int, ...], seat: int) -> int:
    """A hand's points from `seat`'s side: its side's minus every other's
    (royal_rumble scores penalties: the other way round)."""
    mine = rules.side_of(seat)
    v = sum(p if k == mine else -p for k, p in enumerate(points))
    return -v if rules.scoring == "royal_rumble" else v


def brute(s: HandState, played_before: int, first_block_paid: bool, seat: int) -> int:
    """The value of a position by minimax over every line of `replay.engine`
    (closing passes and draws included), each finished hand scored by
    `replay.match.score_hand`: no pruning, no table. `seat`'s side
    maximises; its opponents (in 3-4 seat individual games, everyone else)
    minimise."""
    if s.over:
        m = replace(new_match(s.rules), played=played_before, first_block_paid=first_block_paid)
        return points_value(s.rules, score_hand(m, s).points, seat)
    r = s.rules
    vals = [brute(apply(s, m), played_before, first_block_paid, seat) for m in legal_moves(s)]
    if len(vals) == 1:
        return vals[0]
    two = r.teams == "pairs" or r.players == 2
    maxing = r.side_of(s.turn) == r.side_of(seat) if two else s.turn == seat
    return max(vals) if maxing else min(vals)


def tiles_left(s: HandState) -> int:
    return sum(h.bit_count() for h in s.hands) + len(s.stock)


def write(name: str, lines: list[dict[str, Any]]) -> int:
    data = b"".join(orjson.dumps(x) + b"\n" for x in lines)
    (HERE / f"{name}.jsonl").write_bytes(data)
    return len(data)


def read(name: str) -> Iterator[dict[str, Any]]:
    with (HERE / f"{name}.jsonl").open("rb") as f:
        for line in f:
            yield orjson.loads(line)
