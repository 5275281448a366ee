"""bench/insights.py's per player-run figures: the omniscience index against the
uniform belief beside the read grade's, on the same decisions (issue 30, docs/insights.md)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import duckdb
import pytest

from replay.analysis.grades import Alternative, Ply, hindsight

ROOT = Path(__file__).resolve().parents[1]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_insights", ROOT / "bench" / "insights.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _uniform_y(alts: tuple[Alternative, ...], played: str) -> float:
    """Y_UNIFORM worked out by DuckDB on one move_analysis-shaped row."""
    conn = duckdb.connect()
    conn.execute("CREATE TABLE ma (dd INTEGER, pimc DOUBLE, alternatives "
                 "STRUCT(move VARCHAR, dd INTEGER, pimc DOUBLE, pimc_lo DOUBLE, pimc_hi DOUBLE)[])")  # fmt: skip
    mine = next(a for a in alts if a.move == played)
    rows = [{"move": a.move, "dd": a.dd, "pimc": a.pimc, "pimc_lo": None, "pimc_hi": None} for a in alts]
    conn.execute("INSERT INTO ma VALUES (?, ?, ?)", [mine.dd, mine.pimc, rows])
    got = conn.execute(f"SELECT {_bench().Y_UNIFORM} FROM ma").fetchone()
    assert got is not None
    return float(got[0])


def test_uniform_hindsight_is_the_sampled_grades() -> None:
    alts = (Alternative("a", 10, 2.0), Alternative("b", -10, 4.0), Alternative("c", 4, -1.0))
    ply = Ply(1, 0, "c", False, alts, 6, 5.0, None)  # no read grade: hindsight is on pimc
    assert _uniform_y(alts, "c") == pytest.approx(hindsight(ply))
    assert hindsight(ply) == pytest.approx((4 - 4 / 3) - (-1.0 - 5 / 3))


def test_uniform_hindsight_ignores_the_read() -> None:
    # read grade present: the index's hindsight follows read, the uniform one pimc
    alts = (Alternative("a", 10, 2.0, None, 6.0), Alternative("b", -10, 4.0, None, -6.0))
    ply = Ply(1, 0, "a", False, alts, 0, 2.0, None, read_loss=0.0)
    assert hindsight(ply) == pytest.approx(10 - 6)
    assert _uniform_y(alts, "a") == pytest.approx(10 - (-1.0))


def test_player_run_line_reports_each_index() -> None:
    b = _bench()
    # a reader the read grade explains: hindsight about 0 a hand, +3 against the uniform belief
    rows = [(4, (-1.0) ** k * 30.0, 4, (-1.0) ** (k // 2) * 20.0, 3.0 + (-1.0) ** k * 30.0) for k in range(400)]
    moments = b._moments(rows)
    assert [m[0] for m in moments] == [400, 400, 400]
    assert moments[0][1] == pytest.approx(0.0) and moments[2][1] == pytest.approx(3.0)
    t_read, t_peek, t_uniform = b._final_t(rows)
    assert t_read is not None and t_uniform is not None and t_peek is not None
    assert abs(t_read) < 0.5 < 1.9 < t_uniform
    run = {"seed": 208, "looks": {"p-00002": b._looks(rows)}, "final_t": {"p-00002": b._final_t(rows)},
           "moments": {"p-00002": moments}}  # fmt: skip
    line = b.player_run_line(run, "p-00002", "reader")
    assert "400 hands" in line and "omniscience uniform t 2.00" in line
    assert "+3.00 (sd 30.0) a hand" in line and "first flagged: omniscience never" in line
    # at +3 a hand (sd 30) the uniform index flags by 5,000 hands nearly surely; the read one at its 1e-4 alpha
    assert b._projected(3.0, 30.1, b.PROJECT_HANDS, allowance=0.0) > 0.99
    assert b._projected(0.0, 30.0, b.PROJECT_HANDS, allowance=0.0) < 1e-3
    # the flags ask for more than the allowance: +1 a hand is then the null's edge
    assert b._projected(3.0, 30.1, b.PROJECT_HANDS) < b._projected(3.0, 30.1, b.PROJECT_HANDS, allowance=0.0)
    assert b._projected(1.0, 30.0, b.PROJECT_HANDS, allowance=1.0) == pytest.approx(1e-4, rel=1e-6)
    # looking every 10 hands flags more often than one look, and at the null about the alpha times the looks at most
    assert b._projected(0.5, 20.0, 5_000, allowance=0.0) < b._projected_looks(0.5, 20.0, 5_000, allowance=0.0)
    assert b._projected_looks(0.0, 20.0, 5_000, allowance=0.0) < 499 * 1e-4


def test_read_gap_doctests() -> None:
    # bench/read_gap.py (the diagnosis' harness): its belief policy and its paired figures
    import doctest

    spec = importlib.util.spec_from_file_location("bench_read_gap", ROOT / "bench" / "read_gap.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    got = doctest.testmod(mod)
    assert got.attempted >= 3 and got.failed == 0


def test_a_run_audited_for_some_styles_only_counts_their_peeking() -> None:
    # --audit-styles reader: the signallers' peeking index is not measured, so it
    # neither counts as an audited player-run nor adds hands to the signal style's drift
    b = _bench()
    graded = [(4, 1.0, 4, 0.5, 2.0)] * 30
    unaudited = [(4, 1.0, 0, 0.0, 2.0)] * 30
    rows = {"p-00001": unaudited, "p-00002": graded, "p-00003": unaudited, "p-00004": graded}
    run = {"seed": 308, "cheat": None, "style": b._player_styles(308, None),
           "looks": {p: b._looks(r) for p, r in rows.items()},
           "final_t": {p: b._final_t(r) for p, r in rows.items()},
           "moments": {p: b._moments(r) for p, r in rows.items()}, "audited": ["p-00002", "p-00004"]}  # fmt: skip
    d = b.summary([run])
    assert d["honest"]["player_runs"] == 4 and d["honest"]["alarms"]["peeking_measured"] == 2
    assert "peek" not in d["drift"]["signal"] and d["drift"]["signal"]["omni"]["hands"] == 60
    assert d["drift"]["reader"]["peek"]["hands"] == 60
    assert d["drift"]["reader"]["peek"]["runs"] == 2 and d["drift"]["reader"]["peek"]["runs_p"] is not None
    # a cheater's table mates are left out of the styles' drifts (the play model misreads the cheater)
    beside = dict(run, seed=301, cheat="peeker", style=b._player_styles(301, "peeker"))
    d = b.summary([run, beside])
    assert set(d["drift"]) == {"signal", "reader"} and d["drift"]["reader"]["peek"]["hands"] == 60
    assert d["honest"]["player_runs"] == 7
    assert [p for p, s in run["style"].items() if s == "reader"] == ["p-00002", "p-00004"]
