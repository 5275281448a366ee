"""A real browser over a running server: home, a match, stepping a hand with the keyboard, a player.

Drives Debian's chromium through Python playwright (never `playwright
install`); skipped only when /usr/bin/chromium is absent.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.test_api import DEFECTS, SAMPLES, build_store, open_hand_log

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serving(db: Path, *, setup: Callable[[Any], None] | None = None, **kwargs: Any) -> Iterator[str]:
    """The app over `db` (create_app's `kwargs`; `setup(app)` before it
    serves) on a free local port, in a thread; its base URL."""
    import uvicorn

    from api.app import create_app

    app = create_app(db, **kwargs)
    if setup is not None:
        setup(app)
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextlib.contextmanager
def browser_page(width: int = 1280, height: int = 900) -> Iterator[Any]:
    """A page of a fresh headless Chromium with that viewport, closed after."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("browser")
    db = build_store(tmp / "data", [SAMPLES, DEFECTS, open_hand_log(tmp)])
    with serving(db, token="t") as url:
        yield url


def _shown(page) -> int:  # type: ignore[no-untyped-def]
    return int(page.locator("section.ply:not([hidden])").get_attribute("data-ply"))


# an SVG element is drawn unless it or a group around it is display:none
# (Chromium's checkVisibility() says true inside a hidden <g>)
_DRAWN = """(sel) => [...document.querySelectorAll(sel)].filter((el) => {
  for (let e = el; e && e.tagName !== "svg"; e = e.parentNode) {
    if (getComputedStyle(e).display === "none") return false;
  }
  return true;
}).length"""


def _line_shown(page) -> int:  # type: ignore[no-untyped-def]
    """Tiles of the line the board shows (the hands' tiles sit in their seat rows)."""
    return int(page.evaluate(_DRAWN, "svg.board > g > use"))


def _marks_shown(page) -> int:  # type: ignore[no-untyped-def]
    """Marks around a tile just laid that the board shows."""
    return int(page.evaluate(_DRAWN, "svg.board rect.hl"))


def test_browse_and_step(base_url: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    with browser_page() as page:
        page.goto(base_url + "/")
        assert "Invalid matches first" in page.content()
        # a valid match from the list, then its first hand
        page.goto(base_url + "/matches?verdict=valid&profile=international")
        page.locator("table.grid tbody tr td a").first.click()
        page.wait_for_selector("text=Score sheet")
        assert page.locator("table.sheet tbody tr").count() > 0
        page.locator("table.sheet a", has_text="replay").first.click()
        page.wait_for_selector("section.ply")
        assert _shown(page) == 0
        page.keyboard.press("ArrowRight")
        assert _shown(page) == 1 and page.evaluate("location.hash") == "#ply=1"
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert _shown(page) == 3 and page.evaluate("location.hash") == "#ply=3"
        assert page.locator("#ply-no").inner_text() == "3"
        page.keyboard.press("ArrowLeft")
        assert _shown(page) == 2
        page.locator("[data-go=next]").click()
        assert _shown(page) == 3
        page.keyboard.press("End")
        last = int(page.locator("#stepper").get_attribute("data-last"))
        assert _shown(page) == last and last > 10
        # one board; at each ply it shows the line as the JSON twin has it
        assert page.locator("svg.board").count() == 1
        path = page.url.split("#")[0].removeprefix(base_url)
        twin = page.request.get(base_url + "/api" + path).json()["plies"]
        for n in (last, 3, 0):
            page.evaluate(f"location.hash = '#ply={n}'")
            page.wait_for_function(f"document.getElementById('ply-no').textContent === '{n}'")
            assert _line_shown(page) == len(twin[n]["line"])
            assert _marks_shown(page) == (1 if twin[n]["kind"] == "play" else 0)
        page.keyboard.press("End")
        # #ply=N in the address opens that ply
        url = page.url.split("#")[0]
        page.goto(url + "#ply=5")
        page.reload()
        assert _shown(page) == 5
        page.screenshot(path=str(ARTIFACTS / "replay.png"), full_page=True)
        # on to a player of this hand
        page.locator("ul.changes a.player").first.click()
        page.wait_for_selector("text=Deal luck")
        assert page.locator("svg.trend").count() == 1
        assert page.locator("h1").inner_text()
        page.screenshot(path=str(ARTIFACTS / "player.png"), full_page=True)
        # an HTML-looking name is shown as text, never run
        page.goto(base_url + "/players/p-00005")
        assert "<script>alert(1)</script>" in page.locator("h1").inner_text()
        # upload through the page (the token goes as a bearer header), then follow the link
        page.goto(base_url + "/upload")
        page.set_input_files("input[type=file]", str(SAMPLES / "pagat.jsonl"))
        page.fill("input[name=token]", "t")
        page.click("form#upload button")
        page.wait_for_selector("#result a")
        said = page.locator("#result").inner_text()
        # stored before, ungraded (the test store is built without analysis): the page says so
        assert "3 matches stored" in said and "grading pending (0 of" in said and "not graded yet" in said
        page.locator("#result a").first.click()
        page.wait_for_selector("text=Score sheet")
    assert (ARTIFACTS / "replay.png").stat().st_size > 10_000
