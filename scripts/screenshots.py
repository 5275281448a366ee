"""Take the screenshots in docs/ (docs/screenshot-*.png) of a server over the sample logs.

    python scripts/screenshots.py [--out docs] [NAME ...]

NAMEs (e.g. screenshot-pair.png) take those only. "{pair}" in a path is the
best-rated pair of the store (a=...&b=...).

Builds a store from sample_logs/ in a temporary folder, serves it on a free
loopback port and drives Debian's chromium (/usr/bin/chromium) through
playwright, as the browser tests do.
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# (file, path, what to capture: a CSS selector, "" for the whole page or "@viewport" for
# what the screen shows, the viewport width, and how: "" as is, "dark" in the dark
# theme, "print" as the page prints)
SHOTS = [
    ("screenshot-replay.png", "/matches/m-8000-0001/hands/1?ply=40", "main", 1280, ""),
    ("screenshot-seat-view.png", "/matches/m-8000-0001/hands/1?view=seat1&ply=24", "main", 1280, ""),
    ("screenshot-matches.png", "/matches?profile=international&sort=hands&order=desc", "main", 1280, ""),
    ("screenshot-fairness-charts.png", "/fairness", "#charts", 1280, ""),
    ("screenshot-player.png", "/players/p-00001?profile=international", "main", 1280, ""),
    ("screenshot-glossary.png", "/glossary", "main", 1280, ""),
    ("screenshot-glossary-390.png", "/glossary", "@viewport", 390, ""),
    ("screenshot-player-390.png", "/players/p-00001", "@viewport", 390, ""),
    ("screenshot-player-dark.png", "/players/p-00001", "@viewport", 1280, "dark"),
    ("screenshot-print-hand.png", "/matches/m-8000-0001/hands/1?ply=40", "", 1280, "print"),
    ("screenshot-pair.png", "/pair?{pair}", "main", 1280, ""),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "docs"))
    ap.add_argument("names", nargs="*", help="the screenshots to take (all by default)")
    args = ap.parse_args()
    import uvicorn
    from playwright.sync_api import sync_playwright

    from api.app import create_app
    from replay.ingest import ingest
    from reports import derived

    derived.subscribe()  # the ratings, reports and insights follow the loads, as `replay ingest`

    with tempfile.TemporaryDirectory(prefix="replay-shots-") as tmp:
        db = Path(tmp) / "data" / "replay.duckdb"
        db.parent.mkdir()
        ingest([str(ROOT / "sample_logs")], db=db, workers=0)
        import duckdb

        with duckdb.connect(str(db), read_only=True) as con:
            top = con.execute("SELECT player, partner FROM ratings WHERE partner IS NOT NULL AND pool = '*' "
                              "ORDER BY rating DESC, player LIMIT 1").fetchall()
        pair = f"a={top[0][0]}&b={top[0][1]}" if top else ""
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(create_app(db), host="127.0.0.1", port=port, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                            args=["--no-sandbox", "--headless", "--disable-gpu"])
                for name, path, what, width, how in SHOTS:
                    if args.names and name not in args.names:
                        continue
                    path = path.replace("{pair}", pair)
                    page = browser.new_page(viewport={"width": width, "height": 844 if width < 500 else 900},
                                            color_scheme="dark" if how == "dark" else "light")
                    page.goto(f"http://127.0.0.1:{port}{path}")
                    if how == "print":
                        page.emulate_media(media="print")
                    out = Path(args.out) / name
                    if what == "@viewport":
                        page.screenshot(path=str(out))
                    elif what:
                        page.locator(what).first.screenshot(path=str(out))
                    else:
                        page.screenshot(path=str(out), full_page=True)
                    page.close()
                    print(out)
                browser.close()
        finally:
            server.should_exit = True
            thread.join(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
