"""What a seat could know: every sampled deal agrees with the public history,
and sampling, exact enumeration and a brute-force posterior agree.

The checks here do not use the sampler's own model of groups and origins:
a world is consistent when some initial deal, played through the public
events by replay.engine, reaches it; the brute-force posterior deals every
possible initial deal and keeps those that reproduce the public events.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from replay.engine import (
    DRAW,
    PASS,
    HandState,
    IllegalMoveError,
    Play,
    apply,
    legal_moves,
    new_hand,
)
from replay.knowledge import Tracker
from replay.match import first_hand_lead
from replay.rules import Rules, resolve
from replay.tiles import BIT, DOUBLES, IS_DOUBLE, iter_tiles

Event = tuple[int, Any, int]  # seat, move, tile drawn (-1 if none)


def start(rules: Rules, rng: random.Random, per_seat: int = 7, stock_size: int | None = None) -> tuple[HandState, str]:
    n = rules.players
    while True:
        tiles = list(range(28))
        rng.shuffle(tiles)
        if rules.stock == "doubles_aside":
            tiles = [t for t in tiles if not IS_DOUBLE[t]]
        hands = [tiles[i * per_seat : (i + 1) * per_seat] for i in range(n)]
        # under five_doubles_auto a deal with five doubles in one seat is thrown in
        # before any tile is played: deal again, as the table does
        if rules.redeal != "five_doubles_auto" or all(sum(IS_DOUBLE[t] for t in h) < 5 for h in hands):
            break
    rest = tiles[n * per_seat :]
    stock = rest[:stock_size] if stock_size is not None else rest
    if rules.stock != "draw":
        stock = []
    masks = [sum(BIT[t] for t in h) for h in hands]
    if rules.first_lead in ("highest_double", "double_six") and (rules.first_lead != "double_six" or per_seat * n == 28):
        lead = first_hand_lead(rules, masks, None)
        return new_hand(rules, hands, leader=lead.seat, opening=lead.tile, stock=stock), lead.fixed_by
    return new_hand(rules, hands, leader=rng.randrange(n), stock=stock), ""


def play_to_decision(s: HandState, fixed_by: str, rng: random.Random, stop: float) -> tuple[HandState, Tracker, list[Event]] | None:
    """Random play, recorded, until a random decision (two legal moves or more)."""
    tr = Tracker(s, fixed_by=fixed_by)
    history: list[Event] = []
    while s.result is None:
        legal = legal_moves(s)
        if len(legal) > 1 and rng.random() < stop:
            return s, tr, history
        m = rng.choice(legal)
        drawn = s.stock[0] if m is DRAW else -1
        tr.see(s, m)
        history.append((s.turn, m, drawn))
        s = apply(s, m)
    return None


def replays_to(rules: Rules, first: HandState, fixed_by: str, history: list[Event], observer: int,
               world: tuple[tuple[int, ...], tuple[int, ...]]) -> bool:  # fmt: skip
    """Whether some initial deal, played through the public events, reaches `world`.

    The public events: every play (its tile), pass and draw (the tile drawn
    only for the observer's own draws, or when it is laid right away)."""
    hands_now, stock_now = world

    def undo(i: int, hands: list[int], stock: list[int]) -> Any:
        if i < 0:
            yield hands, stock
            return
        seat, move, drawn = history[i]
        if isinstance(move, Play):
            h = list(hands)
            h[seat] |= BIT[move.tile]
            yield from undo(i - 1, h, stock)
        elif move is PASS:
            yield from undo(i - 1, hands, stock)
        else:  # a draw: which tile of the seat's came from the boneyard here?
            laid_next = i + 1 < len(history) and history[i + 1][0] == seat and isinstance(history[i + 1][1], Play) \
                and first_fit_draw(history, i)
            if seat == observer or laid_next:
                known = drawn if seat == observer else history[i + 1][1].tile
                candidates = [known]
            else:
                candidates = list(iter_tiles(hands[seat]))
            for t in candidates:
                if hands[seat] & BIT[t]:
                    h = list(hands)
                    h[seat] &= ~BIT[t]
                    yield from undo(i - 1, h, [t, *stock])

    for hands0, stock0 in undo(len(history) - 1, list(hands_now), list(stock_now)):
        if [h.bit_count() for h in hands0] != [h.bit_count() for h in first.hands]:
            continue
        if rules.redeal == "five_doubles_auto" and any((h & DOUBLES).bit_count() >= 5 for h in hands0):
            continue
        if fixed_by == "highest_double":
            lead = first_hand_lead(rules, hands0, None)
            if (lead.seat, lead.tile) != (first.leader, first.opening):
                continue
        s = first._replace(hands=tuple(hands0), stock=tuple(stock0))
        try:
            for seat, move, _ in history:
                if s.turn != seat:
                    raise IllegalMoveError(s, move, "turn")
                s = apply(s, move)
        except IllegalMoveError:
            continue
        if s.hands == tuple(hands_now) and s.stock == tuple(stock_now):
            return True
    return False


def first_fit_draw(history: list[Event], i: int) -> bool:
    """Whether draw i is the one whose tile was laid right after it."""
    return history[i + 1][1].tile == history[i][2]


PROFILES = ["international", "domena_2p", "pr_2p", "pr_3p", "doubles_in_boneyard", "south_american", "pase_sureno"]


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(PROFILES), st.integers(0, 2**31 - 1), st.floats(0.05, 0.6))
@example("south_american", 25070443, 0.5)  # the first deal gives a seat five doubles: it must be dealt again
def test_every_sampled_deal_agrees_with_the_public_history(profile: str, seed: int, stop: float) -> None:
    rules = resolve(profile)
    rng = random.Random(seed)
    first, fixed_by = start(rules, rng)
    got = play_to_decision(first, fixed_by, rng, stop)
    if got is None:
        return
    s, tr, history = got
    h = tr.hidden(s, s.turn)
    for world in h.sample(8, random.Random(seed + 1)):
        hands, stock = world
        assert hands[s.turn] == s.hands[s.turn]  # the observer's own tiles as they are
        assert [x.bit_count() for x in hands] == [x.bit_count() for x in s.hands]
        assert len(stock) == len(s.stock)
        assert replays_to(rules, first, fixed_by, history, s.turn, world)
    # the true deal is one of them
    assert replays_to(rules, first, fixed_by, history, s.turn, (s.hands, s.stock))


def brute_posterior(rules: Rules, first: HandState, fixed_by: str, history: list[Event], observer: int,
                    now: HandState) -> Counter[tuple[Any, ...]]:  # fmt: skip
    """Every initial deal (the observer's own hand fixed): those that replay
    the public events, counted by the world they reach."""
    n = rules.players
    pool = sorted(t for s in range(n) if s != observer for t in iter_tiles(first.hands[s])) + sorted(first.stock)
    sizes = [first.hands[s].bit_count() for s in range(n)]
    out_count = 0
    out: Counter[tuple[Any, ...]] = Counter()
    others = [s for s in range(n) if s != observer]
    for perm in itertools.permutations(pool):
        # the first tiles to the other seats in order, then the boneyard in order, then out of play
        hands = list(first.hands)
        at = 0
        ok = True
        for s in others:
            part = perm[at : at + sizes[s]]
            if list(part) != sorted(part):  # a hand is a set: count each once
                ok = False
                break
            hands[s] = sum(BIT[t] for t in part)
            at += sizes[s]
        if not ok:
            continue
        stock = perm[at : at + len(first.stock)]
        rest = perm[at + len(first.stock) :]
        if len(rest) != out_count:
            continue
        world = replayed(rules, first, fixed_by, history, hands, list(stock), observer)
        if world is not None:
            out[world] += 1
    return out


def replayed(rules: Rules, first: HandState, fixed_by: str, history: list[Event], hands: list[int],
             stock: list[int], observer: int) -> tuple[Any, ...] | None:  # fmt: skip
    """The world an initial deal reaches through the public events, or None if it cannot."""
    if rules.redeal == "five_doubles_auto" and any((h & DOUBLES).bit_count() >= 5 for h in hands):
        return None
    if fixed_by == "highest_double":
        lead = first_hand_lead(rules, hands, None)
        if (lead.seat, lead.tile) != (first.leader, first.opening):
            return None
    s = first._replace(hands=tuple(hands), stock=tuple(stock))
    for k, (seat, move, drawn) in enumerate(history):
        if s.turn != seat or move not in legal_moves(s):
            return None
        if move is DRAW:
            tile = s.stock[0]
            if seat == observer and tile != drawn:
                return None  # the observer saw what it drew
            s = apply(s, move)
            if s.must_play >= 0 and k + 1 < len(history):  # laid at once: the next play shows it
                nxt = history[k + 1][1]
                if not (isinstance(nxt, Play) and nxt.tile == tile):
                    return None
            continue
        s = apply(s, move)
    return s.hands, s.stock


@pytest.mark.parametrize("profile,per_seat,stock", [
    ("international", 2, None), ("pase_sureno", 2, None), ("domena_2p", 2, 3), ("pr_2p", 2, 3),
    ("pr_3p", 2, 2), ("doubles_in_boneyard", 2, None),
])  # fmt: skip
def test_exact_enumeration_is_the_brute_force_posterior(profile: str, per_seat: int, stock: int | None) -> None:
    rules = resolve(profile)
    rng = random.Random(profile)
    checked = 0
    for _ in range(400):
        first, fixed_by = start(rules, rng, per_seat=per_seat, stock_size=stock)
        got = play_to_decision(first, fixed_by, rng, 0.5)
        if got is None:
            continue
        s, tr, history = got
        # a small table: the tiles neither dealt nor in the boneyard are shown to
        # everyone (as if on the line already), so the brute force deals few
        shown = (1 << 28) - 1
        for m in first.hands:
            shown &= ~m
        for t in first.stock:
            shown &= ~BIT[t]
        tr.line |= shown
        tr.out = 0
        h = tr.hidden(s, s.turn)
        listed = h.enumerate(10**6)
        assert listed is not None
        mine: Counter[tuple[Any, ...]] = Counter()
        for world, w in listed:
            mine[world] += w
        brute = brute_posterior(rules, first, fixed_by, history, s.turn, s)
        total_m, total_b = sum(mine.values()), sum(brute.values())
        assert {k: Fraction(v, total_m) for k, v in mine.items()} == {k: Fraction(v, total_b) for k, v in brute.items()}
        checked += 1
        if checked >= 6:
            break
    assert checked >= 3


@pytest.mark.parametrize("profile", ["international", "domena_2p", "pr_3p"])
def test_sampling_agrees_with_exact_enumeration_in_expectation(profile: str) -> None:
    """Late in a hand few deals remain: 4,000 samples against their exact weights (chi-square)."""
    from scipy.stats import chisquare

    rules = resolve(profile)
    rng = random.Random(5)
    for _ in range(200):
        first, fixed_by = start(rules, rng)
        got = play_to_decision(first, fixed_by, rng, 0.05)
        if got is None:
            continue
        s, tr, _ = got
        h = tr.hidden(s, s.turn)
        listed = h.enumerate(60)
        if listed is None or len(listed) < 4:
            continue
        weights: Counter[tuple[Any, ...]] = Counter()
        for world, w in listed:
            weights[world] += w
        draws = Counter(h.sample(4000, random.Random(9)))
        assert set(draws) <= set(weights)
        keys = sorted(weights)
        total = sum(weights.values())
        expected = [4000 * weights[k] / total for k in keys]
        observed = [draws[k] for k in keys]
        assert chisquare(observed, expected).pvalue > 1e-4
        return
    pytest.fail("no position with few deals left was found")


def test_a_pass_shows_a_void_for_ever_in_a_game_without_boneyard() -> None:
    rules = resolve("international")
    from replay.tiles import SUIT_MASK, parse_tile

    hands = [[parse_tile(x) for x in h.split()] for h in (
        "66 65 64 63 62 61 60", "55 54 53 52 51 50 44", "43 42 41 40 33 32 31", "30 22 21 20 11 10 00")]  # fmt: skip
    s = new_hand(rules, hands, leader=0, opening=parse_tile("66"))
    tr = Tracker(s, fixed_by="double_six")
    for _ in range(2):  # 66 by seat 0; seat 1 passes (no 6)
        m = legal_moves(s)[0]
        tr.see(s, m)
        s = apply(s, m)
    worlds = tr.hidden(s, 2).sample(200, random.Random(3))
    assert not any(hands_[1] & SUIT_MASK[6] for hands_, _ in worlds)
    # seat 2 knows seat 0 holds six tiles and seat 3 seven; the 6s not on the line are with them
    assert all(hands_[0].bit_count() == 6 and hands_[3].bit_count() == 7 for hands_, _ in worlds)


@pytest.mark.parametrize("profile", ["domena_2p", "pr_2p", "pr_3p"])
def test_histories_with_the_same_draws_are_one_option(profile: str) -> None:
    """A seat that drew and played much has many histories (which played
    tile came from the deal, which from which draw); those using the same
    draws leave it the same groups and are one option, counted. The counts
    equal those of one option a history (what the five-doubles rule keeps),
    and the options are never more."""
    rules = resolve(profile)
    rng = random.Random(11)
    seen = merged = 0
    for _ in range(12):
        s, fixed_by = start(rules, rng)
        each = Tracker(s, fixed_by=fixed_by)
        each.max_doubles = 6  # one option a history; the count is taken before the doubles' check
        one = Tracker(s, fixed_by=fixed_by)
        while s.result is None:
            moves = legal_moves(s)
            if len(moves) > 1:
                a, b = one.hidden(s, s.turn), each.hidden(s, s.turn)
                assert a.count() == b.count()
                assert len(a.options) <= len(b.options)
                seen += 1
                merged += len(a.options) < len(b.options)
            mv = rng.choice(moves)
            one.see(s, mv)
            each.see(s, mv)
            s = apply(s, mv)
    assert seen > 50
    if profile != "pr_3p":
        assert merged > 0  # two-seat games with draws do merge histories
