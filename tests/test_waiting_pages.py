"""What the pages say while the grade on what each player could know is
being made (how far, about how long, or why no time can be given), the flag
badge beside a flagged player's name, the counts of the pair and player
pages opening the lists behind them, and the deal luck's count of deals set
against the hands played."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.deepen import Pace
from replay.ingest import ingest
from replay.simulate import SimConfig, simulate, write_lines
from tests.test_analysis import INTL

SAMPLES = Path(__file__).resolve().parents[1] / "sample_logs"
CHEAT = "p-00001"


class FakeGrader:
    """A background grader with a known pace (api.deepen.Deepener's face to the pages)."""

    def __init__(self, per_second: tuple[float, float] | None) -> None:
        self.pace = Pace()
        self.pace.per_second = lambda now=None: per_second  # type: ignore[method-assign]
        self.wanted: list[str] = []  # the matches the pages asked to grade first

    def is_alive(self) -> bool:
        return True

    def want(self, match: str) -> None:
        self.wanted.append(match)

    def asked(self, match: str) -> dict[str, Any] | None:
        return None


@pytest.fixture(scope="module")
def pending(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store graded under perfect information only: the cheat signals wait."""
    db = tmp_path_factory.mktemp("pending") / "replay.duckdb"
    ingest([str(INTL)], db=db, workers=0, analysis=(0, 0))
    return db


@pytest.fixture(scope="module")
def flagged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A graded store with one planted omniscient cheater, flagged."""
    base = tmp_path_factory.mktemp("flagged")
    log = base / "run.jsonl"
    cfg = SimConfig(profiles=("international",), hands=40, seed=12, players_pool=5, seat_change_rate=0.0,
                    cheaters=((CHEAT, "omniscient"),))  # fmt: skip
    write_lines(simulate(cfg), log)
    db = base / "data" / "replay.duckdb"
    ingest([log], db=db, workers=0, analysis=(6, 0))
    return db


@pytest.fixture(scope="module")
def client(flagged: Path) -> Iterator[TestClient]:
    with TestClient(create_app(flagged)) as c:
        yield c


def _progress(html: str) -> str:
    got = re.search(r'<p class="note progress" id="grading"[^>]*>(.*?)</p>', html, re.S)
    assert got is not None, "no progress line"
    return re.sub(r"<[^>]+>", "", got.group(1))


# --- progress ------------------------------------------------------------------------


def test_the_pages_give_the_time_left_at_the_graders_pace(pending: Path) -> None:
    app = create_app(pending)
    with TestClient(app) as c:
        app.state.deepener = FakeGrader((0.05, 0.5))  # half a decision a second
        sus = c.get("/api/suspicious").json()
        g = sus["grading"]
        assert g["state"] == "grading" and g["graded"] == 0 < g["total"] == g["left"]
        assert g["seconds_left"] == round(g["total"] / 0.5) and g["per_second"] == 0.5
        assert sus["flagged"] is None  # not "0 flagged": nothing is computed yet
        minutes = round(g["seconds_left"] / 60)
        for path in ("/suspicious", "/matches/m-example-1"):
            line = _progress(c.get(path).text)
            assert f"0 of {g['total']} decisions graded" in line, (path, line)
            assert f"about {minutes} minutes left at the recent pace (30 decisions a minute)" in line, (path, line)
        assert c.get("/api/matches/m-example-1").json()["grading"] == g
        player = c.get("/api/players").json()["players"][0]["player"]
        # a player's page asks for their match (the one of the store) before the rest
        app.state.deepener.wanted.clear()  # the match page asked for it already
        assert c.get(f"/api/players/{player}").json()["grading"] == {**g, "first": 1}
        assert app.state.deepener.wanted == ["m-example-1"]
        line = _progress(c.get(f"/players/{player}").text)
        assert "minutes left" in line and "Their newest match not graded on what they could know is being" in line
        case = c.get("/api/suspicious/player", params={"player": player}).json()
        assert case["grading"] == {**g, "first": 1} and case["flagged"] is None  # neither signal computed
        page = c.get("/suspicious/player", params={"player": player}).text
        assert "minutes left" in _progress(page) and "<b>not computed yet</b>" in page
        assert "being graded now, before the rest of the store" in _progress(page)
        assert " 0 flagged" not in c.get("/suspicious").text


def test_no_time_is_invented_without_a_pace(pending: Path) -> None:
    app = create_app(pending)
    with TestClient(app) as c:
        off = c.get("/api/suspicious").json()["grading"]  # no background grading in this server
        assert off["state"] == "off" and off["seconds_left"] is None
        assert "this server does not grade in the background" in _progress(c.get("/suspicious").text)
        app.state.deepener = FakeGrader(None)  # just started: no round done yet
        g = c.get("/api/suspicious").json()["grading"]
        assert g["state"] == "measuring" and g["per_second"] is None and g["seconds_left"] is None
        line = _progress(c.get("/suspicious").text)
        assert "the time left is not known yet" in line and "left at the recent pace" not in line


def test_the_deepener_keeps_its_pace() -> None:
    pace = Pace(window=100.0)
    assert pace.per_second(now=0.0) is None
    pace.add(0.0, 4.0, hands=2, decisions=40)
    pace.add(50.0, 54.0, hands=2, decisions=40)  # the idle stretch between is no grading time
    assert pace.per_second(now=60.0) == (0.5, 10.0)
    assert pace.per_second(now=160.0) is None  # no round ended in the window


def test_insights_says_the_signals_are_not_computed(pending: Path, tmp_path: Path) -> None:
    db = tmp_path / "copy.duckdb"
    db.write_bytes(pending.read_bytes())
    got = subprocess.run([sys.executable, "-m", "replay", "insights", "--db", str(db)],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert got.returncode == 3, got.stderr
    first = got.stdout.splitlines()[0]
    assert "not computed yet" in first and "0 flagged" not in got.stdout
    assert re.search(r"0 of \d+ decisions graded on what the players could know", first)


# --- flag badges ---------------------------------------------------------------------


def test_a_flagged_players_name_carries_the_badge_on_the_match_page(client: TestClient) -> None:
    assert c_flagged(client) == [CHEAT]
    match = next(m["match"] for m in client.get("/api/matches", params={"player": CHEAT}).json()["matches"])
    html = client.get(f"/matches/{match}").text
    accuracy = re.search(r'<h2 id="accuracy">.*?</table>', html, re.S)
    assert accuracy is not None
    badge = f'class="flagmark" href="/suspicious/player?player={CHEAT}"'
    assert badge in accuracy.group(0)
    costliest = re.search(r'<h3 id="costliest">.*?</table>', html, re.S)
    assert costliest is not None and "class=\"player\"" in costliest.group(0)
    # every badge on the page is the flagged player's, beside their name
    assert html.count('class="flagmark"') == html.count(badge) > 0
    got = client.get(f"/api/matches/{match}").json()
    assert any(h["player"] == CHEAT for a in got["accuracy"] for h in a["holders"])
    assert all(c["player_id"] for c in got["costliest"])


def c_flagged(client: TestClient) -> list[str]:
    return [r["player"] for r in client.get("/api/suspicious").json()["rows"] if r["flagged"]]


# --- the lists behind the counts ---------------------------------------------------------


def _links(html: str, prefix: str) -> list[tuple[str, str]]:
    return [(unescape(h).split("#")[0], n) for h, n in re.findall(rf'<a href="({prefix}[^"]*)"[^>]*>([^<]+)</a>', html)]


def _hands_listed(client: TestClient, href: str) -> int:
    html = client.get(href).text
    got = re.search(r"<small>(\d+) (?:hand|deal)", html)
    assert got is not None, href
    return int(got.group(1))


def test_every_count_of_the_pair_page_opens_its_list(client: TestClient) -> None:
    pair = client.get("/api/pair", params={"a": CHEAT, "b": "p-00003"}).json()
    html = client.get("/pair", params={"a": CHEAT, "b": "p-00003"}).text
    hands = [(h, n) for h, n in _links(html, "/hands?") if n.isdigit()]
    assert len(hands) >= 4, hands
    for href, n in hands:  # a count of hands, or (no outcome) of the matches they fill
        counted = _hands_listed if "outcome=" in href or "analysed=" in href else _in_matches
        assert counted(client, href) == int(n), href
    t = pair["together"]
    want = {"outcome=played": t["hands"], "outcome=won": t["wins"], "outcome=lost": t["losses"]}
    for key, n in want.items():
        assert any(h.endswith(key) and int(c) == n for h, c in hands), key
    rated = [(h, n) for h, n in _links(html, "/pair?") if n.isdigit()]
    assert any("outcome=win" in h for h, _ in rated) and any("against=" in h for h, _ in rated)
    for href, n in rated:
        assert _rated_listed(client, href) == int(n), href


def _counted(client: TestClient, href: str) -> int:
    """What a list opened from a count counts: its passes, its matches (shutouts) or its hands."""
    if "passed=1" in href:
        got = re.search(r'<span id="passes">(\d+) pass', client.get(href).text)
        assert got is not None, href
        return int(got.group(1))
    return _in_matches(client, href) if "shutout=" in href else _hands_listed(client, href)


def _rated_listed(client: TestClient, href: str) -> int:
    page = client.get(href).text
    listed = re.search(r'<h2 id="rated">.*?<tbody>(.*?)</tbody>', page, re.S)
    assert listed is not None, href
    return listed.group(1).count('<td class="o-')  # a rated match's outcome cell


def test_the_player_pages_counts_open_their_hands(client: TestClient) -> None:
    rep = client.get(f"/api/players/{CHEAT}").json()
    html = client.get(f"/players/{CHEAT}").text
    links = _links(html, "/hands?")
    assert ("/hands?player=p-00001&outcome=played", str(rep["hands"])) in links
    assert _hands_listed(client, "/hands?player=p-00001&outcome=played") == rep["hands"]
    for (href, n) in _links(html, "/hands?"):
        if n.isdigit():
            assert _counted(client, href) == int(n), href
    pairs = [(h, n) for h, n in _links(html, "/pair?") if n.isdigit()]
    assert any("outcome=win" in h for h, _ in pairs)
    for href, n in pairs:  # the rated matches as a pair
        assert _rated_listed(client, href) == int(n), href


# --- deal luck -------------------------------------------------------------------------


def test_the_player_pages_charts_open_the_hands_behind_each_point(client: TestClient) -> None:
    rep = client.get(f"/api/players/{CHEAT}").json()
    html = client.get(f"/players/{CHEAT}").text
    trend = [(h, n) for h, n in _links(html, "/hands?") if "date_from=" in h]
    assert [int(n.split()[0]) for _, n in trend] == [t["hands"] for t in rep["trend"]] != []
    for href, n in trend:
        assert _hands_listed(client, href) == int(n.split()[0]), href
    running = [h for h, n in _links(html, "/hands?") if n.startswith("after hand ")]
    assert len(running) == len(rep["cumulative"]["hands"]) > 1
    for href, h in zip(running, rep["cumulative"]["hands"], strict=True):
        assert f"first={h}" in href and _hands_listed(client, href) == h, href
    # the last point's list is every hand played, and adds up to its points
    last = client.get(running[-1]).text
    assert rep["cumulative"]["points_for"][-1] == rep["points_for"] and _hands_listed(client, running[-1]) == rep["hands"]
    assert 'role="img"' in html and not re.search(r'role="img"[^>]*>(?:(?!</svg>).)*<a ', html, re.S)
    assert "the first" in last


def test_a_filtered_player_pages_trend_links_keep_its_filters(client: TestClient) -> None:
    # (how a bucket's dates are cut to the filter's: `reports.player._trend`'s doctest)
    day = client.get(f"/api/players/{CHEAT}").json()["trend"][0]["date_from"]
    chosen = {"date_from": day, "date_to": day, "partner": "p-00003"}
    rep = client.get(f"/api/players/{CHEAT}", params=chosen).json()
    html = client.get(f"/players/{CHEAT}", params=chosen).text
    trend = [(h, n) for h, n in _links(html, "/hands?") if "date_to=" in h and n.endswith(("hand", "hands"))]
    assert [int(n.split()[0]) for _, n in trend] == [t["hands"] for t in rep["trend"]] != []
    for href, n in trend:
        assert "partner=p-00003" in href and _hands_listed(client, href) == int(n.split()[0]), href


@pytest.fixture(scope="module")
def cancelled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """A store with a cancelled hand (hand 7 of m-2003-0002: five doubles dealt)."""
    db = tmp_path_factory.mktemp("cancelled") / "replay.duckdb"
    ingest([str(SAMPLES / "colombia.jsonl")], db=db, workers=0, analysis=(0, 0))
    with TestClient(create_app(db)) as c:
        yield c


def test_deal_luck_says_how_its_deals_meet_the_hands_played(cancelled: TestClient) -> None:
    seats = cancelled.get("/api/matches/m-2003-0002").json()["seats"]
    player = seats[0]["player"]
    rep: dict[str, Any] = cancelled.get(f"/api/players/{player}").json()
    luck = rep["deal_luck"]
    # one deal more than the hands played: the cancelled hand was dealt all the same
    assert rep["cancelled"] >= 1 and luck["hands"] == rep["hands"] + rep["cancelled"] - luck["left_out"]
    assert (luck["played"], luck["cancelled"]) == (rep["hands"] - luck["left_out"], rep["cancelled"])
    html = cancelled.get(f"/players/{player}").text
    said = re.search(r'<p class="small" id="deals">(.*?)</p>', html, re.S)
    assert said is not None
    assert f"{luck['hands']} deals: the {luck['played']} hands played and {luck['cancelled']} cancelled" in said.group(1)
    # and the count of deals opens those deals
    assert _hands_listed(cancelled, f"/hands?player={player}&outcome=dealt") == luck["hands"]
    assert _hands_listed(cancelled, f"/hands?player={player}&outcome=played") == rep["hands"]
    href = f"/hands?player={player}&outcome=dealt&doubles=1"
    assert (href, str(luck["doubles_hands"])) in _links(html, "/hands?")
    assert _hands_listed(cancelled, href) == luck["doubles_hands"] > 0


def test_the_background_grader_measures_its_pace(tmp_path: Path) -> None:
    """A server that grades in the background: no pace before its first round
    ends, then decisions a second from its rounds, which count every decision
    it graded; the pages' time left follows from it."""
    import time

    log = tmp_path / "run.jsonl"
    write_lines(simulate(SimConfig(profiles=("international",), hands=6, seed=3, players_pool=4,
                                   seat_change_rate=0.0)), log)  # fmt: skip
    path = tmp_path / "data" / "replay.duckdb"
    ingest([log], db=path, workers=0, analysis=(0, 0))
    app = create_app(path, deepen=3)
    with TestClient(app) as c:
        first = c.get("/api/suspicious").json()["grading"]
        total = first["total"]
        assert total > 0 and first["state"] in ("measuring", "grading", "done")
        deadline = time.monotonic() + 600  # a wait, not a speed check: a loaded machine grades slowly
        while True:
            got = c.get("/api/suspicious").json()["grading"]
            if got["state"] == "done" or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert got["state"] == "done" and got["graded"] == total and got["seconds_left"] == 0
        pace = app.state.deepener.pace
        hands, per_second = pace.per_second()
        assert hands > 0 and per_second > 0
        assert sum(r[3] for r in pace.rounds) == total  # every decision it graded, counted once


# --- the remaining counts and the lists they open --------------------------------------


def _in_matches(client: TestClient, href: str) -> int:
    got = re.search(r'<span id="in-matches">(\d+) match', client.get(href).text)
    assert got is not None, href
    return int(got.group(1))


def test_the_player_pages_passes_shutouts_bonuses_and_went_out_open_their_hands(client: TestClient) -> None:
    for player in (CHEAT, "p-00003"):
        rep = client.get(f"/api/players/{player}").json()
        html = client.get(f"/players/{player}").text
        links = dict((h, n) for h, n in _links(html, "/hands?"))
        q = f"/hands?player={player}"
        passes = client.get(f"{q}&passed=1").text
        got = re.search(r'<span id="passes">(\d+) pass', passes)
        assert got is not None and int(got.group(1)) == rep["passes"] > 0
        assert links[f"{q}&passed=1"] == str(rep["passes"])
        assert links[f"{q}&shutout=given"] == str(rep["shutouts_given"])
        assert links[f"{q}&shutout=taken"] == str(rep["shutouts_taken"])
        for which in ("given", "taken"):
            n = rep[f"shutouts_{which}"]
            assert _hands_listed(client, f"{q}&shutout={which}") == _in_matches(client, f"{q}&shutout={which}") == n
        for which, key in (("won", "match_wins"), ("lost", "match_losses")):
            href = f"{q}&match_outcome={which}"
            assert links[href] == f"{rep[key]} {which}"
            assert _hands_listed(client, href) == _in_matches(client, href) == rep[key], href
        assert links[f"{q}&outcome=out"] == f"{rep['went_out']} times"
        assert _hands_listed(client, f"{q}&outcome=out") == rep["went_out"] > 0
        for word, n in rep["bonuses"].items():
            href = f"{q}&bonus={word}"
            assert links[href] == str(n) and _hands_listed(client, href) == n
    # the same counts under a partner's filter open the hands beside that partner
    partner = client.get(f"/api/players/{CHEAT}").json()["partners"][0]["partner"]
    rep = client.get(f"/api/players/{CHEAT}", params={"partner": partner}).json()
    html = client.get(f"/players/{CHEAT}", params={"partner": partner}).text
    links = dict(_links(html, "/hands?"))
    for key, n in (("passed=1", rep["passes"]), ("shutout=given", rep["shutouts_given"]),
                   ("shutout=taken", rep["shutouts_taken"]), ("outcome=out", rep["went_out"])):
        href = next(h for h in links if h.endswith(key) and f"partner={partner}" in h)
        counted = re.search(r'<span id="passes">(\d+)', client.get(href).text) if key == "passed=1" else None
        assert (int(counted.group(1)) if counted else _in_matches(client, href) if "shutout" in key
                else _hands_listed(client, href)) == n, key


@pytest.fixture(scope="module")
def shutouts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """A store whose matches end by shutouts (chiva, zapato)."""
    db = tmp_path_factory.mktemp("shutouts") / "replay.duckdb"
    ingest([str(SAMPLES / "chiva.jsonl"), str(SAMPLES / "mexico.jsonl")], db=db, workers=0, analysis=(0, 0))
    with TestClient(create_app(db)) as c:
        yield c


def test_the_shutouts_open_the_matches_they_count(shutouts: TestClient) -> None:
    seen = 0
    for p in shutouts.get("/api/players").json()["players"]:
        rep = shutouts.get(f"/api/players/{p['player']}").json()
        links = dict(_links(shutouts.get(f"/players/{p['player']}").text, "/hands?"))
        for which in ("given", "taken"):
            href = f"/hands?player={p['player']}&shutout={which}"
            n = rep[f"shutouts_{which}"]
            assert links[href] == str(n)
            assert _hands_listed(shutouts, href) == _in_matches(shutouts, href) == n, href
            seen += n
    assert seen > 0  # else the lists prove nothing


def test_the_pair_pages_matches_and_analysed_hands_open_their_hands(client: TestClient) -> None:
    pair = client.get("/api/pair", params={"a": CHEAT, "b": "p-00003"}).json()
    html = client.get("/pair", params={"a": CHEAT, "b": "p-00003"}).text
    t = pair["together"]
    q = f"/hands?player={CHEAT}&partner=p-00003"
    assert (q, str(t["matches"])) in _links(html, "/hands?")
    assert _in_matches(client, q) == t["matches"]
    for p in t["profiles"]:
        href = f"{q}&profile={p['profile']}"
        assert (href, str(p["matches"])) in _links(html, "/hands?")
        assert _in_matches(client, href) == p["matches"]
    sk = pair["skill"]
    assert sk["combined"]["hands"] > 0
    assert (f"{q}&analysed=1", str(sk["combined"]["hands"])) in _links(html, "/hands?")
    assert _hands_listed(client, f"{q}&analysed=1") == sk["combined"]["hands"]
    for p in sk["players"]:
        other = "p-00003" if p["player"] == CHEAT else CHEAT
        href = f"/hands?player={p['player']}&partner={other}&analysed=1"
        assert (href, str(p["hands"])) in _links(html, "/hands?")
        assert _hands_listed(client, href) == p["hands"]


def test_the_match_pages_hands_per_seat_open_the_seats_analysed_hands(client: TestClient) -> None:
    match = client.get("/api/matches", params={"player": CHEAT}).json()["matches"][0]["match"]
    got = client.get(f"/api/matches/{match}").json()
    html = client.get(f"/matches/{match}").text
    links = _links(html, "/hands?")
    assert len(got["accuracy"]) >= 2
    for a in got["accuracy"]:
        href = f"/hands?match={match}&seat={a['seat']}&analysed=1"
        assert (href, str(a["hands"])) in links
        page = client.get(href).text
        assert _hands_listed(client, href) == a["hands"] > 0
        holders = {h["player"] for h in a["holders"]}
        assert holders and all(f'href="/players/{h}"' in page for h in holders)
    assert client.get("/hands").status_code == 422  # neither a player nor a match and seat


def test_a_players_rated_matches_open_the_matches_their_rating_counts(client: TestClient) -> None:
    html = client.get(f"/players/{CHEAT}").text
    standings = re.search(r'<h2 id="ratings">.*?</table>', html, re.S)
    assert standings is not None
    rated = [(h, n) for h, n in _links(standings.group(0), "/matches?")]
    assert len(rated) >= 4 and all("rated=" in h for h, _ in rated)
    assert any("rated_outcome=win" in h and int(n) > 0 for h, n in rated)
    for href, n in rated:
        listed = client.get("/api" + href + "&per_page=500").json()
        assert listed["total"] == int(n), href
        if "rated_outcome=" in href:
            want = {"win": "won", "loss": "lost"}.get(href.split("rated_outcome=")[1].split("&")[0])
            assert all(m["outcome"] == want for m in listed["matches"] if want), href
        page = client.get(href).text
        assert re.search(rf"<small>{n} found</small>", page), href
        assert 'id="rated"' in page


def test_the_costliest_and_training_pages_mark_a_flagged_player(client: TestClient) -> None:
    from api import insights
    from api.pages import mark_flagged

    # the marks follow the last server started in this process (one a process when served)
    mark_flagged(insights.FlaggedPlayers(client.app.state.store))  # type: ignore[attr-defined]
    badge = f'class="flagmark" href="/suspicious/player?player={CHEAT}"'
    for path in (f"/players/{CHEAT}/costliest", f"/train?player={CHEAT}"):
        assert badge in client.get(path).text, path
    assert 'class="flagmark"' not in client.get("/train?player=p-00003").text
