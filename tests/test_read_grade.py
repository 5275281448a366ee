"""The read grade: each move's value over deals weighted by how likely the
other seats' observed plays were (replay.analysis with a play model).

The uniform grade must not move when a model is added (same deals), a
policy that says nothing must give the uniform values back, and the read
must be deterministic, inside its interval, and drive the class and the
accuracy."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.analysis import Analyzer, HandAnalysis, inputs_from_report
from replay.analysis.grades import READ_MIN_ESS, analysis_tables, classify
from replay.belief.weights import HEAVY_LEADS
from replay.validate import validate_paths

ROOT = Path(__file__).resolve().parent.parent
INTL = ROOT / "tests" / "data" / "examples" / "international-to-50.jsonl"
SAMPLES = 12


@pytest.fixture(scope="module")
def inputs() -> list:
    rep = validate_paths([INTL], keep_moves=True)
    got = [i for m in rep.matches for i in inputs_from_report(m) if i.skip is None]
    assert got
    return got[:2]


def _run(inputs: list, policies: dict) -> list[HandAnalysis]:
    a = Analyzer(samples=SAMPLES, seed=7, policies=policies)
    return [a.hand(i) for i in inputs]


@pytest.fixture(scope="module")
def plain(inputs: list) -> list[HandAnalysis]:
    return _run(inputs, {})


@pytest.fixture(scope="module")
def heavy(inputs: list) -> list[HandAnalysis]:
    return _run(inputs, {"partnership": ("partnership:1", HEAVY_LEADS)})


def test_without_a_model_there_is_no_read(plain: list[HandAnalysis]) -> None:
    for h in plain:
        assert h.read_model is None
        assert h.lost == h.lost_uniform and h.stake == h.stake_uniform
        for p in h.plies:
            assert p.read_loss is None and p.read_ess is None and p.cls == p.cls_uniform
            assert all(a.read is None and a.read_ci is None for a in p.alternatives)


def test_a_model_leaves_the_uniform_grade_alone(plain: list[HandAnalysis], heavy: list[HandAnalysis]) -> None:
    for a, b in zip(plain, heavy, strict=True):
        assert b.read_model == "partnership:1"
        assert a.lost_uniform == b.lost_uniform and a.stake_uniform == b.stake_uniform
        for p, q in zip(a.plies, b.plies, strict=True):
            assert [x.pimc for x in p.alternatives] == [x.pimc for x in q.alternatives]
            assert p.pimc_loss == q.pimc_loss and p.cls_uniform == q.cls_uniform and p.samples == q.samples


def test_the_read_grade_is_whole_and_consistent(heavy: list[HandAnalysis]) -> None:
    graded = 0
    for h in heavy:
        lost = [0.0] * len(h.lost)
        for p in h.plies:
            if p.pimc_loss is None:
                assert p.read_loss is None
                continue
            graded += 1
            assert p.read_loss is not None and p.read_ess is not None and p.read_ess > 0
            reads = [a.read for a in p.alternatives]
            assert all(r is not None for r in reads)
            got = [r for r in reads if r is not None]
            assert p.read_loss == pytest.approx(max(got) - got[[a.move for a in p.alternatives].index(p.played)])
            for a in p.alternatives:
                assert a.read_ci is not None and a.read is not None
                assert a.read_ci[0] - 1e-9 <= a.read <= a.read_ci[1] + 1e-9
            if p.read_ess >= READ_MIN_ESS:
                # the class asks for clear evidence: never above the mean loss's class
                order = [None, "inaccuracy", "mistake", "blunder"]
                assert order.index(p.cls) <= order.index(classify(h_rules(h), p.read_loss))
            else:
                assert p.cls is None
            lost[p.seat] += p.read_loss
        assert h.lost == pytest.approx(lost)
    assert graded > 10


def h_rules(_h: HandAnalysis):  # the example log is an international match
    from replay.rules import resolve

    return resolve("international")


class Silent:
    """A policy that says nothing about any choice (every deal weighs alike).

    "Every legal move alike" is not one: a seat with fewer legal moves was
    likelier to make the one it made, so even it weighs deals."""

    def probs(self, state, moves, public):  # noqa: ANN001, ANN201
        return None


def test_a_policy_that_says_nothing_gives_the_uniform_grade_back(inputs: list, plain: list[HandAnalysis]) -> None:
    same = _run(inputs, {"partnership": ("partnership:0", Silent())})
    for a, b in zip(plain, same, strict=True):
        for p, q in zip(a.plies, b.plies, strict=True):
            if p.pimc_loss is None:
                continue
            assert q.read_ess == pytest.approx(p.samples)  # equal weights: every deal counts
            for x, y in zip(p.alternatives, q.alternatives, strict=True):
                assert y.read == pytest.approx(x.pimc)
            assert q.cls == p.cls


def test_the_read_grade_is_deterministic(inputs: list, heavy: list[HandAnalysis]) -> None:
    again = _run(inputs, {"partnership": ("partnership:1", HEAVY_LEADS)})
    assert [h.to_json() for h in again] == [h.to_json() for h in heavy]


def test_the_json_and_the_rows_carry_the_read(heavy: list[HandAnalysis]) -> None:
    js = heavy[0].to_json()
    assert js["read_model"] == "partnership:1" and "accuracy_uniform" in js
    p = next(p for p in js["plies"] if p["read_loss"] is not None)
    assert {"read_ess", "class_uniform", "too_close"} <= set(p)
    assert all({"read", "read_ci"} <= set(a) for a in p["alternatives"])
    t = analysis_tables(heavy)
    ma = t["move_analysis"].to_pylist()
    row = next(r for r in ma if r["read_loss"] is not None)
    assert len(row["reads"]) == len(row["alternatives"]) and row["read_best"] >= row["read"]
    assert t["hand_analysis"].to_pylist()[0]["read_model"] == "partnership:1"


# -- the store: refit, read grade, stale rows -------------------------------------------


def test_a_store_refits_its_models_and_grades_by_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cli.main import main as cli_main
    from replay.analysis import refit
    from replay.analysis.run import analyze_store, read_policies, stale_matches
    from replay.store import open_store

    log, db = tmp_path / "sim.jsonl", tmp_path / "s.duckdb"
    assert cli_main(["simulate", "--hands", "30", "--seed", "5", "--bots", "signal,partner", "--out", str(log)]) == 0
    assert cli_main(["ingest", str(log), "--db", str(db), "--no-analysis"]) == 0
    monkeypatch.setattr(refit, "REFIT_MIN_HANDS", 10)
    conn = open_store(db)
    try:
        assert refit.refit_due(conn) == ["partnership"]
    finally:
        conn.close()
    s = analyze_store(db, samples=2, workers=0)
    assert s["refitted"] == ["partnership:1"] and s["read_models"] == ["partnership:1"]
    conn = open_store(db)
    try:
        assert refit.refit_due(conn) == []  # nothing new since the fit
        used = conn.execute("SELECT DISTINCT read_model FROM hand_analysis WHERE skip IS NULL").fetchall()
        assert used == [("partnership:1",)]
        n, with_read, bad = conn.execute("""
            SELECT count(*), count(read_loss),
                   count(*) FILTER (WHERE read_loss IS NOT NULL AND len(reads) <> len(alternatives))
            FROM move_analysis WHERE pimc_loss IS NOT NULL
        """).fetchone()
        assert n > 50 and with_read == n and bad == 0
        policies = read_policies(conn)
        assert stale_matches(conn, 2, False, policies) == []
        match, hand, ply = conn.execute(
            "SELECT match, hand, ply FROM move_analysis WHERE read_loss IS NOT NULL ORDER BY match, hand, ply LIMIT 1"
        ).fetchone()
    finally:
        conn.close()
    from fastapi.testclient import TestClient

    from api.app import create_app

    with TestClient(create_app(db, deepen=0)) as c:  # the page and its twin show the read grade
        a = c.get(f"/api/matches/{match}/hands/{hand}").json()["info"]["analysis"]
        assert a["read_model"] == "partnership:1" and len(a["accuracy_uniform"]) == 4
        p = next(p for p in a["plies"] if p["ply"] == ply)
        assert p["read_loss"] is not None and p["read_ess"] > 0 and "too_close" in p and "class_uniform" in p
        assert all(x["read"] is not None and x["read_ci"] is not None for x in p["alternatives"])
        html = c.get(f"/matches/{match}/hands/{hand}?ply={ply}").text
        assert ">read</th>" in html and "what a strong reader could know" in html
    conn = open_store(db)
    try:
        refit.fit_store(conn)  # a newer model: every sampled match is graded again by it
        assert len(stale_matches(conn, 2, False, read_policies(conn))) > 0
    finally:
        conn.close()


def test_where_no_play_tells_the_deals_apart_the_read_is_the_uniform_grade(inputs: list) -> None:
    """Before any other seat has made a choice (a hand's lead; only forced
    plays since), every deal weighs the same: the read is scored on the
    uniform grade's own deals, all of them counting (no second draw, no
    moved deals). At 20 deals, 1 / sum(w^2) of equal weights came out just
    under 20, and a read drew and moved 20 more deals at every lead."""
    a = Analyzer(samples=20, seed=7, policies={"partnership": ("partnership:1", HEAVY_LEADS)})
    checked = 0
    for inp in inputs:
        h = a.hand(inp)
        for k, p in enumerate(h.plies):
            told = any(not q.forced and q.seat != p.seat for q in h.plies[:k])  # another seat had a choice
            if p.pimc_loss is not None and not told and not p.exact:
                checked += 1
                assert p.read_ess == 20 and p.read_loss == pytest.approx(p.pimc_loss)
                assert [x.read for x in p.alternatives] == pytest.approx([x.pimc for x in p.alternatives])
    assert checked
