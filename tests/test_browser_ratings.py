"""A real browser on the ratings pages: the leaderboard (tabs, sorting by a
column, the profile filter), a pair page and back to a player's rating.

Runs Debian's chromium as tests/test_browser.py does (its server fixture).
"""

from __future__ import annotations

import pytest

from tests.test_browser import ARTIFACTS, CHROMIUM, base_url, browser_page

__all__ = ["base_url"]  # the server fixture, used by name

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


def _column(page, n: int) -> list[str]:  # type: ignore[no-untyped-def]
    return page.locator(f"#leaderboard tbody tr td:nth-child({n})").all_inner_texts()


def test_leaderboard_in_a_browser(base_url: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    with browser_page() as page:
        page.goto(base_url + "/")
        page.locator("nav[aria-label=main] a", has_text="Ratings").click()
        page.wait_for_selector("#leaderboard")
        ratings = [float(x) for x in _column(page, 3)]
        assert len(ratings) > 5 and ratings == sorted(ratings, reverse=True)
        # sort by matches: descending first, then ascending on a second click
        page.locator("#leaderboard th a", has_text="Matches").click()
        page.wait_for_url("**sort=matches**")
        counts = [int(x) for x in _column(page, 6)]
        assert counts == sorted(counts, reverse=True)
        page.locator("#leaderboard th a", has_text="Matches").click()
        page.wait_for_url("**order=asc**")
        counts = [int(x) for x in _column(page, 6)]
        assert counts == sorted(counts)
        # one profile's pool through the form
        page.select_option("select[name=pool]", "international")
        page.click("form.filters button")
        page.wait_for_url("**pool=international**")
        assert "in international" in page.locator("h1").inner_text()
        # the pairs tab keeps the profile, and a pair links to its page
        page.locator("nav.tabs a", has_text="Pairs").click()
        page.wait_for_url("**kind=pairs**")
        assert "pool=international" in page.url
        page.screenshot(path=str(ARTIFACTS / "leaderboard.png"), full_page=True)
        page.locator("#leaderboard tbody a", has_text="pair").first.click()
        page.wait_for_selector("text=Rating history")
        assert page.locator("svg.ratingsvg").count() == 1
        assert page.locator("svg.ratingsvg polyline.rating").count() == 1
        page.screenshot(path=str(ARTIFACTS / "pair.png"), full_page=True)
        # on to one of the two players: their rating section and chart
        page.locator("h1 a.player").first.click()
        page.wait_for_selector("#ratings")
        assert page.locator("#ratings ~ .ratingchart svg.ratingsvg").count() == 1
        # the chart sits below its table, not over it
        table = page.locator("#ratings ~ section table.grid").first.bounding_box()
        chart = page.locator(".ratingchart svg.ratingsvg").bounding_box()
        assert table is not None and chart is not None and chart["y"] >= table["y"] + table["height"]
        assert page.locator("text=As a pair").count() == 1
    assert (ARTIFACTS / "leaderboard.png").stat().st_size > 10_000
