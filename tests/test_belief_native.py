"""The C twin of a linear play model's log-probability (replay/_belief.c) gives
the very double the Python reference gives (features.move_features, model._probs,
weights._log_prob), on every past play of bot-played hands and on hands no
deal would give, for each kind of move the weighted belief scores."""

from __future__ import annotations

import random

import pytest

import replay.belief.weights as W
from replay.accel import native
from replay.belief.features import FEATURES
from replay.belief.model import PlayModel, Seated
from replay.belief.selfplay import play_hand
from replay.engine import Play
from replay.rules import resolve
from replay.tiles import FULL_SET

pytestmark = pytest.mark.skipif(native is None, reason="the C accelerator is not built")

TABLES = [
    ("international", {}, ("random", "heavy", "partner", "random")),
    ("international", {"lead_to_partner": True}, ("random", "random", "heavy", "partner")),
    ("domena_2p", {}, ("random", "heavy")),
    ("pr_3p", {}, ("random", "heavy", "random")),
]


def _policies(rng: random.Random, seats: int) -> list[PlayModel | Seated]:
    def coef() -> tuple[float, ...]:
        return tuple(rng.gauss(0.0, 2.0) for _ in FEATURES)

    return [PlayModel("t", coef()), Seated(tuple(coef() for _ in range(seats)), coef())]


@pytest.mark.parametrize(("profile", "overrides", "styles"), TABLES)
def test_the_scorer_gives_the_reference_double(profile: str, overrides: dict[str, object],
                                               styles: tuple[str, ...]) -> None:  # fmt: skip
    rules = resolve(profile, overrides)
    rng = random.Random(f"{profile}{sorted(overrides.items())}")
    compared = fast = 0
    kinds: set[str] = set()
    for _ in range(6):
        hand = play_hand(rules, styles, rng)
        for observer in range(rules.players):
            ev = W.evidence(hand.recorder.plies, observer)
            kinds |= {"lead" if e.ply.view.left < 0 else "line" for e in ev}
            for policy in _policies(rng, rules.players):
                memo: dict[tuple[int, int], float] = {}
                scorer = W.Scorer(policy, ev, memo)
                fast += len(scorer.fast)
                for seat in {e.seat for e in ev}:
                    for k in range(6):
                        # the seat's dealt tiles, then hands no deal would give (any tiles at all)
                        now = hand.start.hands[seat] if k == 0 else rng.getrandbits(28) & FULL_SET
                        scorer.seat(seat, now)
                by_index = {e.index: e for e in ev}
                for (index, h), got in memo.items():
                    e = by_index[index]
                    assert got == _pure(policy, e.ply.view, e.seat, h, e.ply.move, e.ply.public), (profile, index, h)
                    compared += 1
    assert compared > 500 and fast > 50
    # (a seat that draws later tells nothing by its earlier plays: leads weigh in the partnership games)
    assert kinds == ({"lead", "line"} if rules.players == 4 else kinds | {"line"})


def _pure(policy: PlayModel | Seated, view: object, seat: int, hand: int, move: object, public: object) -> float:
    keep = W.native
    W.native = None
    try:
        return W._log_prob(policy, view, seat, hand, move, public)  # type: ignore[arg-type]
    finally:
        W.native = keep


def test_the_twin_scores_a_given_list_of_moves_as_the_reference() -> None:
    # the other entry: the legal moves given (a lead, a yield, a draw among them)
    rng = random.Random(7)
    rules = resolve("international", {"lead_to_partner": True})
    seen = 0
    for _ in range(10):
        hand = play_hand(rules, ("random", "heavy", "random", "partner"), rng)
        for p in hand.recorder.plies:
            policy = PlayModel("t", tuple(rng.gauss(0.0, 2.0) for _ in FEATURES))
            h = hand.start.hands[p.seat] | (rng.getrandbits(28) & FULL_SET)
            if type(p.move) is Play:
                h |= 1 << p.move.tile
            assert W._log_prob(policy, p.view, p.seat, h, p.move, p.public) == _pure(
                policy, p.view, p.seat, h, p.move, p.public)  # fmt: skip
            seen += 1
    assert seen > 100


def test_the_twin_rejects_what_it_cannot_score() -> None:
    assert native is not None
    coef = (0.0,) * len(FEATURES)
    ctx = (3, 4, 0, 0, 0, 0)
    with pytest.raises(ValueError, match="coef"):
        native.play_logp((0.0,), ctx, 1, None, 2)
    with pytest.raises(ValueError, match="ends"):
        native.play_logp(coef, (7, 4, 0, 0, 0, 0), 1, None, 2)
    with pytest.raises(ValueError, match="played"):
        native.play_logp(coef, ctx, 1, (2, 4), 5)
    with pytest.raises(TypeError):
        native.play_logp(coef, ctx, 1, [2, 4], 0)
    # one legal move, or a move the hand cannot make: no choice to weigh
    assert native.play_logp(coef, (-1, -1, 0, 0, 0, 0), 1, None, 0) == 0.0
    assert native.play_logp(coef, (-1, -1, 0, 0, 0, 0), 0b11, None, 4) == 0.0
    # equal coefficients: every legal move alike
    assert native.play_logp(coef, (-1, -1, 0, 0, 0, 0), 0b111, None, 2) == pytest.approx(-1.0986122886681098)
