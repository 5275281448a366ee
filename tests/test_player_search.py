"""Finding a player as people type: any part of a name or id, case and accents
aside, on every list that filters by player; a player's matches as that player
saw them (won or lost, beside whom); the grades in the moves' downloads."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from reports.search import contains, fold, players_matching
from tests.test_api import SAMPLES, build_store


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    base = tmp_path_factory.mktemp("search")
    db = build_store(base / "data", [SAMPLES])
    with TestClient(create_app(db)) as c:
        yield c


def _ids(query: str) -> set[str]:
    conn = duckdb.connect()
    conn.execute("CREATE TABLE players (player VARCHAR, name VARCHAR)")
    conn.executemany("INSERT INTO players VALUES (?, ?)", [
        ("p-1", "Ana"), ("p-10", "Bob"), ("x", "Martín Díaz"), ("y", "ZOÉ"), ("z", "50%_off"), ("w", None)])
    sql, params = players_matching(query)
    return {r[0] for r in conn.execute(sql, params).fetchall()}


def test_players_matching_an_exact_id_or_any_part() -> None:
    assert _ids("p-1") == {"p-1"}  # an exact id is that player alone, not p-10 too
    assert _ids("p-") == {"p-1", "p-10"}
    assert _ids("martin") == _ids("MARTÍN") == _ids("diaz") == {"x"}
    assert _ids("zoe") == _ids("Zoé") == {"y"}
    assert _ids("%") == _ids("0%_") == {"z"}  # typed as typed: no wildcard
    assert _ids("_") == {"z"}
    assert _ids("nobody") == set()
    assert contains("A_b") == "%a\\_b%"


def test_matches_filter_finds_a_player_by_part_of_the_name(client: TestClient) -> None:
    players = client.get("/api/players", params={"q": "zoe"}).json()["players"]
    assert players and all("zoe" in fold(p["name"]) for p in players)
    for url in ("/api/matches", "/api/hands", "/api/moves"):
        by_part = client.get(url, params={"player": "martin"}).json()["total"]
        assert by_part > 0, url
        assert client.get(url, params={"player": "MARTÍN"}).json()["total"] == by_part, url
    window = client.get("/api/fairness", params={"player": "martin"}).json()["window"]
    assert window["hands"] > 0
    assert client.get("/api/fairness", params={"player": "MARTÍN"}).json()["window"]["hands"] == window["hands"]
    rows = client.get("/api/matches", params={"player": "martin", "per_page": 500}).json()["matches"]
    assert rows and all("martin" in fold(r["player_name"]) for r in rows)
    page = client.get("/matches", params={"player": "martin"}).text
    assert "no matches" not in page and "Outcome" in page
    assert "Outcome" not in client.get("/matches").text  # the player's columns with the filter only


def test_a_players_matches_say_won_or_lost_for_that_player(client: TestClient) -> None:
    report = client.get("/api/players/p-00005").json()
    rows = client.get("/api/matches", params={"player": "p-00005", "per_page": 500}).json()["matches"]
    assert {r["player"] for r in rows} == {"p-00005"}
    outcomes = Counter(r["outcome"] for r in rows)
    assert outcomes["won"] == report["match_wins"] and outcomes["lost"] == report["match_losses"]
    for r in rows:
        if r["outcome"] in ("won", "lost") and r["players"] == 4 and r["partner"]:
            side = r["seat"] % 2
            assert (r["winner"] == side) == (r["outcome"] == "won"), r
    pairs = [r for r in rows if r["partner"]]
    assert pairs and all(r["partner"] != "p-00005" and r["partner_name"] for r in pairs)
    text = client.get("/api/matches.csv", params={"player": "p-00005"}).text
    header = next(csv.reader(io.StringIO(text)))
    assert header[-6:] == ["player", "player_name", "seat", "outcome", "partner", "partner_name"]


def test_moves_carry_their_grades(tmp_path: Path) -> None:
    from replay.analysis.run import analyze_store

    db = build_store(tmp_path / "data", [SAMPLES / "international-lead-to-partner.jsonl"])
    with TestClient(create_app(db)) as c:
        before = c.get("/api/moves", params={"per_page": 5}).json()["moves"]
        assert before and all(m["value"] is None and m["class"] is None and m["graded"] is None for m in before)
    analyze_store(db, samples=0, workers=0)
    with TestClient(create_app(db)) as c:
        match = c.get("/api/matches").json()["matches"][0]["match"]
        moves = c.get("/api/moves", params={"match": match, "per_page": 5000}).json()["moves"]
        worst = c.get(f"/api/matches/{match}").json()["costliest"][0]
        text = c.get("/api/moves.csv", params={"match": match}).text
    plays = [m for m in moves if m["kind"] == "play"]
    assert plays and all(m["value"] is not None and m["graded"] == "perfect information" for m in plays)
    assert all(m["best"] in m["legal_moves"] for m in plays if m["legal_moves"])
    assert all(m["lost"] >= 0 and (m["class"] is None or m["lost"] > 0) for m in plays)
    graded = next(m for m in moves if (m["hand"], m["ply"]) == (worst["hand"], worst["ply"]))
    assert graded["lost"] == worst["loss"] and graded["class"] == worst["class"]
    assert graded["best"] == worst["best"].replace(" ", ":")
    assert {m["class"] for m in plays} - {None} <= {"inaccuracy", "mistake", "blunder"}
    assert any(m["class"] for m in plays)
    header = next(csv.reader(io.StringIO(text)))
    assert header[-5:] == ["value", "best", "lost", "class", "graded"]
