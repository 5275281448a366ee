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


def _round_with_news(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, upload: Path | None) -> tuple[Path, set[str]]:
    """A backlog of milo matches and one background round of four of them,
    in threads one at a time (the analysis keeps one Analyzer a process);
    while its first match is graded, `upload` is stored (if any) and the
    grader told, as the upload route does. The store, and the round's
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
