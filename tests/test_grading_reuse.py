"""What the analysis reuses never changes a grade: the solver's table kept
across hands and deals, the order hands are graded in, the exact grade of
small information sets (equal to sampling in expectation), and the
schedule that sends the dearest hands first."""

from __future__ import annotations

import random
import statistics
from pathlib import Path

import pytest

from replay.analysis import EXACT_LIMIT, Analyzer, decision_rng, engine_move, inputs_from_report
from replay.analysis.run import hand_cost, hardest_first
from replay.engine import apply, legal_moves, new_hand
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
