"""Match-level rules: who leads, what a hand scores, when the match ends.

This reads only the `Rules` value and finished hands; hand play lives in
`replay.engine`. `MatchState` is immutable: `record(state, hand)` returns
the state after a hand is scored.

>>> from replay.rules import resolve
>>> m = new_match(resolve("international", {"match_end": {"kind": "points", "target": 50}}))
>>> m = record(m, HandScore("domino", 2, 0, (31, 0), (), (0, 0, 0, 0)))
>>> m.score, m.over
((31, 0), False)
>>> m = record(m, HandScore("domino", 0, 0, (20, 0), (), (0, 0, 0, 0)))
>>> m.score, m.over, m.result, m.winner
((51, 0), True, 'win', 0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from operator import add
from typing import Final, Literal

from replay._records import positional
from replay.engine import HandState, going_out_note
from replay.rules import (
    BlockTie,
    BlockWinner,
    ChivaEnd,
    Count,
    FixedEnd,
    MiloEnd,
    PointsEnd,
    RoundsEnd,
    Rules,
    RulesSpec,
    Scoring,
    spec_of,
)
from replay.tiles import BIT, DOUBLE_SIX, DOUBLES, iter_tiles, weight_key


@dataclass(frozen=True, slots=True)
class HandScore:
    """What a finished hand is worth.

    `winner` is a seat (None for a tie), `side` the side that won (None
    for a tie), `points` per side (royal_rumble: per seat, the loser's
    count), `pips` per seat at the end.
    """

    result: Literal["domino", "block"]
    winner: int | None
    side: int | None
    points: tuple[int, ...]
    notes: tuple[str, ...]
    pips: tuple[int, ...]
    blocker: int | None = None
    first_block_bonus: bool = False  # this hand took the match's first-block bonus


@dataclass(frozen=True, slots=True)
class Lead:
    """Who opens a hand, and the tile they must open with (-1 for any)."""

    seat: int
    tile: int = -1
    fixed_by: str = ""  # the rule that fixes the opening tile, for messages


@dataclass(frozen=True, slots=True)
class MatchState:
    """A match between hands. Win counts are derived, never logged."""

    rules: Rules
    shutout_note: str = "shutout"
    played: int = 0  # hands scored, cancelled ones not counted
    score: tuple[int, ...] = ()
    wins: tuple[int, ...] = ()
    first_block_paid: bool = False
    first_leader: int | None = None
    prev_leader: int | None = None
    prev: HandScore | None = None
    over: bool = False
    result: Literal["win", "tie"] | None = None
    winner: int | None = None
    notes: tuple[str, ...] = ()


# Positional constructors (replay._records): a score and a state per hand.
_hand_score: Final = positional(HandScore)
_match_state: Final = positional(MatchState)


def new_match(rules: Rules, shutout_note: str = "shutout") -> MatchState:
    """A match before its first deal."""
    n = rules.sides
    return MatchState(rules=rules, shutout_note=shutout_note, score=(0,) * n, wins=(0,) * n)


# --- leads -----------------------------------------------------------------


def _holder(hands: Sequence[int], tile: int) -> int:
    for seat, h in enumerate(hands):
        if h & BIT[tile]:
            return seat
    raise ValueError(f"no seat holds tile {tile}")


def first_hand_lead(rules: Rules, hands: Sequence[int], drawn_leader: int | None) -> Lead:
    """The lead of the match's first played hand under `first_lead`.

    `hands` are the dealt masks; `drawn_leader` the lead draw's leader.
    """
    fl = rules.first_lead
    if fl == "double_six":
        return Lead(_holder(hands, DOUBLE_SIX), DOUBLE_SIX, "double_six")
    if fl == "highest_double":
        dealt = 0
        for h in hands:
            dealt |= h
        doubles = dealt & DOUBLES
        if doubles:
            top = max(iter_tiles(doubles))  # doubles ascend with their number
            return Lead(_holder(hands, top), top, "highest_double")
        top = max(iter_tiles(dealt), key=weight_key)
        return Lead(_holder(hands, top), top, "highest_double")
    if drawn_leader is None:
        raise ValueError("this first lead needs a lead draw")
    return Lead(drawn_leader)


def next_lead(
    m: MatchState,
    hands: Sequence[int],
    *,
    drawn_leader: int | None = None,
    rematch_leader: int | None = None,
) -> Lead:
    """Who leads the next deal, given its dealt hands.

    A cancelled hand changes nothing in the match, so the same rule gives
    the same leader for the redeal (and first_lead decides again while no
    hand has been played, the original lead draw standing).
    """
    r = m.rules
    n = r.players
    if m.played == 0 or m.prev is None or m.prev_leader is None:
        if rematch_leader is not None:
            return Lead(rematch_leader)
        return first_hand_lead(r, hands, drawn_leader)
    rotate = Lead((m.prev_leader + 1) % n)
    if r.later_lead == "rotate":
        return rotate
    prev = m.prev
    if prev.result == "domino" and prev.winner is not None:
        return Lead(prev.winner)
    if prev.side is not None and prev.winner is not None:
        rule = r.block_lead
        if rule == "winner_lowest":
            return Lead(prev.winner)
        if rule == "blocker" and prev.blocker is not None:
            return Lead(prev.blocker)
        return rotate
    tie = r.tie_lead
    if tie == "double_six_holder":
        return Lead(_holder(hands, DOUBLE_SIX), DOUBLE_SIX, "double_six_holder")
    if tie == "blocker" and prev.blocker is not None:
        return Lead(prev.blocker)
    return rotate


def redeal_due(rules: Rules, hands: Sequence[int]) -> list[int]:
    """Seats dealt five or more doubles (who may or must throw the deal in)."""
    return [s for s, h in enumerate(hands) if (h & DOUBLES).bit_count() >= 5]


# --- scoring a hand ----------------------------------------------------------


def _lowest_member(spec: RulesSpec, pips: Sequence[int], side: int, leader: int) -> int:
    """The seat of `side` with the fewest pips, the first from `leader` on ties."""
    n = len(pips)
    sides = _sides(spec.pairs, n)
    best = -1
    for i in range(n):
        s = (leader + i) % n
        if sides[s] == side and (best < 0 or pips[s] < pips[best]):
            best = s
    if best < 0:
        raise ValueError(f"no seat plays for side {side}")
    return best


def _sides(pairs: bool, n: int) -> tuple[int, ...]:
    """The side of each of n seats (Rules.side_of, looked up once per table shape)."""
    got = _SIDES.get((pairs, n))
    if got is None:
        got = _SIDES[(pairs, n)] = tuple(s % 2 if pairs else s for s in range(n))
    return got


_SIDES: dict[tuple[bool, int], tuple[int, ...]] = {}


def block_winner(state: HandState, pips: Sequence[int] | None = None) -> tuple[int | None, int | None]:
    """(side, seat) that wins a blocked hand, or (None, None) for a tie.

    ``pips``: the seats' pips left, if the caller has them (``state.pips()``).
    """
    return _block_winner(spec_of(state.rules), state.pips() if pips is None else pips, state.blocker, state.leader)


def _block_winner(spec: RulesSpec, pips: Sequence[int], blocker: int, leader: int) -> tuple[int | None, int | None]:
    n = len(pips)
    side_of = _sides(spec.pairs, n).__getitem__
    if spec.scoring is Scoring.ROYAL_RUMBLE:
        low = min(pips)
        holders = [s for s in range(n) if pips[s] == low]
        return (side_of(holders[0]), holders[0]) if len(holders) == 1 else (None, None)
    totals = [0] * spec.sides
    for s in range(n):
        totals[side_of(s)] += pips[s]
    side: int | None = None
    seat: int | None = None
    if spec.block_winner is BlockWinner.SIDE_TOTAL:
        side = _unique_min(totals, range(spec.sides))
    elif spec.block_winner is BlockWinner.LOWEST_HAND:
        low = min(pips)
        sides = {side_of(s) for s in range(n) if pips[s] == low}
        side = sides.pop() if len(sides) == 1 else _unique_min(totals, sorted(sides))
    else:  # blocker_vs_right
        right = (blocker + 1) % n
        if pips[blocker] != pips[right]:
            seat = blocker if pips[blocker] < pips[right] else right
            side = side_of(seat)
    if side is None:
        if spec.block_tie is BlockTie.FIRST_SIDE_WINS:
            side = side_of(leader)
        elif spec.block_tie is BlockTie.LAST_SIDE_WINS:
            return side_of(blocker), blocker
        else:
            return None, None
    if seat is None:
        seat = _lowest_member(spec, pips, side, leader)
    return side, seat


def _unique_min(values: Sequence[int], among: Sequence[int] | range) -> int | None:
    low = min(values[k] for k in among)
    best = [k for k in among if values[k] == low]
    return best[0] if len(best) == 1 else None


def hand_points(
    spec: RulesSpec,
    pips: Sequence[int],
    *,
    domino: bool,
    seat: int,
    leader: int,
    note: str | None,
    ends: tuple[int, int],
    passes: tuple[int, int] = (0, 0),
    first_pass: int = -1,
    hand_bonus: int = 0,
    block_bonus: int | None = 0,
) -> tuple[tuple[int, ...], int | None, int | None, bool]:
    """The points of a finished hand per side: ``(points, side, winner, took
    the first-block bonus)``. Everything that scores a hand comes here:
    :func:`score_hand` and the reference solver.

    `pips`: each seat's pips at the end (a blocked boneyard game's closing
    draw counted); `seat`: who went out, or who laid the blocking tile;
    `note`: a domino's going-out word (:func:`replay.engine.going_out_note`);
    `ends`: the line's ends at the end; `passes`: the passes made while
    the hand was played, by side, and `first_pass` the side of the first
    (-1: none), for pass bonuses; `hand_bonus` and `block_bonus`: what a
    domino and a won block add (:func:`hand_bonuses`; `block_bonus` None
    once the match's first-block bonus is paid).

    >>> from replay.rules import resolve, spec_of
    >>> hand_points(spec_of(resolve("dominican")), (0, 12, 3, 7), domino=True, seat=0, leader=0,
    ...             note="capicua", ends=(3, 5))
    ((47, 0), 0, 0, False)
    """
    n = len(pips)
    if domino:
        winner: int | None = seat
        side: int | None = seat % 2 if spec.pairs else seat
    else:
        side, winner = _block_winner(spec, pips, seat, leader)
    points = [0] * spec.sides
    took_first_block = False
    if spec.scoring is Scoring.ROYAL_RUMBLE:
        low = min(pips)
        alone = pips.count(low) == 1
        for s in range(n):
            p = pips[s]
            if not domino and s == seat and not (p == low and alone):
                p = 4 * p
            points[s] = p
    elif spec.scoring is Scoring.MILO:
        if side is not None:
            points[side] = 2 if domino and ends[0] == ends[1] else 1
    else:
        if side is not None:
            if spec.count is Count.ALL:
                base = sum(pips)
            else:
                sides = _sides(spec.pairs, n)
                base = sum(pips[s] for s in range(n) if sides[s] != side)
            bonus = 0
            if domino:
                if note == "capicua":
                    bonus += spec.capicua_bonus
                elif note == "chuchazo":
                    bonus += spec.chuchazo_bonus
                if ends[0] == ends[1] == 1:
                    bonus += spec.ones_bonus
                bonus += hand_bonus
            elif block_bonus is not None:  # the match's first won block
                bonus += block_bonus
                took_first_block = True
            points[side] += base + bonus
        if spec.pass_bonus is not None and first_pass >= 0:
            # (pairs only) a side takes `first` for the hand's first pass if
            # the other side made it, and `later` for every other pass of it
            first, later = spec.pass_bonus
            for k in (0, 1):
                made = passes[1 - k]
                if made:
                    points[k] += first + (made - 1) * later if first_pass == 1 - k else made * later
        if spec.round_down:
            points = [p - p % spec.round_down for p in points]
    return tuple(points), side, winner, took_first_block


def hand_bonuses(spec: RulesSpec, played: int, first_block_paid: bool) -> tuple[int, int | None]:
    """What a domino and a won block add to a hand after `played` scored
    hands: its `hand_bonuses` entry, and the first-block bonus (None once paid)."""
    hb = spec.hand_bonuses[played] if played < len(spec.hand_bonuses) else 0
    return hb, None if first_block_paid else spec.first_block_bonus


def score_hand(m: MatchState, state: HandState, pips: tuple[int, ...] | None = None) -> HandScore:
    """Score a finished (or blocked) hand within its match.

    ``pips``: ``state.pips()``, if the caller has it already.
    """
    r = state.rules
    if state.result is None:
        raise ValueError("the hand is still being played")
    if pips is None:
        pips = state.pips()
    n = len(pips)
    spec = spec_of(r)
    note = going_out_note(state)
    notes = (note,) if note else ()
    domino = state.result == "domino"
    passes = [0, 0]
    first_pass = -1
    if spec.pass_bonus is not None and state.passes:
        for passer in state.passes:
            passes[passer % 2] += 1
        first_pass = state.passes[0] % 2
    hand_bonus, block_bonus = hand_bonuses(spec, m.played, m.first_block_paid)
    points, side, seat, took_first_block = hand_points(
        spec, pips, domino=domino, seat=(state.turn - 1) % n if domino else state.blocker,
        leader=state.leader, note=note, ends=(state.left, state.right), passes=(passes[0], passes[1]),
        first_pass=first_pass, hand_bonus=hand_bonus, block_bonus=block_bonus,
    )  # fmt: skip
    blocker = None if domino else state.blocker
    # HandScore(result, winner, side, points, notes, pips, blocker, first_block_bonus)
    return _hand_score(state.result, seat, side, points, notes, pips, blocker, took_first_block)


# --- the match -------------------------------------------------------------------


def record(m: MatchState, hand: HandScore, *, leader: int | None = None) -> MatchState:
    """The match after a scored hand (`leader`: who was entitled to open it)."""
    if m.over:
        raise ValueError("the match is over")
    if len(m.score) != len(hand.points):
        raise ValueError(f"{len(hand.points)} points for {len(m.score)} sides")
    score = tuple(map(add, m.score, hand.points))
    # The constructor, not dataclasses.replace: this runs once a hand, and
    # replace() looks the fields up again every time (half the cost).
    m = _match_state(
        m.rules,
        m.shutout_note,
        m.played + 1,
        score,
        _count_win(m, hand),
        m.first_block_paid or hand.first_block_bonus,
        m.first_leader if m.first_leader is not None else leader,
        leader if leader is not None else m.prev_leader,
        hand,
        False,
        None,
        None,
        (),
    )
    return _check_end(m, hand)


def _count_win(m: MatchState, hand: HandScore) -> tuple[int, ...]:
    w = hand.side
    if w is None:
        return m.wins
    wins = list(m.wins)
    if isinstance(m.rules.match_end, ChivaEnd) and wins[w] == 0:
        others = [wins[k] for k in range(len(wins)) if k != w]
        # A winless side's win breaks the chiva (all back to 0) while another
        # side has wins; with three players only the last winless one does.
        breaks = all(c > 0 for c in others) if len(wins) == 3 else any(c > 0 for c in others)
        if breaks:
            return (0,) * len(wins)
    wins[w] += 1
    return tuple(wins)


_TARGET_ENDS: Final = (PointsEnd, MiloEnd)  # a tuple: `A | B` would make a union object per call


def _check_end(m: MatchState, hand: HandScore) -> MatchState:
    end = m.rules.match_end
    n = len(m.score)
    if isinstance(end, _TARGET_ENDS):
        reached = [k for k in range(n) if m.score[k] >= end.target]
        if not reached:
            return m
        top = max(m.score[k] for k in reached)
        best = [k for k in reached if m.score[k] == top]
        if len(best) == 1:
            winner: int | None = best[0]
        elif hand.side in best:
            winner = hand.side
        else:
            return m  # equal totals and no hand winner: play on (estimate)
        notes: tuple[str, ...] = ()
        if isinstance(end, PointsEnd) and any(s == 0 for s in m.score):
            notes = (m.shutout_note,)
        return replace(m, over=True, result="win", winner=winner, notes=notes)
    if isinstance(end, ChivaEnd):
        for k in range(n):
            if m.wins[k] >= end.wins and any(m.wins[j] == 0 for j in range(n) if j != k):
                return replace(m, over=True, result="win", winner=k)
        return m
    if isinstance(end, RoundsEnd):
        for k in range(n):
            if m.wins[k] >= end.target:
                others_ok = all(m.wins[j] >= end.loser_min for j in range(n) if j != k)
                if others_ok:
                    return replace(m, over=True, result="win", winner=k)
                return replace(m, over=True, result="tie", winner=None)
        return m
    assert isinstance(end, FixedEnd)
    if m.played >= end.hands:
        low = min(m.score)
        best = [k for k in range(n) if m.score[k] == low]
        if len(best) == 1:
            return replace(m, over=True, result="win", winner=best[0])
        return replace(m, over=True, result="tie", winner=None)
    return m


__all__ = [
    "HandScore",
    "Lead",
    "MatchState",
    "block_winner",
    "first_hand_lead",
    "hand_bonuses",
    "hand_points",
    "new_match",
    "next_lead",
    "record",
    "redeal_due",
    "score_hand",
]
