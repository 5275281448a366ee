"""Deals drawn once a hand and carried forward: a seat's sampled deals at one
decision, played on through the moves made since, are its first deals at
its next decision.

Why it stays exact: a deal the seat could face at one decision (every
seat's tiles and the boneyard's order then) either agrees with the moves
made since or does not, and which depends on nothing but that deal. Those
that agree, advanced through the moves, are therefore drawn exactly as
fresh deals at the later decision would be (uniformly among the deals
that agree with everything the seat then knows, by the number of
initial deals each stands for); those that do not are dropped and fresh
draws take their places. So every decision is still graded on deals drawn
independently and uniformly, and successive decisions of one seat share
what their deals can share: the differences between them carry less
noise, and the table kept across the hand already holds much of what the
carried deals need (their positions after the moves made since were
searched at the earlier decision).

>>> from replay.rules import resolve
>>> from replay.engine import new_hand
>>> from replay.tiles import parse_tile as t
>>> hands = [[t(x) for x in h.split()] for h in (
...     "66 64 63 62 61 60 55", "65 54 53 52 51 50 44",
...     "43 42 41 40 33 32 31", "30 22 21 20 11 10 00")]
>>> s = new_hand(resolve("international"), hands, leader=0, opening=t("66"))
>>> moves = [(0, "play", t("66"), "left"), (1, "play", t("65"), "left")]
>>> seen = advance(s, (s.hands, s.stock), moves, observer=0, seen=None)   # the true deal, played on
>>> seen[0][1] == s.hands[1] & ~(1 << t("65"))
True
>>> swapped = ((s.hands[0], s.hands[2], s.hands[1], s.hands[3]), s.stock)
>>> advance(s, swapped, moves, observer=0, seen=None) is None   # seat 1 could not have played 65
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from replay.engine import DRAW, LEFT, PASS, PLAYS, YIELD, HandState, Move, act, can_apply
from replay.knowledge import World

__all__ = ["Carried", "advance", "laid_move"]

#: A logged move as the analysis reads it: (seat, kind, tile, end).
Logged = tuple[int, str, int, "str | None"]


def laid_move(kind: str, tile: int, end: str | None) -> Move:
    """The engine's move for a logged one, on the side the log laid it.

    >>> from replay.tiles import parse_tile as t
    >>> laid_move("play", t("62"), "right"), laid_move("pass", -1, None)
    (Play(tile='62', end='right'), PASS)
    """
    if kind == "pass":
        return PASS
    if kind == "draw":
        return DRAW
    if kind == "yield":
        return YIELD
    return PLAYS[tile][1 if end == "right" else LEFT]


def advance(state: HandState, world: World, moves: Sequence[Logged], *, observer: int,
            seen: HandState | None) -> World | None:  # fmt: skip
    """`world` (a deal `observer` could face in `state`) after `moves`, or
    None if they could not have been made in it; with `seen` (the true
    state after them), also None unless the observer's own tiles end as
    they truly are (its draws were the tiles it saw)."""
    hands, stock = world
    ws = state._replace(hands=tuple(hands), stock=tuple(stock))
    for seat, kind, tile, end in moves:
        if ws.turn != seat:
            return None
        move = laid_move(kind, tile, end)
        if not can_apply(ws, move):
            return None
        ws = act(ws, seat, move)
    if seen is not None and (ws.hands[observer] != seen.hands[observer] or len(ws.stock) != len(seen.stock)):
        return None
    return ws.hands, ws.stock


@dataclass
class Carried:
    """Each seat's last sampled deals of a hand, with the state and ply they
    were drawn at; :meth:`take` gives those that still agree at a later
    decision, advanced to it (dropping the rest), :meth:`keep` records a
    decision's deals. `tally` adds up deals carried and deals tried (a
    bench's survival rate)."""

    moves: Sequence[Logged]
    tally: list[int] = field(default_factory=lambda: [0, 0])
    _last: dict[int, tuple[int, HandState, list[World]]] = field(default_factory=dict)

    def take(self, ply: int, state: HandState, limit: int) -> list[World]:
        """The deals of the seat to move in `state` (decision `ply`, 1-based)
        carried from its previous decision, at most `limit`."""
        seat = state.turn
        got = self._last.pop(seat, None)
        if got is None:
            return []
        at, then, worlds = got
        since = self.moves[at - 1 : ply - 1]
        out = [w for w in (advance(then, w, since, observer=seat, seen=state) for w in worlds[:limit]) if w is not None]
        self.tally[0] += len(out)
        self.tally[1] += min(len(worlds), limit)
        return out

    def keep(self, ply: int, state: HandState, worlds: Sequence[World]) -> None:
        """Record the deals decision `ply` was graded on (unweighted draws only)."""
        self._last[state.turn] = (ply, state, list(worlds))
