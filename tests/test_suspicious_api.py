"""The player-insight pages and their JSON twins over a simulated store with a
planted cheater: the suspicious-play list and a player's case (CSV and
Parquet too), the audit's write endpoint (token, 404, 409), the player
page's luck and skill section and the pair page's play-together section;
names from logs escaped."""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from replay.ingest import ingest
from replay.simulate import SimConfig, simulate, write_lines

EVIL = "<script>alert(1)</script>"  # p-00005's name (replay.simulate.NAMES)
TOKEN = "t0ken"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("suspicious")
    log = base / "run.jsonl"
    cfg = SimConfig(profiles=("international",), hands=40, seed=12, players_pool=5, seat_change_rate=0.0,
                    cheaters=(("p-00001", "omniscient"),))  # fmt: skip
    write_lines(simulate(cfg), log)
    path = base / "data" / "replay.duckdb"
    ingest([log], db=path, workers=0, analysis=(6, 0))
    return path


@pytest.fixture(scope="module")
def client(db: Path) -> Iterator[TestClient]:
    app = create_app(db, token=TOKEN)
    with TestClient(app) as c:
        app.state.audit_workers = 0  # grade in the server's thread: no process pool in the tests
        yield c


def _j(client: TestClient, url: str) -> dict[str, object]:
    r = client.get(url)
    assert r.status_code == 200, (url, r.text[:300])
    got = r.json()
    assert isinstance(got, dict)
    return got


def test_suspicious_list_and_downloads(client: TestClient) -> None:
    data = _j(client, "/api/suspicious")
    rows = data["rows"]
    assert isinstance(rows, list) and rows[0]["player"] == "p-00001" and rows[0]["flagged"]
    assert data["flagged"] == 1 and data["players"] == len(rows) == 5
    html = client.get("/suspicious").text
    assert 'aria-current="page">Suspicious play' in html and 'id="suspicious"' in html
    assert "flagged" in html and EVIL not in html and "&lt;script&gt;" in html
    got = list(csv.DictReader(io.StringIO(client.get("/api/suspicious.csv").text)))
    assert [r["player"] for r in got] == [r["player"] for r in rows]
    assert got[0]["omniscience_flagged"] == "true" and float(got[0]["omniscience_index"]) > 0
    table = pq.read_table(io.BytesIO(client.get("/api/suspicious.parquet").content))
    assert table.num_rows == 5 and "omniscience_p" in table.column_names
    few = _j(client, "/api/suspicious?min_hands=100000")
    assert few["rows"] == []
    assert client.get("/suspicious?min_hands=lots").status_code == 422
    assert client.get("/api/suspicious?min_hands=-1").status_code == 422


def test_a_players_case(client: TestClient) -> None:
    case = _j(client, "/api/suspicious/player?player=p-00001")
    assert case["omniscience"]["flagged"] and case["peeking"] is None and case["audit"] is None
    ev = case["evidence"]
    assert isinstance(ev, list) and ev and all(e["dd"] == e["dd_best"] for e in ev)
    html = client.get("/suspicious/player?player=p-00001").text
    first = ev[0]
    assert f"/matches/{first['match']}/hands/{first['hand']}?ply={first['ply']}" in html  # links to the replay
    assert 'id="audit"' in html and "audit.js" in html
    rows = list(csv.DictReader(io.StringIO(client.get("/api/suspicious/evidence.csv?player=p-00001").text)))
    assert len(rows) == len(ev) and rows[0]["match"] == first["match"]
    assert client.get("/suspicious/player?player=nobody").status_code == 404
    assert client.get("/api/suspicious/player?player=nobody").status_code == 404


def test_audit_needs_the_token_and_runs_once(client: TestClient) -> None:
    url = "/api/suspicious/audit?player=p-00002&hands=8&samples=3"
    assert client.post(url).status_code == 401
    assert client.post(url, headers={"Authorization": "Bearer nope"}).status_code == 401
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert client.post("/api/suspicious/audit?player=nobody", headers=auth).status_code == 404
    assert client.post("/api/suspicious/audit?player=p-00002&hands=0", headers=auth).status_code == 422
    r = client.post(url, headers=auth)
    assert r.status_code == 202 and r.json()["state"] == "running"
    again = client.post("/api/suspicious/audit?player=p-00003", headers=auth)
    assert again.status_code in (202, 409)  # 409 while the first runs (it may be done already)
    for _ in range(300):
        case = _j(client, "/api/suspicious/player?player=p-00002")
        audit = case["audit"]
        if isinstance(audit, dict) and audit["state"] != "running":
            break
        time.sleep(0.1)
    assert isinstance(audit, dict) and audit["state"] == "done", audit
    assert isinstance(case["peeking"], dict) and case["peeking"]["hands"] == 8
    listed = {r["player"]: r for r in _j(client, "/api/suspicious")["rows"]}  # type: ignore[union-attr]
    assert listed["p-00002"]["peeking"]["decisions"] == case["peeking"]["decisions"]


def test_player_page_has_luck_and_skill(client: TestClient) -> None:
    rep = _j(client, "/api/players/p-00003")
    sk = rep["skill"]
    assert isinstance(sk, dict) and sk["hands"] > 0 and len(sk["phases"]) == 4
    assert sk["line"]["points"][-1] == sk["points"] and "percentiles" in sk
    html = client.get("/players/p-00003").text
    for needle in ('id="skill"', "skillsvg luck", "skillsvg phase", "skillsvg months", "Against the pool"):
        assert needle in html
    filtered = _j(client, "/api/players/p-00003?profile=nope")
    assert filtered["skill"]["hands"] == 0 and filtered["skill"]["filters"] == {"profile": "nope"}
    assert EVIL not in client.get("/players/p-00005").text


def test_the_luck_and_skill_section_downloads(client: TestClient) -> None:
    sk = _j(client, "/api/players/p-00003")["skill"]
    assert isinstance(sk, dict)
    for part, want in (("phases", sk["phases"]), ("profiles", sk["profiles"]), ("months", sk["months"]),
                       ("line", [dict(zip(("match", "day", "hands", "points"), x, strict=True)) for x in zip(
                           sk["line"]["matches"], sk["line"]["days"], sk["line"]["hands"], sk["line"]["points"],
                           strict=True)]),
                       ("percentiles", [{"profile": k, **v} for k, v in sk["percentiles"].items()])):  # fmt: skip
        got = list(csv.DictReader(io.StringIO(client.get(f"/api/skill/{part}.csv?player=p-00003").text)))
        assert len(got) == len(want) > 0, part
        first = next(iter(got[0]))
        assert [g[first] for g in got] == [str(w[first]) for w in want], part
        table = pq.read_table(io.BytesIO(client.get(f"/api/skill/{part}.parquet?player=p-00003").content))
        assert table.num_rows == len(want)
    assert [float(r["points"]) for r in csv.DictReader(io.StringIO(
        client.get("/api/skill/line.csv?player=p-00003").text))][-1] == sk["points"]  # fmt: skip
    # the page's filters apply, as on the page
    none = list(csv.DictReader(io.StringIO(client.get("/api/skill/phases.csv?player=p-00003&profile=nope").text)))
    assert [int(r["decisions"]) for r in none] == [0, 0, 0, 0]
    html = client.get("/players/p-00003?profile=international").text
    assert "/api/skill/months.csv?player=p-00003&amp;profile=international" in html
    assert client.get("/api/skill/phases.csv?player=nobody").status_code == 404
    assert client.get("/api/skill/everything.csv?player=p-00003").status_code == 422


def test_pair_page_has_play_together(client: TestClient) -> None:
    partners = _j(client, "/api/players/p-00003")["partners"]
    assert isinstance(partners, list) and partners
    a, b = "p-00003", partners[0]["partner"]
    pair = _j(client, f"/api/pair?a={a}&b={b}")
    sk = pair["skill"]
    assert isinstance(sk, dict) and sk["combined"]["decisions"] > 0 and len(sk["support"]) == 2
    html = client.get(f"/pair?a={a}&b={b}").text
    assert "Play together" in html and "Supports the partner" in html


def test_downloads_follow_the_export_scheme(client: TestClient) -> None:
    r = client.get("/api/leaderboard.parquet?bots=true")
    assert r.status_code == 200 and r.headers["content-type"] == "application/vnd.apache.parquet"
    assert pq.read_table(io.BytesIO(r.content)).num_rows > 0
    assert client.get("/api/leaderboard.xlsx").status_code == 422


def test_the_background_sampling_feeds_the_omniscience_index(tmp_path: Path) -> None:
    """Ingest grades under perfect information only: no omniscience index yet,
    the page says why; the server's background sampling (api.deepen) adds the
    sampled grade and refreshes the insights, and the index appears."""
    log = tmp_path / "run.jsonl"
    write_lines(simulate(SimConfig(profiles=("international",), hands=6, seed=3, players_pool=4,
                                   seat_change_rate=0.0)), log)  # fmt: skip
    path = tmp_path / "data" / "replay.duckdb"
    ingest([log], db=path, workers=0, analysis=(0, 0))
    with TestClient(create_app(path)) as c:
        before = _j(c, "/api/suspicious")
        assert before["graded"]["sampled"] == 0 < before["graded"]["decisions"]  # type: ignore[index]
        assert all(r["omniscience"]["decisions"] == 0 for r in before["rows"])  # type: ignore[union-attr]
        assert "not computed yet" in c.get("/suspicious").text
    with TestClient(create_app(path, deepen=3)) as c:
        for _ in range(600):
            got = _j(c, "/api/suspicious")
            if got["graded"]["sampled"] == got["graded"]["decisions"]:  # type: ignore[index]
                break
            time.sleep(0.2)
        assert got["graded"]["sampled"] == got["graded"]["decisions"] > 0  # type: ignore[index]
        assert all(r["omniscience"]["decisions"] > 0 for r in got["rows"])  # type: ignore[union-attr]
        assert "not computed yet" not in c.get("/suspicious").text
