"""The perfect-information solver: the exact value of every move of a hand.

Once a hand is over its deal is known (and, in boneyard games, the order
of the boneyard, from the deal's derivation), so every position of it has
an exact value under best play by everyone. That value is the hand's
points from one seat's side, scored as the table's rules score the hand
(count, block winner and ties, every bonus the hand's end decides, pass
bonuses and rounding, milo and royal_rumble), minus the points of every
other side (docs/analysis.md):

- two sides (pairs, or two players): zero-sum, the value of one side is
  minus the other's;
- three or four individual players: the seat against the rest of the
  table as one coalition (the "paranoid" value); every other seat plays
  to minimize the seat's value;
- royal_rumble scores penalties, so its values are turned round: fewer
  pips for the seat, more for the others, is better.

Match context is not part of a value (target, chiva), except what the
hand's own score depends on: the hand's number for `hand_bonuses`, and
whether the match's first-block bonus is still to be paid
(:class:`HandContext`).

:class:`PySolver` is the reference search: alpha-beta with a table of
bounds keyed by the whole position, so that a table hit is never a
collision. ``replay._native.Solver`` is its C twin (same interface, same
answers: tests/test_solver.py checks both against a brute-force minimax
over :mod:`replay.engine` and :func:`replay.match.score_hand`).
:func:`make_solver` picks the C one when it is compiled.

>>> from replay.rules import resolve
>>> from replay.engine import new_hand
>>> from replay.tiles import parse_tile as t

A dominican hand (capicua_bonus 25) at its end: every tile but these is on
the line, the ends show 3 and 5, and seat 0 lays its last tile, 53, which
fits both ends: a capicua. Side 0 takes every pip left (66, 44, 11: 22)
and the bonus.

>>> hands = [[t("53")], [t("66")], [t("44")], [t("11")]]
>>> s = new_hand(resolve("dominican"), hands, leader=0)._replace(left=3, right=5, plays=24)
>>> solver = make_solver(s.rules, pure=True)
>>> for move, value in move_values(solver, s, HandContext()):
...     print(move, value)
Play(tile='53', end='left') 47
Play(tile='53', end='right') 47
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Protocol

from replay.accel import native
from replay.engine import FIT, HandState, Move, can_yield, going_out
from replay.match import hand_bonuses, hand_points, new_match, score_hand
from replay.moves import DRAW, PASS, YIELD, to_engine
from replay.rules import BlockEnd, ChuchazoWhenBothEnds, Rules, RulesSpec, Scoring, spec_of
from replay.tiles import BIT, HIGH, LOW, OTHER, PIPS, SUIT_MASK, pips_of

__all__ = [
    "SOLVER_VERSION",
    "HandContext",
    "PySolver",
    "Solver",
    "final_points",
    "final_value",
    "make_solver",
    "move_values",
    "points_value",
    "position",
]

#: Bumped whenever a value could change: stored analyses of another version are redone.
SOLVER_VERSION: Final = 1

_INF: Final = 0x3FFFFFFF

Position = tuple[tuple[int, ...], tuple[int, ...], int, int, int, int, int, int, int, int]


@dataclass(frozen=True, slots=True)
class HandContext:
    """What a hand's score takes from its match.

    `played_before`: hands scored before it in the match (cancelled ones
    not counted), which picks its `hand_bonuses` entry;
    `first_block_paid`: whether an earlier hand took the first-block bonus.
    """

    played_before: int = 0
    first_block_paid: bool = False


class Solver(Protocol):
    """What both solvers offer (see the C file's comments for the fields)."""

    nodes: int
    table: bool

    def set_hand(self, leader: int, opening: int, hand_bonus: int, first_block: int) -> None: ...
    def values(self, position: Position, seat: int) -> tuple[tuple[int, int], ...]: ...
    def value(self, position: Position, seat: int, guess: int = 0) -> int: ...
    def clear(self) -> None: ...


def hand_args(state: HandState, ctx: HandContext) -> tuple[int, int, int, int]:
    """``set_hand``'s arguments: leader, opening tile, domino bonus, block bonus."""
    hb, fb = hand_bonuses(spec_of(state.rules), ctx.played_before, ctx.first_block_paid)
    return state.leader, state.opening, hb, fb or 0


def position(state: HandState) -> Position:
    """The solver's view of a live position of the engine."""
    r = state.rules
    np = [0, 0]
    first = -1
    if r.pass_bonus is not None:
        for i, seat in enumerate(state.passes):
            side = r.side_of(seat)
            if i == 0:
                first = side
            np[side] += 1
    return (
        state.hands, state.stock, state.left, state.right, state.turn, state.must_play,
        int(can_yield(state)), np[0], np[1], first,
    )  # fmt: skip


#: A solver's table: 2^(bits-1) buckets of one 64-byte line (two entries).
#: Small, so that it stays in a core's own cache (L2): most of a search's
#: look-ups are for positions met a few plies before, and a miss to the
#: shared cache costs more than the few positions a bigger table saves
#: (docs/analysis.md, "The table's size"). Three or four seats: 2^14
#: entries (512 KiB; 3% more positions than 2^17, a quarter less time).
#: Four players each for himself: 2^15, as the viewer is in the key and
#: their hands store four searches' positions. Two seats: 2^17 (4 MiB), as
#: their long hands of draws meet the same positions across many plies.
TABLE_BITS: Final = 14
TABLE_BITS_TWO_SEATS: Final = 17
TABLE_BITS_FOUR_PLAYERS: Final = 15


def table_bits_for(rules: Rules) -> int:
    """The table size (log2 of its entries) for hands under `rules`.

    >>> from replay.rules import resolve
    >>> [table_bits_for(resolve(p)) for p in ("international", "pr_3p", "domena_2p", "royal_rumble")]
    [14, 14, 17, 15]
    """
    if rules.players == 2:
        return TABLE_BITS_TWO_SEATS
    if rules.players == 4 and rules.teams == "individual":
        return TABLE_BITS_FOUR_PLAYERS
    return TABLE_BITS


def make_solver(rules: Rules, *, pure: bool = False, table_bits: int | None = None) -> Solver:
    """A solver for hands under `rules`: the C one if compiled (and not
    `pure`), with a table of 2^`table_bits` entries (by default
    :func:`table_bits_for` the rules)."""
    spec = spec_of(rules)
    bits = table_bits_for(rules) if table_bits is None else table_bits
    if native is not None and not pure:
        solver: Solver = native.Solver(spec, bits)
        return solver
    return PySolver(spec, bits)


def move_values(solver: Solver, state: HandState, ctx: HandContext, seat: int | None = None) -> tuple[tuple[Move, int], ...]:
    """Every legal move of a live position with its exact value from `seat`'s
    side (the seat to move by default), in :func:`replay.engine.legal_moves` order."""
    solver.set_hand(*hand_args(state, ctx))
    got = solver.values(position(state), state.turn if seat is None else seat)
    return tuple((to_engine(code), v) for code, v in got)


def points_value(rules: Rules, points: Sequence[int], seat: int) -> int:
    """A scored hand's value from `seat`'s side: its side's points minus every
    other side's (royal_rumble: the other way round, as they are penalties).

    >>> from replay.rules import resolve
    >>> points_value(resolve("international"), (31, 0), 1)
    -31
    """
    mine = rules.side_of(seat)
    v = sum(p if k == mine else -p for k, p in enumerate(points))
    return -v if rules.scoring == "royal_rumble" else v


def final_points(state: HandState, ctx: HandContext) -> tuple[int, ...]:
    """Each side's points for a hand whose line is done (a domino, or a block
    with or without its closing passes), scored by :func:`replay.match.score_hand`."""
    if state.result is None:
        raise ValueError("the hand is still being played")
    if state.result == "block" and state.closing and state.stock:
        # the closing draw: the seat after the blocker takes the boneyard
        hands = list(state.hands)
        drawer = (state.blocker + 1) % len(hands)
        for t in state.stock:
            hands[drawer] |= BIT[t]
        state = state._replace(hands=tuple(hands), stock=())
    m = replace(new_match(state.rules), played=ctx.played_before, first_block_paid=ctx.first_block_paid)
    return tuple(score_hand(m, state).points)


def final_value(state: HandState, ctx: HandContext, seat: int) -> int:
    """The value of a hand whose line is done, from `seat`'s side (:func:`final_points`)."""
    return points_value(state.rules, final_points(state, ctx), seat)


# -- the reference search --------------------------------------------------------


class PySolver:
    """Alpha-beta with a table of bounds, in Python (the C solver's reference).

    A position inside the search is a tuple: (hands, sp, stockmask, left,
    right, turn, must, may_yield, passes of side 0, of side 1, side of the
    first pass); ``sp`` indexes the boneyard given with the root.
    """

    def __init__(self, spec: RulesSpec, table_bits: int = TABLE_BITS) -> None:
        self.spec = spec
        self.n, self.pairs, self.sides = spec.players, spec.pairs, spec.sides
        self.all_pass = spec.block_end is BlockEnd.ALL_PASS
        self.pass_on = spec.pass_bonus is not None
        self.dominao_both = spec.chuchazo_when_both_ends is ChuchazoWhenBothEnds.DOMINAO
        self.leader, self.opening, self.hand_bonus, self.first_block = 0, -1, 0, 0
        self.stock: tuple[int, ...] = ()
        self._tt: dict[tuple[Any, ...], tuple[int, int, int]] = {}
        self.nodes = 0
        self.table = True

    # the same interface as the C solver

    def set_hand(self, leader: int, opening: int, hand_bonus: int, first_block: int) -> None:
        new = (leader, opening, hand_bonus, first_block)
        if new != (self.leader, self.opening, self.hand_bonus, self.first_block):
            self.leader, self.opening, self.hand_bonus, self.first_block = new
            self._tt.clear()

    def clear(self) -> None:
        self._tt.clear()

    def values(self, position: Position, seat: int) -> tuple[tuple[int, int], ...]:
        p = self._read(position)
        sign, view = self._viewer(seat)
        hands, sp, sm, left, right, turn, must, may_yield, np0, np1, first = p
        if left >= 0 and must < 0 and not hands[turn] & FIT[left * 7 + right]:
            if sm:
                t = self.stock[sp]
                hs = list(hands)
                hs[turn] |= BIT[t]
                fits = bool(FIT[left * 7 + right] & BIT[t])
                c = (tuple(hs), sp + 1, sm & ~BIT[t], left, right, turn, t if fits else -1, 0, np0, np1, first)
                return ((DRAW, sign * self._search(c, -_INF, _INF, view)),)
            c = self._pass(p)
            return ((PASS, sign * self._search(c, -_INF, _INF, view)),)
        return tuple((mv, sign * self._child(p, mv, -_INF, _INF, view)) for mv in self._moves(p))

    def value(self, position: Position, seat: int, guess: int = 0) -> int:
        """The position's exact value from `seat`'s side (`guess`: where the C
        solver's null-window searches start; this full-window search needs none)."""
        sign, view = self._viewer(seat)
        return sign * self._search(self._read(position), -_INF, _INF, view)

    # internals

    def _read(self, position: Position) -> tuple[Any, ...]:
        hands, stock, left, right, turn, must, may_yield, np0, np1, first = position
        if len(hands) != self.n:
            raise ValueError("hands: one mask per seat")
        stock = tuple(stock)
        ns = len(stock)
        if not (ns <= len(self.stock) and self.stock[len(self.stock) - ns :] == stock):
            self.stock = stock
            self._tt.clear()
        sm = 0
        for t in stock:
            sm |= BIT[t]
        return (tuple(hands), len(self.stock) - ns, sm, left, right, turn, must, int(bool(may_yield)), np0, np1, first)

    def _viewer(self, seat: int) -> tuple[int, int]:
        if self.sides == 2:
            return (-1 if self._side(seat) == 1 else 1), 0
        return 1, seat

    def _side(self, seat: int) -> int:
        return seat & 1 if self.pairs else seat

    def _moves(self, p: tuple[Any, ...]) -> list[int]:
        hands, _, _, left, right, turn, must, may_yield = p[:8]
        h = hands[turn]
        out: list[int] = []
        if left < 0:
            if self.opening >= 0:
                return [self.opening * 2] if h & BIT[self.opening] else []
            out = [t * 2 for t in range(28) if h & BIT[t]]
            if may_yield:
                out.append(YIELD)
            return out
        lm, rm = SUIT_MASK[left], SUIT_MASK[right]
        fits = (BIT[must] if must >= 0 else h) & (lm | rm)
        for t in range(28):
            if fits & BIT[t]:
                if lm & BIT[t]:
                    out.append(t * 2)
                if rm & BIT[t] and left != right:
                    out.append(t * 2 + 1)
        return out

    def _pass(self, p: tuple[Any, ...]) -> tuple[Any, ...]:
        hands, sp, sm, left, right, turn, must, may_yield, np0, np1, first = p
        if self.pass_on:
            side = self._side(turn)
            if first < 0:
                first = side
            if side == 0:
                np0 += 1
            else:
                np1 += 1
        return (hands, sp, sm, left, right, (turn + 1) % self.n, must, may_yield, np0, np1, first)

    def _settle(self, p: tuple[Any, ...]) -> tuple[Any, ...] | None:
        """Draws and passes until someone can play; None if nobody ever can."""
        for _ in range(28 + 4 * self.n + 1):
            hands, sp, sm, left, right, turn, must = p[:7]
            if left < 0 or must >= 0:
                return p
            fit = FIT[left * 7 + right]
            if hands[turn] & fit:
                return p
            if sm:
                t = self.stock[sp]
                hs = list(hands)
                hs[turn] |= BIT[t]
                p = (tuple(hs), sp + 1, sm & ~BIT[t], left, right, turn, t if fit & BIT[t] else -1, *p[7:])
                continue
            p = self._pass(p)
        return None

    def _child(self, p: tuple[Any, ...], mv: int, alpha: int, beta: int, view: int) -> int:
        hands, sp, sm, left, right, turn, must, may_yield, np0, np1, first = p
        if mv == YIELD:
            return self._search((hands, sp, sm, left, right, (turn + 2) % self.n, must, 0, np0, np1, first), alpha, beta, view)
        t, end = mv >> 1, mv & 1
        hs = list(hands)
        hs[turn] &= ~BIT[t]
        if left < 0:
            nl, nr = HIGH[t], LOW[t]
        elif end == 0:
            nl, nr = OTHER[t][left], right
        else:
            nl, nr = left, OTHER[t][right]
        c = (tuple(hs), sp, sm, nl, nr, (turn + 1) % self.n, -1, 0, np0, np1, first)
        if not hs[turn]:
            return self._finish(c, True, turn, t, left, right, view)
        anywhere = sm
        for h in hs:
            anywhere |= h
        if not anywhere & FIT[nl * 7 + nr]:
            return self._finish(c, False, turn, t, left, right, view)
        return self._search(c, alpha, beta, view)

    def _search(self, p: tuple[Any, ...], alpha: int, beta: int, view: int) -> int:
        q = self._settle(p)
        if q is None:
            return self._finish(p, False, (p[5] - 1) % self.n, 0, p[3], p[4], view)
        p = q
        self.nodes += 1
        moves = self._moves(p)
        if not moves:
            return self._finish(p, False, p[5], 0, p[3], p[4], view)
        turn = p[5]
        maxing = (self._side(turn) == self._side(view)) if self.sides == 2 and self.pairs else turn == view
        key = (p, view)
        first_i = -1
        elo, ehi = -_INF, _INF
        if self.table:
            got = self._tt.get(key)
            if got is not None:
                elo, ehi, first_i = got
                if elo >= beta:
                    return elo
                if ehi <= alpha:
                    return ehi
                if elo == ehi:
                    return elo
                alpha, beta = max(alpha, elo), min(beta, ehi)
        a0, b0 = alpha, beta
        order = sorted(range(len(moves)), key=lambda i: -_order_key(moves[i]))
        if 0 <= first_i < len(moves):
            order.remove(first_i)
            order.insert(0, first_i)
        best = -_INF if maxing else _INF
        bi = order[0]
        for i in order:
            v = self._child(p, moves[i], alpha, beta, view)
            if (v > best) if maxing else (v < best):
                best, bi = v, i
            if maxing:
                alpha = max(alpha, best)
            else:
                beta = min(beta, best)
            if alpha >= beta:
                break
        if self.table:
            lo, hi = elo, ehi
            if best <= a0:
                hi = min(hi, best)
            elif best >= b0:
                lo = max(lo, best)
            else:
                lo = hi = best
            self._tt[key] = (lo, hi, bi)
        return best

    def _finish(self, p: tuple[Any, ...], domino: bool, seat: int, tile: int, l0: int, r0: int, view: int) -> int:
        hands, _, sm, l1, r1 = p[:5]
        np0, np1, first = p[8:11]
        pp = [pips_of(h) for h in hands]
        if not domino and self.all_pass and sm:
            pp[(seat + 1) % self.n] += pips_of(sm)  # the closing draw takes the boneyard
        points, *_ = hand_points(
            self.spec, pp, domino=domino, seat=seat, leader=self.leader,
            note=going_out(tile, l0, r0, self.dominao_both) if domino else None, ends=(l1, r1),
            passes=(np0, np1), first_pass=first, hand_bonus=self.hand_bonus, block_bonus=self.first_block,
        )  # fmt: skip
        mine = self._side(view)
        v = sum(x if k == mine else -x for k, x in enumerate(points))
        return -v if self.spec.scoring is Scoring.ROYAL_RUMBLE else v


def _order_key(mv: int) -> int:
    if mv < 0:
        return -1
    t = mv >> 1
    return PIPS[t] + (12 if LOW[t] == HIGH[t] else 0)
