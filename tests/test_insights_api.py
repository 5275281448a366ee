"""The ratings pages and their JSON twins over the sample-log store: the
leaderboard (filters, sort, CSV), the pair page, rating history and
calibration, and the player page's rating section; names escaped."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.insights import CHART_POINTS, rating_svg
from tests.test_api import SAMPLES, build_store, open_hand_log

EVIL = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    base = tmp_path_factory.mktemp("insights")
    db = build_store(base / "data", [SAMPLES, open_hand_log(base)])
    with TestClient(create_app(db)) as c:
        yield c


def _j(client: TestClient, url: str) -> object:
    r = client.get(url)
    assert r.status_code == 200, (url, r.text[:300])
    return r.json()


def test_leaderboard_page_and_twin(client: TestClient) -> None:
    data = _j(client, "/api/leaderboard?per_page=1000")
    assert isinstance(data, dict) and data["total"] == len(data["rows"]) > 5
    assert [r["place"] for r in data["rows"]] == list(range(1, len(data["rows"]) + 1)) or all(
        a["rating"] >= b["rating"] for a, b in zip(data["rows"], data["rows"][1:], strict=False))
    assert not any(r["bot"] for r in data["rows"])
    html = client.get("/leaderboard").text
    assert 'aria-current="page">Ratings' in html and 'id="leaderboard"' in html
    assert data["rows"][0]["player"] in html
    assert EVIL not in html  # names from logs are escaped
    found = client.get("/leaderboard?q=script&bots=true").text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in found and EVIL not in found
    assert "How well do the ratings predict?" in html
    with_bots = _j(client, "/api/leaderboard?bots=true&per_page=1000")
    assert isinstance(with_bots, dict) and with_bots["total"] > data["total"]
    assert any(r["bot"] for r in with_bots["rows"])


def test_leaderboard_sort_filter_and_csv(client: TestClient) -> None:
    data = _j(client, "/api/leaderboard?sort=matches&order=asc&per_page=1000")
    assert isinstance(data, dict)
    counts = [r["matches"] for r in data["rows"]]
    assert counts == sorted(counts)
    pools = _j(client, "/api/leaderboard?kind=pairs&per_page=1000")
    assert isinstance(pools, dict) and pools["rows"] and all(r["partner"] for r in pools["rows"])
    profile = pools["rows"][0]
    one = _j(client, "/api/leaderboard?pool=international&per_page=1000")
    assert isinstance(one, dict) and all(r["pool"] == "international" for r in one["rows"])
    page = client.get("/leaderboard?kind=pairs&sort=win_rate&order=asc&pool=international&min_matches=&q=&bots=true")
    assert page.status_code == 200 and 'aria-sort="ascending"' in page.text
    assert f"/pair?a={profile['player']}" in page.text.replace("&amp;", "&")
    r = client.get("/api/leaderboard.csv?sort=matches&order=asc")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    assert "attachment" in r.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(r.text)))
    assert [int(x["matches"]) for x in rows] == counts
    assert rows[0]["player"] == data["rows"][0]["player"] and "partner" not in rows[0]
    pairs_csv = list(csv.DictReader(io.StringIO(client.get("/api/leaderboard.csv?kind=pairs").text)))
    assert len(pairs_csv) == pools["total"] and pairs_csv[0]["partner"]


@pytest.mark.parametrize("url", [
    "/api/leaderboard?sort=nope", "/api/leaderboard?kind=trios", "/api/leaderboard?order=up",
    "/api/leaderboard?min_matches=-1", "/api/leaderboard?page=0", "/api/ratings/calibration?holdout=1.5",
    "/api/ratings/history", "/api/pair?a=x",
])
def test_bad_parameters(client: TestClient, url: str) -> None:
    assert client.get(url).status_code == 422


def test_bad_page_parameters_get_a_page(client: TestClient) -> None:
    r = client.get("/leaderboard?min_matches=lots")
    assert r.status_code == 422 and "min_matches" in r.text and "<html" in r.text


def test_pair_page_and_twin(client: TestClient) -> None:
    board = _j(client, "/api/leaderboard?kind=pairs&bots=true&per_page=1")
    assert isinstance(board, dict)
    top = board["rows"][0]
    a, b = top["player"], top["partner"]
    r = _j(client, f"/api/pair?a={b}&b={a}")
    assert isinstance(r, dict)
    assert [p["player"] for p in r["players"]] == sorted([a, b])
    assert r["standings"][0]["rating"] == top["rating"] and r["rated"]["matches"] == top["matches"]
    assert len(r["history"]) == top["matches"] and r["together"]["hands"] >= top["hands"]
    html = client.get(f"/pair?a={a}&b={b}").text
    assert "Rating history" in html and "ratingsvg" in html and "Opponents" in html
    assert EVIL not in html
    rows = list(csv.DictReader(io.StringIO(client.get(f"/api/pair/matches.csv?a={a}&b={b}").text)))
    assert len(rows) == top["matches"] and {"match", "outcome", "opponent"} <= set(rows[0])
    assert client.get(f"/pair?a={a}&b={a}").status_code == 404
    # ids from logs in a download's name: plain ASCII only
    got = client.get("/api/ratings/history.csv?player=%C4%80%22x")
    assert got.status_code == 200 and 'filename="ratings-_x.csv"' in got.headers["content-disposition"]
    assert client.get("/api/pair?a=nobody&b=else").status_code == 404
    assert client.get("/api/pair/matches.csv?a=nobody&b=else").status_code == 404


def test_history_and_the_player_page(client: TestClient) -> None:
    board = _j(client, "/api/leaderboard?per_page=1")
    assert isinstance(board, dict)
    top = board["rows"][0]
    hist = _j(client, f"/api/ratings/history?player={top['player']}")
    assert isinstance(hist, list) and len(hist) == top["matches"]
    assert hist[-1]["rating"] == pytest.approx(top["rating"], abs=0.01)
    assert [h["pos"] for h in hist] == sorted(h["pos"] for h in hist)
    rows = list(csv.DictReader(io.StringIO(client.get(f"/api/ratings/history.csv?player={top['player']}").text)))
    assert len(rows) == len(hist) and rows[-1]["match"] == hist[-1]["match"]
    rep = _j(client, f"/api/players/{top['player']}")
    assert isinstance(rep, dict) and rep["ratings"]["standings"][0]["pool"] == "*"
    assert rep["ratings"]["standings"][0]["rating"] == top["rating"]
    html = client.get(f"/players/{top['player']}").text
    assert 'id="ratings"' in html and "ratingsvg" in html and "/leaderboard" in html
    # a player with no rated match: the section says so
    open_player = client.get("/players/p-%3Ci%3Ex%3C%2Fi%3E")
    assert open_player.status_code == 200 and "Not rated yet" in open_player.text
    assert _j(client, "/api/ratings/history?player=nobody") == []


def test_calibration_twin(client: TestClient) -> None:
    cal = _j(client, "/api/ratings/calibration?holdout=0.5")
    assert isinstance(cal, dict) and cal["holdout"] == 0.5 and cal["matches"] > 0
    g = cal["groups"]["all"]
    assert g["matches"] == cal["held_out"]
    assert {"ratings_log_loss", "uniform_log_loss", "base_rate_brier"} <= set(g)


def test_rating_chart() -> None:
    assert "no rated match" in rating_svg([])
    rows = [{"ended": f"2026-11-{1 + i // 100:02d}T00:00:00Z", "match": f"m-{i}<b>", "outcome": "win",
             "rating_before": i * 0.1, "rating": i * 0.1 + 0.1, "mu": 25.0} for i in range(1000)]
    svg = rating_svg(rows)
    assert svg.count(",") // 2 <= 2 * (CHART_POINTS + 1) + 4 and "1000 matches" in svg
    small = rating_svg(rows[:5])
    assert small.count("<circle") == 5 and "m-0&lt;b&gt;" in small and "<b>" not in small
