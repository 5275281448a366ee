"""A real browser over a running server: sort links, filters that stay,
a download, the table's snake, and a seat's view that shows no hidden tile.

Drives Debian's chromium as tests/test_browser.py does (never `playwright install`).
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

import pytest

from tests.test_browser import (
    ARTIFACTS,
    CHROMIUM,
)
from tests.test_browser import base_url as base_url  # noqa: F401 - the server, a fixture

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


def _hands_column(page: Any) -> list[int]:  # the matches list's "Hands" column
    return [int(x) for x in page.locator("table.grid tbody tr td:nth-child(6)").all_inner_texts()]


def test_sort_links_and_filters_that_stay(base_url: str, browser: Any) -> None:  # noqa: F811
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page = ctx.new_page()
    try:
        page.goto(base_url + "/matches")
        page.select_option("select[name=profile]", "international")
        page.click("form.filters button")
        page.wait_for_url(re.compile(r"/matches\?profile=international$"))  # no empty fields sent
        assert page.locator("select[name=profile]").input_value() == "international"
        # a header sorts, and its link then turns the order round
        page.click("th a.sort:text('Hands')")
        page.wait_for_url(re.compile(r"sort=hands&order=desc"))
        hands = _hands_column(page)
        assert hands == sorted(hands, reverse=True) and len(set(hands)) > 1
        assert page.locator("th[aria-sort=descending]").inner_text().startswith("Hands")
        page.click("th a.sort:text('Hands')")
        page.wait_for_url(re.compile(r"sort=hands&order=asc"))
        up = _hands_column(page)
        assert up == sorted(up) and up[0] <= hands[-1]
        # filtering again keeps the sort
        page.fill("input[name=table]", "t-1")
        page.click("form.filters button")
        page.wait_for_url(re.compile(r"profile=international"))
        assert "sort=hands" in page.url and "table=t-1" in page.url and "player=" not in page.url
        assert _hands_column(page) == sorted(_hands_column(page))
        # elsewhere and back through the menu: the last filters and sort come back
        page.goto(base_url + "/findings")
        page.click("nav[aria-label=main] a:text('Matches')")
        page.wait_for_url(re.compile(r"/matches\?.*profile=international"))
        assert "sort=hands" in page.url
        assert page.locator("select[name=profile]").input_value() == "international"
        assert page.locator("input[name=table]").input_value() == "t-1"
        assert "Filters restored" in page.locator(".note.restored").inner_text()
        # a download of the list as shown
        with page.expect_download() as got:
            page.click("p.downloads a:text('CSV') >> nth=0")
        download = got.value
        assert download.suggested_filename == "matches.csv"
        rows = list(csv.reader(io.StringIO(Path(download.path()).read_text(encoding="utf-8"))))
        total = int(re.search(r"(\d+) found", page.locator("h1").inner_text()).group(1))
        assert rows[0][:3] == ["match", "table_id", "profile"] and len(rows) - 1 == total
        assert {r[2] for r in rows[1:]} == {"international"} and {r[1] for r in rows[1:]} == {"t-1"}
        assert [int(r[8]) for r in rows[1:]] == sorted(int(r[8]) for r in rows[1:])
        # "Clear" forgets them
        page.click("form.filters a.clear")
        page.wait_for_url(re.compile(r"/matches$"))
        page.goto(base_url + "/matches")
        assert page.url.endswith("/matches") and page.locator("select[name=profile]").input_value() == ""
    finally:
        ctx.close()


_BOXES = """() => {
  const felt = document.querySelector("svg.board .felt").getBBox();
  return [...document.querySelectorAll("svg.board > g > use")].map((u) => {
    const b = u.getBBox();
    return [b.x, b.y, b.width, b.height, felt.x, felt.y, felt.width, felt.height];
  });
}"""


# the tiles of the seats' hands drawn at the ply shown (none of their groups hidden)
_FACES = """() => [...document.querySelectorAll('svg.board .place use')].filter((u) => {
  for (let e = u; e && e.tagName !== 'svg'; e = e.parentNode) if (getComputedStyle(e).display === 'none') return false;
  return true;
}).map((u) => u.getAttribute('href'))"""


def test_the_snake_and_a_seats_view(base_url: str, browser: Any) -> None:  # noqa: F811
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    try:
        # the longest line of the store's four-player games
        page.goto(base_url + "/api/matches?profile=international&verdict=valid&per_page=50")
        matches = [m["match"] for m in page.evaluate("() => JSON.parse(document.body.innerText)")["matches"]]
        best, longest = None, 0
        for m in matches[:8]:
            twin = page.request.get(f"{base_url}/api/matches/{m}/hands/1").json()
            n = len(twin["plies"][-1]["line"])
            if n > longest:
                best, longest = m, n
        assert longest >= 14
        page.goto(f"{base_url}/matches/{best}/hands/1")
        page.keyboard.press("End")
        boxes = page.evaluate(_BOXES)
        assert len(boxes) == longest
        for x, y, w, h, fx, fy, fw, fh in boxes:
            assert fx <= x and x + w <= fx + fw and fy <= y and y + h <= fy + fh  # on the felt
        for i, a in enumerate(boxes):
            for b in boxes[:i]:
                assert min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]) <= 0.01 or \
                    min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]) <= 0.01
        rows = {round(y + h / 2) for _, y, _, h, *_ in boxes}
        assert len(rows) >= 2  # it turned at an edge
        page.locator("svg.board").screenshot(path=str(ARTIFACTS / "table.png"))
        # a seat's view: its tiles face up, the others' as backs, nothing else of them
        full = page.request.get(f"{base_url}/api/matches/{best}/hands/1").json()["plies"]
        page.click("nav.views a:text('seat 1')")
        page.wait_for_url(re.compile(r"view=seat1"))
        on_line = set(full[-1]["line"]) | {t[::-1] for t in full[-1]["line"]} | set(full[-1]["hanged"])
        secret = {t for p in full for s, h in enumerate(p["hands"]) if s != 1 for t in h} - on_line
        assert secret
        for n in range(0, len(full), 3):
            page.evaluate(f"location.hash = '#ply={n}'")
            page.wait_for_function(f"document.getElementById('ply-no').textContent === '{n}'")
            faces = page.evaluate(_FACES)
            assert faces, n  # every seat's hand is drawn, face up or down
            assert not any(f[2:] in secret or f[3] + f[2] in secret for f in faces if f != "#back"), n
            backs = sum(f == "#back" for f in faces)
            assert backs == sum(c for s, c in enumerate(full[n]["counts"]) if s != 1), n
        html = page.content()
        for t in secret:
            assert f"#v{t}" not in html and f"#v{t[::-1]}" not in html and f"[{t[0]}|{t[1]}]" not in html
        assert (page.locator(".place.bottom text.seat").first.text_content() or "").startswith("seat 1")
        page.screenshot(path=str(ARTIFACTS / "seat-view.png"), full_page=True)
    finally:
        page.close()
