"""The perfect-information solver against a brute-force minimax over the engine.

The brute force knows nothing of the solvers: it walks replay.engine's
legal moves and scores finished hands with replay.match.score_hand, with
no pruning and no table. Both solvers (the C one and its Python
reference) must give exactly its values, on thousands of random endgames
of every profile and of random option mixes, and on tiny whole hands
(the opening, the lead yield, a fixed opening tile).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay.accel import native
from replay.engine import DRAW, HandState, Play, apply, legal_moves, new_hand
from replay.moves import label as move_label
from replay.rules import PROFILES, Rules, resolve
from replay.solver import (
    HandContext,
    final_value,
    hand_args,
    make_solver,
    move_values,
    points_value,
    position,
)
from replay.tiles import parse_tile
from tests.conftest import SCORE_OPTIONS, deal, needs_native, seeds
from tests.conftest import random_rules as draw_rules

PURE = [True] if native is None else [False, True]


def brute(state: HandState, ctx: HandContext, seat: int) -> int:
    """Minimax over every line of play: the viewer's side maximises, the
    others (its opponents, or in 3-4 seat individual games everyone else) minimise."""
    if state.result is not None:
        return final_value(state, ctx, seat)
    r = state.rules
    vals = [brute(apply(state, m), ctx, seat, ) for m in legal_moves(state)]
    two = r.teams == "pairs" or r.players == 2
    maxing = r.side_of(state.turn) == r.side_of(seat) if two else state.turn == seat
    return max(vals) if maxing else min(vals)


def endgame(rules: Rules, rng: random.Random, tiles_left: int) -> HandState | None:
    """A random deal played at random until at most `tiles_left` tiles are in hands and boneyard."""
    hands, stock = deal(rules, rng)
    s = new_hand(rules, hands, leader=rng.randrange(rules.players), stock=stock)
    while s.result is None:
        if sum(h.bit_count() for h in s.hands) + len(s.stock) <= tiles_left:
            return s
        s = apply(s, rng.choice(legal_moves(s)))
    return None


def mini_deal(rules: Rules, rng: random.Random) -> HandState:
    """A whole hand of one to three tiles a seat: the opening, its yield, a fixed tile."""
    n = rules.players
    tiles = list(range(28))
    rng.shuffle(tiles)
    k = rng.randint(1, 3)
    hands = [tiles[i * k : (i + 1) * k] for i in range(n)]
    stock = tiles[n * k : n * k + rng.randint(0, 4)] if rules.stock == "draw" else []
    leader = rng.randrange(n)
    opening = rng.choice(hands[leader]) if rng.random() < 0.3 else -1
    return new_hand(rules, hands, leader=leader, opening=opening, stock=stock)


def random_rules(rng: random.Random) -> Rules:
    """A profile with random values of every option a hand's score depends on."""
    return draw_rules(rng, SCORE_OPTIONS)[1]


def deep_endgames(rng: random.Random, tries: int, lo: int, hi: int) -> Iterator[tuple[Rules, HandState, int, HandContext]]:
    """Endgames of random rules with `lo` to `hi` tiles left (deeper than the
    brute force goes), of `tries` draws, each with a seat to value it for and
    a match context."""
    for _ in range(tries):
        rules = random_rules(rng)
        s = endgame(rules, rng, rng.randint(lo, hi))
        if s is not None:
            yield rules, s, rng.randrange(rules.players), HandContext(rng.randrange(3))


def check(s: HandState, ctx: HandContext, seat: int) -> None:
    want = tuple((m, brute(apply(s, m), ctx, seat)) for m in legal_moves(s))
    for pure in PURE:
        got = move_values(make_solver(s.rules, pure=pure, table_bits=12), s, ctx, seat)
        assert got == want, (pure, s, ctx, seat)


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_endgames_of_every_profile(profile: str) -> None:
    rules = resolve(profile)
    rng = random.Random(profile)
    done = 0
    while done < 60:
        s = endgame(rules, rng, rng.randint(3, 10))
        if s is None:
            continue
        check(s, HandContext(rng.randrange(5), rng.random() < 0.5), rng.randrange(rules.players))
        done += 1


def test_endgames_of_random_option_mixes() -> None:
    rng = random.Random(2026)
    done = 0
    while done < 1200:
        rules = random_rules(rng)
        s = endgame(rules, rng, rng.randint(3, 11))
        if s is None:
            continue
        check(s, HandContext(rng.randrange(5), rng.random() < 0.5), rng.randrange(rules.players))
        done += 1


def test_whole_tiny_hands_with_their_openings() -> None:
    rng = random.Random(7)
    for _ in range(800):
        rules = random_rules(rng)
        check(mini_deal(rules, rng), HandContext(rng.randrange(5), rng.random() < 0.5), rng.randrange(rules.players))


@needs_native
def test_the_table_changes_no_value() -> None:
    """The C solver with and without its transposition table, deeper than the brute force goes."""
    for rules, s, seat, ctx in deep_endgames(random.Random(11), 150, 8, 16):
        with_table = make_solver(rules, table_bits=10)
        without = make_solver(rules)
        without.table = False
        assert move_values(with_table, s, ctx, seat) == move_values(without, s, ctx, seat)


@needs_native
def test_a_perfect_order_from_forgotten_bounds_changes_no_value() -> None:
    """`forget` (bench/analysis.py --oracle) keeps the table's best moves and
    drops its bounds: the same position searched again gives the same values,
    and with every kept position trying its proved best move first it
    searches fewer positions than from an empty table (in total over the
    endgames: one endgame may tie)."""
    again = fresh = 0
    for rules, s, seat, ctx in deep_endgames(random.Random(37), 60, 12, 18):
        solver = make_solver(rules, table_bits=18)
        want = move_values(solver, s, ctx, seat)
        solver.clear()
        n0 = solver.nodes
        assert move_values(solver, s, ctx, seat) == want
        fresh += solver.nodes - n0
        solver.forget()  # type: ignore[attr-defined]
        n0 = solver.nodes
        assert move_values(solver, s, ctx, seat) == want
        again += solver.nodes - n0
    assert again < fresh, (again, fresh)


@pytest.mark.parametrize("pure", PURE)
def test_one_table_across_deals_changes_no_value(pure: bool) -> None:
    """One solver kept across endgames of different deals, seats and match
    contexts (as the sampled grade keeps it across the deals of a hand):
    every value still the brute force's. Its table is small, so entries of
    earlier deals are met and replaced all the time."""
    rng = random.Random(29)
    solvers: dict[Rules, Any] = {}
    done = 0
    while done < 400:
        profile = rng.choice(sorted(PROFILES))
        rules = resolve(profile)
        s = endgame(rules, rng, rng.randint(3, 9))
        if s is None:
            continue
        solver = solvers.setdefault(rules, make_solver(rules, pure=pure, table_bits=8))
        ctx = HandContext(rng.randrange(3), rng.random() < 0.5)
        seat = rng.randrange(rules.players)
        want = tuple((m, brute(apply(s, m), ctx, seat)) for m in legal_moves(s))
        assert move_values(solver, s, ctx, seat) == want, (profile, s, ctx, seat)
        done += 1


@needs_native
@pytest.mark.parametrize("etc", [False, True])
@pytest.mark.parametrize("mtd", [False, True])
def test_the_search_switches_change_no_value(etc: bool, mtd: bool) -> None:
    """Enhanced transposition cutoffs and the null-window searches on and off,
    deeper than the brute force goes: the values of every move are the same."""
    for rules, s, seat, ctx in deep_endgames(random.Random(31), 80, 8, 15):
        solver = make_solver(rules, table_bits=10)
        solver.etc, solver.mtd = etc, mtd  # type: ignore[attr-defined]
        plain = make_solver(rules)
        plain.table = False
        assert move_values(solver, s, ctx, seat) == move_values(plain, s, ctx, seat)


def test_two_seat_boneyard_endgames_through_one_kept_table() -> None:
    """With two seats the table keeps positions down to 5 tiles left (hands
    and boneyard): one small solver kept across hundreds of such endgames,
    every value the brute force's."""
    rng = random.Random(5)
    solvers: dict[Rules, Any] = {}
    done = 0
    while done < 300:
        rules = resolve(rng.choice(["pr_2p", "domena_2p"]))
        s = endgame(rules, rng, rng.randint(5, 10))
        if s is None:
            continue
        solver = solvers.setdefault(rules, make_solver(rules, table_bits=6))
        ctx = HandContext(rng.randrange(3), rng.random() < 0.5)
        seat = rng.randrange(rules.players)
        want = tuple((m, brute(apply(s, m), ctx, seat)) for m in legal_moves(s))
        assert move_values(solver, s, ctx, seat) == want, (s, ctx, seat)
        done += 1


@pytest.mark.parametrize("pure", PURE)
def test_a_value_is_the_same_from_any_guess(pure: bool) -> None:
    """value() starts its null-window searches from a guess (the hand's par
    gives each seat's first decision): near, far or beyond every bound, the
    answer is the brute force's, endgames of every profile through one kept table."""
    rng = random.Random(41)
    solvers: dict[Rules, Any] = {}
    done = 0
    while done < 300:
        rules = resolve(rng.choice(sorted(PROFILES)))
        s = endgame(rules, rng, rng.randint(3, 9))
        if s is None:
            continue
        ctx = HandContext(rng.randrange(3), rng.random() < 0.5)
        seat = rng.randrange(rules.players)
        want = brute(s, ctx, seat)
        solver = solvers.setdefault(rules, make_solver(rules, pure=pure, table_bits=8))
        solver.set_hand(*hand_args(s, ctx))
        for guess in (want, want + rng.randint(-3, 3), rng.randint(-300, 300), -(10**6), 10**6):
            assert solver.value(position(s), seat, guess) == want, (s, ctx, seat, guess)
        done += 1


def test_mirrored_ends_meet_one_table_entry() -> None:
    """A position's value does not change when its two ends swap sides (no
    score tells left from right), so the table keys them as one: a position
    solved, then its mirror through the same small table, gives the brute
    force's values, which are the first's with each move's end swapped."""
    rng = random.Random(43)
    solvers: dict[Rules, Any] = {}
    done = 0
    while done < 300:
        rules = resolve(rng.choice(sorted(PROFILES)))
        s = endgame(rules, rng, rng.randint(5, 10))
        if s is None or s.left == s.right:
            continue
        ctx = HandContext(rng.randrange(3), rng.random() < 0.5)
        seat = rng.randrange(rules.players)
        solver = solvers.setdefault(rules, make_solver(rules, table_bits=8))
        got = move_values(solver, s, ctx, seat)
        m = s._replace(left=s.right, right=s.left)
        want = tuple((mv, brute(apply(m, mv), ctx, seat)) for mv in legal_moves(m))
        assert move_values(solver, m, ctx, seat) == want, (s, ctx, seat)
        mirrored = {(mv._replace(end=1 - mv.end) if isinstance(mv, Play) else mv): v for mv, v in got}
        assert dict(want) == mirrored, (s, ctx, seat)
        done += 1


BOUNDED = sorted(p for p in PROFILES if resolve(p).pass_bonus is None and (resolve(p).count == "opponents" or resolve(p).scoring == "milo"))


@pytest.mark.parametrize("profile", BOUNDED)
def test_endgames_where_the_value_bounds_are_tightest(profile: str) -> None:
    """Counting the opponents' pips, or milo's 1 or 2, the search cuts on
    bounds tighter than every pip left: the brute force's values still."""
    rules = resolve(profile)
    rng = random.Random(f"bounds {profile}")
    done = 0
    while done < 100:
        s = endgame(rules, rng, rng.randint(4, 10))
        if s is None:
            continue
        check(s, HandContext(rng.randrange(5), rng.random() < 0.5), rng.randrange(rules.players))
        done += 1


@needs_native
@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_the_value_bounds_change_no_value(profile: str) -> None:
    """Cutoffs on bounds of the value on and off, deeper than the brute force
    goes, against a search with neither them nor a table."""
    rules = resolve(profile)
    rng = random.Random(f"bounds off {profile}")
    done = 0
    while done < 25:
        s = endgame(rules, rng, rng.randint(8, 14))
        if s is None:
            continue
        seat = rng.randrange(rules.players)
        ctx = HandContext(rng.randrange(3), rng.random() < 0.5)
        solver = make_solver(rules, table_bits=10)
        plain = make_solver(rules)
        plain.table = False
        plain.bounds = False  # type: ignore[attr-defined]
        assert move_values(solver, s, ctx, seat) == move_values(plain, s, ctx, seat), (profile, s, ctx, seat)
        done += 1


@settings(max_examples=60, deadline=None)
@given(seeds, st.sampled_from(["international", "pagat", "domena_2p", "pr_3p", "milo"]))
def test_two_sides_are_zero_sum_and_the_best_move_is_the_value(seed: int, profile: str) -> None:
    rules = resolve(profile)
    rng = random.Random(seed)
    s = endgame(rules, rng, 12)
    if s is None:
        return
    solver = make_solver(rules)
    pos = position(s)
    solver.set_hand(s.leader, s.opening, 0, rules.first_block_bonus)
    mover = s.turn
    best = max(v for _, v in move_values(solver, s, HandContext(), mover))
    assert solver.value(pos, mover) == best
    if rules.sides == 2:
        assert solver.value(pos, (mover + 1) % rules.players) == -best


# -- positions worked out by hand ------------------------------------------------------


def at(profile: str, hands: list[str], left: int, right: int, turn: int, stock: tuple[str, ...] = (),
       **overrides: Any) -> HandState:  # fmt: skip
    """A position: these hands (every other tile on the line), these ends, `turn` to move."""
    rules = resolve(profile, overrides) if overrides else resolve(profile)
    dealt = [[parse_tile(x) for x in h.split()] for h in hands]
    s = new_hand(rules, dealt, leader=turn, stock=[parse_tile(x) for x in stock])
    return s._replace(left=left, right=right, turn=turn, plays=10)


def values(s: HandState, ctx: HandContext | None = None) -> list[tuple[str, int]]:
    out = []
    for pure in PURE:
        got = [(_name(m), v) for m, v in move_values(make_solver(s.rules, pure=pure), s, ctx or HandContext())]
        out.append(got)
    assert all(o == out[0] for o in out)
    return out[0]


def _name(m: Any) -> str:
    return move_label(m)


def test_a_forced_capicua() -> None:
    # dominican (capicua_bonus 25, count all). Ends 3 and 5; seat 0 holds only
    # 53, which fits both ends: on either end it goes out over two different
    # numbers, a capicua. Side 0 wins all the pips left, 66 + 44 + 11 = 22,
    # plus the 25 of the capicua: 47 either way.
    s = at("dominican", ["53", "66", "44", "11"], 3, 5, 0)
    assert values(s) == [("53 left", 47), ("53 right", 47)]


def test_a_block_that_one_side_must_avoid() -> None:
    # international. Ends 3 and 5, every 3 but 53 on the line; seat 0 holds 53 11.
    # 53 on the right turns the 5 into a 3: ends 3 and 3 with every 3 down, a
    # block. Pips: side 0 (seats 0, 2) 11 + 52 = 2 + 7 = 9, side 1 20 + 61 =
    # 2 + 7 = 9: a tie, no score: 0.
    # 53 on the left leaves 5 and 5: seat 1 (20) passes, seat 2 lays 52 and goes
    # out; side 0 takes every pip left, 11 + 20 + 61 = 2 + 2 + 7 = 11.
    s = at("international", ["53 11", "20", "52", "61"], 3, 5, 0)
    assert values(s) == [("53 left", 11), ("53 right", 0)]


def test_a_pass_bonus_trade_off() -> None:
    # pase_sureno (pass_bonus 20 then 10, round_down 10, count all). Ends 4 and 1;
    # seat 0 holds 63 41, seat 1 66, seat 2 40, seat 3 20.
    # 41 on the left: ends 1 and 1, no 1 left anywhere: a block, whose closing
    # passes earn nothing. Side 0 holds 63 + 40 = 13 pips, side 1 66 + 20 = 14:
    # side 0 wins all 27, rounded down to 20.
    # 41 on the right: ends 4 and 4. Seat 1 has no 4 and passes, the hand's first
    # pass: 20 to side 0. Seat 2 lays 40 and goes out: side 0 takes 63 + 66 + 20
    # = 23 pips, plus the 20, rounded down to 40.
    s = at("pase_sureno", ["63 41", "66", "40", "20"], 4, 1, 0)
    assert values(s) == [("41 left", 20), ("41 right", 40)]
    # without the pass bonus both moves are worth 20
    flat = at("pase_sureno", ["63 41", "66", "40", "20"], 4, 1, 0, pass_bonus=None)
    assert values(flat) == [("41 left", 20), ("41 right", 20)]


def test_a_boneyard_draw() -> None:
    # domena_2p (count opponents). Ends 6 and 6; seat 0 holds 11, seat 1 22; the
    # boneyard is 10 then 61. Seat 0 has no 6: it draws 10 (no 6, kept), then 61,
    # which fits and must be laid at once: ends 1 and 6. Seat 1 has no 1 or 6 and
    # the boneyard is empty: it passes. Seat 0 lays 11 (ends stay 1 and 6), seat 1
    # passes again, seat 0 lays 10 and goes out: seat 0 scores seat 1's 22 = 4.
    # (Laying 10 first blocks the line instead, 2 pips against 4: seat 0 wins
    # the block, again 4.)
    s = at("domena_2p", ["11", "22"], 6, 6, 0, stock=("10", "61"))
    assert values(s) == [("draw", 4)]
    drawn = apply(apply(s, DRAW), DRAW)  # 10, then 61 that must be played
    assert drawn.must_play == parse_tile("61")
    assert values(drawn) == [("61 left", 4)]  # equal ends: one move, named on the left


def test_a_hand_bonus_and_the_first_block_bonus_follow_the_match() -> None:
    # quinientos pays hand_bonuses [100, 75, 50, 25] to a domino's winners by the
    # hand's number in its match: the capicua position of test_a_forced_capicua
    # (quinientos: capicua_bonus 100) is worth 22 + 100 + 100 in a match's first
    # hand and 22 + 100 + 25 in its fourth.
    s = at("quinientos", ["53", "66", "44", "11"], 3, 5, 0)
    assert values(s, HandContext(0)) == [("53 left", 222), ("53 right", 222)]
    assert values(s, HandContext(3)) == [("53 left", 147), ("53 right", 147)]
    assert values(s, HandContext(4)) == [("53 left", 122), ("53 right", 122)]


def test_points_value_turns_penalties_round() -> None:
    assert points_value(resolve("international"), (31, 0), 0) == 31
    assert points_value(resolve("international"), (31, 0), 1) == -31
    # royal_rumble: points are each seat's penalty; seat 0 took 4, the others 10 + 12 + 0
    assert points_value(resolve("royal_rumble"), (4, 10, 12, 0), 0) == 22 - 4


@needs_native
def test_bad_positions_are_refused() -> None:
    solver = make_solver(resolve("international"))
    good = (((1 << 7) - 1, 0, 0, 0), (), -1, -1, 0, -1, 0, 0, 0, -1)
    assert solver.values(good, 0)
    with pytest.raises(ValueError):
        solver.values(((1 << 30, 0, 0, 0), *good[1:]), 0)
    with pytest.raises(ValueError):
        solver.values((good[0], (), 9, 1, 0, -1, 0, 0, 0, -1), 0)
    with pytest.raises(TypeError):
        solver.values(good[:5], 0)
    with pytest.raises(ValueError):
        solver.values(good, 7)
