"""What the analysis reuses never changes a grade: the solver's table kept
across hands and deals, the order hands are graded in, the exact grade of
small information sets (equal to sampling in expectation), and the
schedule that sends the dearest hands first."""

from __future__ import annotations

import copy
import random
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from replay.analysis import EXACT_LIMIT, Analyzer, decision_rng, engine_move, inputs_from_report
from replay.analysis.carry import Carried, advance
from replay.analysis.run import hand_cost, hardest_first
from replay.engine import HandState, apply, legal_moves, new_hand
from replay.knowledge import Tracker
from replay.solver import hand_args, position
from replay.validate import validate_paths
from tests.conftest import needs_native

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"


@pytest.fixture(scope="module")
def hands() -> list:
    report = validate_paths([SAMPLES / "international.jsonl", SAMPLES / "pr_2p.jsonl"], keep_moves=True)
    out = [i for m in report.matches for i in inputs_from_report(m) if i.skip is None]
    assert len(out) >= 20
    return out[:24]


@needs_native
def test_any_order_of_hands_gives_the_same_grades(hands: list) -> None:
    """One analyser in order, one in reverse, one afresh for every hand: identical rows."""
    forward = [Analyzer(samples=6, seed=3).hand(h).to_json() for h in hands]
    shared = Analyzer(samples=6, seed=3)
    backward = [shared.hand(h).to_json() for h in reversed(hands)][::-1]
    again = [shared.hand(h).to_json() for h in hands]  # its tables now full of every other hand
    assert forward == backward == again


def _late_decision(hands: list) -> tuple:
    """A non-forced decision of an international hand with 100..EXACT_LIMIT agreeing deals."""
    for inp in hands:
        if inp.rules.players != 4:
            continue
        state = new_hand(inp.rules, [list(h) for h in inp.dealt], leader=inp.leader, opening=inp.opening)
        tracker = Tracker(state, fixed_by=inp.fixed_by)
        for k, (_, kind, tile, end) in enumerate(inp.moves, 1):
            move, laid = engine_move(state, kind, tile, end)
            if state.result is None and len(legal_moves(state)) > 1:
                count = tracker.hidden(state, state.turn).count()
                if 100 <= count <= EXACT_LIMIT:
                    return inp, k, state, tracker
            tracker.see(state, move)
            state = apply(state, laid)
    raise AssertionError("no decision of that size")


@needs_native
def test_small_information_sets_are_graded_exactly_and_sampling_agrees_in_expectation(hands: list) -> None:
    inp, k, state, tracker = _late_decision(hands)
    exact = Analyzer(samples=20, seed=1)
    _, pi = exact.solvers(inp.rules)
    rows, weights, is_exact = exact._pimc(state, tracker, inp.context, pi, decision_rng(1, inp.match, inp.hand, k))
    assert is_exact and sum(weights) == tracker.hidden(state, state.turn).count()
    means = [sum(w * r[i] for r, w in zip(rows, weights, strict=True)) / sum(weights) for i in range(len(rows[0]))]
    # the same decision sampled: 4,000 deals drawn uniformly, within 4 standard errors
    hidden = tracker.hidden(state, state.turn)
    pi.set_hand(*hand_args(state, inp.context))
    base = position(state)
    srows = [[v for _, v in pi.values((h, st, *base[2:]), state.turn)] for h, st in hidden.sample(4000, random.Random(7))]
    for i, mean in enumerate(means):
        col = [r[i] for r in srows]
        se = statistics.stdev(col) / len(col) ** 0.5 if len(set(col)) > 1 else 0.0
        assert abs(statistics.fmean(col) - mean) <= 4 * se + 1e-9, (i, mean, statistics.fmean(col), se)
    # and every enumerated deal gives the moves the values a fresh solver gives it
    fresh = Analyzer(samples=0)
    _, solver = fresh.solvers(inp.rules)
    solver.set_hand(*hand_args(state, inp.context))
    worlds = hidden.enumerate(EXACT_LIMIT)
    assert worlds is not None
    for ((hands_, stock), _), row in list(zip(worlds, rows, strict=True))[:50]:
        assert [v for _, v in solver.values((hands_, stock, *base[2:]), state.turn)] == row


def test_the_dearest_tasks_go_first_and_none_is_lost(hands: list) -> None:
    tasks = [(f"t{i}", [h]) for i, h in enumerate(hands)]
    got = list(hardest_first(tasks, 0, window=8))
    assert sorted(k for k, _ in got) == sorted(k for k, _ in tasks)
    for start in range(0, len(got), 8):  # sorted within each window of 8, dearest first
        costs = [hand_cost(t[1][0], 0) for t in got[start : start + 8]]
        assert costs == sorted(costs, reverse=True)
    assert {k for k, _ in got[:8]} == {k for k, _ in tasks[:8]}  # a window never reaches ahead


def _seat_decisions(inp: Any) -> list[tuple[int, HandState, Tracker]]:
    """Every undecided position of a hand with its ply and the tracker's copy of what was seen."""
    state = new_hand(inp.rules, [list(h) for h in inp.dealt], leader=inp.leader, opening=inp.opening, stock=inp.stock)
    tracker = Tracker(state, fixed_by=inp.fixed_by)
    out = []
    for k, (_, kind, tile, end) in enumerate(inp.moves, 1):
        move, laid = engine_move(state, kind, tile, end)
        if state.result is None and len(legal_moves(state)) > 1:
            out.append((k, state, copy.deepcopy(tracker)))
        tracker.see(state, move)
        state = apply(state, laid)
    return out


def test_carried_deals_are_drawn_as_fresh_ones_would_be(hands: list) -> None:
    """Deals drawn at a seat's decision and carried to its next one (those the
    moves since leave standing) fall on the later decision's agreeing deals
    with exactly their weights (chi-square against the enumeration)."""
    from scipy.stats import chisquare

    tried = 0
    for inp in hands:
        decisions = _seat_decisions(inp)
        for k, then, tr_then in decisions:
            later = [d for d in decisions if d[0] > k and d[1].turn == then.turn]
            if not later:
                continue
            k2, now, tr_now = later[0]
            listed = tr_now.hidden(now, now.turn).enumerate(40)
            if listed is None or len(listed) < 4:
                continue
            weights: Counter[Any] = Counter()
            for world, w in listed:
                weights[world] += w
            carried = Carried(inp.moves)
            draws: Counter[Any] = Counter()
            rng = random.Random(11)
            for _ in range(300):
                carried.keep(k, then, tr_then.hidden(then, then.turn).sample(40, rng))
                draws.update(carried.take(k2, now, 40))
            if sum(draws.values()) < 1500:
                continue
            assert set(draws) <= set(weights)  # every carried deal agrees with all the seat knows
            keys = sorted(weights)
            n, total = sum(draws.values()), sum(weights.values())
            assert chisquare([draws[x] for x in keys], [n * weights[x] / total for x in keys]).pvalue > 1e-4
            tried += 1
            if tried >= 3:
                return
    assert tried >= 1, "no pair of decisions with few deals at the later one"


@needs_native
def test_carrying_deals_gives_the_same_grades_in_any_order(hands: list) -> None:
    """Carried deals depend only on the hand: grading in reverse order (or
    afresh) gives the same rows, and carrying changes which deals are drawn
    (the grades differ from the uncarried ones somewhere)."""
    forward = [Analyzer(samples=6, seed=3).hand(h).to_json() for h in hands[:10]]
    shared = Analyzer(samples=6, seed=3)
    assert [shared.hand(h).to_json() for h in reversed(hands[:10])][::-1] == forward
    plain = [Analyzer(samples=6, seed=3, carry=False).hand(h).to_json() for h in hands[:10]]
    assert plain != forward


def test_a_carried_deal_must_give_the_seat_the_tiles_it_drew() -> None:
    """The true deal carries to the seat's next decision as the truth; the same
    deal with the boneyard's next tile swapped for its last (the seat then
    draws a tile it did not see) does not."""
    report = validate_paths([SAMPLES / "pr_2p.jsonl"], keep_moves=True)
    checked = 0
    for inp in (i for m in report.matches for i in inputs_from_report(m) if i.skip is None):
        decisions = _seat_decisions(inp)
        for k, then, _ in decisions:
            later = [d for d in decisions if d[0] > k and d[1].turn == then.turn]
            if not later or not later[0][1].stock:
                continue
            k2, now, _ = later[0]
            draws = [m for m in inp.moves[k - 1 : k2 - 1] if m[1] == "draw"]
            if not draws or draws[0][0] != then.turn:  # the next tile drawn is the seat's
                continue
            seat = then.turn
            assert advance(then, (then.hands, then.stock), inp.moves[k - 1 : k2 - 1], observer=seat,
                           seen=now) == (now.hands, now.stock)  # fmt: skip
            first, *middle, last = then.stock  # the last is still in the boneyard at the later decision
            swapped = (then.hands, (last, *middle, first))
            assert advance(then, swapped, inp.moves[k - 1 : k2 - 1], observer=seat, seen=now) is None
            checked += 1
    assert checked >= 3
