"""The play model, the weighted belief and the signalling pair (replay.belief, docs/belief.md)."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cli.main import main as cli_main
from replay.analysis.grades import READ_FLOOR, READ_MAX_FACTOR, read_moved
from replay.belief import (
    FEATURES,
    UNIFORM,
    PlayModel,
    Recorder,
    evidence,
    fit,
    move_features,
    tile_log_loss,
    weighted_belief,
)
from replay.belief.history import Public
from replay.belief.selfplay import deal, play_hand
from replay.belief.weights import place_of
from replay.bots import signal_choice
from replay.engine import DRAW, LEFT, Play, act, legal_moves, new_hand
from replay.rules import resolve
from replay.searchbots import Convention, ReaderBot
from replay.simulate.config import Player, pair_up
from replay.solver import HandContext
from replay.tiles import BIT, PIPS, SUIT_MASK, parse_tile

INTL = resolve("international")


def _hands(text: str) -> list[list[int]]:
    return [[parse_tile(x) for x in h.split()] for h in text.split("|")]


# -- the fit ------------------------------------------------------------------------


def _logit_data(seed: int, n: int, beta: np.ndarray) -> tuple[list[np.ndarray], list[int]]:
    return logit_choices(np.random.default_rng(seed), n, beta)


def logit_choices(rng: np.random.Generator, n: int, beta: np.ndarray) -> tuple[list[np.ndarray], list[int]]:
    """`n` choices among 2-5 moves of random features, each drawn from the
    conditional logit of coefficients `beta`."""
    groups, chosen = [], []
    for _ in range(n):
        k = int(rng.integers(2, 6))
        X = rng.normal(size=(k, len(beta)))
        p = np.exp(X @ beta)
        p /= p.sum()
        groups.append(X)
        chosen.append(int(rng.choice(k, p=p)))
    return groups, chosen


def test_fit_recovers_the_coefficients_of_a_known_logit() -> None:
    beta = np.array([1.5, -0.7, 0.0])
    groups, chosen = _logit_data(1, 4000, beta)
    got = fit(groups, chosen, l2=0.0)
    assert np.allclose(got, beta, atol=0.12)


def test_fit_agrees_with_statsmodels_conditional_logit() -> None:
    sm = pytest.importorskip("statsmodels.discrete.conditional_models")
    beta = np.array([0.8, -1.2, 0.4])
    groups, chosen = _logit_data(2, 600, beta)
    X = np.vstack(groups)
    y = np.concatenate([np.eye(len(g))[c] for g, c in zip(groups, chosen, strict=True)])
    ids = np.concatenate([[i] * len(g) for i, g in enumerate(groups)])
    ref = sm.ConditionalLogit(y, X, groups=ids).fit(disp=False)
    got = fit(groups, chosen, l2=0.0)
    assert np.allclose(got, ref.params, atol=1e-4)


def test_a_fitted_model_beats_uniform_on_held_out_hands_of_a_convention() -> None:
    from replay.belief.model import choice, log_likelihood

    rng = random.Random(3)
    styles = ["signal", "heavy", "signal", "heavy"]
    train = [play_hand(INTL, styles, rng) for _ in range(120)]
    test = [play_hand(INTL, styles, rng) for _ in range(20)]
    g, c = [], []
    for h in train:
        for st, ply in zip(h.states, h.recorder.plies, strict=True):
            got = choice(st, legal_moves(st), ply.move, ply.public)
            if got is not None:
                g.append(got[0])
                c.append(got[1])
    model = PlayModel("partnership", tuple(float(x) for x in fit(g, c)))
    held = [(st, legal_moves(st), p.move, p.public) for h in test
            for st, p in zip(h.states, h.recorder.plies, strict=True)
            if st.result is None and len(legal_moves(st)) > 1]  # fmt: skip
    assert log_likelihood(model, held) > log_likelihood(UNIFORM, held) + 0.3 * len(held)
    assert PlayModel.from_json(model.to_json()).coef == pytest.approx(model.coef, abs=1e-6)


# -- features ---------------------------------------------------------------------


def test_covering_the_partners_number_is_a_kill() -> None:
    hands = _hands("66 65 64 63 62 61 60|55 54 53 52 51 50 44|43 42 41 40 33 32 31|30 22 21 20 11 10 00")
    s = new_hand(INTL, hands, leader=2)
    s = s._replace(left=3, right=5, turn=0)
    pub = Public((0, 0, 1 << 3, 0), (0,) * 4)  # the partner (seat 2) laid the 3 open
    moves = legal_moves(s)
    rows = dict(zip(moves, move_features(s, s.hands[0], moves, pub), strict=True))
    kill = FEATURES.index("kill")
    assert rows[Play(parse_tile("63"), LEFT)][kill] == 1.0  # covers the 3
    assert rows[Play(parse_tile("65"), 1)][kill] == 0.0     # plays on the 5: the 3 stays


# -- the weighted belief ------------------------------------------------------------


def _after_lead(lead: str) -> tuple[object, Recorder]:
    hands = _hands("66 65 64 63 61 60 00|55 54 53 52 51 50 44|43 42 41 40 33 32 31|30 22 21 20 11 10 62")
    s = new_hand(INTL, hands, leader=2)
    rec = Recorder(s)
    mv = Play(parse_tile(lead), LEFT)
    rec.see(s, mv)
    return act(s, 2, mv), rec


def test_the_belief_is_deterministic_and_uniform_without_a_policy() -> None:
    s, rec = _after_lead("43")
    a = weighted_belief(s, rec, None, deals=30, rng=random.Random(5))
    b = weighted_belief(s, rec, None, deals=30, rng=random.Random(5))
    assert a == b and not a.exact and a.drawn == 30
    assert a.weights == pytest.approx([1 / 30] * 30) and a.ess == pytest.approx(30)
    m = Convention(2)
    c = weighted_belief(s, rec, m, deals=30, rng=random.Random(5))
    assert c == weighted_belief(s, rec, m, deals=30, rng=random.Random(5))
    assert c.worlds[:30] == a.worlds  # the same deals, weighed
    assert c.ess < 30


def test_a_partners_lead_moves_the_belief_towards_its_longest_number() -> None:
    # seat 2 led 43: under the convention, the heaviest tile of its longest number (4 or 3),
    # so it holds no heavier tile of the 4 or the 3, and more of the lighter ones
    s, rec = _after_lead("43")
    u = weighted_belief(s, rec, None, deals=200, rng=random.Random(1)).marginals()
    r = weighted_belief(s, rec, Convention(2), deals=200, rng=random.Random(1)).marginals()
    hidden = [t for t in range(28) if (SUIT_MASK[4] | SUIT_MASK[3]) & BIT[t] and not s.hands[3] & BIT[t]
              and t != parse_tile("43")]  # fmt: skip
    heavier = [t for t in hidden if PIPS[t] > 7]
    lighter = [t for t in hidden if PIPS[t] < 7]
    assert heavier and lighter
    assert r[heavier, 2].sum() < u[heavier, 2].sum() - 0.5
    assert r[lighter, 2].sum() > u[lighter, 2].sum() + 0.3


def test_exact_weights_when_few_deals_agree() -> None:
    rng = random.Random(7)
    h = play_hand(INTL, ["signal"] * 4, rng)
    k = len(h.states) - 3  # late in the hand: few deals
    while h.states[k].result is not None or len(legal_moves(h.states[k])) < 2:
        k -= 1
    st = h.states[k]
    rec = Recorder(h.start)
    for s2, ply in zip(h.states[:k], h.recorder.plies[:k], strict=True):
        rec.see(s2, ply.move)
    model = Convention((st.turn + 2) % 4)
    b = weighted_belief(st, rec, model, deals=20, rng=random.Random(0), exact_limit=10_000)
    assert b.exact
    listed = rec.hidden(st, st.turn).enumerate(10_000)
    assert listed is not None and len(listed) == b.drawn
    # each listed deal's weight, worked out by hand: its count times the product over the partner's plays
    raw = []
    for (hands, _), count in listed:
        w = float(count)
        for e in evidence(rec.plies, st.turn):
            hs = list(e.ply.view.hands)
            hs[e.seat] = hands[e.seat] | e.later
            view = e.ply.view._replace(hands=tuple(hs))
            moves = legal_moves(view)
            p = model.probs(view, moves, e.ply.public)
            if p is not None and len(moves) > 1:
                w *= p[moves.index(e.ply.move)]
        raw.append(w)
    assert b.weights == pytest.approx([x / sum(raw) for x in raw])
    truth = place_of(st.hands, st.stock)
    loss, n = tile_log_loss(b.marginals(), truth, unknown=b.unknown, observer=st.turn)
    assert n == b.unknown.bit_count() and loss >= 0


def test_more_deals_are_drawn_below_the_floor() -> None:
    s, rec = _after_lead("43")
    b = weighted_belief(s, rec, Convention(2), deals=20, rng=random.Random(2), floor=19)
    assert 20 < b.drawn <= 160 and len(set(b.weights)) > 1
    assert weighted_belief(s, rec, None, deals=20, rng=random.Random(2), floor=19).drawn == 20


def test_evidence_leaves_out_the_observer_and_plays_before_a_draw() -> None:
    r = resolve("pr_2p")
    rng = random.Random(11)
    left_out = 0
    for _ in range(20):
        plies = play_hand(r, ["heavy", "heavy"], rng).recorder.plies
        ev = evidence(plies, observer=0)
        assert all(e.seat == 1 for e in ev)
        drew = [i for i, p in enumerate(plies) if p.seat == 1 and p.move is DRAW and p.view.result is None]
        for e in ev:
            assert not any(i > e.index for i in drew)  # its hand then is known in every deal
            assert isinstance(e.ply.move, Play)
        plays = [i for i, p in enumerate(plies) if p.seat == 1 and isinstance(p.move, Play) and p.view.result is None]
        assert {e.index for e in ev} == {i for i in plays if not any(d > i for d in drew)}
        left_out += sum(1 for i in plays if any(d > i for d in drew))
    assert left_out > 0


# -- the signalling pair ----------------------------------------------------------


def test_the_signaller_leads_the_heaviest_tile_of_its_longest_number() -> None:
    hands = _hands("66 52 51 50 43 21 10|55 54 53 65 44 64 11|42 41 40 33 32 31 63|30 22 20 62 61 60 00")
    s = new_hand(INTL, hands, leader=0)
    assert signal_choice(s, legal_moves(s), (0,) * 4, (0,) * 4) == Play(parse_tile("52"), LEFT)


def test_pair_up_seats_the_reader_opposite_the_signaller() -> None:
    ps = [Player(f"p{i}", "", s) for i, s in enumerate(["signal", "reader", "random", "heavy"])]
    got = pair_up(ps)
    assert sorted(p.id for p in got) == sorted(p.id for p in ps)
    i = [p.style for p in got].index("reader")
    assert got[(i + 2) % 4].style == "signal"


def _redeal(start_hands: list[int], plies: list, observer: int, rng: random.Random, rec: Recorder, state) -> list[int]:
    """Initial hands of another deal that agrees with the public history and the observer's tiles."""
    (now, _), = rec.hidden(state, observer).sample(1, rng)
    out = []
    for s in range(4):
        played = 0
        for p in plies:
            if p.seat == s and isinstance(p.move, Play):
                played |= BIT[p.move.tile]
        out.append(now[s] | played)
    assert out[observer] == start_hands[observer]
    return out


def test_the_reader_plays_the_same_on_any_deal_that_agrees_with_what_it_saw() -> None:
    reader = ReaderBot(samples=6)
    rng = random.Random(4)
    checked = 0
    for _ in range(12):
        hands, _ = deal(INTL, rng)
        h = play_hand(INTL, ["signal", "partner", "signal", "partner"], rng, hands=hands, leader=0)
        # a decision of seat 2 (the reader's seat, its partner seat 0 signals) with a choice
        ks = [k for k, st in enumerate(h.states)
              if st.turn == 2 and st.result is None and len(legal_moves(st)) > 1 and st.plays >= 3]  # fmt: skip
        if not ks:
            continue
        k = ks[0]
        st = h.states[k]
        rec = Recorder(h.start)
        for s2, ply in zip(h.states[:k], h.recorder.plies[:k], strict=True):
            rec.see(s2, ply.move)
        want = reader.think(st, legal_moves(st), rec, HandContext(), random.Random(9))
        for j in range(2):
            other = _redeal(list(h.start.hands), h.recorder.plies[:k], 2, random.Random(100 + j), rec, st)
            s2 = new_hand(INTL, [[t for t in range(28) if m & BIT[t]] for m in other], leader=0)
            rec2 = Recorder(s2)
            for ply in h.recorder.plies[:k]:
                assert ply.move in legal_moves(s2)
                rec2.see(s2, ply.move)
                s2 = act(s2, s2.turn, ply.move)
            assert s2.hands[2] == st.hands[2] and s2.hands != st.hands or other == list(h.start.hands)
            assert reader.think(s2, legal_moves(s2), rec2, HandContext(), random.Random(9)) == want
        checked += 1
        if checked >= 3:
            break
    assert checked >= 2


# -- the command ------------------------------------------------------------------


def test_replay_model_fit_stores_a_version_a_family(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from replay.store import open_store
    from replay.store.models import latest_models

    log = tmp_path / "sim.jsonl"
    db = tmp_path / "s.duckdb"
    assert cli_main(["simulate", "--hands", "120", "--seed", "5", "--bots", "signal,partner",
                     "--out", str(log)]) == 0  # fmt: skip
    assert cli_main(["ingest", str(log), "--db", str(db), "--no-analysis"]) == 0
    capsys.readouterr()
    assert cli_main(["model", "fit", "--db", str(db), "--min-choices", "10_000"]) == 1
    assert "no family" in capsys.readouterr().out
    assert cli_main(["model", "fit", "--db", str(db), "--min-choices", "50", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"family": "partnership"' in out and '"version": 1' in out
    assert cli_main(["model", "fit", "--db", str(db), "--min-choices", "50"]) == 0
    conn = open_store(db, read_only=True)
    try:
        got = latest_models(conn)
        rows = conn.execute("SELECT count(*), max(test_choices) FROM play_models").fetchall()
    finally:
        conn.close()
    assert set(got) == {"partnership"} and got["partnership"].version == 2
    assert rows[0][0] == 2 and rows[0][1] > 0
    assert got["partnership"].beats_uniform
    assert math.isfinite(got["partnership"].loglik_model or math.nan)


def seen_until(h: Any, plays: int) -> tuple[Any, Recorder]:
    """The first decision of self-played hand `h` with at least `plays`
    tiles laid and a choice, and the recorder of what came before it."""
    k = next(k for k, st in enumerate(h.states) if st.plays >= plays and len(legal_moves(st)) > 1)
    rec = Recorder(h.start)
    for s2, ply in zip(h.states[:k], h.recorder.plies[:k], strict=True):
        rec.see(s2, ply.move)
    return h.states[k], rec


def agrees_with_history(st: Any, rec: Recorder, worlds: Any) -> None:
    """Every deal of `worlds` gives the mover its tiles and each other seat
    as many tiles as it holds, none it showed it lacks."""
    (groups,) = rec.hidden(st, st.turn).options
    for hands, _ in worlds:
        assert hands[st.turn] == st.hands[st.turn]
        for g in groups:
            if g.seat >= 0:
                assert hands[g.seat].bit_count() == g.count and not hands[g.seat] & g.forbid


def test_moved_deals_agree_with_the_history_and_follow_the_weights() -> None:
    rng = random.Random(8)
    h = play_hand(INTL, ["signal", "partner", "signal", "partner"], rng)
    st, rec = seen_until(h, 6)
    policy = Convention((st.turn + 2) % 4)
    args = {"deals": 30, "max_deals": 30, "exact_limit": 0}
    plain = weighted_belief(st, rec, policy, rng=random.Random(3), **args)
    moved = weighted_belief(st, rec, policy, rng=random.Random(3), sweeps=2, **args)
    assert moved == weighted_belief(st, rec, policy, rng=random.Random(3), sweeps=2, **args)
    assert moved.weights == pytest.approx([1 / 30] * 30) and moved.ess == plain.ess
    agrees_with_history(st, rec, moved.worlds)
    # the moved deals are likelier, on average, under the policy than the drawn ones
    from replay.belief.weights import Scorer

    sc = Scorer(policy, evidence(rec.plies, st.turn), {})
    assert np.mean([sc(w) for w in moved.worlds]) > np.mean([sc(w) for w in plain.worlds])


def test_mean_ci_and_resample_follow_the_weights() -> None:
    from replay.belief import Belief

    worlds = tuple((((1 << i,) * 4), ()) for i in range(4))
    b = Belief(0, 0, worlds, (0.7, 0.1, 0.1, 0.1), False, 4, 1 / (0.49 + 0.03))
    mean, (lo, hi) = b.mean_ci([10.0, 0.0, 0.0, 0.0])
    assert mean == pytest.approx(7.0) and lo < 7.0 < hi
    picks = b.resample(1000, random.Random(0))
    assert picks.count(worlds[0]) == pytest.approx(700, abs=2)
    exact = Belief(0, 0, worlds, (0.7, 0.1, 0.1, 0.1), True, 4, 1.9)
    assert exact.mean_ci([10.0, 0.0, 0.0, 0.0]) == (pytest.approx(7.0), (pytest.approx(7.0), pytest.approx(7.0)))


def _read_grade_marginals(st: Any, rec: Recorder, policy: Any, seeds: int, **draws: float) -> np.ndarray:
    """P(tile at place) of the read grade's 10 deals (drawn, picked by weight,
    moved: replay.analysis.grades.read_moved), averaged over `seeds` generators."""
    acc = np.zeros((28, 6))
    for seed in range(seeds):
        rng = random.Random(seed)
        b = weighted_belief(st, rec, policy, deals=10, rng=rng, exact_limit=0, **draws)  # type: ignore[arg-type]
        moved = read_moved(st, rec, policy, b, 10, rng).worlds if len(b.worlds) > 10 else None
        if moved is None:
            acc += b.marginals()
            continue
        for hands, stock in moved:
            acc[np.arange(28), place_of(hands, stock)] += 1 / len(moved)
    return acc / seeds


def test_the_read_grades_deals_come_to_the_weighted_belief() -> None:
    # a decision where 90,090 deals agree: every one weighed gives the belief itself. The
    # partner's plays split it into parts that two-tile swaps rarely cross, so the share of
    # each part comes from the weighted draws: enough of them, and the read grade's deals,
    # averaged over many generators, are the belief's; with the old floor (half the deals,
    # 4 x at most) they kept much of the uniform belief's shares (docs/belief.md)
    h = play_hand(INTL, ["signal", "partner", "signal", "partner"], random.Random(11))
    st, rec = seen_until(h, 10)
    policy = Convention((st.turn + 2) % 4)
    exact = weighted_belief(st, rec, policy, deals=10, rng=random.Random(0), exact_limit=100_000)
    assert exact.exact and exact.drawn == 90_090
    truth = exact.marginals()
    got = _read_grade_marginals(st, rec, policy, 120, floor=READ_FLOOR * 10, max_deals=READ_MAX_FACTOR * 10)
    old = _read_grade_marginals(st, rec, policy, 120, floor=5, max_deals=40)
    assert np.abs(got - truth).mean() < 0.004 and np.abs(got - truth).max() < 0.06
    assert np.abs(old - truth).mean() > 2 * np.abs(got - truth).mean()


def test_late_reads_draw_from_the_exactly_weighed_belief() -> None:
    # near a hand's end a few thousand deals agree, and the partner's plays leave few with
    # weight: the read grade weighs every one (one factor a place) and draws from that,
    # where 80 uniform draws had an effective sample of about 4 (docs/belief.md, "Late in the hand")
    from replay.analysis.grades import READ_ENUM_LIMIT, ReadDeals
    from replay.belief.weights import exact_draws

    h = play_hand(INTL, ["signal", "partner", "signal", "partner"], random.Random(5))
    found = 0
    for plays in range(8, 22):
        st, rec = seen_until(h, plays)
        count = rec.hidden(st, st.turn, ()).count()
        if not 200 < count <= READ_ENUM_LIMIT:
            continue
        policy = Convention((st.turn + 2) % 4)
        every = weighted_belief(st, rec, policy, deals=10, rng=random.Random(0), exact_limit=READ_ENUM_LIMIT)
        assert every.exact and every.drawn == count
        got = exact_draws(st, rec, policy, 40_000, random.Random(1), limit=READ_ENUM_LIMIT)
        assert got is not None
        deals, ess = got
        assert ess == pytest.approx(every.ess, rel=1e-9)
        agrees_with_history(st, rec, deals[:50])
        m = np.zeros((28, 6))
        for hands, stock in deals:
            m[np.arange(28), place_of(hands, stock)] += 1 / len(deals)
        assert np.abs(m - every.marginals()).max() < 0.002  # systematic draws: within a few in 40,000
        assert exact_draws(st, rec, policy, 10, random.Random(1), limit=count - 1) is None
        b = weighted_belief(st, rec, policy, deals=10, rng=random.Random(2), exact_limit=10, max_deals=80, floor=10)
        read = read_moved(st, rec, policy, b, 10, random.Random(3))
        assert isinstance(read, ReadDeals) and read.worlds is not None and len(read.worlds) == 10
        assert read.ess == pytest.approx(min(10.0, every.ess))
        found += 1
    assert found >= 2
