"""The replay as a table (api.board) and a seat's view of a hand.

The snake: for any line (property test) and for a line of all 28 tiles, no
two tiles overlap, every tile lies on the felt, each tile touches the one
before it, and the halves that meet carry the same number.

A seat's view: what that seat knew and nothing more, in the page and in its
JSON twin; a hand still on shows no seat's tiles in any view.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from api.app import create_app
from api.board import PITCH, U, places, snake, table_svg
from api.hand_page import build_plies
from api.replay_model import FindingRow, HandData, MoveRow, Placed, SeatLabel, label
from replay.tiles import HIGH, LOW, N_TILES, TILE_OF, parse_tile
from tests.test_api import OPEN_MATCH, SAMPLES, build_store, open_hand_log

LO, HI = 164.0, 736.0  # the line's room on a table of four (api.board: WIDTH - 2 * (SIDE_W + PAD))


def _chain(rng: random.Random, length: int) -> tuple[list[Placed], int]:
    """A line as a hand could lay it: an opening tile, then tiles on either end; the opener's index."""
    first = rng.randrange(N_TILES)
    line = [Placed(first, HIGH[first], LOW[first])]
    used = {first}
    opener = 0
    for _ in range(length - 1):
        ends = [("left", line[0].a), ("right", line[-1].b)]
        rng.shuffle(ends)
        for side, num in ends:
            free = [t for t in TILE_OF[num] if t not in used]
            if free:
                t = rng.choice(free)
                used.add(t)
                other = HIGH[t] if LOW[t] == num else LOW[t]
                if side == "left":
                    line.insert(0, Placed(t, other, num))
                    opener += 1
                else:
                    line.append(Placed(t, num, other))
                break
        else:
            break
    return line, opener


def _all_28() -> list[Placed]:
    """Every tile in one line (each number meets 8 half-tiles: an Euler circuit)."""
    edges = {t: (LOW[t], HIGH[t]) for t in range(N_TILES)}
    left = set(edges)
    stack, path = [(6, None)], []
    while stack:
        num, via = stack[-1]
        nxt = next((t for t in sorted(left) if num in edges[t]), None)
        if nxt is None:
            path.append(stack.pop())
        else:
            left.discard(nxt)
            a, b = edges[nxt]
            stack.append((b if a == num else a, nxt))
    path.reverse()
    out = []
    for (num, _), (nxt, t) in zip(path, path[1:], strict=False):
        assert t is not None
        out.append(Placed(t, num, nxt))
    assert len(out) == 28
    return out


def _check(line: list[Placed], opener: int) -> list:
    slots, left_ends, right_ends = snake(line, opener, LO, HI, 0.0)
    assert len(slots) == len(line)
    assert len(left_ends) == opener + 1 and len(right_ends) == len(line) - opener
    for i, s in enumerate(slots):
        t = line[i].tile
        # the symbol shows the tile, and a double lies across the line
        assert sorted(map(int, s.sym[1:])) == [LOW[t], HIGH[t]]
        assert {s.w, s.h} == {U, 2 * U}
        # on the felt (a double under a turn may reach half a tile past the room)
        assert s.x >= LO - U / 2 and s.x + s.w <= HI + U / 2, (i, s)
        for o in slots[:i]:
            overlap_x = min(s.x + s.w, o.x + o.w) - max(s.x, o.x)
            overlap_y = min(s.y + s.h, o.y + o.h) - max(s.y, o.y)
            assert overlap_x <= 0 or overlap_y <= 0, (s, o)
    for i, (a, b) in enumerate(zip(slots, slots[1:], strict=False)):
        # neighbours touch (a gap of at most G) ...
        gap_x = max(a.x, b.x) - min(a.x + a.w, b.x + b.w)
        gap_y = max(a.y, b.y) - min(a.y + a.h, b.y + b.h)
        assert max(gap_x, gap_y) <= 3.5 and min(gap_x, gap_y) < 0, (i, a, b)
        # ... and the halves that meet carry the number they share
        shared = line[i].b
        assert line[i + 1].a == shared
        assert _half_towards(a, b) == shared and _half_towards(b, a) == shared, (i, a, b)
    return slots


def _half_towards(s, o) -> int:  # type: ignore[no-untyped-def]
    """The number on the half of slot `s` nearer to slot `o`."""
    first, second = int(s.sym[1]), int(s.sym[2])
    if first == second:
        return first
    ox, oy = o.x + o.w / 2, o.y + o.h / 2
    if s.sym[0] == "h":
        return first if abs(ox - s.x - U / 2) < abs(ox - s.x - 1.5 * U) else second
    return first if abs(oy - s.y - U / 2) < abs(oy - s.y - 1.5 * U) else second


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(1, 28))
def test_any_line_fits_the_felt_as_a_snake(rng: random.Random, length: int) -> None:
    line, opener = _chain(rng, length)
    _check(line, opener)


@settings(max_examples=200, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(2, 28))
def test_a_longer_line_keeps_its_tiles_where_they_were(rng: random.Random, length: int) -> None:
    """A line grown at either end lays its old tiles where they lay (the
    principal lines extend the hand's line so, and the layout reuses each
    arm's prefix); with the kept prefixes forgotten, the same slots."""
    from api import board

    line, opener = _chain(rng, length)
    cut_left, cut_right = rng.randint(0, opener), rng.randint(opener + 1, length)
    short = line[cut_left:cut_right]
    before, _, _ = snake(short, opener - cut_left, LO, HI, 0.0)
    after, _, _ = snake(line, opener, LO, HI, 0.0)
    assert after[cut_left:cut_right] == before
    board._arm_of.cache_clear()
    board._left_arm.cache_clear()
    assert snake(line, opener, LO, HI, 0.0)[0] == after


@pytest.mark.parametrize("opener", [0, 5, 14, 27])
def test_all_28_tiles_fit(opener: int) -> None:
    slots = _check(_all_28(), opener)
    rows = {round(s.y + s.h / 2) for s in slots if s.w == 2 * U}
    assert len(rows) <= 7  # turns at the edges: a few rows, not a ribbon
    assert max(s.y + s.h for s in slots) - min(s.y for s in slots) <= 7 * PITCH


def test_seats_around_the_table() -> None:
    assert places(4) == {0: "bottom", 1: "right", 2: "top", 3: "left"}  # partners opposite
    assert places(4, bottom=1) == {1: "bottom", 2: "right", 3: "top", 0: "left"}
    assert places(3) == {0: "bottom", 1: "right", 2: "left"}
    assert places(2) == {0: "bottom", 1: "top"}


def _t(name: str) -> int:
    return parse_tile(name)


def _mv(ply: int, seat: int, kind: str, tile: str | None, end: str | None, left: int, right: int,
        legal: tuple[str, ...] = (), stock: int = 0) -> MoveRow:
    return MoveRow(ply, 10 + ply, seat, kind, _t(tile) if tile else None, end, left, right, stock,
                   legal, len(legal) == 1)


DEALT = [["65", "64", "00"], ["55", "11", "22"]]
MOVES = [
    _mv(1, 0, "play", "65", None, 6, 5, ("65:left", "64:left"), stock=2),
    _mv(2, 1, "draw", "53", None, 6, 5, ("DRAW",), stock=1),
    _mv(3, 1, "play", "53", "right", 6, 3, ("53:right", "55:right"), stock=1),
    _mv(4, 0, "pass", None, None, 6, 3, ("PASS",), stock=1),
    _mv(5, 1, "play", "11", "left", 6, 3, ("11:left",), stock=1),  # not legal: 1 is on neither end
]


def _hand(result: str | None = "domino") -> HandData:
    return HandData(
        match="m", hand=1, players=2, teams="individual", result=result, winner=1, points=(0, 9),
        score=(0, 9), notes=(), leader=0, blocker=None,
        dealt=tuple(tuple(_t(x) for x in h) for h in DEALT), stock0=2,
        seats=(SeatLabel(0, "p0"), SeatLabel(1, "p1")), moves=tuple(MOVES),
        findings=(FindingRow("ILLEGAL_PLAY", "error", 1, 15, "seat 1 holds 11 but the ends are 6 and 3"),),
    )


def test_a_seats_view_of_its_plies() -> None:
    full = build_plies(_hand())
    mine = build_plies(_hand(), viewer=0)
    assert [p.counts for p in mine] == [[3, 3], [2, 3], [2, 4], [2, 3], [2, 3], [2, 3]]
    assert [p.counts for p in full] == [p.counts for p in mine]
    # its own tiles and pips, never the other seat's
    assert all(p.hands is not None and p.hands[1] is None and p.pips[1] is None for p in mine)
    assert mine[0].hands[0] == full[0].hands[0]
    # its own choices; the other seat's draw, choices and forced moves are its own business
    assert mine[1].alternatives == full[1].alternatives and mine[1].forced is False
    assert mine[2].title == "Seat 1 draws a tile (1 left)" and full[2].title == "Seat 1 draws [5|3] (1 left)"
    assert not mine[2].tile_known and full[2].tile_known
    assert mine[3].alternatives == [] and full[3].alternatives and mine[3].forced is None
    # what a pass shows is for everyone; a finding's message may name a held tile
    assert mine[4].voids == full[4].voids and mine[4].voids[0] == (3, 6)
    notes = [n.text for p in mine for n in p.notes if n.kind == "finding"]
    assert notes == ["ILLEGAL_PLAY (details hidden: they may name a tile this page does not show)"]
    assert any("holds 11" in n.text for p in full for n in p.notes)
    assert mine[2].to_json()["tile"] is None and mine[2].to_json()["hands"][1] is None
    # the other seat's tiles are nowhere in its drawing: backs stand for them
    svg = table_svg(mine, _hand().seats, 2, "individual")
    for t in ("55", "22"):  # seat 1 held them and never played them
        assert label(_t(t)) not in svg and f"#v{t}" not in svg, t
    assert 'href="#back"' in svg and "this view" in svg
    # a hand still on: no seat's tiles, whoever looks
    for viewer in (None, 0, 1):
        plies = build_plies(_hand(result=None), viewer=viewer)
        assert all(p.hands is None and p.alternatives == [] for p in plies)
        assert plies[2].title == "Seat 1 draws a tile (1 left)"


# --- the pages ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    base = tmp_path_factory.mktemp("board")
    db = build_store(base / "data", [SAMPLES / "international.jsonl", SAMPLES / "domena_2p.jsonl",
                                     open_hand_log(base)])
    with TestClient(create_app(db)) as c:
        yield c


def _secret(plies: list[dict], viewer: int) -> set[str]:
    """The tiles the other seats held at some point and never laid on the line
    (but the hanged doubles: the line shows everyone they can no longer be played)."""
    on_line = set(plies[-1]["line"]) | {x[::-1] for x in plies[-1]["line"]} | set(plies[-1]["hanged"])
    held = {t for p in plies for s, h in enumerate(p["hands"] or []) if s != viewer for t in h}
    drawn = {p["tile"] for p in plies if p["kind"] == "draw" and p["seat"] != viewer}
    return {t for t in held | drawn if t not in on_line}


@pytest.mark.parametrize("match", ["m-8000-0001", "m-3001-0001"])
@pytest.mark.parametrize("hand", [1, 2])
def test_a_seats_view_leaks_nothing(client: TestClient, match: str, hand: int) -> None:
    full = client.get(f"/api/matches/{match}/hands/{hand}").json()
    players = len(full["seats"])
    assert full["view"] == "all" and full["places"]["0"] == "bottom"
    kept = 0
    for viewer in range(players):
        data = client.get(f"/api/matches/{match}/hands/{hand}?view=seat{viewer}").json()
        assert data["view"] == f"seat{viewer}" and data["places"][str(viewer)] == "bottom"
        plies = data["plies"]
        secret = _secret(full["plies"], viewer)
        kept += len(secret)
        for p, f in zip(plies, full["plies"], strict=True):
            assert p["hands"][viewer] == f["hands"][viewer] and p["counts"] == f["counts"]
            assert all(h is None for s, h in enumerate(p["hands"]) if s != viewer)
            if p["seat"] is not None and p["seat"] != viewer:
                assert p["alternatives"] == [] and p["forced"] is None
                if p["kind"] == "draw":
                    assert p["tile"] is None
        body = client.get(f"/api/matches/{match}/hands/{hand}?view=seat{viewer}").text
        html = client.get(f"/matches/{match}/hands/{hand}?view=seat{viewer}").text
        for t in secret:
            assert f'"{t}"' not in body, (viewer, t)
            hi, lo = t[0], t[1]
            for sym in (f"#v{hi}{lo}", f"#v{lo}{hi}", f"#h{hi}{lo}", f"#h{lo}{hi}"):
                assert sym not in html, (viewer, sym)
            assert f"[{hi}|{lo}]" not in html, (viewer, t)
        assert "Seen from <b>seat" in html and 'href="#back"' in html
        # the page's links keep the view
        assert f'href="?view=seat{viewer}&ply=1"' in html or f'href="?view=seat{viewer}&amp;ply=1"' in html
    assert kept  # some seat kept something (or drew it) to the end


def test_views_of_a_hand_still_on(client: TestClient) -> None:
    for view in ("", "?view=seat0", "?view=seat1"):
        data = client.get(f"/api/matches/{OPEN_MATCH}/hands/2{view}").json()
        assert all(p["hands"] is None and p["alternatives"] == [] for p in data["plies"])
        html = client.get(f"/matches/{OPEN_MATCH}/hands/2{view}").text
        assert "the hands stay hidden until the hand is over" in html


def test_view_parameter(client: TestClient) -> None:
    base = "/matches/m-8000-0001/hands/1"
    assert client.get(base + "?view=all").status_code == 200
    assert client.get(base + "?view=seat4").status_code == 422
    assert client.get(base + "?view=seat").status_code == 422
    assert client.get(base + "?view=north").status_code == 422
    assert client.get("/api" + base + "?view=seat9").status_code == 422
    assert client.get("/api" + base + "?view=seat1x").status_code == 422
    assert client.get("/api/matches/m-3001-0001/hands/1?view=seat2").status_code == 422


def test_the_table_page(client: TestClient) -> None:
    html = client.get("/matches/m-8000-0001/hands/1").text
    assert html.count('<svg class="board table"') == 1
    for at in ("bottom", "right", "top", "left"):
        assert f'class="place {at}"' in html
    # tiles named as people say them, high half first
    assert re.search(r"Seat \d (opens with|plays) \[\d\|\d\]", html)
    assert re.search(r"<title>\[\d\|\d\]</title>", html)
    two = client.get("/matches/m-3001-0001/hands/1").text
    assert 'class="place bottom"' in two and 'class="place top"' in two and 'class="place left"' not in two
