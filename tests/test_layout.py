"""The pages in a real browser as a new user finds them: no page
scrolls sideways on a 390 px phone, /docs works with no network, a filter
form sent with its empty fields lists everything, the board has a text
alternative, and an upload of junk says what it found.

Uses test_browser's server (sample_logs/, the planted defects and an open
hand) and Debian's chromium.
"""

from __future__ import annotations

import pytest

from tests.test_api import DEFECTS
from tests.test_browser import (  # noqa: F401 - base_url is a fixture
    ARGS,
    CHROMIUM,
    base_url,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

#: Every page kind, as a new user reaches them.
PAGES = {
    "home": "/",
    "matches": "/matches",
    "a player's matches": "/matches?player=p-00001",
    "match": "/matches/m-false-pass-0",
    "hand replay": "/matches/m-false-pass-0/hands/1?ply=7",
    "analysed match": "/matches/m-33000-0016",  # accuracy and costliest moves
    "players": "/players",
    "player": "/players/p-00001",
    "findings": "/findings",
    "fairness": "/fairness",
    "upload": "/upload",
    "docs": "/docs",
}


def _offline(context: object, base: str) -> list[str]:
    """Abort every request that leaves the test server; the list of those tried."""
    tried: list[str] = []

    def route(r: object) -> None:
        url = r.request.url  # type: ignore[attr-defined]
        if url.startswith(base):
            r.continue_()  # type: ignore[attr-defined]
        else:
            tried.append(url)
            r.abort()  # type: ignore[attr-defined]

    context.route("**/*", route)  # type: ignore[attr-defined]
    return tried


def test_no_page_scrolls_sideways_on_a_phone(base_url: str, browser: object) -> None:  # noqa: F811
    ctx = browser.new_context(viewport={"width": 390, "height": 844})  # type: ignore[attr-defined]
    try:
        page = ctx.new_page()
        wide = {}
        for name, path in PAGES.items():
            r = page.goto(base_url + path)
            assert r is not None and r.status == 200, (name, r and r.status)
            if name == "docs":
                page.wait_for_selector(".opblock")
            width = page.evaluate("document.documentElement.scrollWidth")
            if width > 390:
                wide[name] = width
        assert wide == {}
    finally:
        ctx.close()


def test_docs_render_with_the_network_blocked(base_url: str, browser: object) -> None:  # noqa: F811
    ctx = browser.new_context()  # type: ignore[attr-defined]
    try:
        tried = _offline(ctx, base_url)
        page = ctx.new_page()
        page.goto(base_url + "/docs")
        page.wait_for_selector(".opblock", timeout=15_000)
        assert page.locator(".opblock").count() >= 8
        assert "/api/summary" in page.locator("#swagger-ui").inner_text()
        assert tried == []  # Swagger UI needed nothing from outside
        page.goto(base_url + "/redoc")
        page.wait_for_selector("h1:has-text('Dominoes audit desk')", timeout=15_000)  # ReDoc drew it
        # (ReDoc asks a CDN for its own logo only: it draws all the same)
        assert all(u.endswith(".svg") for u in tried), tried
    finally:
        ctx.close()


def test_filter_forms_sent_with_empty_fields(base_url: str, browser: object) -> None:  # noqa: F811
    page = browser.new_page()  # type: ignore[attr-defined]
    try:
        for path, button in (("/matches", "Filter"), ("/findings", "Filter"), ("/fairness", "Audit")):
            page.goto(base_url + path)
            before = page.locator("h1").inner_text()
            with page.expect_navigation():
                page.get_by_role("button", name=button).click()
            # (the lists' script leaves empty fields out; without it the browser sends them)
            assert page.locator("h1").inner_text() == before  # the same page, everything listed
            empty = "verdict=&date_from=&date_to=&profile=" if path == "/matches" else "severity=&code=&match="
            if path == "/fairness":
                empty = "profile=&table=&date_from="
            page.goto(f"{base_url}{path}?{empty}")  # what a form sends without the script
            assert page.locator("h1").inner_text() == before
        page.goto(base_url + "/matches?verdict=nope")
        assert page.locator("h1").inner_text() == "Bad request"
        assert "verdict" in page.locator("main").inner_text()
    finally:
        page.close()


def test_the_board_has_a_text_alternative(base_url: str, browser: object) -> None:  # noqa: F811
    page = browser.new_page()  # type: ignore[attr-defined]
    try:
        page.goto(base_url + "/matches/m-false-pass-0/hands/1?ply=3")
        shown = page.locator("section.ply:not([hidden]) details.board-text")
        assert shown.count() == 1
        shown.locator("summary").click()
        text = shown.inner_text()
        assert "Line, left to right:" in text and "open ends" in text and "Seat 0:" in text
        page.keyboard.press("End")  # the alternative follows the ply shown
        last = page.locator("section.ply:not([hidden]) details.board-text")
        assert last.locator("p").text_content() != text
    finally:
        page.close()


def test_an_upload_of_junk_says_what_it_found(base_url: str, browser: object) -> None:  # noqa: F811
    page = browser.new_page()  # type: ignore[attr-defined]
    try:
        page.goto(base_url + "/upload")
        junk = {"name": "junk.jsonl", "mimeType": "application/octet-stream", "buffer": b"\x00\x01DUCK" * 500}
        page.set_input_files("input[type=file]", files=[junk])
        page.fill("input[name=token]", "t")
        page.click("form#upload button")
        page.wait_for_selector("#result .note")
        text = page.locator("#result").inner_text()
        assert "1 line, 1 bad; 0 matches stored, 1 finding" in text
        assert "not a table log: binary content" in text
        # a wrong token, said in words
        page.fill("input[name=token]", "not-the-token")
        page.click("form#upload button")
        page.wait_for_selector("#result .note.bad >> text=not the server's")
        assert "401" not in page.locator("#result").inner_text()
        # a match with findings is named in the colour of its verdict
        page.set_input_files("input[type=file]", str(DEFECTS / "COMMIT_MISMATCH.jsonl"))
        page.fill("input[name=token]", "t")
        page.click("form#upload button")
        page.wait_for_selector("#result a.err")
        assert page.locator("#result .badge.v-invalid").count() >= 1
    finally:
        page.close()
