"""What the play model sees of a legal move: a row of numbers.

A move's features use only what its seat knew when it chose: its own tiles
and the public record (:class:`replay.belief.history.Public`: the numbers
each seat laid open or showed it lacked, the tiles on the line). They
describe the move, not the position, since a conditional logit compares
the moves of one choice: what a feature adds to every move alike cancels.

``FEATURES`` names them (docs/belief.md says why each is there):

- ``pips``, ``double``: the tile's weight (/12) and whether it is a double;
- ``lead_long``, ``lead_pips``, ``lead_double``: on the first tile of the
  hand, how many of the mover's tiles carry the tile's best number (/7),
  its weight, a double (a lead shows a number);
- ``keep``: the mover's tiles left that carry the open ends' numbers (/7):
  a number kept alive;
- ``friend``, ``kill``: an end shows a number the partner laid open; the
  move covers such a number (it was on an end and is not after);
- ``next_lacks``, ``foe_shown``: an end shows a number the next seat lacks
  (it must pass or draw); an end shows a number only an opponent laid open;
- ``dead``: ends whose number nobody can hold any more (all seven out, or
  in the mover's hand only after it);
- ``yield``, ``yield_long``: the lead handed over, and how long the
  mover's longest number is then (a weak hand yields);
- ``late_pips``: the tile's weight times the share of tiles already on
  the line (weight matters more as the hand nears its count);
- ``heaviest``: no legal tile is heavier (the rule of thumb of shedding
  weight, sharp where ``pips`` is smooth);
- ``lead_top``: the first tile of the hand is the heaviest tile of the
  mover's longest number (the classic lead that shows a number);
- ``keep_long``: an end shows the mover's longest number, and it holds
  another tile of it;
- ``fit_ends``: the mover's tiles left that fit each end, summed over the
  two ends, a double counting twice (/7): how well it can follow.

>>> from replay.rules import resolve
>>> from replay.engine import new_hand, legal_moves
>>> from replay.belief.history import Public
>>> from replay.tiles import parse_tile as t
>>> hands = [[t(x) for x in h.split()] for h in (
...     "66 52 51 50 43 21 10", "55 54 53 65 44 64 11",
...     "42 41 40 33 32 31 63", "30 22 20 62 61 60 00")]
>>> s = new_hand(resolve("international"), hands, leader=0)
>>> rows = move_features(s, s.hands[0], legal_moves(s), Public.fresh(4))
>>> len(rows), len(rows[0]) == len(FEATURES)
(7, True)
>>> row = rows[[m.tile for m in legal_moves(s)].index(t("52"))]
>>> dict(zip(FEATURES, row))["lead_long"] * 7     # 52: three of its tiles carry the 5
3.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from replay.belief.history import Public
from replay.engine import LEFT, YIELD, HandState, Move, Play
from replay.tiles import (
    BIT,
    DOUBLE_OF,
    FULL_SET,
    HIGH,
    IS_DOUBLE,
    LOW,
    OTHER,
    PIPS,
    SUIT_MASK,
    iter_tiles,
)

__all__ = ["FEATURES", "move_features", "ply_context"]

FEATURES: Final = (
    "pips", "double", "lead_long", "lead_pips", "lead_double", "keep", "friend", "kill",
    "next_lacks", "foe_shown", "dead", "yield", "yield_long", "late_pips", "heaviest", "lead_top",
    "keep_long", "fit_ends",
)  # fmt: skip

def _counts(mask: int) -> list[int]:
    return [(mask & s).bit_count() for s in SUIT_MASK]


def _fit(hand: int, n: int) -> int:
    """Tiles of `hand` that carry `n`, its double counting twice."""
    m = hand & SUIT_MASK[n]
    return m.bit_count() + (1 if m & BIT[DOUBLE_OF[n]] else 0)


def ply_context(state: HandState, public: Public) -> tuple[int, int, int, int, int, int]:
    """What :func:`move_features` takes from the position and the record,
    whatever the mover holds: the ends (-1 before the first tile), the
    numbers the partner laid open and still may hold, those only opponents
    laid open, those the next seat lacks, and the tiles on the line."""
    seat = state.turn
    n = len(state.hands)
    partner = (seat + 2) % n if state.rules.teams == "pairs" and n == 4 else -1
    friend = public.shown[partner] & ~public.lacks[partner] if partner >= 0 else 0
    foes = 0
    for s in range(n):
        if s != seat and s != partner:
            foes |= public.shown[s]
    return state.left, state.right, friend, foes, public.lacks[(seat + 1) % n], public.line


def move_features(state: HandState, hand: int, moves: Sequence[Move], public: Public) -> list[list[float]]:
    """One row of :data:`FEATURES` per move of `moves` (the legal moves of
    the seat to move in `state`, holding `hand`), as that seat could see them."""
    _, _, friend, foes, nxt_lacks, line = ply_context(state, public)
    counts = _counts(hand)
    longest = max(counts)
    long_n = max(range(7), key=lambda x: (counts[x], x))
    top = max((PIPS[mv.tile] for mv in moves if type(mv) is Play), default=-1)
    long_top = max(iter_tiles(hand & SUIT_MASK[long_n]), key=lambda t: (PIPS[t], t), default=-1)
    phase = line.bit_count() / 28
    lead = state.left < 0
    before = 0 if lead else 1 << state.left | 1 << state.right
    rows: list[list[float]] = []
    for mv in moves:
        if mv is YIELD:
            rows.append([0.0] * 11 + [1.0, longest / 7, 0.0, 0.0, 0.0, 0.0, 0.0])
            continue
        if type(mv) is not Play:
            rows.append([0.0] * len(FEATURES))
            continue
        t = mv.tile
        pips = PIPS[t] / 12
        dbl = float(IS_DOUBLE[t])
        rest = hand & ~BIT[t]
        if lead:
            a, b = HIGH[t], LOW[t]
        elif mv.end == LEFT:
            a, b = OTHER[t][state.left], state.right
        else:
            a, b = state.left, OTHER[t][state.right]
        ends = 1 << a | 1 << b
        keep = (rest & (SUIT_MASK[a] | SUIT_MASK[b])).bit_count() / 7
        gone = line | BIT[t] | rest  # tiles nobody else can hold
        dead = sum(1 for x in {a, b} if not SUIT_MASK[x] & FULL_SET & ~gone)
        lead_long = max(counts[LOW[t]], counts[HIGH[t]]) / 7 if lead else 0.0
        rows.append([
            pips, dbl, lead_long, pips if lead else 0.0, dbl if lead else 0.0, keep,
            float(bool(ends & friend)), float(bool(before & friend & ~ends)),
            float(bool(ends & nxt_lacks)), float(bool(ends & foes & ~friend)), float(dead),
            0.0, 0.0, pips * phase, float(PIPS[t] == top), float(lead and t == long_top),
            float(bool(ends & 1 << long_n and rest & SUIT_MASK[long_n])), (_fit(rest, a) + _fit(rest, b)) / 7,
        ])  # fmt: skip
    return rows
