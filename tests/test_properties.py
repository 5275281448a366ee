"""Invariants over random legal play in every profile, and independent cross-checks.

* hypothesis: random deals and random legal moves, hands and whole matches,
  against the facts of rules.md (tiles conserved, what a block looks like,
  the boneyard empty at a block, every hand ends, the match ends exactly
  when its rule says, points never negative);
* a naive, from-scratch rule model run in lockstep with the engine on
  thousands of positions: same legal moves, same positions.

The C hand replayer is checked against the engine in tests/test_native.py.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings

from replay.engine import (
    DRAW,
    PASS,
    YIELD,
    HandState,
    Move,
    Play,
    apply,
    can_apply,
    legal_moves,
    new_hand,
)
from replay.match import HandScore, MatchState, new_match, next_lead, record, redeal_due, score_hand
from replay.rules import (
    PROFILES,
    ChivaEnd,
    FixedEnd,
    MiloEnd,
    PointsEnd,
    RoundsEnd,
    Rules,
)
from replay.tiles import BIT, DOUBLES, FULL_SET, SUIT_MASK, mask_of, pips_of
from tests.conftest import TABLE_IDS, TABLES, deal, rules_of, seeds


@dataclass
class Dealt:
    hands: list[list[int]]
    stock: list[int]
    out: int  # tiles left out of play or set aside


def random_deal(r: Rules, rnd: random.Random) -> Dealt:
    aside = DOUBLES if r.stock == "doubles_aside" else 0
    hands, rest = deal(r, rnd)
    if r.stock == "draw":
        return Dealt(hands, rest, aside)
    return Dealt(hands, [], aside | mask_of(rest))


def play_randomly(s: HandState, rnd: random.Random) -> tuple[HandState, int, list[Move]]:
    """Random legal moves to the end; returns the end, the line's tiles, the moves."""
    line = 0
    moves: list[Move] = []
    in_play_passes = 0
    n = s.players
    while not s.over:
        options = legal_moves(s)
        assert options, "a hand that is not over always has a move"
        m = rnd.choice(options)
        if isinstance(m, Play) and rnd.random() < 0.3:
            # the other orientation / the equal end: the same move when legal
            alt = Play(m.tile, 1 - m.end)
            if can_apply(s, alt):
                m = alt
        if isinstance(m, Play):
            line |= BIT[m.tile]
        in_play_passes = in_play_passes + 1 if m is PASS and s.result is None else 0
        # n passes in a row while the hand is on would mean nobody can move
        assert in_play_passes < n
        s = apply(s, m)
        moves.append(m)
        assert len(moves) <= 28 + 14 + 28 * n, "a hand must end"
    return s, line, moves


def check_finished_hand(r: Rules, d: Dealt, s: HandState, line: int) -> None:
    held = 0
    for h in s.hands:
        assert not held & h
        held |= h
    stock = mask_of(s.stock)
    parts = [line, held, stock, d.out]
    # the 28 tiles, each exactly once
    assert sum(p.bit_count() for p in parts) == 28
    assert line | held | stock | d.out == FULL_SET
    assert line.bit_count() == s.plays
    if s.result == "domino":
        assert any(h == 0 for h in s.hands)
        return
    assert s.result == "block"
    if r.stock == "draw":
        assert s.stock == ()  # a hand blocks only once the boneyard is empty
    left_out = d.out & ~DOUBLES if r.stock == "doubles_aside" else d.out
    if not left_out:
        n = s.left
        assert s.left == s.right
        in_play = ~d.out & FULL_SET
        assert SUIT_MASK[n] & in_play & ~line == 0, "every tile of the number is down"
        assert sum(s.pips()) % 2 == 0
        assert (pips_of(in_play) - pips_of(line)) % 2 == 0


def check_score(r: Rules, s: HandState, h: HandScore) -> None:
    assert all(p >= 0 for p in h.points)
    assert len(h.points) == (r.players if r.scoring == "royal_rumble" else r.sides)
    if r.scoring == "pips" and not r.pass_bonus and h.side is None:
        assert h.points == (0,) * r.sides
    if h.side is not None and r.scoring == "pips":
        side_of = r.side_of
        losers = sum(p for seat, p in enumerate(h.pips) if side_of(seat) != h.side)
        base = sum(h.pips) if r.count == "all" else losers
        assert h.points[h.side] >= base - (r.round_down or 1) + 1
    if h.result == "domino":
        assert h.winner is not None and h.pips[h.winner] == 0


@dataclass
class Oracle:
    """An independent tally of a match: totals, win counts, and when it ends."""

    r: Rules
    score: list[int] = field(default_factory=list)
    wins: list[int] = field(default_factory=list)
    played: int = 0

    def __post_init__(self) -> None:
        k = self.r.sides
        self.score = [0] * k
        self.wins = [0] * k

    def add(self, h: HandScore) -> tuple[bool, int | None]:
        end = self.r.match_end
        self.played += 1
        for k, p in enumerate(h.points):
            self.score[k] += p
        w = h.side
        if w is not None:
            if (
                isinstance(end, ChivaEnd)
                and self.wins[w] == 0
                and all(c > 0 for k, c in enumerate(self.wins) if k != w)
            ):
                self.wins = [0] * len(self.wins)  # the last winless side breaks the chiva
            else:
                self.wins[w] += 1
        if isinstance(end, PointsEnd | MiloEnd):
            top = max(self.score)
            if top < end.target:
                return False, None
            leaders = [k for k, v in enumerate(self.score) if v == top]
            if len(leaders) == 1:
                return True, leaders[0]
            return (True, w) if w in leaders else (False, None)
        if isinstance(end, ChivaEnd):
            for k, c in enumerate(self.wins):
                if c >= end.wins and 0 in self.wins[:k] + self.wins[k + 1 :]:
                    return True, k
            return False, None
        if isinstance(end, RoundsEnd):
            for k, c in enumerate(self.wins):
                if c >= end.target:
                    ok = min(self.wins[:k] + self.wins[k + 1 :]) >= end.loser_min
                    return True, (k if ok else None)
            return False, None
        assert isinstance(end, FixedEnd)
        if self.played < end.hands:
            return False, None
        low = min(self.score)
        best = [k for k, v in enumerate(self.score) if v == low]
        return True, (best[0] if len(best) == 1 else None)


def deal_and_lead(
    r: Rules, m: MatchState, rnd: random.Random, drawn: int | None
) -> tuple[Dealt, int, int] | None:
    d = random_deal(r, rnd)
    masks = [mask_of(h) for h in d.hands]
    due = redeal_due(r, masks)
    if due and (
        r.redeal == "five_doubles_auto" or (r.redeal == "five_doubles_claim" and rnd.random() < 0.5)
    ):
        return None  # cancelled: scores nothing, counts for nothing
    lead = next_lead(m, masks, drawn_leader=drawn)
    if lead.tile >= 0:
        assert masks[lead.seat] & BIT[lead.tile]
    return d, lead.seat, lead.tile


@pytest.mark.parametrize("table", TABLES, ids=TABLE_IDS)
@settings(max_examples=60, deadline=None)
@given(seed=seeds)
def test_random_hands(table: tuple[str, dict[str, object]], seed: int) -> None:
    r = rules_of(table)
    rnd = random.Random(seed)
    m = new_match(r)
    drawn = rnd.randrange(r.players) if r.lead_draw_used else None
    got = None
    while got is None:
        got = deal_and_lead(r, m, rnd, drawn)
    d, leader, opening = got
    s0 = new_hand(r, d.hands, leader=leader, opening=opening, stock=d.stock)
    s, line, _ = play_randomly(s0, rnd)
    check_finished_hand(r, d, s, line)
    check_score(r, s, score_hand(m, s))


@pytest.mark.parametrize("table", TABLES, ids=TABLE_IDS)
@settings(max_examples=12, deadline=None)
@given(seed=seeds)
def test_random_matches(table: tuple[str, dict[str, object]], seed: int) -> None:
    r = rules_of(table)
    name = table[0]
    rnd = random.Random(seed)
    m = new_match(r, PROFILES[name].shutout_note)
    oracle = Oracle(r)
    drawn = rnd.randrange(r.players) if r.lead_draw_used else None
    for _ in range(400):  # deals, cancelled ones included
        if m.over:
            break
        got = deal_and_lead(r, m, rnd, drawn)
        if got is None:
            continue
        d, leader, opening = got
        s, line, _ = play_randomly(
            new_hand(r, d.hands, leader=leader, opening=opening, stock=d.stock), rnd
        )
        check_finished_hand(r, d, s, line)
        h = score_hand(m, s)
        check_score(r, s, h)
        m = record(m, h, leader=leader)
        over, winner = oracle.add(h)
        assert m.over == over
        assert list(m.score) == oracle.score
        assert list(m.wins) == oracle.wins
        if over:
            assert m.winner == winner
            assert m.result == ("win" if winner is not None else "tie")
            shut = isinstance(r.match_end, PointsEnd) and 0 in oracle.score
            assert m.notes == ((PROFILES[name].shutout_note,) if shut else ())
    if isinstance(r.match_end, FixedEnd):
        assert m.over and m.played == r.match_end.hands


# --- a naive rule model, run in lockstep with the engine ---------------------------------

NAIVE_HALVES = [(a, b) for a in range(7) for b in range(a, 7)]


class Naive:
    """The rules of rules.md in the plainest code: sets, lists, loops."""

    def __init__(
        self,
        r: Rules,
        hands: Sequence[Sequence[int]],
        leader: int,
        opening: int,
        stock: Sequence[int],
    ):
        self.r = r
        self.n = len(hands)
        self.hands = [set(h) for h in hands]
        self.stock = list(stock) if r.stock == "draw" else []
        self.ends: list[int] | None = None
        self.turn = leader
        self.opening = opening
        self.yielded = False
        self.must: int | None = None
        self.result: str | None = None
        self.blocker = -1
        self.owed = 0
        self.passes: list[int] = []

    def fits(self, tile: int, end: int) -> bool:
        assert self.ends is not None
        return self.ends[end] in NAIVE_HALVES[tile]

    def can_play(self, tiles: set[int] | list[int]) -> bool:
        return any(self.fits(t, e) for t in tiles for e in (0, 1))

    def legal(self, move: Move) -> bool:
        if self.result is not None:
            if self.owed == 0:
                return False
            if self.stock and self.turn == (self.blocker + 1) % self.n:
                return move is DRAW
            return move is PASS
        hand = self.hands[self.turn]
        if self.ends is None:
            if move is YIELD:
                r = self.r
                return (
                    r.lead_to_partner
                    and r.teams == "pairs"
                    and not self.yielded
                    and self.opening < 0
                )
            if isinstance(move, Play):
                return move.tile in hand and self.opening in (-1, move.tile)
            return False
        if isinstance(move, Play):
            if move.tile not in hand or (self.must is not None and move.tile != self.must):
                return False
            return self.fits(move.tile, move.end)
        stuck = not self.can_play(hand)
        if move is PASS:
            return stuck and not self.stock
        if move is DRAW:
            return stuck and bool(self.stock)
        return False

    def listed(self) -> set[Move]:
        """The legal moves, one per distinct move (first tile and equal ends: LEFT)."""
        out: set[Move] = set()
        same = self.ends is None or self.ends[0] == self.ends[1]
        for t in range(28):
            for e in (0, 1):
                if self.legal(Play(t, e)) and not (same and e == 1):
                    out.add(Play(t, e))
        out.update(m for m in (PASS, DRAW, YIELD) if self.legal(m))
        return out

    def do(self, move: Move) -> None:
        n = self.n
        if isinstance(move, Play):
            a, b = NAIVE_HALVES[move.tile]
            self.hands[self.turn].remove(move.tile)
            if self.ends is None:
                self.ends = [b, a] if move.end == 0 else [a, b]
            else:
                number = self.ends[move.end]
                self.ends[move.end] = b if a == number else a
            self.must = None
            if not self.hands[self.turn]:
                self.result = "domino"
            else:
                everything = [t for h in self.hands for t in h] + self.stock
                if not self.can_play(everything):
                    self.result = "block"
                    self.blocker = self.turn
                    self.owed = n if self.r.block_end == "all_pass" else 0
            self.turn = (self.turn + 1) % n
        elif move is YIELD:
            self.yielded = True
            self.turn = (self.turn + 2) % n
        elif move is DRAW:
            t = self.stock.pop(0)
            self.hands[self.turn].add(t)
            if self.result is None and self.can_play([t]):
                self.must = t
        else:
            if self.result is not None:
                self.owed -= 1
            else:
                self.passes.append(self.turn)
            self.turn = (self.turn + 1) % n

    def same_as(self, s: HandState) -> None:
        assert tuple(mask_of(h) for h in self.hands) == s.hands
        assert (s.left, s.right) == (tuple(self.ends) if self.ends else (-1, -1))
        assert s.turn == self.turn
        assert list(s.stock) == self.stock
        assert s.result == self.result
        assert s.blocker == self.blocker
        assert s.over == (self.result is not None and self.owed == 0)
        assert list(s.passes) == self.passes
        assert s.must_play == (-1 if self.must is None else self.must)


CANDIDATES: list[Move] = [Play(t, e) for t in range(28) for e in (0, 1)] + [PASS, DRAW, YIELD]


def test_legal_moves_match_a_naive_model() -> None:
    positions = 0
    for k, table in enumerate(TABLES):
        r = rules_of(table)
        for game in range(12):
            rnd = random.Random(1000 * k + game)
            d = random_deal(r, rnd)
            masks = [mask_of(h) for h in d.hands]
            lead = next_lead(new_match(r), masks, drawn_leader=rnd.randrange(r.players))
            # later hands open with any tile: half the games do that
            opening = lead.tile if game % 2 else -1
            s = new_hand(r, d.hands, leader=lead.seat, opening=opening, stock=d.stock)
            naive = Naive(r, d.hands, lead.seat, opening, d.stock)
            while not s.over:
                listed = legal_moves(s)
                assert len(set(listed)) == len(listed)
                assert set(listed) == naive.listed()
                if positions % 3 == 0:
                    for m in CANDIDATES:
                        assert can_apply(s, m) is naive.legal(m), (m, s)
                positions += 1
                m = rnd.choice(listed)
                if (
                    isinstance(m, Play)
                    and rnd.random() < 0.3
                    and naive.legal(Play(m.tile, 1 - m.end))
                ):
                    m = Play(m.tile, 1 - m.end)
                s = apply(s, m)
                naive.do(m)
                naive.same_as(s)
            assert naive.listed() == set() and legal_moves(s) == ()
    assert positions > 5000
