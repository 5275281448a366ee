"""The analysis on the replay page, in a real browser: the graph steps the hand,
every ply shows its alternatives, and a seat's view shows none of it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.test_analysis import INTL
from tests.test_browser import ARGS, ARTIFACTS, CHROMIUM, _shown, browser_page, serving

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from replay.ingest import ingest

    db = tmp_path_factory.mktemp("browser-analysis") / "data" / "replay.duckdb"
    db.parent.mkdir()
    ingest([str(INTL)], db=db, workers=0, analysis=(6, 0))
    with serving(db) as url:
        yield url


def test_the_value_graph_steps_the_hand_and_each_ply_shows_its_values(base_url: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    with browser_page() as page:
        page.goto(base_url + "/matches/m-example-1/hands/1")
        assert _shown(page) == 0
        points = page.locator("svg.vgraph a[data-ply]")
        assert points.count() > 5
        target = points.nth(4)
        ply = int(target.get_attribute("data-ply") or "0")
        target.locator("circle").click()
        assert _shown(page) == ply
        assert f"#ply={ply}" in page.url
        section = page.locator("section.ply:not([hidden])")
        assert section.locator("table.alts-values tr.played").count() == 1
        rows = section.locator("table.alts-values tbody tr").count()
        assert rows >= 1
        assert page.locator(f'svg.vgraph a[data-ply="{ply}"] circle.current').count() == 1
        page.keyboard.press("ArrowRight")
        assert _shown(page) == ply + 1
        assert page.locator(f'svg.vgraph a[data-ply="{ply + 1}"] circle.current').count() == 1
        page.screenshot(path=str(ARTIFACTS / "analysis.png"), full_page=True)
        # a seat's view: what that seat knew, no perfect-information value (its own
        # decisions' values on what it could know only: docs/review.md)
        page.goto(base_url + "/matches/m-example-1/hands/1?view=seat1")
        assert page.locator("svg.vgraph").count() == 0
        assert page.locator("table.alts-values th", has_text="exact").count() == 0


def test_the_match_page_shows_each_seats_accuracy(base_url: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page()
            page.goto(base_url + "/matches/m-example-1")
            table = page.locator("#accuracy + table")
            assert table.locator("tbody tr").count() == 4
            assert "%" in table.inner_text()
        finally:
            browser.close()


def test_the_analysis_fits_a_phone(base_url: str) -> None:
    with browser_page(390, 800) as page:
        for path in ("/matches/m-example-1/hands/1?ply=6", "/matches/m-example-1"):
            page.goto(base_url + path)
            assert page.evaluate("document.documentElement.scrollWidth") <= 390, path
