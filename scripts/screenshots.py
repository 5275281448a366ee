"""Take the screenshots in docs/ (docs/screenshot-*.png) of a server over the sample logs.

    python scripts/screenshots.py [--out docs] [NAME ...]

Builds a store from sample_logs/ in a temporary folder, serves it on a free
loopback port and drives Debian's chromium (/usr/bin/chromium) through
playwright, as the browser tests do. The pages that show the hand analysis
(accuracy, play together, the grading's progress, a flag badge) are taken
of a second store: a simulated table graded in full, with a planted
omniscient cheater, beside a match graded under perfect information only,
served with a background grader of a fixed pace. NAMEs (e.g.
screenshot-pair.png) take those only.
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHEAT, PARTNER = "p-00001", "p-00003"

# (file, store: "samples" or "graded", path ("{cheat_match}": a match of the cheater),
# what to capture: a CSS selector, "" for the whole page or "@viewport" for what the
# screen shows, the viewport width, and how: "" as is, "dark" in the dark theme,
# "print" as the page prints)
SHOTS = [
    ("screenshot-replay.png", "samples", "/matches/m-8000-0001/hands/1?ply=40", "main", 1280, ""),
    ("screenshot-seat-view.png", "samples", "/matches/m-8000-0001/hands/1?view=seat1&ply=24", "main", 1280, ""),
    ("screenshot-matches.png", "samples", "/matches?profile=international&sort=hands&order=desc", "main", 1280, ""),
    ("screenshot-fairness-charts.png", "samples", "/fairness", "#charts", 1280, ""),
    ("screenshot-player.png", "samples", "/players/p-00001?profile=international", "main", 1280, ""),
    ("screenshot-glossary.png", "samples", "/glossary", "main", 1280, ""),
    ("screenshot-glossary-390.png", "samples", "/glossary", "@viewport", 390, ""),
    ("screenshot-player-390.png", "samples", "/players/p-00001", "@viewport", 390, ""),
    ("screenshot-player-dark.png", "samples", "/players/p-00001", "@viewport", 1280, "dark"),
    ("screenshot-print-hand.png", "samples", "/matches/m-8000-0001/hands/1?ply=40", "", 1280, "print"),
    ("screenshot-grading-progress.png", "graded", "/suspicious", "@viewport", 1366, ""),
    ("screenshot-match-accuracy.png", "graded", "/matches/{cheat_match}#accuracy", "@viewport", 1366, ""),
    ("screenshot-pair.png", "graded", f"/pair?a={CHEAT}&b={PARTNER}", "main", 1280, ""),
    ("screenshot-pair-skill.png", "graded", f"/pair?a={CHEAT}&b={PARTNER}",
     'h2:has-text("Play together") + div.cols', 1280, ""),
]


def _samples(tmp: Path) -> Path:
    from replay.ingest import ingest

    db = tmp / "samples" / "replay.duckdb"
    db.parent.mkdir()
    ingest([str(ROOT / "sample_logs")], db=db, workers=0)
    return db


def _graded(tmp: Path) -> Path:
    from replay.ingest import ingest
    from replay.simulate import SimConfig, simulate, write_lines

    log = tmp / "run.jsonl"
    write_lines(simulate(SimConfig(profiles=("international",), hands=40, seed=12, players_pool=5,
                                   seat_change_rate=0.0, cheaters=((CHEAT, "omniscient"),))), log)  # fmt: skip
    db = tmp / "graded" / "replay.duckdb"
    ingest([log], db=db, workers=0, analysis=(6, 0))
    ingest([str(ROOT / "tests" / "data" / "examples" / "international-to-50.jsonl")], db=db, workers=0,
           analysis=(0, 0))  # not graded on what the players could know yet: the progress line shows
    return db


class _Grader:
    """A background grader at a fixed pace (api.deepen.Deepener's face to the pages)."""

    def __init__(self) -> None:
        from api.deepen import Pace

        self.pace = Pace()
        self.pace.per_second = lambda now=None: (0.02, 0.2)  # type: ignore[method-assign]

    def is_alive(self) -> bool:
        return True


@contextmanager
def _serving(db: Path, grader: bool) -> Iterator[str]:
    import uvicorn

    from api.app import create_app

    app = create_app(db)
    if grader:
        app.state.deepener = _Grader()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _take(browser: Any, url: str, shots: list[tuple[str, str, str, str, int, str]], out: Path) -> None:
    import httpx

    found = httpx.get(url + "/api/matches", params={"player": CHEAT}).json()["matches"]
    cheat_match = found[0]["match"] if found else ""
    for name, _, path, what, width, how in shots:
        page = browser.new_page(viewport={"width": width, "height": 844 if width < 500 else 900},
                                color_scheme="dark" if how == "dark" else "light")
        page.goto(url + path.replace("{cheat_match}", cheat_match))
        if how == "print":
            page.emulate_media(media="print")
        target = out / name
        if what == "@viewport":
            page.screenshot(path=str(target))
        elif what:
            page.locator(what).first.screenshot(path=str(target))
        else:
            page.screenshot(path=str(target), full_page=True)
        page.close()
        print(target)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "docs"))
    ap.add_argument("names", nargs="*", help="the screenshots to take (all by default)")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    from reports import derived

    derived.subscribe()  # the ratings, reports and insights follow the loads, as `replay ingest`
    wanted = [s for s in SHOTS if not args.names or s[0] in args.names]
    with tempfile.TemporaryDirectory(prefix="replay-shots-") as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                    args=["--no-sandbox", "--headless", "--disable-gpu"])
        for store, build in (("samples", _samples), ("graded", _graded)):
            shots = [s for s in wanted if s[1] == store]
            if shots:
                with _serving(build(Path(tmp)), grader=store == "graded") as url:
                    _take(browser, url, shots, Path(args.out))
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
