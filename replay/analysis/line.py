"""Principal lines: how a hand goes on under perfect play after a move.

The solver gives the exact value of every move; the line is the play that
reaches that value, found by asking the solver at each position which move
keeps it (the first in :func:`replay.engine.legal_moves` order when several
do). Every seat plays as the value assumes: the mover's side maximises its
value, the other side (in 3-4 seat individual games, every other seat)
minimises it. The line therefore ends with exactly the move's ``dd`` value
(tests/test_lines.py checks it on every ply of many hands).

A :class:`Line` keeps the facts an explanation may state and nothing else:
each step's seat, move and the ends after it; who went out or blocked and
at which step; the points each side scored; the numbers that became dead
(an end shows the number and nobody holds a tile carrying it) and
the step they did. :mod:`replay.analysis.explain` turns them into words.

No I/O: the store and the pages call :func:`hand_lines` with a hand as the
analysis reads it (:class:`replay.analysis.grades.HandInput`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from replay.analysis.grades import HandInput, engine_move
from replay.engine import HandState, Move, apply, legal_moves, new_hand
from replay.moves import label as move_label
from replay.rules import Rules
from replay.solver import HandContext, Solver, final_points, make_solver, move_values
from replay.tiles import BIT, SUIT_MASK

__all__ = ["LINE_VERSION", "Line", "PlyLines", "Shown", "Step", "hand_lines", "principal_line", "side_points"]

#: Bumped when a line or its facts could change: cached lines of another version are made again.
LINE_VERSION: Final = 1


@dataclass(frozen=True, slots=True)
class Step:
    """One move of a line: who made it, the move as the analysis JSON writes
    it, and the open ends after it."""

    seat: int
    move: str
    left: int
    right: int


@dataclass(frozen=True, slots=True)
class Line:
    """A move and the perfect play after it, to the hand's end.

    `steps[0]` is the move itself. `result` is ``domino`` (``by`` went out
    with the last play) or ``block`` (``by`` laid the blocking tile);
    `points`: each side's points for the hand (seats in individual games);
    `value`: the hand's value from `seat`'s side (the move's ``dd``);
    `dead`: (number, step) for each number that became dead in the line,
    in order: after that step an end shows it and no hand nor the boneyard
    holds a tile carrying it (nobody can ever play on that end again).
    """

    seat: int
    steps: tuple[Step, ...]
    result: str
    by: int
    points: tuple[int, ...]
    value: int
    dead: tuple[tuple[int, int], ...] = field(default=())

    @property
    def moves(self) -> list[str]:
        return [s.move for s in self.steps]


def _maximises(rules: Rules, mover: int, seat: int) -> bool:
    if rules.sides == 2:
        return rules.side_of(mover) == rules.side_of(seat)
    return mover == seat


def side_points(state: HandState, ctx: HandContext) -> tuple[int, ...]:
    """Each side's points for a hand whose line is done (as
    :func:`replay.solver.final_value` scores it, closing draw included)."""
    return final_points(state, ctx)


def principal_line(solver: Solver, state: HandState, ctx: HandContext, first: Move, laid: Move | None = None) -> Line:
    """The line after the seat to move makes `first` (applied as `laid`
    when given: the side a logged first tile went to), under perfect play."""
    seat = state.turn
    rules = state.rules
    steps = [Step(seat, move_label(first), -1, -1)]
    s = apply(state, laid if laid is not None else first)
    steps[0] = Step(seat, steps[0].move, s.left, s.right)
    dead: list[tuple[int, int]] = []
    seen_dead: set[int] = set()
    _note_dead(s, dead, seen_dead, 0)
    while s.result is None:
        mover = s.turn
        vals = move_values(solver, s, ctx, seat)
        pick = max if _maximises(rules, mover, seat) else min
        want = pick(v for _, v in vals)
        mv = next(m for m, v in vals if v == want)
        s = apply(s, mv)
        steps.append(Step(mover, move_label(mv), s.left, s.right))
        _note_dead(s, dead, seen_dead, len(steps) - 1)
    last = steps[-1]
    by = last.seat if s.result == "domino" else s.blocker
    points = side_points(s, ctx)
    mine = rules.side_of(seat) if rules.sides == 2 else seat
    value = sum(p if k == mine else -p for k, p in enumerate(points))
    if rules.scoring == "royal_rumble":
        value = -value
    return Line(seat, tuple(steps), s.result or "", by, points, value, tuple(dead))


def _note_dead(s: HandState, dead: list[tuple[int, int]], seen: set[int], step: int) -> None:
    """Record the numbers at an end that nobody can play on any more: no
    hand and no boneyard holds a tile carrying them."""
    if s.left < 0:
        return
    outside = 0
    for h in s.hands:
        outside |= h
    for t in s.stock:
        outside |= BIT[t]
    for n in sorted({s.left, s.right}):
        if n not in seen and not outside & SUIT_MASK[n]:
            seen.add(n)
            dead.append((n, step))


@dataclass(frozen=True, slots=True)
class Shown:
    """A pass or a draw of the hand before a decision: `seat` showed it held
    no tile for `left` nor `right` at ply `ply`."""

    ply: int
    seat: int
    kind: str
    left: int
    right: int


@dataclass(frozen=True, slots=True)
class PlyLines:
    """A decision's two lines, and the passes and draws the table had seen before it."""

    ply: int
    played: Line
    best: Line
    shown: tuple[Shown, ...]


def hand_lines(inp: HandInput, best: Mapping[int, str], plies: Iterable[int] | None = None,
               solver: Solver | None = None) -> dict[int, PlyLines]:  # fmt: skip
    """For each ply of `best` (ply -> the best move's name, as the analysis
    writes it; only those in `plies` when given): the line after the move
    played and the line after the best move. {} when the hand cannot be
    replayed (the analysis says why)."""
    if inp.skip is not None:
        return {}
    want = set(best) if plies is None else set(plies) & set(best)
    r = inp.rules
    state = new_hand(r, [list(h) for h in inp.dealt], leader=inp.leader, opening=inp.opening, stock=inp.stock)
    sv = solver if solver is not None else make_solver(r)
    sv.clear()
    out: dict[int, PlyLines] = {}
    shown: list[Shown] = []
    for k, (seat, kind, tile, end) in enumerate(inp.moves, 1):
        move, laid = engine_move(state, kind, tile, end)
        if k in want and state.result is None:
            legal = {move_label(m): m for m in legal_moves(state)}
            alt = legal.get(best[k])
            if alt is not None:
                played = principal_line(sv, state, inp.context, move, laid)
                other = played if alt == move else principal_line(sv, state, inp.context, alt)
                out[k] = PlyLines(k, played, other, tuple(shown))
        if kind in ("pass", "draw") and state.left >= 0 and state.result is None:
            shown.append(Shown(k, seat, kind, state.left, state.right))
        state = apply(state, laid)
    return out
