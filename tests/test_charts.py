"""The fairness page's charts (QQ plot, tile x seat heat map) and a player's
report narrowed by profile, days and partner, with its running points."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from urllib.parse import quote

import numpy as np
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.charts import cumulative_svg, heat_svg, qq_svg
from reports.battery import DealWindow, audit, player_luck
from reports.charts import fairness_charts, qq, tile_seat
from tests.test_api import SAMPLES, build_store, open_hand_log


def _decks(n: int, rng: np.random.Generator, favour: int | None = None) -> np.ndarray:
    decks = np.array([rng.permutation(28) for _ in range(n)], dtype=np.int8)
    if favour is not None:  # a broken shuffle: tile `favour` always goes to seat 0
        for d in decks:
            at = int(np.flatnonzero(d == favour)[0])
            if at >= 7:
                d[at], d[3] = d[3], d[at]
    return decks


def test_tile_seat_cells_are_standardized_counts() -> None:
    rng = np.random.default_rng(7)
    window = DealWindow.from_decks(_decks(400, rng))
    t = tile_seat(window.groups[0])
    assert t["columns"] == ["seat0", "seat1", "seat2", "seat3"] and len(t["tiles"]) == 28
    obs = np.array(t["observed"])
    assert (obs.sum(axis=1) == 400).all() and (obs.sum(axis=0) == 400 * 7).all()
    assert t["expected"] == [100.0] * 4
    p = 0.25
    want = (obs[5, 2] - 100) / math.sqrt(400 * p * (1 - p))
    assert t["z"][5][2] == pytest.approx(want, abs=1e-3)
    z = np.array(t["z"])
    assert abs(z.mean()) < 0.2 and 0.7 < z.std() < 1.3  # about N(0, 1) under fair deals
    # a favoured tile stands out in its cell
    bad = tile_seat(DealWindow.from_decks(_decks(400, rng, favour=27)).groups[0])
    assert bad["tiles"][27] == "66" and bad["z"][27][0] > 15 and bad["observed"][27][0] == 400
    svg = heat_svg(bad)
    assert svg.count("<rect") == 28 * 4 and "[6|6] at seat0: 400 dealt, 100 expected, z = +" in svg
    assert 'fill="#b42318"' in svg  # full red at |z| >= 4


def test_qq_points_and_band() -> None:
    rng = np.random.default_rng(3)
    ps = rng.uniform(size=50)
    got = qq([(f"t{i}", float(p)) for i, p in enumerate(ps)])
    assert got["n"] == 50
    pts = got["points"]
    assert [pt["p"] for pt in pts] == sorted(float(p) for p in ps)
    assert [pt["expected"] for pt in pts] == [round((k + 0.5) / 50, 6) for k in range(50)]
    assert all(pt["band"][0] < pt["expected"] < pt["band"][1] for pt in pts)
    inside = sum(pt["band"][0] <= pt["p"] <= pt["band"][1] for pt in pts)
    assert inside >= 45  # uniform p-values stay in their band
    svg = qq_svg({"tests": got, "none": {"n": 0, "points": []}})
    assert svg.count('class="dot s0"') == 50 and 'class="band s0"' in svg
    assert "no p-value" in qq_svg({"tests": {"n": 0, "points": []}})


def test_charts_of_a_window() -> None:
    rng = np.random.default_rng(11)
    window = DealWindow.from_decks(_decks(300, rng))
    charts = fairness_charts(window, audit(window), player_luck(window, min_hands=30))
    assert charts["qq"]["battery"]["n"] == 9
    assert charts["qq"]["luck"]["n"] == 8  # 4 players x (pips, doubles)
    assert [t["group"] for t in charts["tile_seat"]] == ["4p"]
    assert fairness_charts(DealWindow(()), None, None) == {
        "qq": {"battery": {"n": 0, "points": []}, "luck": {"n": 0, "points": []}}, "tile_seat": []}


# --- the pages ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    base = tmp_path_factory.mktemp("charts")
    db = build_store(base / "data", [SAMPLES, open_hand_log(base)])
    with TestClient(create_app(db)) as c:
        yield c


def test_fairness_page_draws_its_charts(client: TestClient) -> None:
    data = client.get("/api/fairness").json()
    charts = data["charts"]
    assert charts["qq"]["battery"]["n"] == len(data["battery"]["full"]["tests"])
    assert charts["qq"]["luck"]["n"] == sum(
        (r["pips_p"] is not None) + (r["doubles_p"] is not None) for r in data["luck"]["players"])
    groups = {t["group"]: t for t in charts["tile_seat"]}
    assert set(groups) == set(data["window"]["groups"])
    for g, t in groups.items():
        assert t["deals"] == data["window"]["groups"][g]
    html = client.get("/fairness").text
    assert html.count('<svg class="qqsvg"') == 1
    assert html.count('<svg class="heatsvg"') == len(groups)
    assert html.count('class="dot s') == charts["qq"]["battery"]["n"] + charts["qq"]["luck"]["n"]
    assert "/api/fairness/tile-seat.csv" in html
    narrowed = client.get("/fairness?profile=domena_2p").text
    assert narrowed.count('<svg class="heatsvg"') == 1 and "/api/fairness/tests.csv?profile=domena_2p" in narrowed


def test_player_report_narrowed(client: TestClient) -> None:
    whole = client.get("/api/players/p-00001").json()
    assert "filters" not in whole
    for p in whole["profiles"]:
        got = client.get(f"/api/players/p-00001?profile={p['profile']}").json()
        assert got["filters"] == {"profile": p["profile"]}
        assert (got["hands"], got["wins"], got["points_for"]) == (p["hands"], p["wins"], p["pts_for"])
        assert got["profiles"] == [p]
    assert sum(client.get(f"/api/players/p-00001?profile={p['profile']}").json()["matches"]
               for p in whole["profiles"]) >= whole["matches"]
    mate = whole["partners"][0]
    beside = client.get(f"/api/players/p-00001?partner={quote(mate['partner'])}").json()
    assert (beside["hands"], beside["wins"], beside["points_for"]) == (mate["hands"], mate["wins"], mate["pts_for"])
    assert [p["partner"] for p in beside["partners"]] == [mate["partner"]]
    # days: split at a day between the first and the last, the two halves add up
    days = sorted(t["bucket"] for t in whole["trend"])
    assert len(days) > 1 and len(days[0]) == 10  # daily buckets
    cut = days[len(days) // 2]
    before = client.get(f"/api/players/p-00001?date_to={cut}").json()
    after = client.get(f"/api/players/p-00001?date_from={cut}").json()
    on = client.get(f"/api/players/p-00001?date_from={cut}&date_to={cut}").json()
    assert before["hands"] + after["hands"] - on["hands"] == whole["hands"]
    assert on["hands"] == next(t["hands"] for t in whole["trend"] if t["bucket"] == cut)
    none = client.get("/api/players/p-00001?profile=no-such-profile").json()
    assert none["hands"] == 0 and none["cumulative"]["hands"] == []
    assert client.get("/api/players/p-00001?date_from=2026-13-01").status_code == 422
    assert client.get("/api/players/nobody?profile=x").status_code == 404


def test_cumulative_points(client: TestClient) -> None:
    rep = client.get("/api/players/p-00001").json()
    cum = rep["cumulative"]
    assert cum["hands"][0] == 1 and cum["hands"][-1] == rep["hands"]
    assert cum["points_for"][-1] == rep["points_for"] and cum["points_against"][-1] == rep["points_against"]
    assert len(cum["hands"]) <= 120 and cum["hands"] == sorted(cum["hands"])
    assert all(a <= b for a, b in zip(cum["points_for"], cum["points_for"][1:], strict=False))
    assert cum["days"] == sorted(cum["days"])
    svg = cumulative_svg(cum)
    assert svg.count("<polyline") == 3 and f"hand {rep['hands']}" in svg
    narrowed = client.get("/api/players/p-00001?profile=international").json()
    assert narrowed["cumulative"]["points_for"][-1] == narrowed["points_for"]


def test_player_page_with_filters(client: TestClient) -> None:
    html = client.get("/players/p-00001?profile=international&date_from=&date_to=&partner=").text
    assert 'data-sticky="player:p-00001"' in html
    assert re.search(r"This report counts \d+ of \d+ hands played: profile <b>international</b>", html)
    assert "<option selected>international</option>" in html
    assert '<svg class="cumsvg"' in html and '<svg class="trend"' in html
    assert 'href="/api/players/p-00001?profile=international"' in html
    assert 'href="/players/p-00001" data-clear>The whole report</a>' in html  # and forgets the kept filters
    whole = client.get("/players/p-00001").text
    assert "This report counts" not in whole and '<svg class="cumsvg"' in whole
    bad = client.get("/players/p-00001?date_to=soon")
    assert bad.status_code == 422 and "date_to" in bad.text


def test_a_kept_report_without_running_points_is_worked_out_again(client: TestClient,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A store kept its reports before they had running points: the page
    works the report out on the spot rather than show no chart."""
    import api.routes.players as app_mod
    from reports.player import kept_report

    def old(cur, player):  # type: ignore[no-untyped-def]
        rep = kept_report(cur, player)
        return rep and {k: v for k, v in rep.items() if k != "cumulative"}

    monkeypatch.setattr(app_mod, "kept_report", old)
    client.app.state.player_cache.data.clear()  # type: ignore[attr-defined]
    assert client.get("/api/players/p-00002").json()["cumulative"]["hands"]
