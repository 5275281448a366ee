"""Each player's own play model around its family's (replay.belief.model.fit_players, docs/belief.md)."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from cli.main import main as cli_main
from replay.belief import FEATURES, PlayModel
from replay.belief.history import Public
from replay.belief.model import Seated, fit, fit_players, log_likelihood, seated
from replay.belief.selfplay import play_hand
from replay.belief.train import train
from replay.engine import legal_moves, new_hand
from replay.rules import resolve
from replay.tiles import PIPS, parse_tile
from tests.test_belief import agrees_with_history, logit_choices, seen_until

INTL = resolve("international")


def test_each_player_gets_back_its_planted_style_and_a_thin_record_stays_near_the_family() -> None:
    rng = np.random.default_rng(7)
    styles = {"ann": np.array([2.0, 0.0, -1.0]), "bob": np.array([-1.0, 1.5, 0.5]), "cy": np.array([0.0, -2.0, 2.0])}
    data = {p: logit_choices(rng, 3000 if p != "cy" else 120, b) for p, b in styles.items()}
    data["dee"] = logit_choices(rng, 30, styles["ann"])
    pooled = fit([g for gs, _ in data.values() for g in gs], [c for _, cs in data.values() for c in cs])
    got = dict(fit_players(pooled, data, min_choices=100))
    assert sorted(got) == ["ann", "bob", "cy"]  # dee: too few choices for a style of its own
    for p in ("ann", "bob"):
        assert np.allclose(got[p], styles[p], atol=0.2), (p, got[p])
    # cy's 120 choices: pulled towards the family's coefficients, less than its own maximum likelihood
    alone = fit(*data["cy"], l2=0.0)
    assert np.linalg.norm(np.array(got["cy"]) - pooled) < np.linalg.norm(alone - pooled)
    assert np.linalg.norm(np.array(got["cy"]) - styles["cy"]) < np.linalg.norm(pooled - styles["cy"])
    # without any choice the prior's centre is the answer; the fit is deterministic
    assert np.allclose(fit([], [], centre=pooled, precision=1.0), pooled)
    assert fit_players(pooled, data) == fit_players(pooled, data)


def test_a_seated_model_weighs_each_seat_by_its_player() -> None:
    heavy = tuple(24.0 if f == "pips" else 0.0 for f in FEATURES)
    model = PlayModel("partnership", (0.0,) * len(FEATURES), players=(("ann", heavy),))
    hands = [[parse_tile(x) for x in h.split()] for h in (
        "66 52 51 50 43 21 10", "55 54 53 65 44 64 11", "42 41 40 33 32 31 63", "30 22 20 62 61 60 00")]  # fmt: skip
    s = new_hand(INTL, hands, leader=0)
    moves = legal_moves(s)
    top = max(range(len(moves)), key=lambda i: PIPS[moves[i].tile])  # type: ignore[union-attr]
    family = model.probs(s, moves, Public.fresh(4))
    assert family is not None and max(family) == pytest.approx(min(family))  # every move alike
    p = seated(model, ["ann", None, "bob", None]).probs(s, moves, Public.fresh(4))
    assert p is not None and p[top] > 0.9  # seat 0 is ann: the heavy lead
    assert seated(model, ["bob", "ann", None, None]).probs(s, moves, Public.fresh(4)) == family  # seat 1 is ann
    assert seated(model, ["bob", "cy"]) is model and seated(model, []) is model
    assert isinstance(seated(model, ["ann"]), Seated)


def test_the_model_json_keeps_the_players_and_refuses_another_version() -> None:
    m = PlayModel("partnership", tuple(0.125 * i for i in range(len(FEATURES))),
                  players=(("p-1", (1.0,) * len(FEATURES)), ("p-2", (-1.0,) * len(FEATURES))))  # fmt: skip
    back = PlayModel.from_json(m.to_json())
    assert back == m
    with pytest.raises(ValueError):
        PlayModel.from_json({**m.to_json(), "version": m.version - 1})


def test_a_signalling_table_gets_each_players_style_and_scores_better_held_out() -> None:
    rng = random.Random(4)
    styles = ["signal", "partner", "signal", "partner"]
    fitting = [play_hand(INTL, styles, rng) for _ in range(100)]
    held = [play_hand(INTL, styles, rng) for _ in range(25)]

    def choices(hs: list) -> list:
        return [(st, legal_moves(st), p.move, p.public) for h in hs
                for st, p in zip(h.states, h.recorder.plies, strict=True)
                if st.result is None and len(legal_moves(st)) > 1]  # fmt: skip

    fit_c, held_c = choices(fitting), choices(held)
    table = ("sig-a", "par-a", "sig-b", "par-b")
    got = train("partnership", fit_c, held_c, fitting_players=[table] * len(fit_c),
                held_players=[table] * len(held_c), player_min_choices=50)  # fmt: skip
    assert {p for p, _ in got.model.players} == set(table)
    assert got.loglik_family is not None and got.loglik_model is not None
    assert got.loglik_model > got.loglik_family + 0.1  # two styles: one pooled model dilutes both
    alone = log_likelihood(seated(got.model, table), held_c) / len(held_c)
    assert alone == pytest.approx(got.loglik_model)
    # seated by the wrong players (the styles swapped), it scores worse than the family's alone
    swapped = log_likelihood(seated(got.model, table[1:] + table[:1]), held_c) / len(held_c)
    assert swapped < got.loglik_family
    # without the players the fit is the family's
    plain = train("partnership", fit_c, held_c)
    assert plain.model.players == () and plain.loglik_model == pytest.approx(got.loglik_family)
    assert replace(got.model, players=()).coef == pytest.approx(plain.model.coef)


def test_a_store_fits_its_players_and_refits_a_model_of_older_features(tmp_path: Path) -> None:
    from replay.analysis import refit
    from replay.analysis.stored import stored_inputs
    from replay.store import open_store
    from replay.store.models import latest_models

    log, db = tmp_path / "sim.jsonl", tmp_path / "s.duckdb"
    assert cli_main(["simulate", "--hands", "120", "--seed", "5", "--bots", "signal,partner", "--players-pool", "4",
                     "--out", str(log)]) == 0  # fmt: skip
    assert cli_main(["ingest", str(log), "--db", str(db), "--no-analysis"]) == 0
    conn = open_store(db)
    try:
        matches = [m for (m,) in conn.execute("SELECT match FROM matches ORDER BY 1").fetchall()]
        inputs = [i for _, got in stored_inputs(conn, matches) for i in got]
        seats = {(m, s): p for m, s, p in conn.execute("SELECT match, seat, player FROM seats").fetchall()}
        assert inputs and all(len(i.players) == 4 for i in inputs)
        assert all(i.players[s] == seats[i.match, s] for i in inputs for s in range(4))
        fits = refit.fit_store(conn, 50)
        assert fits and fits[0]["family"] == "partnership"
        model = latest_models(conn)["partnership"].model
        assert fits[0]["players"] == len(model.players)
        assert refit.refit_due(conn) == []
        conn.execute("UPDATE play_models SET model_version = model_version - 1")
        assert latest_models(conn) == {}  # a model of older features weighs nothing
        assert refit.refit_due(conn) == ["partnership"]  # and is fitted again at once
    finally:
        conn.close()


def test_the_read_grades_moved_deals_agree_with_the_history_and_spread_the_resampled_ones() -> None:
    from replay.belief import evidence, weighted_belief
    from replay.belief.weights import Scorer, move_deals
    from replay.searchbots import Convention

    rng = random.Random(8)
    h = play_hand(INTL, ["signal", "partner", "signal", "partner"], rng)
    st, rec = seen_until(h, 6)
    policy = Convention((st.turn + 2) % 4)
    b = weighted_belief(st, rec, policy, deals=20, rng=random.Random(3), exact_limit=0)
    picked = b.resample(20, random.Random(4))
    moved = move_deals(st, rec, policy, picked, sweeps=2, rng=random.Random(5))
    assert moved is not None and len(moved) == 20
    assert moved == move_deals(st, rec, policy, picked, sweeps=2, rng=random.Random(5))  # deterministic
    agrees_with_history(st, rec, moved)
    assert len(set(moved)) > len(set(picked))  # a resample repeats deals; moved, they spread out
    sc = Scorer(policy, evidence(rec.plies, st.turn), {})
    assert np.mean([sc(w) for w in moved]) > np.mean([sc(w) for w in b.worlds])
    # a drawing game's deals (a boneyard order) are not moved
    pr = resolve("pr_2p")
    hb = play_hand(pr, ["signal", "heavy"], random.Random(2))
    sb, rb = seen_until(hb, 2)
    bb = weighted_belief(sb, rb, policy, deals=5, rng=random.Random(1), exact_limit=0)
    assert move_deals(sb, rb, policy, bb.worlds, sweeps=1, rng=random.Random(1)) is None


def test_the_read_grade_weighs_each_seat_by_the_player_who_held_it() -> None:
    from replay.analysis import Analyzer, inputs_from_report
    from replay.belief.weights import HEAVY_LEADS
    from replay.validate import validate_paths

    path = Path(__file__).resolve().parent / "data" / "examples" / "international-to-50.jsonl"
    rep = validate_paths([path], keep_moves=True)
    inp = next(i for m in rep.matches for i in inputs_from_report(m) if i.skip is None)
    seats = {r.seat: r.player for r in rep.matches[0].seats}
    assert inp.players == tuple(seats[s] for s in range(4))  # a report's seats name the players
    light = tuple(-c for c in HEAVY_LEADS.coef)  # one player sheds its light tiles first
    model = replace(HEAVY_LEADS, players=((inp.players[1], light),))

    def reads(players: tuple) -> list:
        a = Analyzer(samples=8, seed=3, policies={"partnership": ("partnership:1", model)})
        got = a.hand(replace(inp, players=players))
        return [[x.read for x in p.alternatives] for p in got.plies if p.read_loss is not None]

    family, own = reads(()), reads(inp.players)
    assert family == reads(("x", "y", "z", "w"))  # nobody with coefficients of their own: the family's
    assert own != family  # seat 1's plays weighed as its player's
    assert own == reads(inp.players)
