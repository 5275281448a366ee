"""A hand's public history, ply by ply, as every seat saw it.

The weighted belief (:mod:`replay.belief.weights`) asks, for a deal the
observer could face, how likely each other seat's past choice was in that
deal. That needs each past position as the table saw it, which
:class:`replay.knowledge.Tracker` does not keep: :class:`Recorder` is a
tracker that also keeps, per ply, the position with every hand and the
boneyard's order blanked (:func:`public_view`), the move, and what the
table had shown then (:class:`Public`, the record the bots play from,
:class:`replay.bots.Memo`).

Nothing recorded here tells a seat's hidden tiles: a bot or a grade that
reads only a :class:`Recorder` and its own hand reads only what its seat
may see.

>>> from replay.rules import resolve
>>> from replay.engine import new_hand, apply, legal_moves
>>> from replay.tiles import parse_tile as t
>>> hands = [[t(x) for x in h.split()] for h in (
...     "66 65 64 63 62 61 60", "55 54 53 52 51 50 44",
...     "43 42 41 40 33 32 31", "30 22 21 20 11 10 00")]
>>> s = new_hand(resolve("international"), hands, leader=0, opening=t("66"))
>>> rec = Recorder(s, fixed_by="double_six")
>>> for _ in range(2):
...     mv = legal_moves(s)[0]; rec.see(s, mv); s = apply(s, mv)
>>> [(p.seat, p.move) for p in rec.plies]
[(0, Play(tile='66', end='left')), (1, PASS)]
>>> rec.plies[1].view.hands, rec.public().lacks[1] == 1 << 6
((0, 0, 0, 0), True)
"""

from __future__ import annotations

from dataclasses import dataclass

from replay.engine import DRAW, PASS, HandState, Move, Play
from replay.knowledge import Tracker, lacked
from replay.tiles import BIT, HIGH, LOW, OTHER

__all__ = ["Ply", "Public", "Recorder", "public_view"]


@dataclass(frozen=True, slots=True)
class Public:
    """What the table had shown before a ply (number bitmasks by seat, as
    :class:`replay.bots.Memo` keeps them): `shown[s]`, the numbers seat s
    laid open; `lacks[s]`, the numbers a pass or a draw of s showed it
    lacked; `line`, the tiles on the line."""

    shown: tuple[int, ...]
    lacks: tuple[int, ...]
    line: int = 0

    @classmethod
    def fresh(cls, players: int) -> Public:
        return cls((0,) * players, (0,) * players)

    def after(self, state: HandState, move: Move) -> Public:
        """The record once the seat to move in `state` made `move`."""
        seat = state.turn
        if isinstance(move, Play):
            t = move.tile
            if state.left < 0:
                got = 1 << LOW[t] | 1 << HIGH[t]
            else:
                got = 1 << OTHER[t][state.left if move.end == 0 else state.right]
            shown = list(self.shown)
            shown[seat] |= got
            return Public(tuple(shown), self.lacks, self.line | BIT[t])
        if (move is PASS or move is DRAW) and state.result is None:
            lacks = list(self.lacks)
            lacks[seat] |= lacked(state.left, state.right)
            return Public(self.shown, tuple(lacks), self.line)
        return self


def public_view(state: HandState) -> HandState:
    """`state` with what no seat sees blanked: every hand empty, the
    boneyard's tiles unknown (-1; its size is public)."""
    return state._replace(hands=(0,) * len(state.hands), stock=(-1,) * len(state.stock))


@dataclass(frozen=True, slots=True)
class Ply:
    """One ply as the table saw it: the position before it (:func:`public_view`),
    the seat and its move (a first tile named on the left, as the engine lists
    it), and what the table had shown before it."""

    view: HandState
    seat: int
    move: Move
    public: Public


class Recorder(Tracker):
    """A :class:`Tracker` that keeps the public history (:attr:`plies`)."""

    def __init__(self, start: HandState, *, fixed_by: str = "") -> None:
        super().__init__(start, fixed_by=fixed_by)
        self.plies: list[Ply] = []
        self._public = Public.fresh(len(start.hands))

    def see(self, state: HandState, move: Move, drawn: int = -1) -> None:
        super().see(state, move, drawn)
        self.plies.append(Ply(public_view(state), state.turn, move, self._public))
        self._public = self._public.after(state, move)

    def public(self) -> Public:
        """What the table has shown so far."""
        return self._public
