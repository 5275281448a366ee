"""The replay page's and its JSON twin's drawing: what they cost a render
worker, and whether a change keeps every byte.

Draws every finished, analysed hand of a store (the page as a worker draws
it, with no viewer; the twin with its principal lines worked out and
attached, as the store gives them) and prints the mean CPU of each, per
repetition; the first repetition draws with every cache of the process
empty, as a worker does a hand it has not drawn. With `--golden FILE` it
also draws each page from every view (no viewer and each seat, some with a
flagged player) and each seat's twin, and writes a hash of every output to
FILE, or, when FILE exists, compares: exit 1 if any output differs.

    python bench/draw.py --db /tmp/sample.duckdb --matches 20
    python bench/draw.py --db /tmp/sample.duckdb --golden /tmp/draw.json   # before a change, then after
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import pickle
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's api, not bench/api.py

if TYPE_CHECKING:
    from api.replay_model import HandData

Job = tuple["HandData", "HandData", dict[str, Any], list[dict[str, Any]]]


def jobs(db: str, matches: int | None) -> list[Job]:
    """(the page's hand, the twin's hand with its lines, info, seats) of each finished, analysed hand."""
    import duckdb

    from api import queries as q
    from api.hand_cache import hand_parts
    from api.review import for_drawing, work_out_lines

    con = duckdb.connect(db, read_only=True)
    ids = [r[0] for r in con.execute("SELECT DISTINCT match FROM hands ORDER BY match").fetchall()][:matches]
    out = []
    for m in ids:
        bundle = q.match_bundle(con.cursor(), m)
        if bundle is None:
            continue
        for h in range(1, 1000):
            found = hand_parts(bundle, m, h, con.cursor())
            if found is None:
                break
            data, info, seats = found
            if data.analysis is None or not data.finished:
                continue
            twin = for_drawing(dataclasses.replace(data, lines=work_out_lines(data)))
            page = hand_parts(bundle, m, h)  # as the page's job gets it: without the lines
            assert page is not None
            out.append((page[0], twin, info, seats))
    return out


def timed(work: list[Job], reps: int) -> None:
    from api.hand_page import hand_json
    from api.pages import draw_hand_page

    for rep in range(reps):
        page, twin = [], []
        for p, t, info, seats in work:
            args = pickle.loads(pickle.dumps((p, info, seats, None, None, frozenset()), protocol=5))
            start = time.process_time()
            draw_hand_page(*args)
            page.append(time.process_time() - start)
            targs = pickle.loads(pickle.dumps((t, info, seats, None), protocol=5))
            start = time.process_time()
            hand_json(*targs)
            twin.append(time.process_time() - start)
        print(f"repetition {rep + 1}: {len(work)} hands, page {statistics.fmean(page) * 1000:.3f} ms, "
              f"twin {statistics.fmean(twin) * 1000:.3f} ms (means)")


def golden(work: list[Job], path: Path) -> int:
    from api.hand_page import hand_json
    from api.pages import draw_hand_page

    got = {}
    for i, (p, t, info, seats) in enumerate(work):
        flags = frozenset([seats[0]["player"]]) if i % 3 == 0 and seats else frozenset()
        for v in [None, *range(p.players)]:
            got[f"{i}/page/{v}"] = hashlib.sha256(draw_hand_page(p, info, seats, None if i % 2 else 3, v, flags)).hexdigest()
            got[f"{i}/twin/{v}"] = hashlib.sha256(hand_json(t if v is None else p, info, seats, v)).hexdigest()
    if not path.exists():
        path.write_text(json.dumps(got))
        print(f"wrote {len(got)} hashes to {path}")
        return 0
    want = json.loads(path.read_text())
    bad = sorted(k for k in want.keys() | got.keys() if want.get(k) != got.get(k))
    print(f"{len(got)} outputs, {len(bad)} differ from {path}{': ' + ', '.join(bad[:10]) if bad else ''}")
    return 1 if bad else 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True, help="a store (opened read-only)")
    ap.add_argument("--matches", type=int, default=None, help="the first N matches only (default: all)")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--golden", type=Path, help="hashes of every output: written, or compared when the file exists")
    a = ap.parse_args(argv)
    from api.pages import warm

    warm()
    work = jobs(a.db, a.matches)
    if a.golden is not None:
        return golden(work, a.golden)
    timed(work, a.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
