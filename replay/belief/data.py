"""The choices of stored hands, as the play model is fitted and scored on.

A hand as the analysis reads it (:class:`replay.analysis.HandInput`, from a
validation report or the store) is replayed through the engine; every
decision with more than one legal move is a *choice*: the position (the
mover's tiles as they were), its legal moves, the move made and what the
table had shown (:class:`replay.belief.history.Public`).

The held-out hands are a fixed fifth of the hands, chosen by a hash of
the match id and the hand's number (:func:`held_out`), so that a refit
scores on the same hands.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator

from replay.analysis import HandInput, engine_move
from replay.belief.history import Public
from replay.engine import HandState, IllegalMoveError, Move, apply, legal_moves, new_hand

__all__ = ["Choice", "choices_of", "hand_choices", "held_out"]

#: One choice: the position, its legal moves, the move made, what the table showed.
Choice = tuple[HandState, tuple[Move, ...], Move, Public]


def held_out(match: str, hand: int) -> bool:
    """Whether hand `hand` of `match` is held out of fitting (one hand in five).

    >>> sum(held_out("m-1", i) for i in range(1000))
    199
    """
    return hashlib.sha256(f"{match}/{hand}".encode()).digest()[0] % 5 == 0


def hand_choices(inp: HandInput) -> list[Choice]:
    """Every choice of one hand (none if it cannot be replayed)."""
    if inp.skip is not None:
        return []
    try:
        state = new_hand(inp.rules, [list(h) for h in inp.dealt], leader=inp.leader, opening=inp.opening,
                         stock=inp.stock)  # fmt: skip
    except ValueError:
        return []
    public = Public.fresh(inp.rules.players)
    out: list[Choice] = []
    for seat, kind, tile, end in inp.moves:
        if state.over or seat != state.turn:
            return out
        try:
            move, laid = engine_move(state, kind, tile, end)
        except (IndexError, TypeError):
            return out
        legal = legal_moves(state)
        if move not in legal:
            return out
        if len(legal) > 1 and state.result is None:
            out.append((state, legal, move, public))
        public = public.after(state, move)
        try:
            state = apply(state, laid)
        except IllegalMoveError:
            return out
    return out


def choices_of(inputs: Iterable[HandInput]) -> Iterator[tuple[HandInput, list[Choice]]]:
    """Each hand with its choices."""
    for inp in inputs:
        yield inp, hand_choices(inp)
