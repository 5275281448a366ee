"""`replay ingest` adds the sampled grade itself when it is cheap enough
(replay.ingest.run.AUTO_BUDGET), and otherwise leaves it to the server."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import duckdb
import orjson
import pytest

import cli.ingest
from cli.main import main as replay_main
from replay.accel import native
from replay.analysis.grades import resolve_options
from replay.analysis.run import SAMPLED_HAND_SECONDS, analyze_store, sampled_seconds, stale_matches
from replay.ingest import AUTO_SAMPLES
from replay.simulate import SimConfig, SimStats, simulate
from tests.test_ingest import hold

EXAMPLE = Path(__file__).parent / "data" / "examples" / "international-to-50.jsonl"

needs_solver = pytest.mark.skipif(native is None, reason="the C solver is not built (replay.accel.native)")


def run(*args: str) -> tuple[int, str]:
    """`replay ARGS` in this process: (exit code, stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = replay_main(list(args))
    return code, err.getvalue()


def graded(db: Path) -> list[tuple[int, int]]:
    """(samples, hands) of the stored analysis."""
    with duckdb.connect(str(db), read_only=True) as conn:
        got = conn.execute("SELECT samples, count(*) FROM hand_analysis WHERE skip IS NULL GROUP BY samples").fetchall()
    return sorted(got)


@needs_solver
def test_a_small_ingest_is_stored_with_its_sampled_grade(tmp_path: Path) -> None:
    db = tmp_path / "r.duckdb"
    code, err = run("ingest", str(EXAMPLE), "--db", str(db), "--workers", "0")
    assert code == 0
    (samples, hands), = graded(db)
    assert samples == AUTO_SAMPLES and hands > 0
    assert f"sampled grade ({AUTO_SAMPLES} deals a decision): {hands} hands graded in" in err
    # the server's background grading finds nothing left to do
    with duckdb.connect(str(db), read_only=True) as conn:
        assert stale_matches(conn, AUTO_SAMPLES, False, {}) == []
    # ingesting the same file again grades nothing again
    code, err = run("ingest", str(EXAMPLE), "--db", str(db), "--workers", "0")
    assert code == 0 and "nothing lacks it" in err


@needs_solver
def test_an_ingest_over_the_budget_leaves_the_sampled_grade_to_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli.ingest, "AUTO_BUDGET", 1.0)
    db = tmp_path / "r.duckdb"
    code, err = run("ingest", str(EXAMPLE), "--db", str(db), "--workers", "0")
    assert code == 0
    (samples, hands), = graded(db)
    assert samples == 0  # the perfect-information grade only
    assert f"{hands} hands lack it, about" in err and "CPU-seconds (over the 1 graded here)" in err
    assert "replay analyze --db --samples 20" in err


@needs_solver
def test_asked_samples_or_none_skip_the_automatic_grade(tmp_path: Path) -> None:
    db = tmp_path / "a" / "r.duckdb"
    code, err = run("ingest", str(EXAMPLE), "--db", str(db), "--workers", "0", "--analysis-samples", "0")
    assert code == 0 and "sampled grade" not in err
    assert [s for s, _ in graded(db)] == [0]
    db = tmp_path / "b" / "r.duckdb"
    code, err = run("ingest", str(EXAMPLE), "--db", str(db), "--workers", "0", "--quiet")
    assert code == 0 and err == ""  # quiet: graded, and nothing said
    assert [s for s, _ in graded(db)] == [AUTO_SAMPLES]


def test_the_budget_is_predicted_from_the_rules(tmp_path: Path) -> None:
    """Four players each for himself cost about ten times a pair game's hand;
    a family with a play model pays the read grade too; the budget is
    checked before anything is graded."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for seed, profile in enumerate(("international", "royal_rumble"), 5):  # seeds name the matches
        lines = simulate(SimConfig(profiles=(profile,), hands=6, seed=seed), SimStats())
        (logs / f"{profile}.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    db = tmp_path / "r.duckdb"
    code, _ = run("ingest", str(logs), "--db", str(db), "--workers", "0", "--no-analysis", "--quiet")
    assert code == 0
    with duckdb.connect(str(db)) as conn:
        stale = stale_matches(conn, 20, False, {})
        per = {"pairs": 0, "individual": 0}
        for rules, n in conn.execute(
            "SELECT m.rules, count(*) FROM hands h JOIN matches m USING (match) WHERE h.result IS NOT NULL GROUP BY ALL"
        ).fetchall():
            per[resolve_options(orjson.loads(rules)).teams] += n
        assert per["pairs"] > 0 and per["individual"] > 0
        hands, seconds = sampled_seconds(conn, stale, 20, {})
        assert hands == per["pairs"] + per["individual"]
        assert seconds == pytest.approx(per["pairs"] * SAMPLED_HAND_SECONDS[0] + per["individual"] * SAMPLED_HAND_SECONDS[1])
        assert sampled_seconds(conn, stale, 40, {})[1] == pytest.approx(2 * seconds)
        read = {"partnership": ("partnership:1", None)}  # only the family's name weighs
        with_read = sampled_seconds(conn, stale, 20, read)[1]  # type: ignore[arg-type]
        assert with_read == pytest.approx(seconds + per["pairs"] * SAMPLED_HAND_SECONDS[0])
    s = analyze_store(db, samples=20, budget=seconds - 1)
    assert s["deferred"] == {"hands": hands, "seconds": pytest.approx(seconds)} and s["analysed"] == 0
    with duckdb.connect(str(db), read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM hand_analysis").fetchone() == (0,)



@needs_solver
def test_a_held_store_is_left_to_the_server(tmp_path: Path) -> None:
    """A running server holds the store: the batches go to its spool, and
    ingest says that its background grading adds the sampled grade."""
    db = tmp_path / "data" / "r.duckdb"
    server = hold(db)
    try:
        code, err = run("ingest", str(EXAMPLE), "--db", str(db), "--workers", "0")
    finally:
        server.communicate("")
    assert code == 0 and "is open in another process" in err
    assert "sampled grade (20 deals a decision): the server that holds the store grades the new hands" in err
