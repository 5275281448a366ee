"""The server's background grading on several processes (api.deepen): a
round spreads its matches over them, and what it stores is the same as
what one process stores."""

from __future__ import annotations

import time
from pathlib import Path

import duckdb
import pytest
from fastapi.testclient import TestClient

from replay.ingest import ingest
from replay.simulate import SimConfig, simulate
from replay.solver import native

pytestmark = pytest.mark.skipif(native is None, reason="the server grades only with the C solver")

_ROWS = "SELECT match, hand, ply, samples, alternatives, pimc_loss, class FROM move_analysis ORDER BY match, hand, ply"


def _store(tmp: Path, name: str, log: Path) -> Path:
    db = tmp / name / "replay.duckdb"
    db.parent.mkdir()
    ingest([str(log)], db=db, workers=0, analysis=(0, 0))  # perfect information only
    return db


def _deepen(db: Path, workers: int) -> tuple[int, list[tuple[object, ...]]]:
    """Grade the store with 3 deals a decision in `workers` processes; the
    processes the round ran in, and the stored rows."""
    from api.app import create_app

    with TestClient(create_app(db, deepen=3, deepen_workers=workers)) as c:
        deepener = c.app.state.deepener  # type: ignore[attr-defined]
        deadline = time.monotonic() + 240
        while deepener.done == 0 and time.monotonic() < deadline:
            time.sleep(0.2)
        processes = len(getattr(deepener.pool, "_processes", None) or {})
        while time.monotonic() < deadline:
            left = c.get("/api/suspicious").json()["grading"]["left"]
            if left == 0:
                break
            time.sleep(0.5)
        assert c.get("/api/suspicious").json()["grading"]["left"] == 0, "the background grading did not finish"
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(_ROWS).fetchall()
    finally:
        con.close()
    return processes, rows


def test_two_processes_grade_as_one_does(tmp_path: Path) -> None:
    log = tmp_path / "tables.jsonl"
    lines = simulate(SimConfig(profiles=("milo",), hands=30, seed=31, players_pool=8, tables=3))
    log.write_bytes(b"\n".join(lines) + b"\n")
    one, rows_one = _deepen(_store(tmp_path, "one", log), 1)
    two, rows_two = _deepen(_store(tmp_path, "two", log), 2)
    assert one == 1 and two == 2
    assert len({r[0] for r in rows_two}) > 2  # several matches: a round had work for both processes
    assert rows_one and rows_one == rows_two


def test_the_newest_matches_are_graded_first(tmp_path: Path) -> None:
    """A backlog of older matches does not keep a new upload waiting: the
    first round takes the match stored last."""
    from concurrent.futures import ThreadPoolExecutor

    from api.connection import Store
    from api.deepen import Deepener

    db = tmp_path / "s" / "replay.duckdb"
    db.parent.mkdir()
    for seed, name in ((41, "old"), (42, "new")):  # the seeds name the matches
        log = tmp_path / f"{name}.jsonl"
        log.write_bytes(b"\n".join(simulate(SimConfig(profiles=("milo",), hands=6, seed=seed, tables=2))) + b"\n")
        ingest([str(log)], db=db, workers=0, analysis=(0, 0))
    con = duckdb.connect(str(db), read_only=True)
    try:
        newest = {m for (m,) in con.execute("SELECT match FROM matches WHERE match LIKE 'm-42-%'").fetchall()}
        assert newest and con.execute("SELECT count(*) FROM matches").fetchone()[0] > len(newest)  # type: ignore[index]
    finally:
        con.close()
    store = Store(db, None)
    deepener = Deepener(store, 3, matches=1, workers=1)
    deepener.pool = ThreadPoolExecutor(1)  # type: ignore[assignment]
    try:
        assert deepener._round()
        assert len(deepener.batch) == 1 and deepener.batch[0] in newest
    finally:
        deepener.pool.shutdown()
        store.conn.close()


def _oldest(db: Path) -> str:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return str(con.execute("SELECT match FROM matches ORDER BY mno LIMIT 1").fetchone()[0])  # type: ignore[index]
    finally:
        con.close()


def _backlog(tmp_path: Path, seed: int) -> tuple[Path, str]:
    """A store of 12 milo hands on 3 tables graded under perfect information
    only, and its match stored first (the last of the grader's order)."""
    db = tmp_path / "s" / "replay.duckdb"
    db.parent.mkdir()
    log = tmp_path / "backlog.jsonl"
    log.write_bytes(b"\n".join(simulate(SimConfig(profiles=("milo",), hands=12, seed=seed, tables=3))) + b"\n")
    ingest([str(log)], db=db, workers=0, analysis=(0, 0))
    return db, _oldest(db)


def _round_with_news(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, upload: Path | None,
                     want: bool = False) -> tuple[Path, set[str]]:  # fmt: skip
    """A backlog of milo matches and one background round of four of them,
    in threads one at a time (the analysis keeps one Analyzer a process);
    while its first match is graded, `upload` is stored (if any) and the
    grader told, as the upload route does, or (`want`) the match stored
    first is asked for, as its page does. The store, and the round's
    matches."""
    from concurrent.futures import ThreadPoolExecutor

    import api.deepen
    from api.connection import Store
    from api.deepen import Deepener

    db = tmp_path / "s" / "replay.duckdb"
    db.parent.mkdir()
    backlog = tmp_path / "backlog.jsonl"
    backlog.write_bytes(b"\n".join(simulate(SimConfig(profiles=("milo",), hands=40, seed=43, tables=4))) + b"\n")
    ingest([str(backlog)], db=db, workers=0, analysis=(0, 0))
    store = Store(db, None)
    deepener = Deepener(store, 3, matches=4, workers=1)
    deepener.round = 2  # a round of four matches
    real = api.deepen.analyse_match
    told: list[bool] = []

    def news_meanwhile(*args: object) -> object:
        if not told:
            told.append(True)
            if upload is not None:
                ingest([str(upload)], db=db, workers=0, analysis=(0, 0))
            if want:
                cur = store.cursor()
                deepener.want(cur.execute("SELECT match FROM matches ORDER BY mno LIMIT 1").fetchone()[0])  # type: ignore[index]
                cur.close()
            else:
                deepener.take_new()
            deadline = time.monotonic() + 30
            while deepener.news.is_set() and time.monotonic() < deadline:  # until the round has seen it
                time.sleep(0.01)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(api.deepen, "analyse_match", news_meanwhile)
    deepener.pool = deepener.express = ThreadPoolExecutor(1)  # type: ignore[assignment]
    try:
        assert deepener._round()
        return db, set(deepener.batch)
    finally:
        deepener.pool.shutdown()
        store.conn.close()


def _sampled(db: Path, samples: int) -> set[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {m for (m,) in con.execute("SELECT DISTINCT match FROM hand_analysis WHERE samples = ?", [samples]).fetchall()}
    finally:
        con.close()


def test_new_matches_are_graded_at_once_and_stop_the_round_from_starting_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upload while a round grades a backlog: the backlog's matches begun
    finish and are stored, those not begun wait for a later round, and the
    new match is graded at once beside them (on a process of its own)."""
    upload = tmp_path / "upload.jsonl"
    upload.write_bytes(b"\n".join(simulate(SimConfig(profiles=("milo",), hands=6, seed=44))) + b"\n")
    db, _ = _round_with_news(tmp_path, monkeypatch, upload)
    sampled = _sampled(db, 3)
    new = {m for m in _sampled(db, 3) | _sampled(db, 0) if m.startswith("m-44-")}
    assert new and new <= sampled and len(sampled - new) == 1  # the upload's matches, and the one begun
    assert len(_sampled(db, 0)) >= 2  # the backlog's others wait for the next round


def test_new_matches_wake_an_idle_grader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With nothing left to grade the thread waits (a minute here), but an
    upload wakes it at once; closing it does too."""
    from api.connection import Store
    from api.deepen import Deepener

    db = tmp_path / "s" / "replay.duckdb"
    db.parent.mkdir()
    log = tmp_path / "one.jsonl"
    log.write_bytes(b"\n".join(simulate(SimConfig(profiles=("milo",), hands=2, seed=45))) + b"\n")
    ingest([str(log)], db=db, workers=0, analysis=(0, 0))
    store = Store(db, None)
    deepener = Deepener(store, 3, workers=1, idle=60.0)
    rounds: list[float] = []
    monkeypatch.setattr(deepener, "_round", lambda: rounds.append(time.monotonic()) and False)

    def wait_for(n: int) -> None:
        deadline = time.monotonic() + 10
        while len(rounds) < n and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(rounds) == n

    try:
        deepener.start()
        wait_for(1)
        deepener.take_new()
        wait_for(2)  # woken, not after the minute
        began = time.monotonic()
        deepener.close()
        assert not deepener.is_alive() and time.monotonic() - began < 5
    finally:
        store.conn.close()


def test_news_without_new_matches_leaves_the_round_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A spool batch that brings no match to grade (an analysis batch, say)
    does not cut the round short."""
    db, batch = _round_with_news(tmp_path, monkeypatch, None)
    assert len(batch) >= 3 and _sampled(db, 3) == batch


def test_a_match_asked_for_is_graded_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Someone opens a match of the backlog's tail while a round grades its
    head: the match begun finishes, the one asked for is graded beside it,
    the round's others wait, and the ask is forgotten once it is stored."""
    import api.deepen

    asked: list[object] = []
    real = api.deepen.Deepener._graded

    def graded(self: api.deepen.Deepener, match: str | None) -> None:
        asked.append((match, self.asked(match or "")))
        real(self, match)

    monkeypatch.setattr(api.deepen.Deepener, "_graded", graded)
    db, batch = _round_with_news(tmp_path, monkeypatch, None, want=True)
    oldest = _oldest(db)
    sampled = _sampled(db, 3)
    assert oldest in sampled and oldest in batch
    assert len(sampled) == 2 and len(_sampled(db, 0)) >= 2  # it, and the match begun; the others wait
    states = dict(asked)  # while it was stored it was being graded, with a prediction
    assert states[oldest]["state"] == "grading" and states[oldest]["predicted"] > 0  # type: ignore[index]


def test_an_idle_grader_takes_a_match_asked_for_first(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from api.connection import Store
    from api.deepen import WANTED, Deepener

    db, oldest = _backlog(tmp_path, 46)
    store = Store(db, None)
    deepener = Deepener(store, 3, matches=1, workers=1)
    deepener.pool = ThreadPoolExecutor(1)  # type: ignore[assignment]
    try:
        deepener.want(oldest)
        assert deepener.asked(oldest) == {"state": "next"} and deepener.news.is_set()
        assert deepener._round()
        assert deepener.batch == [oldest]
        sql = "SELECT DISTINCT match FROM hand_analysis WHERE samples = 3"
        assert [m for (m,) in store.cursor().execute(sql).fetchall()] == [oldest]
        assert deepener.asked(oldest) is None  # graded: forgotten
        for k in range(WANTED + 3):  # a crawler: the oldest asks are dropped
            deepener.want(f"m-{k}")
        assert len(deepener.wanted) == WANTED and "m-0" not in deepener.wanted
        assert deepener._asked([]) == [] and not deepener.wanted  # none of them lacks the grade
    finally:
        deepener.pool.shutdown()
        store.conn.close()


def test_the_match_json_says_it_is_being_graded_until_it_is(tmp_path: Path) -> None:
    """Through the app: a match opened without its sampled grade is asked for,
    says so, and has every hand graded within the test's time."""
    from api.app import create_app

    db, oldest = _backlog(tmp_path, 47)
    with TestClient(create_app(db)) as c:  # no background grading here
        g = c.get(f"/api/matches/{oldest}").json()["match_grading"]
        assert g["state"] == "off" and g["sampled_hands"] == 0 < g["hands"]
    with TestClient(create_app(db, deepen=3, deepen_workers=1)) as c:
        g = c.get(f"/api/matches/{oldest}").json()["match_grading"]
        assert g["state"] in ("next", "grading"), g
        html = c.get(f"/matches/{oldest}").text
        assert "before the rest of the store" in html and 'src="/static/match.js"' in html
        deadline = time.monotonic() + 120
        while g["state"] != "done" and time.monotonic() < deadline:
            time.sleep(0.3)
            g = c.get(f"/api/matches/{oldest}").json()["match_grading"]
        assert g["state"] == "done" and g["sampled_hands"] == g["hands"] > 0
        assert "before the rest of the store" not in c.get(f"/matches/{oldest}").text


def test_a_hand_page_drawn_without_its_sampled_grade_asks_for_its_match(tmp_path: Path) -> None:
    from api.app import create_app
    from tests.test_waiting_pages import FakeGrader

    db = tmp_path / "s" / "replay.duckdb"
    db.parent.mkdir()
    log = tmp_path / "one.jsonl"
    log.write_bytes(b"\n".join(simulate(SimConfig(profiles=("milo",), hands=3, seed=49))) + b"\n")
    ingest([str(log)], db=db, workers=0, analysis=(0, 0))
    match = _oldest(db)
    app = create_app(db)
    with TestClient(app) as c:
        grader = app.state.deepener = FakeGrader(None)  # type: ignore[attr-defined]
        assert c.get(f"/matches/{match}/hands/1").status_code == 200
        assert grader.wanted == [match]
    sampled = tmp_path / "sampled" / "replay.duckdb"
    sampled.parent.mkdir()
    ingest([str(log)], db=sampled, workers=0, analysis=(3, 0))
    app = create_app(sampled)
    with TestClient(app) as c:
        grader = app.state.deepener = FakeGrader(None)  # type: ignore[attr-defined]
        assert c.get(f"/matches/{match}/hands/1").status_code == 200
        assert grader.wanted == []  # graded already: nothing asked
