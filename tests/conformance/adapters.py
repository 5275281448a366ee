"""Every implementation of the hand rules, the hand score and the solver,
behind one small interface each, for tests/test_conformance.py.

This is the only file of the tests that knows how each twin is called
(how its options are passed, how a move or a position is encoded), so
that a change to those calls is made here once.

* replayers: ``(start, codes) -> Final | None``: the position a hand's
  moves reach, as the C replayer answers it (None: it declines);
* scorers: ``make(profile, rules)`` gives a match scorer with ``lead``,
  ``record`` and ``state`` (replay.match; the C Scorer);
* solvers: ``make(rules)`` gives ``values(state, played_before,
  first_block_paid, seat)``: each legal move's code and exact value.

``None`` stands for an implementation not built here (the C ones without
the extension, or under REPLAY_PURE=1): :func:`require` skips the test,
or fails it when the build is expected (tests/conftest.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from replay.accel import native
from replay.canonical_reader import MOVE
from replay.engine import LEFT, HandState, Play, apply
from replay.match import MatchState, new_match, next_lead, record, score_hand
from replay.rules import PROFILES, Rules, spec_of
from replay.solver import HandContext, make_solver, move_values
from replay.tiles import HIGH, LOW, tile_name
from tests.conformance.corpus import code, move
from tests.conftest import native_expected, require_native

__all__ = ["REPLAYERS", "SCORERS", "SOLVERS", "native", "native_expected", "require"]

#: What a replayer answers: hands, boneyard size, left, right, turn, passes,
#: blocker, result, last, plays, pips (replay_hand's tuple).
Final = tuple[Any, ...]


def require(impl: Any, what: str) -> Any:
    """`impl`, or skip the test (fail it where the C build is expected)."""
    return impl if impl is not None else require_native(what)


def final_of(s: HandState) -> Final:
    return (s.hands, len(s.stock), s.left, s.right, s.turn, s.passes, s.blocker, s.result, s.last, s.plays,
            s.pips())  # fmt: skip


# -- replayers ----------------------------------------------------------------------


def engine_replay(start: HandState, codes: Sequence[int]) -> Final | None:
    s = start
    for c in codes:
        s = apply(s, move(c))
    return final_of(s) if s.over else None


def _records(start: HandState, codes: Sequence[int], hand: int) -> bytes:
    """The moves as replay.canonical_reader packs a log's move lines (what validate.fast_path hands to C)."""
    out = []
    s = start
    for k, c in enumerate(codes):
        m = move(c)
        seat = s.turn
        if isinstance(m, Play):
            if s.left < 0:  # the face as written lays the opening: high half left or right
                hi, lo = HIGH[m.tile], LOW[m.tile]
                face, end = (hi if m.end == LEFT else lo), 2
            else:
                face, end = int(tile_name(m.tile)[0]), m.end
            kind, tile, face_end = 0, m.tile, end + 4 * face
        elif c == -1:
            kind, tile, face_end = 1, 0, 2
        else:
            tile = s.stock[0]
            kind, face_end = 2, 2 + 4 * int(tile_name(tile)[0])
        out.append(MOVE.pack(k + 3, 100 * k, 100 * k + 40, 10 + k, hand, kind, seat, tile, face_end))
        s = apply(s, m)
    return b"".join(out)


def c_replay_raw(start: HandState, codes: Sequence[int], hand: int = 1) -> tuple[Any, ...] | None:
    """replay_hand's own answer, called as replay.validate.fast_path calls it."""
    r = start.rules
    return native.replay_hand(  # type: ignore[union-attr]
        _records(start, codes, hand), 0, len(codes), hand, start.hands, bytes(start.stock), start.leader,
        start.opening, r.stock == "draw", r.block_end == "all_pass",
    )  # fmt: skip


def c_replay(start: HandState, codes: Sequence[int]) -> Final | None:
    got = c_replay_raw(start, codes)
    return None if got is None else tuple(got[:11])


REPLAYERS: dict[str, Callable[[HandState, Sequence[int]], Final | None] | None] = {
    "engine": engine_replay,
    "c": c_replay if native is not None else None,
}


# -- scorers ------------------------------------------------------------------------


class PyScorer:
    """replay.match: next_lead, score_hand and record on a MatchState."""

    def __init__(self, profile: str, rules: Rules) -> None:
        self.m: MatchState = new_match(rules, PROFILES[profile].shutout_note)

    def lead(self, masks: Sequence[int], drawn: int | None, rematch: int | None) -> tuple[int, int] | None:
        try:
            lead = next_lead(self.m, masks, drawn_leader=drawn, rematch_leader=rematch)
        except ValueError:
            return None
        return lead.seat, lead.tile

    def record(self, final: HandState, leader: int) -> tuple[Any, ...]:
        h = score_hand(self.m, final)
        self.m = record(self.m, h, leader=leader)
        return h.result, h.winner, h.points, h.notes

    def state(self) -> tuple[Any, ...]:
        m = self.m
        return m.played, m.score, m.wins, m.over, m.result, m.winner, m.notes


class CScorer:
    """_native.Scorer, built as replay.validate.fast_path builds it."""

    def __init__(self, profile: str, rules: Rules) -> None:
        self.sc = native.Scorer(spec_of(rules), PROFILES[profile].shutout_note)  # type: ignore[union-attr]

    def lead(self, masks: Sequence[int], drawn: int | None, rematch: int | None) -> tuple[int, int] | None:
        got = self.sc.lead(tuple(masks), -1 if drawn is None else drawn, -1 if rematch is None else rematch)
        return None if got is None else tuple(got)

    def record(self, final: HandState | tuple[Any, ...], leader: int) -> tuple[Any, ...] | None:
        """Score a finished hand: an engine position, or replay_hand's answer as is."""
        if isinstance(final, HandState):
            counts = [0] * len(final.hands)
            for p in final.passes:
                counts[p] += 1
            final = (*final_of(final), tuple(counts))
        return self.sc.record(final, leader)

    def state(self) -> tuple[Any, ...]:
        sc = self.sc
        return sc.played, sc.score, sc.wins, sc.over, sc.result, sc.winner, sc.notes


SCORERS: dict[str, Callable[[str, Rules], Any] | None] = {
    "python": PyScorer,
    "c": CScorer if native is not None else None,
}


# -- solvers ------------------------------------------------------------------------

Values = Callable[[HandState, int, bool, int], list[tuple[int, int]]]


def _solver(pure: bool) -> Callable[[Rules], Values]:
    def make(rules: Rules) -> Values:
        solver = make_solver(rules, pure=pure, table_bits=12)

        def values(s: HandState, played_before: int, first_block_paid: bool, seat: int) -> list[tuple[int, int]]:
            ctx = HandContext(played_before, first_block_paid)
            return [(code(m), v) for m, v in move_values(solver, s, ctx, seat)]

        return values

    return make


SOLVERS: dict[str, Callable[[Rules], Values] | None] = {
    "python": _solver(True),
    "c": _solver(False) if native is not None else None,
}
