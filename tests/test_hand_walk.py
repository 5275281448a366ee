"""replay.hand_walk against the engine: hands played by random legal moves,
stored as the store keeps them, walked back, position by position."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay.engine import DRAW, LEFT, PASS, YIELD, HandState, Play, apply, legal_moves, new_hand
from replay.hand_walk import Hand, Stored, hand_rank, walk
from replay.knowledge import lacked, numbers
from replay.rules import resolve
from replay.tiles import BIT, DOUBLE_OF, SUIT_MASK, iter_tiles


def played(profile: str, seed: int) -> tuple[Hand, list[HandState]]:
    """A hand of random legal moves: as stored, and the engine's position after each move."""
    rules = resolve(profile)
    rng = random.Random(seed)
    tiles = list(range(28))
    rng.shuffle(tiles)
    n = rules.players
    dealt = [tiles[7 * s: 7 * s + 7] for s in range(n)]
    s = new_hand(rules, dealt, leader=0, stock=tiles[7 * n:])
    states = [s]
    moves: list[Stored] = []
    while not s.over:
        mv = rng.choice(legal_moves(s))
        seat, stock = s.turn, s.stock
        nxt = apply(s, mv)
        ply = len(moves) + 1
        if isinstance(mv, Play):
            end = None if s.left < 0 else ("left" if mv.end == LEFT else "right")
            moves.append(Stored(ply, seat, "play", mv.tile, end, nxt.left, nxt.right, len(nxt.stock)))
        elif mv is DRAW:
            moves.append(Stored(ply, seat, "draw", stock[0], stock=len(nxt.stock)))
        elif mv is PASS:
            moves.append(Stored(ply, seat, "pass", stock=len(nxt.stock)))
        else:
            assert mv is YIELD
            moves.append(Stored(ply, seat, "yield", stock=len(nxt.stock)))
        s = nxt
        states.append(s)
    return Hand(n, s.result, tuple(tuple(d) for d in dealt), len(tiles) - 7 * n, moves), states


@settings(max_examples=60, deadline=None)
@given(profile=st.sampled_from(["international", "pr_2p", "pr_3p"]), seed=st.integers(0, 10**6))
def test_walk_follows_the_engine(profile: str, seed: int) -> None:
    hand, states = played(profile, seed)
    positions = walk(hand)
    assert len(positions) == len(states)
    line = 0
    for pos, s in zip(positions, states, strict=True):
        assert (pos.left, pos.right) == (s.left, s.right)
        assert pos.counts == [h.bit_count() for h in s.hands]
        assert pos.hands == [tuple(sorted(iter_tiles(h), key=hand_rank)) for h in s.hands]
        assert pos.stock == len(s.stock)
        line = sum(BIT[p.tile] for p in pos.line)
        assert line.bit_count() == len(pos.line) == s.plays
        ends = [pos.line[0].a, pos.line[-1].b] if pos.line else [-1, -1]
        assert ends == [s.left, s.right]
        drew = pos.move is not None and pos.move.kind == "draw"
        for seat, void in enumerate(pos.voids):
            # a known void is a true one while the hand is played (but for the
            # tile just drawn, which may fit); the boneyard a block deals out
            # afterwards is not counted against the voids shown
            if s.result is None and not (drew and seat == pos.move.seat):
                assert all(not s.hands[seat] & SUIT_MASK[num] for num in void)
        for d in pos.hanged:  # a hanged double is off the line, and so is no other tile of its number
            num = DOUBLE_OF.index(d)
            assert not line & BIT[d] and line & SUIT_MASK[num] == SUIT_MASK[num] & ~BIT[d]
            assert num not in (s.left, s.right)


@pytest.mark.parametrize("profile", ["international", "pr_2p"])
def test_a_pass_shows_what_knowledge_says(profile: str) -> None:
    for seed in range(40):
        hand, states = played(profile, seed)
        for pos, before in zip(walk(hand)[1:], states, strict=False):
            mv = pos.move
            assert mv is not None
            if mv.kind in ("pass", "draw") and before.result is None:
                assert pos.lacks == numbers(lacked(before.left, before.right))
            elif mv.kind in ("pass", "draw"):
                assert pos.closing and pos.lacks == ()


def test_a_seat_sees_only_its_own_tiles() -> None:
    hand, states = played("international", 7)
    for pos, s in zip(walk(hand, viewer=2), states, strict=True):
        assert pos.hands is not None
        assert [h is not None for h in pos.hands] == [False, False, True, False]
        assert pos.hands[2] == tuple(sorted(iter_tiles(s.hands[2]), key=hand_rank))
        mv = pos.move
        if mv is not None and mv.kind != "play":
            assert pos.tile_known == (mv.seat == 2 and mv.tile is not None)


def test_a_hand_still_on_shows_no_tiles() -> None:
    hand, _ = played("pr_2p", 3)
    on = hand._replace(result=None, dealt=())
    assert all(p.hands is None and p.pips is None for p in walk(on))
    assert [p.counts for p in walk(on)][0] == [7, 7]
