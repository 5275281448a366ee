"""A real browser on the player insights: the suspicious-play list, a player's
case with its evidence, an audit started from the page's form (the token sent
as a header by audit.js, the page reloading once it is done), and the player
page's luck and skill charts on a phone-sized screen.

Runs Debian's chromium as tests/test_browser.py does, over a server of its
own: a simulated store with the analysis and a planted omniscient cheater.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.test_browser import ARTIFACTS, CHROMIUM, browser_page, serving

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from replay.ingest import ingest
    from replay.simulate import SimConfig, simulate, write_lines

    tmp = tmp_path_factory.mktemp("browser-insights")
    log = tmp / "run.jsonl"
    write_lines(simulate(SimConfig(profiles=("international",), hands=30, seed=21, players_pool=4,
                                   seat_change_rate=0.0, cheaters=(("p-00001", "omniscient"),))), log)  # fmt: skip
    db = tmp / "data" / "replay.duckdb"
    ingest([log], db=db, workers=0, analysis=(5, 0))

    def in_thread(app: Any) -> None:
        app.state.audit_workers = 0  # the audit graded in the server's thread

    with serving(db, token="t", setup=in_thread) as url:
        yield url


def test_suspicious_play_and_an_audit(site: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    with browser_page() as page:
        page.goto(site + "/")
        page.locator("nav[aria-label=main] a", has_text="Suspicious play").click()
        page.wait_for_selector("#suspicious")
        first = page.locator("#suspicious tbody tr").first
        assert "Ana Torres" in first.inner_text() and "flagged" in first.inner_text()
        page.screenshot(path=str(ARTIFACTS / "suspicious.png"), full_page=True)
        first.locator("a", has_text="evidence").click()
        page.wait_for_selector("#evidence")
        assert page.locator("#evidence tbody tr").count() > 0
        assert "not audited yet" in page.locator("section.cards").inner_text()
        # an audit from the form: a wrong token is refused, the right one runs it
        page.fill("#audit input[name=hands]", "6")
        page.fill("#audit input[name=samples]", "3")
        page.fill("#audit input[name=token]", "wrong")
        page.click("#audit button")
        page.wait_for_selector("#audit-result .bad")
        assert "401" in page.locator("#audit-result").inner_text()
        page.fill("#audit input[name=token]", "t")
        with page.expect_navigation(timeout=60_000):  # audit.js reloads once the audit is done
            page.click("#audit button")
        page.wait_for_selector("#evidence")
        cards = page.locator("section.cards").inner_text()
        assert "not audited yet" not in cards and "6 hands" in cards
        assert "Last audit: done" in page.locator("main").inner_text()
        page.screenshot(path=str(ARTIFACTS / "suspect.png"), full_page=True)
        # the evidence links to the replay at that ply
        page.locator("#evidence tbody a").nth(1).click()
        page.wait_for_url("**/hands/**ply=**")


def test_player_skill_on_a_phone(site: str) -> None:
    with browser_page(390, 844) as page:
        page.goto(site + "/players/p-00002")
        page.wait_for_selector("#skill")
        for chart in ("svg.skillsvg.luck", "svg.skillsvg.phase", "svg.skillsvg.months"):
            box = page.locator(chart).bounding_box()
            assert box is not None and 0 < box["width"] <= 390, chart
        assert page.evaluate("document.documentElement.scrollWidth") <= 392  # nothing wider than the screen
        page.screenshot(path=str(ARTIFACTS / "player-skill-390.png"), full_page=True)
