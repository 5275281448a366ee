"""Every page type in a real browser, as a person meets it: axe-core finds no
serious or critical accessibility violation (light and dark), the review
flow works from the keyboard alone, dark mode follows the system and the
reader's choice, the print layout (a hand on one page, the board legible,
no navigation), and the pages at phone width. Its pictures go to
test-artifacts/; the docs' own are taken by scripts/screenshots.py.

Runs Debian's chromium as tests/test_browser.py does, over a server of its
own: a simulated store with the analysis and a planted omniscient cheater,
beside the sample logs and the defect demo (no analysis).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.test_api import DEFECTS, SAMPLES
from tests.test_browser import (
    ARTIFACTS,
    CHROMIUM,
    _shown,
    serving,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

SIM_MATCH = "m-23-0001"
PAIR = ("p-00001", "p-00002")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from replay.ingest import ingest
    from replay.simulate import SimConfig, simulate, write_lines

    ARTIFACTS.mkdir(exist_ok=True)
    tmp = tmp_path_factory.mktemp("browser-pages")
    log = tmp / "run.jsonl"
    write_lines(simulate(SimConfig(profiles=("international",), hands=24, seed=23, players_pool=4,
                                   seat_change_rate=0.0, cheaters=(("p-00001", "omniscient"),))), log)  # fmt: skip
    db = tmp / "data" / "replay.duckdb"
    ingest([log], db=db, workers=0, analysis=(4, 0))
    ingest([SAMPLES, DEFECTS], db=db, workers=0)
    with serving(db, token="t") as url:
        yield url


def _pages(site: str) -> list[str]:
    """One address of every page type."""
    import httpx

    invalid = httpx.get(site + "/api/matches", params={"verdict": "invalid", "per_page": 1}).json()["matches"][0]
    return [
        "/", "/matches", f"/matches/{SIM_MATCH}", f"/matches/{SIM_MATCH}/hands/1?ply=5",
        f"/matches/{invalid['match']}", f"/matches/{SIM_MATCH}/hands/1?view=seat1", "/findings", "/players",
        f"/players/{PAIR[0]}", f"/pair?a={PAIR[0]}&b={PAIR[1]}", "/leaderboard", "/leaderboard?kind=pairs",
        "/suspicious", f"/suspicious/player?player={PAIR[0]}", "/upload", "/certificates", "/fairness",
        "/glossary", "/help", "/help/analysis", f"/moves?player={PAIR[0]}&class=any",
        f"/hands?player={PAIR[0]}&outcome=won", "/no-such-page",
    ]


def test_axe_finds_no_serious_violation_on_any_page(site: str, browser: Any) -> None:
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    found = []
    for scheme in ("light", "dark"):
        page = browser.new_page(viewport={"width": 1366, "height": 900}, color_scheme=scheme)
        for path in _pages(site):
            page.goto(site + path)
            for v in axe.run(page).response["violations"]:
                if v["impact"] in ("serious", "critical"):
                    found.append((scheme, path, v["id"], [n["target"] for n in v["nodes"][:3]]))
        page.close()
    assert not found, found


def test_the_review_flow_from_the_keyboard_alone(site: str, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.goto(site + f"/matches/{SIM_MATCH}")
    # the first stop is the skip link, which takes the focus past the navigation
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    # on from there to the first hand's replay, by Tab alone
    for _ in range(300):
        page.keyboard.press("Tab")
        href = page.evaluate("document.activeElement.getAttribute('href') || ''")
        if re.fullmatch(rf"/matches/{SIM_MATCH}/hands/1", href):
            break
    else:
        pytest.fail("no replay link reached by Tab")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/hands/1$"))
    start = _shown(page)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert _shown(page) == start + 2
    page.keyboard.press("ArrowLeft")
    assert _shown(page) == start + 1
    # the value graph is one group of links, not an image holding them
    assert page.locator("svg.vgraph[role=img]").count() == 0
    # and its points are no tab stops (the arrow keys step the hand)
    assert page.locator("svg.vgraph a").count() > 5
    assert page.locator("svg.vgraph a:not([tabindex='-1'])").count() == 0
    page.close()


def test_axe_with_a_line_on_the_board_light_and_dark(site: str, browser: Any) -> None:
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    found = []
    for scheme in ("light", "dark"):
        page = browser.new_page(viewport={"width": 1366, "height": 900}, color_scheme=scheme)
        page.goto(site + f"/matches/{SIM_MATCH}/hands/1")
        for i in range(2, 30):
            page.locator(f'#movelist li[data-ply="{i}"] a').click()
            if page.locator("section.ply:not([hidden]) .why[data-pending]").count() == 0 and \
                    page.locator("section.ply:not([hidden]) .why").count():
                break
        page.locator("section.ply:not([hidden]) .why[data-ready]").wait_for()
        line = page.locator("section.ply:not([hidden]) .pline").first
        for _ in range(3):
            line.locator('[data-lstep="1"]').click()
        assert page.locator("svg.board .lghost").count() >= 1
        page.locator("#mover-only").click()
        for v in axe.run(page).response["violations"]:
            if v["impact"] in ("serious", "critical"):
                found.append((scheme, v["id"], [n["target"] for n in v["nodes"][:3]]))
        page.close()
    assert not found, found


def _bg(page: Any) -> str:
    return str(page.evaluate("getComputedStyle(document.body).backgroundColor"))


def test_dark_mode_follows_the_system_and_the_readers_choice(site: str, browser: Any) -> None:
    ctx = browser.new_context(color_scheme="light", viewport={"width": 1366, "height": 900})
    page = ctx.new_page()
    page.goto(site + "/")
    light = _bg(page)
    page.click("#theme-toggle")
    dark = _bg(page)
    assert dark != light and page.get_attribute("#theme-toggle", "aria-pressed") == "true"
    page.goto(site + f"/players/{PAIR[0]}")  # the choice is kept
    assert _bg(page) == dark
    page.screenshot(path=str(ARTIFACTS / "player-dark.png"))
    page.click("#theme-toggle")
    assert _bg(page) == light
    ctx.close()
    ctx = browser.new_context(color_scheme="dark")
    page = ctx.new_page()
    page.goto(site + "/")
    assert _bg(page) == dark  # no choice made: the system's
    ctx.close()


def _pdf_pages(data: bytes) -> int:
    from pypdf import PdfReader

    return len(PdfReader(io.BytesIO(data)).pages)


def test_the_print_layout(site: str, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.goto(site + f"/matches/{SIM_MATCH}/hands/1?ply=12")
    page.locator("section.ply:not([hidden]) .why[data-ready]").wait_for()  # the reasons why print too
    page.emulate_media(media="print")
    assert page.evaluate("getComputedStyle(document.querySelector('header.top')).display") == "none"
    assert page.evaluate("getComputedStyle(document.querySelector('footer')).display") == "none"
    # the seats' names on white: dark ink, not the felt's light text
    fill = page.evaluate("getComputedStyle(document.querySelector('svg.board text')).fill")
    assert fill in ("rgb(0, 0, 0)", "#000000"), fill
    page.screenshot(path=str(ARTIFACTS / "print-hand.png"), full_page=True)
    hand = page.pdf(format="A4")
    assert _pdf_pages(hand) == 1
    counts = {"hand": 1}
    for name, path in (("match", f"/matches/{SIM_MATCH}"), ("player", f"/players/{PAIR[0]}"), ("fairness", "/fairness")):
        page.goto(site + path)
        page.emulate_media(media="print")
        counts[name] = _pdf_pages(page.pdf(format="A4"))
    (ARTIFACTS / "print-pages.txt").parent.mkdir(exist_ok=True)
    (ARTIFACTS / "print-pages.txt").write_text("".join(f"{k}: {v} pages\n" for k, v in counts.items()))
    assert counts["match"] <= 2, counts
    page.close()


def test_the_pages_fit_a_phone(site: str, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 390, "height": 844})
    wide = []
    for path in _pages(site):
        if "/hands/" in path:
            continue  # the replay's own layout at phone width is the replay page's test
        page.goto(site + path)
        if page.evaluate("document.documentElement.scrollWidth") > 390:
            wide.append(path)
        # text stays readable: nothing in the main column drawn under 11 px
        small = page.evaluate("""() => [...document.querySelectorAll('main p, main td, main li, main dd')]
            .filter((e) => e.offsetParent && parseFloat(getComputedStyle(e).fontSize) < 11).length""")
        assert small == 0, path
    assert not wide, wide
    page.goto(site + f"/players/{PAIR[0]}")
    page.screenshot(path=str(ARTIFACTS / "player-390.png"), full_page=False)
    page.goto(site + "/glossary")
    page.screenshot(path=str(ARTIFACTS / "glossary-390.png"), full_page=False)
    page.close()


def test_the_glossary_and_the_moves_behind_a_count(site: str, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.goto(site + f"/players/{PAIR[0]}")
    blunders = page.locator("a[title='the moves counted']").nth(2)
    n = int(blunders.inner_text())
    blunders.click()
    page.wait_for_url(re.compile(r"/moves\?"))
    assert f"player={PAIR[0]}" in page.url and "class=blunder" in page.url
    assert page.locator("h1 small").inner_text().startswith(f"{n} decision")
    page.screenshot(path=str(ARTIFACTS / "moves.png"))
    page.goto(site + f"/matches/{SIM_MATCH}")
    term = page.locator("a.term").first
    assert term.get_attribute("title")
    term.click()
    page.wait_for_url(re.compile(r"/glossary#"))
    page.screenshot(path=str(ARTIFACTS / "glossary.png"))
    page.close()


def test_a_flagged_player_is_marked_wherever_their_name_appears(site: str, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    for path in ("/players", f"/players/{PAIR[0]}", f"/matches/{SIM_MATCH}", "/suspicious", "/leaderboard",
                 f"/matches/{SIM_MATCH}/hands/1", f"/matches/{SIM_MATCH}/hands/1?view=seat1"):
        page.goto(site + path)
        marks = page.locator(f"a.flagmark[href='/suspicious/player?player={PAIR[0]}']")
        assert marks.count() >= 1, path
    # on the hand's table too, beside the name (the board is a picture: a mark, no link)
    assert page.locator("svg.board .flagtext").count() == 1
    # the other players of the table are not
    page.goto(site + "/players")
    assert page.locator("a.flagmark").count() == 1
    page.close()
