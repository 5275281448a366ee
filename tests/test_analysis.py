"""The hand analysis end to end: the command's JSON contract, grades and
accuracy, determinism, the store (ingest, analyze --db, a server's spool),
the replay page and its JSON twin, and nothing shown of a hand still on."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import orjson
import pytest
from fastapi.testclient import TestClient

from replay.analysis import (
    ANALYSIS_VERSION,
    Analyzer,
    accuracy,
    classify,
    inputs_from_report,
)
from replay.analysis.run import analyze_paths, analyze_store, to_json
from replay.ingest import ingest
from replay.rules import resolve
from replay.validate import validate_paths
from tests.test_api import EXAMPLE_2P, open_hand_log

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "tests" / "data" / "examples"
INTL = EXAMPLES / "international-to-50.jsonl"
MOVE = re.compile(r"^(?:[0-6]{2} (?:left|right)|pass|draw|yield)$")


@pytest.fixture(scope="module")
def examples_json() -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "replay", "analyze", str(EXAMPLES), "--json", "--samples", "12", "--workers", "0"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout)


def test_the_json_contract(examples_json: dict) -> None:
    d = examples_json
    assert sorted(m["match"] for m in d["matches"]) == ["m-example-1", "m-example-2"]  # in the logs' order
    for m in d["matches"]:
        assert m["hands"]
        for h in m["hands"]:
            assert isinstance(h["hand"], int)
            assert isinstance(h["par"], int)
            for p in h["plies"]:
                assert set(p) >= {"ply", "seat", "played", "forced", "alternatives", "dd_loss", "pimc_loss", "class"}
                assert MOVE.match(p["played"])
                assert p["played"] in [a["move"] for a in p["alternatives"]]
                assert p["forced"] == (len(p["alternatives"]) == 1)
                best = max(a["dd"] for a in p["alternatives"])
                mine = next(a["dd"] for a in p["alternatives"] if a["move"] == p["played"])
                assert p["dd_loss"] == best - mine >= 0
                for a in p["alternatives"]:
                    assert MOVE.match(a["move"]) and isinstance(a["dd"], int)
                    if p["forced"]:
                        assert a["pimc"] is None and a["pimc_ci"] is None
                    else:
                        assert isinstance(a["pimc"], float)
                        lo, hi = a["pimc_ci"]
                        assert lo <= a["pimc"] + 1e-9 and a["pimc"] <= hi + 1e-9
                assert p["class"] in (None, "inaccuracy", "mistake", "blunder")
                if p["forced"]:
                    assert p["class"] is None and p["dd_loss"] == 0


def test_par_is_the_first_decisions_best_value_and_the_result_what_was_scored(examples_json: dict) -> None:
    report = {m.match: m for m in validate_paths([EXAMPLES]).matches}
    for m in examples_json["matches"]:
        rules = resolve(report[m["match"]].profile or "international")
        hands = {h.hand: h for h in report[m["match"]].hands}
        for h in m["hands"]:
            first = h["plies"][0]
            assert h["par"] == max(a["dd"] for a in first["alternatives"])
            seat = h["first_seat"]
            side = rules.side_of(seat)
            pts = hands[h["hand"]].points
            assert h["result"] == sum(p if k == side else -p for k, p in enumerate(pts))
            # the last move's value is the result (nothing is left to choose after it)
            last = h["plies"][-1]
            played = next(a["dd"] for a in last["alternatives"] if a["move"] == last["played"])
            assert played == h["result_by_seat"][last["seat"]]


def test_same_seed_same_grades_in_one_process_or_two() -> None:
    one = to_json(analyze_paths([INTL], samples=10, seed=4, workers=0), 10, 4)
    two = to_json(analyze_paths([INTL], samples=10, seed=4, workers=2), 10, 4)
    assert one == two
    other = to_json(analyze_paths([INTL], samples=10, seed=5, workers=0), 10, 5)
    assert other != one  # the seed decides the sampled deals


def test_the_pure_python_path_gives_the_same_analysis() -> None:
    """REPLAY_PURE=1: the Python solver (replay.solver.PySolver) in place of the C one."""
    import os

    def run(env: dict[str, str]) -> dict:
        out = subprocess.run(
            [sys.executable, "-m", "replay", "analyze", str(EXAMPLE_2P), "--json", "--samples", "3", "--workers", "0"],
            capture_output=True, text=True, check=True, env={**os.environ, **env},
        )  # fmt: skip
        return json.loads(out.stdout)

    assert run({"REPLAY_PURE": "1"}) == run({})


def test_exact_values_do_not_depend_on_sampling() -> None:
    a = to_json(analyze_paths([INTL], samples=0, workers=0), 0, 0)
    b = to_json(analyze_paths([INTL], samples=8, seed=1, workers=0), 8, 1)
    dd = lambda d: [[[(x["move"], x["dd"]) for x in p["alternatives"]] for p in h["plies"]]  # noqa: E731
                    for m in d["matches"] for h in m["hands"]]  # fmt: skip
    assert dd(a) == dd(b)
    # without sampling, the class and accuracy follow perfect information
    for m in a["matches"]:
        for h in m["hands"]:
            for p in h["plies"]:
                assert p["pimc_loss"] is None
                assert p["class"] == classify(resolve("international"), p["dd_loss"]) if not p["forced"] else True
            assert h["accuracy"] == h["accuracy_dd"]


def test_accuracy_worked_example() -> None:
    # docs/analysis.md: three decisions with moves worth (+12, -8, -28), (+3, -7) and
    # (+5, +5); the seat played -8, +3, +5: it lost 20 of 40 at stake, 0 of 10, 0 of 0
    assert accuracy(20.0 + 0.0 + 0.0, 40.0 + 10.0 + 0.0) == pytest.approx(60.0)
    assert classify(resolve("international"), 4.9) is None
    assert classify(resolve("international"), 5) == "inaccuracy"
    assert classify(resolve("international"), 20) == "blunder"


def test_an_invalid_hand_says_why(tmp_path: Path) -> None:
    # the example with one play moved to the wrong seat: that hand has an illegal move
    lines = [orjson.loads(x) for x in INTL.read_bytes().splitlines()]
    plays = [e for e in lines if e["type"] == "play" and e["hand"] == 1]
    plays[3]["seat"] = (plays[3]["seat"] + 1) % 4
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\n".join(orjson.dumps(e) for e in lines) + b"\n")
    (rep,) = validate_paths([bad], keep_moves=True).matches
    got = {a.hand: a for a in (Analyzer(samples=0).hand(i) for i in inputs_from_report(rep))}
    assert got[1].skip == "the hand has an illegal move" and not got[1].plies
    assert all(a.skip is None and a.plies for k, a in got.items() if k != 1)
    # and the command names it
    out = subprocess.run([sys.executable, "-m", "replay", "analyze", str(bad), "--samples", "0", "--workers", "0"],
                         capture_output=True, text=True)  # fmt: skip
    assert out.returncode == 0
    assert "hand 1: not analysed: the hand has an illegal move" in out.stdout


def test_no_hand_found_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    out = subprocess.run([sys.executable, "-m", "replay", "analyze", str(tmp_path), "--workers", "0"],
                         capture_output=True, text=True)  # fmt: skip
    assert out.returncode == 1 and "no hand" in out.stderr
    out = subprocess.run([sys.executable, "-m", "replay", "analyze", "--samples", "-1", str(INTL)],
                         capture_output=True, text=True)  # fmt: skip
    assert out.returncode == 2


# -- the store ---------------------------------------------------------------------------


def _counts(db: Path) -> tuple[int, int, int]:
    with duckdb.connect(str(db), read_only=True) as c:
        row = c.execute(
            "SELECT (SELECT count(*) FROM hand_analysis), (SELECT count(*) FROM move_analysis), "
            "(SELECT count(*) FROM hands WHERE result IS NOT NULL)"
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2])


@pytest.fixture(scope="module")
def analysed_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("analysis")
    db = base / "data" / "replay.duckdb"
    db.parent.mkdir(parents=True)
    ingest([str(INTL), str(open_hand_log(base))], db=db, workers=2, analysis=(6, 0))
    return db


def test_ingest_analyses_every_finished_hand(analysed_store: Path) -> None:
    hands, plies, finished = _counts(analysed_store)
    assert hands == finished > 0 and plies > hands
    with duckdb.connect(str(analysed_store), read_only=True) as c:
        assert c.execute("SELECT DISTINCT version FROM hand_analysis").fetchall() == [(ANALYSIS_VERSION,)]
        # one row per ply of each analysed hand
        assert c.execute(
            "SELECT count(*) FROM hands h JOIN hand_analysis a USING (match, hand) WHERE a.skip IS NULL "
            "AND h.plies <> (SELECT count(*) FROM move_analysis m WHERE m.match = h.match AND m.hand = h.hand)"
        ).fetchone() == (0,)
        # the unfinished hand of the open match has none
        assert c.execute(
            "SELECT count(*) FROM hand_analysis a JOIN hands h USING (match, hand) WHERE h.result IS NULL"
        ).fetchone() == (0,)
        assert c.execute("SELECT count(*) FROM matches WHERE analysis IS NULL AND verdict <> 'unreadable'").fetchone() == (0,)


def test_analyze_db_is_idempotent_and_redoes_old_versions(analysed_store: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(analysed_store.parent, data)
    db = data / "replay.duckdb"
    before = _counts(db)
    s = analyze_store(db, samples=6, workers=0)
    assert s["matches"] == 0  # nothing missing: nothing done
    assert _counts(db) == before
    # more samples asked: redone; a version from older code: redone
    s = analyze_store(db, samples=8, workers=0)
    assert s["analysed"] == before[0]
    with duckdb.connect(str(db)) as c:
        c.execute("UPDATE hand_analysis SET version = version - 1 WHERE hand = 1")
        stale = c.execute("SELECT count(DISTINCT match) FROM hand_analysis WHERE hand = 1").fetchone()
    s = analyze_store(db, samples=8, workers=0)
    assert stale is not None and s["matches"] == stale[0]
    assert _counts(db) == before
    with duckdb.connect(str(db), read_only=True) as c:
        assert c.execute("SELECT min(samples), min(version) FROM hand_analysis WHERE skip IS NULL").fetchone() == (
            8, ANALYSIS_VERSION)


def test_a_store_without_analysis_gets_it_from_analyze_db(tmp_path: Path) -> None:
    db = tmp_path / "data" / "replay.duckdb"
    db.parent.mkdir()
    ingest([str(EXAMPLE_2P)], db=db, workers=0)
    assert _counts(db)[0] == 0
    out = subprocess.run([sys.executable, "-m", "replay", "analyze", "--db", str(db), "--samples", "4", "--workers", "0"],
                         capture_output=True, text=True)  # fmt: skip
    assert out.returncode == 0, out.stderr
    hands, _, finished = _counts(db)
    assert hands == finished


def test_a_held_store_gets_the_rows_through_its_spool(tmp_path: Path) -> None:
    from replay.store import layout, load_spool, open_store, pending_batches
    from tests.test_ingest import hold

    db = tmp_path / "data" / "replay.duckdb"
    db.parent.mkdir()
    ingest([str(EXAMPLE_2P)], db=db, workers=0)
    server = hold(db)  # another process owns the store
    try:
        s = analyze_store(db, samples=0, workers=0)
    finally:
        server.communicate("")
    assert s["pending"] and s["analysed"] > 0
    lay = layout(db)
    assert len(pending_batches(lay.spool)) == 1
    owner = open_store(db)  # what the server does on its timer
    try:
        load_spool(owner, lay.spool)
        got = owner.execute("SELECT count(*) FROM hand_analysis").fetchone()
        fin = owner.execute("SELECT count(*) FROM hands WHERE result IS NOT NULL").fetchone()
        assert got == fin and got is not None and got[0] > 0
        assert owner.execute("SELECT count(*) FROM matches WHERE analysis IS NULL").fetchone() == (0,)
    finally:
        owner.close()
    _numbered_in_order(db)


def _numbered_in_order(db: Path) -> None:
    """Every analysis row carries its match's number (migration 021: the
    replay reads a match's rows by it), and a match's rows lie together in
    the table, in the order of the numbers within each write."""
    with duckdb.connect(str(db), read_only=True) as c:
        for t in ("hand_analysis", "move_analysis"):
            assert c.execute(f"SELECT count(*) FROM {t} a JOIN matches m USING (match) "
                             "WHERE a.mno IS DISTINCT FROM m.mno").fetchone() == (0,), t  # fmt: skip
            assert c.execute(f"SELECT count(*) FROM {t} a WHERE a.mno IS NULL").fetchone() == (0,), t
            runs = c.execute(f"SELECT mno FROM {t} ORDER BY rowid").fetchall()
            starts = [r for k, r in enumerate(runs) if k == 0 or runs[k - 1] != r]
            assert starts and len(starts) == len(set(starts)), t  # each match's rows in one run


def test_analysis_rows_carry_their_matchs_number(analysed_store: Path, tmp_path: Path) -> None:
    """At ingest, from `replay analyze --db` (its rows replace the old ones),
    and from a batch a held store loads from its spool."""
    _numbered_in_order(analysed_store)
    data = tmp_path / "data"
    shutil.copytree(analysed_store.parent, data)
    db = data / "replay.duckdb"
    analyze_store(db, samples=8, workers=0)
    _numbered_in_order(db)


def test_migration_021_numbers_and_orders_the_analysis_rows(analysed_store: Path, tmp_path: Path) -> None:
    """A store analysed before 021 (no numbers, rows in any order): opened,
    its rows get their matches' numbers and lie in their order, and each
    match reads the same analysis as before."""
    from api.queries import match_analysis
    from replay.store import open_store

    data = tmp_path / "data"
    shutil.copytree(analysed_store.parent, data)
    db = data / "replay.duckdb"
    with duckdb.connect(str(db)) as c:
        ids = [m for (m,) in c.execute("SELECT match FROM matches ORDER BY match").fetchall()]
        before = {m: match_analysis(c.cursor(), m) for m in ids}
        for t in ("hand_analysis", "move_analysis"):
            c.execute(f"CREATE TEMP TABLE _x AS SELECT * EXCLUDE (mno) FROM {t} ORDER BY hash(match, hand) DESC")
            c.execute(f"ALTER TABLE {t} DROP COLUMN mno")
            c.execute(f"DELETE FROM {t}")
            c.execute(f"INSERT INTO {t} SELECT * FROM _x")
            c.execute("DROP TABLE _x")
        c.execute("DELETE FROM schema_version WHERE version = 21")
    c = open_store(db)
    try:
        assert c.execute("SELECT count(*) FROM schema_version WHERE version = 21").fetchone() == (1,)
        got = {m: match_analysis(c.cursor(), m, n) for m, n in c.execute("SELECT match, mno FROM matches").fetchall()}
    finally:
        c.close()
    assert got == before and sum(len(a) for a in got.values()) > 5
    _numbered_in_order(db)


# -- pages ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client(analysed_store: Path):  # type: ignore[no-untyped-def]
    from api.app import create_app

    with TestClient(create_app(analysed_store)) as c:
        yield c


def test_the_replay_shows_every_alternative_and_the_json_twin_carries_them(client: TestClient) -> None:
    d = client.get("/api/matches/m-example-1/hands/1").json()
    a = d["info"]["analysis"]
    assert a["plies"] and a["par"] is not None
    graded = next(p for p in a["plies"] if not p["forced"])
    page = client.get(f"/matches/m-example-1/hands/1?ply={graded['ply']}").text
    assert "vgraph" in page and "what the seat could know" in page
    from api.analysis_view import shown_move

    for alt in graded["alternatives"]:
        assert shown_move(alt["move"]) in page  # tiles as the pages name them: [6|0] left
    # the match page: each seat's accuracy; its JSON twin the same numbers
    m = client.get("/api/matches/m-example-1").json()
    assert len(m["accuracy"]) == 4 and all("accuracy" in r for r in m["accuracy"])
    html = client.get("/matches/m-example-1").text
    assert 'id="accuracy"' in html


def test_the_match_lists_its_costliest_moves(client: TestClient) -> None:
    m = client.get("/api/matches/m-example-1").json()
    costly = m["costliest"]
    assert 0 < len(costly) <= 10
    # every graded move of every hand, from the hands' own JSON: the list is their top losses
    every = []
    for h in m["hands"]:
        a = client.get(f"/api/matches/m-example-1/hands/{h['hand']}").json()["info"]["analysis"]
        for p in a["plies"] if a else []:
            loss = p["pimc_loss"] if p["pimc_loss"] is not None else p["dd_loss"]
            if not p["forced"] and loss > 0:
                every.append((h["hand"], p["ply"], round(loss, 2), p))
    want = sorted(every, key=lambda x: (-x[2], x[0], x[1]))[: len(costly)]
    assert [(c["hand"], c["ply"], c["loss"]) for c in costly] == [(h, k, lo) for h, k, lo, _ in want]
    for c, (*_, p) in zip(costly, want, strict=True):
        assert c["played"] == p["played"] != c["best"]
        best = max(p["alternatives"], key=lambda a: a["pimc"] if a["pimc"] is not None else a["dd"])
        value = "pimc" if p["pimc_loss"] is not None else "dd"
        assert next(a for a in p["alternatives"] if a["move"] == c["best"])[value] == best[value]
        assert c["seat"] == p["seat"] and c["player"]
    html = client.get("/matches/m-example-1").text
    first = costly[0]
    assert 'id="costliest"' in html and f"/matches/m-example-1/hands/{first['hand']}?ply={first['ply']}" in html


def test_nothing_of_a_hand_still_on_leaks(client: TestClient) -> None:
    d = client.get("/api/matches/m-example-2/hands/2").json()
    assert d["info"]["finished"] is False
    assert d["info"]["analysis"] is None
    assert d["review"] == [] and all("review" not in p for p in d["plies"])
    for view in ("", "?view=seat0", "?view=seat1"):
        body = client.get(f"/api/matches/m-example-2/hands/2{view}").text
        assert "ghosts_" not in body and "line_played" not in body
        page = client.get(f"/matches/m-example-2/hands/2{view}").text
        assert "vgraph" not in page and "what the seat could know" not in page
        # no best move drawn, no line to fetch, no toggle to show the hands
        assert 'class="ghost"' not in page and 'class="bestring"' not in page
        assert "data-json" not in page and 'id="mover-only"' not in page


def test_the_server_adds_the_sampled_grade_in_the_background(tmp_path: Path) -> None:
    import time as _time

    from api.app import create_app

    db = tmp_path / "data" / "replay.duckdb"
    db.parent.mkdir()
    ingest([str(INTL)], db=db, workers=0, analysis=(0, 0))  # perfect information only
    note = "graded under perfect information only for now"
    with TestClient(create_app(db, deepen=0)) as c:
        acc = c.get("/api/matches/m-example-1").json()["accuracy"]
        assert acc and all(a["sampled_hands"] == 0 < a["hands"] for a in acc)
        assert note in c.get("/matches/m-example-1").text
    with TestClient(create_app(db, deepen=3)) as c:
        first = c.get("/api/matches/m-example-1/hands/1").json()["info"]["analysis"]
        assert first["samples"] in (0, 3)
        deepener = c.app.state.deepener  # type: ignore[attr-defined]
        played = sum(1 for h in c.get("/api/matches/m-example-1").json()["hands"] if h["result"] in ("domino", "block"))
        deadline = _time.monotonic() + 120
        while deepener.done < played and _time.monotonic() < deadline:
            _time.sleep(0.2)
        assert deepener.done == played > 0, "the background sampling did not finish"
        a = c.get("/api/matches/m-example-1/hands/1").json()["info"]["analysis"]
        assert a["samples"] == 3
        graded = [p for p in a["plies"] if not p["forced"]]
        assert graded and all(p["pimc_loss"] is not None for p in graded)
        page = c.get("/matches/m-example-1/hands/1").text
        assert "not sampled yet" not in page
        acc = c.get("/api/matches/m-example-1").json()["accuracy"]
        assert all(a["sampled_hands"] == a["hands"] > 0 for a in acc)
        assert note not in c.get("/matches/m-example-1").text


def test_the_background_sampling_goes_on_after_a_failed_round(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time as _time

    import api.deepen
    from api.app import create_app

    db = tmp_path / "data" / "replay.duckdb"
    db.parent.mkdir()
    ingest([str(INTL)], db=db, workers=0, analysis=(0, 0))
    real = api.deepen.replace_analysis
    calls = []

    def flaky(conn, tables, stamp):  # type: ignore[no-untyped-def]
        calls.append(stamp)
        if len(calls) == 1:
            raise RuntimeError("the disk is full")
        return real(conn, tables, stamp)

    monkeypatch.setattr(api.deepen, "replace_analysis", flaky)
    with TestClient(create_app(db, deepen=3)) as c:
        deepener = c.app.state.deepener  # type: ignore[attr-defined]
        deepener.idle = 0.1
        played = sum(1 for h in c.get("/api/matches/m-example-1").json()["hands"] if h["result"] in ("domino", "block"))
        deadline = _time.monotonic() + 120
        while deepener.done < played and _time.monotonic() < deadline:
            _time.sleep(0.2)
        assert deepener.is_alive() and deepener.done == played > 0
        assert len(calls) >= 2 and deepener.failures["m-example-1"] == 1
        assert c.get("/api/matches/m-example-1/hands/1").json()["info"]["analysis"]["samples"] == 3


def test_without_the_c_solver_ingest_leaves_the_analysis_to_analyze(tmp_path: Path) -> None:
    import os

    db = tmp_path / "data" / "replay.duckdb"
    out = subprocess.run(
        [sys.executable, "-m", "replay", "ingest", str(INTL), "--db", str(db), "--quiet", "--workers", "0"],
        capture_output=True, text=True, env={**os.environ, "REPLAY_PURE": "1"},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "the C solver is not compiled here" in out.stderr
    assert _counts(db)[0] == 0 < _counts(db)[2]
