"""The principal lines kept in the store (migration 020, replay.store.lines,
api.review.LineBook): worked out on a hand's first view, read back by a
restarted server, never served from another analysis of the hand."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient

from replay.ingest import ingest
from replay.store import delete_match
from replay.store.lines import match_key, prune_lines, put_lines, stored_lines
from tests.test_analysis import INTL

MATCH = "m-example-1"
TWIN = f"/api/matches/{MATCH}/hands/1"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lines") / "data" / "replay.duckdb"
    path.parent.mkdir(parents=True)
    ingest([str(INTL)], db=path, workers=0, analysis=(0, 0))
    return path


@pytest.fixture
def db(built: Path, tmp_path: Path) -> Path:
    """A fresh copy of the store for each test (they write lines into it)."""
    to = tmp_path / "data"
    shutil.copytree(built.parent, to)
    return to / built.name


@contextlib.contextmanager
def served(db: Path) -> Iterator[TestClient]:
    from api.app import create_app

    with TestClient(create_app(db)) as c:
        yield c


def _book(c: TestClient) -> Any:
    from api.review import line_book

    return line_book(c.app.state)  # type: ignore[attr-defined]


def _rows(c: TestClient) -> list[tuple[Any, ...]]:
    """(match, hand, stamp, lines as JSON bytes) of every stored row."""
    cur = c.app.state.store.cursor()  # type: ignore[attr-defined]
    try:
        keys = cur.execute("SELECT match, hand FROM hand_lines ORDER BY ALL").fetchall()
        return [(m, h, *stored_lines(cur, m)[h]) for m, h in keys]
    finally:
        cur.close()


def _plant(c: TestClient, stamp: str, lines: dict[str, Any], hand: int = 1) -> None:
    """Store `lines` for the hand under `stamp` (as the server would have)."""
    cur = c.app.state.store.cursor()  # type: ignore[attr-defined]
    try:
        put_lines(cur, MATCH, hand, stamp, orjson.dumps(lines))
    finally:
        cur.close()


def _repack(c: TestClient) -> None:
    from replay.store.analysis_blob import repack

    cur = c.app.state.store.cursor()  # type: ignore[attr-defined]
    try:
        repack(cur, f"(SELECT '{MATCH}' AS match)")
    finally:
        cur.close()
    c.app.state.store.bump()  # type: ignore[attr-defined]


def _sql(c: TestClient, sql: str, params: list[Any] | None = None) -> None:
    cur = c.app.state.store.cursor()  # type: ignore[attr-defined]
    try:
        cur.execute(sql, params or [])
    finally:
        cur.close()
    c.app.state.store.bump()  # type: ignore[attr-defined]


def _lines(twin: dict[str, Any]) -> dict[int, Any]:
    return {r["ply"]: (r["line_played"], r["line_best"], r["why"]) for r in twin["review"] if r["line_played"]}


def test_the_first_view_stores_the_lines_and_a_restart_reads_them(db: Path) -> None:
    with served(db) as c:
        first = c.get(TWIN).json()
        book = _book(c)
        assert (book.worked, book.read, book.written) == (1, 0, 1)
        rows = _rows(c)
        assert [(m, h) for m, h, _, _ in rows] == [(MATCH, 1)]
        assert len(rows[0][2]) == 32  # a digest
        stored = {int(k): v for k, v in orjson.loads(rows[0][3]).items()}
        assert {k: (v["line_played"], v["line_best"], v["why"]) for k, v in stored.items()} == _lines(first)
        assert any(v[2] for v in _lines(first).values())
    with served(db) as c:  # a restart: read, not searched again
        again = c.get(TWIN).json()
        book = _book(c)
        assert (book.worked, book.read, book.written) == (0, 1, 0)
        assert _lines(again) == _lines(first)


def test_lines_worked_out_while_a_load_holds_the_store_are_stored_once_it_is_done(db: Path) -> None:
    """The twin does not wait for a load (or the sampling) to let go of the
    store; its hand's lines are stored by the book's writer thread after."""
    import threading
    import time

    with served(db) as c:
        load = c.app.state.store.load_lock  # type: ignore[attr-defined]
        held, done = threading.Event(), threading.Event()

        def hold() -> None:  # another thread's load: an RLock, so not this one's
            with load:
                held.set()
                done.wait(10)

        t = threading.Thread(target=hold)
        t.start()
        held.wait(10)
        try:
            first = c.get(TWIN).json()
            book = _book(c)
            assert (book.worked, book.written) == (1, 0) and book.writer is not None and _rows(c) == []
        finally:
            done.set()
            t.join()
        for _ in range(100):
            if book.writer is None:
                break
            time.sleep(0.05)
        assert book.written == 1 and not book.pending
        assert [(m, h) for m, h, _, _ in _rows(c)] == [(MATCH, 1)]
    with served(db) as c:  # a restart reads them
        assert _lines(c.get(TWIN).json()) == _lines(first)
        assert (_book(c).worked, _book(c).read) == (0, 1)


def test_what_the_store_holds_is_what_is_served(db: Path) -> None:
    """The read path is real: a row planted under the current stamp is served as is."""
    with served(db) as c:
        c.get(TWIN)
        (_, _, stamp, text), = _rows(c)
    planted = orjson.loads(text)
    ply = next(iter(planted))
    planted[ply]["why"] = ["planted"]
    with served(db) as c:
        _plant(c, stamp, planted)
        twin = c.get(TWIN).json()
        assert next(r for r in twin["review"] if r["ply"] == int(ply))["why"] == ["planted"]


def test_lines_of_another_analysis_are_not_served_but_replaced(db: Path) -> None:
    with served(db) as c:
        first = c.get(TWIN).json()
        (_, _, stamp, text), = _rows(c)
        planted = orjson.loads(text)
        for v in planted.values():
            v["why"] = ["stale"]
        _plant(c, stamp, planted)
        # the hand analysed again (its sampled deals: part of what the lines are worked out from)
        _sql(c, "UPDATE hand_analysis SET samples = samples + 1 WHERE match = ? AND hand = 1", [MATCH])
        _sql(c, "UPDATE matches SET analysis = 'analysed-again' WHERE match = ?", [MATCH])
        # as the writers of analysis rows do: the replay's copy packed again (migration 022)
        _repack(c)
        twin = c.get(TWIN).json()
        assert _lines(twin) == _lines(first)  # worked out again, not the stale row
        assert _book(c).worked == 2
        (_, _, now, _), = _rows(c)  # one row a hand, replaced
        assert now != stamp


def test_the_same_analysis_stored_again_keeps_its_lines(db: Path) -> None:
    """The stamp is what the lines are made of: a new analysis run with the
    same result (the same best moves) needs no new search."""
    with served(db) as c:
        c.get(TWIN)
    with served(db) as c:
        _sql(c, "UPDATE matches SET analysis = 'the-same-again' WHERE match = ?", [MATCH])
        c.get(TWIN)
        assert (_book(c).worked, _book(c).read) == (0, 1)


def test_a_new_line_version_works_them_out_again(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import api.review

    with served(db) as c:
        c.get(TWIN)
        (_, _, before, _), = _rows(c)
    monkeypatch.setattr(api.review, "LINE_VERSION", 999)
    with served(db) as c:
        c.get(TWIN)
        assert _book(c).worked == 1
        (_, _, stamp, _), = _rows(c)
        assert stamp != before


def test_rows_of_matches_no_longer_stored_are_pruned(db: Path) -> None:
    with served(db) as c:
        c.get(TWIN)
        c.get(f"/api/matches/{MATCH}/hands/2")
        assert len(_rows(c)) == 2
        cur = c.app.state.store.cursor()  # type: ignore[attr-defined]
        try:
            assert prune_lines(cur) == 0
            assert delete_match(cur, MATCH)
            assert prune_lines(cur) == 2
        finally:
            cur.close()
        assert _rows(c) == []


def test_training_answers_use_the_stored_lines(db: Path) -> None:
    with served(db) as c:
        twin = c.get(TWIN).json()
        ply = next(r["ply"] for r in twin["review"] if r["best"] is not None and r["line_best"])
        assert _book(c).worked == 1
    with served(db) as c:
        c.app.state.token = "t0k3n-for-the-lines"  # type: ignore[attr-defined]
        move = next(p for p in twin["info"]["analysis"]["plies"] if p["ply"] == ply)["alternatives"][0]["move"]
        seat = next(p for p in twin["info"]["analysis"]["plies"] if p["ply"] == ply)["seat"]
        player = next(s["player"] for s in c.get(f"/api/matches/{MATCH}").json()["seats"] if s["seat"] == seat)
        got = c.post("/api/train/answer", json={"match": MATCH, "hand": 1, "ply": ply, "move": move, "player": player},
                     headers={"Authorization": "Bearer t0k3n-for-the-lines"})
        assert got.status_code == 200, got.text
        assert (_book(c).worked, _book(c).read) == (0, 1)


def test_a_colliding_key_is_told_apart_by_match(db: Path) -> None:
    with served(db) as c:
        c.get(TWIN)
        (_, _, stamp, text), = _rows(c)
        # rows of another match under this one's key, as a hash collision would put them
        _sql(c, "INSERT INTO hand_lines SELECT 'm-other', hand, mkey, stamp || '~other', size, lines, computed "
                "FROM hand_lines")
        cur = c.app.state.store.cursor()  # type: ignore[attr-defined]
        try:
            assert cur.execute("SELECT count(*) FROM hand_lines WHERE mkey = ?", [match_key(MATCH)]).fetchall() == [(2,)]
            assert stored_lines(cur, MATCH) == {1: (stamp, text)}
            assert stored_lines(cur, "m-other") == {}  # its own key finds nothing
        finally:
            cur.close()


def test_a_twin_drawn_as_soon_as_its_page(db: Path) -> None:
    """While clients ask for JSON twins (one asked within TWINS_RECENT
    seconds), the twin of a graded hand's whole view is sent to be drawn as
    soon as its page is (replay serve's render pool), its lines read on a
    thread if the server does not hold them: the twin then asked for is
    that one, equal to the twin drawn on request. Before any twin is asked
    for, or for a seat's view, no twin is drawn ahead."""
    import api.hand_cache as hc
    from api.app import create_app

    base = f"/matches/{MATCH}/hands"
    with served(db) as c:  # the lines worked out and stored, the pages and twins drawn in-process
        hands = [h for h in range(1, 5) if c.get(f"{base}/{h}").status_code == 200]
        assert len(hands) == 4
        pages = [c.get(f"{base}/{h}").text for h in hands]
        want = [c.get(f"/api{base}/{h}").content for h in hands]
    with TestClient(create_app(db, render_workers=1)) as c:
        state = c.app.state  # type: ignore[attr-defined]

        def ahead(h: int) -> bool:
            key = hc.json_key(MATCH, h, None)
            return state.hand_cache.get(key) is not None or key in getattr(state, "twins_pending", {})

        assert c.get(f"{base}/1").text == pages[0] and not ahead(1)  # no twin asked yet: the page alone
        assert c.get(f"/api{base}/1").content == want[0]
        assert c.get(f"{base}/2").text == pages[1] and ahead(2)
        assert c.get(f"/api{base}/2").content == want[1]
        assert c.get(f"{base}/3?view=seat1").status_code == 200 and not ahead(3)
        assert c.get(f"/api{base}/3").content == want[2]
        state.line_book.matches.clear()  # the lines not held: read on a thread, ahead of the request
        state.line_book.memory.clear()
        assert c.get(f"{base}/4").text == pages[3] and ahead(4)
        assert c.get(f"/api{base}/4").content == want[3]
        state.twins_asked -= hc.TWINS_RECENT  # no twin asked for a while: pages alone again
        state.hand_cache.data.clear()
        assert c.get(f"{base}/2").text == pages[1] and not ahead(2)
