"""In a real browser: the grading's progress line with the time left, the
flag badge beside a flagged player's name on the match page, and the pair
page's counts and the player page's chart points opening the lists behind
them; axe-core clean on those pages.

A store with a simulated, fully graded table (a planted omniscient cheater)
beside a match graded under perfect information only, served with a
background grader of known pace (tests.test_waiting_pages.FakeGrader).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import duckdb
import pytest

from tests.test_analysis import INTL
from tests.test_browser import ARTIFACTS, CHROMIUM, serving
from tests.test_waiting_pages import FakeGrader

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

CHEAT, PARTNER = "p-00001", "p-00003"
PENDING = "m-example-1"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from replay.ingest import ingest
    from replay.simulate import SimConfig, simulate, write_lines

    ARTIFACTS.mkdir(exist_ok=True)
    tmp = tmp_path_factory.mktemp("browser-waiting")
    log = tmp / "run.jsonl"
    write_lines(simulate(SimConfig(profiles=("international",), hands=40, seed=12, players_pool=5,
                                   seat_change_rate=0.0, cheaters=((CHEAT, "omniscient"),))), log)  # fmt: skip
    db = tmp / "data" / "replay.duckdb"
    ingest([log], db=db, workers=0, analysis=(6, 0))
    ingest([str(INTL)], db=db, workers=0, analysis=(0, 0))  # not graded on what the players could know yet

    def grader(app: Any) -> None:
        app.state.deepener = FakeGrader((0.02, 0.2))

    with serving(db, setup=grader) as url:
        yield url


def test_the_progress_line_says_how_long_the_rest_takes(site: str, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    for path in ("/suspicious", f"/matches/{PENDING}"):
        page.goto(site + path)
        line = page.locator("#grading")
        assert line.is_visible(), path
        text = line.inner_text()
        assert re.search(r"\d[\d,]* of [\d,]+ decisions graded on what the players could know \(\d+%\), "
                         r"(about \d+ minutes?|under a minute) left at the recent pace", text), (path, text)
        assert page.locator("#grading .grading").get_attribute("data-state") == "grading"
    page.goto(site + "/suspicious")
    assert " 0 flagged" not in page.locator("h1").inner_text()
    page.screenshot(path=str(ARTIFACTS / "grading-progress.png"))
    page.close()


def test_the_badge_beside_a_flagged_name_on_the_match_page(site: str, browser: Any) -> None:
    import httpx

    match = httpx.get(site + "/api/matches", params={"player": CHEAT}).json()["matches"][0]["match"]
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.goto(site + f"/matches/{match}")
    row = page.locator("#accuracy + table tbody tr", has=page.locator(f"a.flagmark[href*='{CHEAT}']"))
    assert row.count() == 1
    name = row.locator("a.player").first
    badge = row.locator("a.flagmark")
    assert name.is_visible() and badge.is_visible()
    # the badge sits on the name's line, just after it
    nb, bb = name.bounding_box(), badge.bounding_box()
    assert abs(nb["y"] - bb["y"]) < nb["height"] and bb["x"] > nb["x"]
    badge.click()
    page.wait_for_url(re.compile(r"/suspicious/player\?player="))
    page.close()


def test_the_pair_pages_counts_open_their_lists(site: str, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.goto(site + f"/pair?a={CHEAT}&b={PARTNER}")
    won = page.locator(".card.ok b a")
    n = int(won.inner_text())
    won.click()
    page.wait_for_url(re.compile(r"/hands\?"))
    assert "outcome=won" in page.url and f"partner={PARTNER}" in page.url
    assert page.locator("h1 small").inner_text().startswith(f"{n} hand")
    assert page.locator("tbody tr td.o-win").count() == n
    page.go_back()
    opponents = page.locator("h2:has-text('Opponents') + table tbody tr").first
    met = opponents.locator("td.num a").first
    m = int(met.inner_text())
    met.click()
    page.wait_for_url(re.compile(r"/pair\?.*against="))
    assert page.locator("#narrowed").is_visible()
    assert page.locator("#rated + p + table tbody td[class^='o-']").count() == m
    page.screenshot(path=str(ARTIFACTS / "pair-narrowed.png"))
    page.close()


@pytest.mark.parametrize("width", [1180, 1366])
def test_side_by_side_tables_fit_their_columns(site: str, browser: Any, width: int) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    cut = {}
    for path in (f"/pair?a={CHEAT}&b={PARTNER}", f"/players/{CHEAT}"):
        page.goto(site + path)
        over = page.evaluate(
            """[...document.querySelectorAll('.cols > section table')]
               .filter(t => t.getBoundingClientRect().right > t.closest('section').getBoundingClientRect().right + 1)
               .map(t => (t.previousElementSibling || t.parentElement).textContent.trim().slice(0, 40))"""
        )
        if over:
            cut[path] = over
        assert page.evaluate("document.documentElement.scrollWidth") <= width, path
    page.close()
    assert cut == {}


def test_axe_finds_nothing_serious_on_these_pages(site: str, browser: Any) -> None:
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    found = []
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    for path in ("/suspicious", f"/matches/{PENDING}", f"/pair?a={CHEAT}&b={PARTNER}",
                 f"/pair?a={CHEAT}&b={PARTNER}&outcome=win", f"/players/{CHEAT}",
                 f"/hands?player={CHEAT}&outcome=dealt", f"/hands?player={CHEAT}&passed=1",
                 f"/hands?match={PENDING}&seat=0&analysed=1", f"/matches?player={CHEAT}&rated=*",
                 f"/players/{CHEAT}/costliest", f"/train?player={CHEAT}"):  # fmt: skip
        page.goto(site + path)
        for v in axe.run(page).response["violations"]:
            if v["impact"] in ("serious", "critical"):
                found.append((path, v["id"], [n["target"] for n in v["nodes"]][:3]))
    page.close()
    assert found == []


def test_the_player_pages_charts_open_the_hands_behind_a_point(site: str, browser: Any) -> None:
    from axe_playwright_python.sync_playwright import Axe

    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.goto(site + f"/players/{CHEAT}")
    for summary in page.locator("details.behind summary").all():
        summary.click()
    # the links sit beside the charts (an image holding links fails axe's nested-interactive)
    assert page.locator("svg[role=img] a").count() == 0
    found = [(v["id"], [n["target"] for n in v["nodes"]][:3]) for v in Axe().run(page).response["violations"]
             if v["impact"] in ("serious", "critical")]
    assert found == []
    point = page.locator("details.behind .periods a").first
    assert point.is_visible()
    n = int(point.inner_text().split()[0])
    point.click()
    page.wait_for_url(re.compile(r"/hands\?.*date_from="))
    assert page.locator("h1 small").inner_text().startswith(f"{n} hand")
    page.go_back()
    page.locator("details.behind summary").last.click()
    after = page.locator("details.behind .periods a:has-text('after hand')").last
    h = int(after.inner_text().split()[-1])
    after.click()
    page.wait_for_url(re.compile(r"/hands\?.*first="))
    assert page.locator("h1 small").inner_text().startswith(f"{h} hand")
    page.close()


def test_a_match_opened_without_its_sampled_grade_shows_it_when_it_comes(
    tmp_path: Any, browser: Any
) -> None:
    """A real background grader: a hand's replay page and then a match page
    say their match is being graded first, then reload by themselves once
    its grades are stored."""
    from replay.ingest import ingest
    from replay.simulate import SimConfig, simulate, write_lines

    log = tmp_path / "backlog.jsonl"
    write_lines(simulate(SimConfig(profiles=("milo",), hands=60, seed=48, tables=6)), log)
    db = tmp_path / "data" / "replay.duckdb"
    ingest([log], db=db, workers=0, analysis=(0, 0))
    con = duckdb.connect(str(db), read_only=True)
    try:  # stored first: the backlog's last (api.deepen takes the newest first)
        match, other = [m for (m,) in con.execute("SELECT match FROM matches ORDER BY mno LIMIT 2").fetchall()]
    finally:
        con.close()
    with serving(db, deepen=3, deepen_workers=1) as url:
        page = browser.new_page(viewport={"width": 1366, "height": 900})
        hand = browser.new_page(viewport={"width": 1366, "height": 900})
        # the match stored first, and a hand of the one after it, both opened before the
        # grader reaches them (it takes the newest first)
        page.goto(url + f"/matches/{match}")
        note = page.locator("#grading")
        assert "before the rest of the store" in note.inner_text()
        assert note.get_attribute("data-state") in ("next", "grading")
        hand.goto(url + f"/matches/{other}/hands/1")
        # a hand's replay page asks for its match, says so, and reloads when it is graded
        assert hand.locator(".unsampled").count() > 0
        hand.wait_for_function("() => !document.querySelector('.unsampled') || "
                               "document.querySelector('.unsampled').textContent.includes('being graded')",
                               timeout=30_000)  # fmt: skip
        hand.locator(".unsampled").first.wait_for(state="detached", timeout=120_000)  # reloaded, graded
        hand.close()
        note.wait_for(state="detached", timeout=120_000)  # the page reloaded with every hand graded
        assert "not yet" not in page.locator("#accuracy + table").inner_text()
        page.close()
