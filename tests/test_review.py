"""The review: the move list and best moves on the replay page and in its JSON
twin, a seat's own grades in its view, a player's costliest moves, training
on a schedule and puzzles."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from replay.ingest import ingest
from tests.test_analysis import INTL

TOKEN = "review-token-1234"
HAND = "/matches/m-example-1/hands/1"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("review") / "data" / "replay.duckdb"
    path.parent.mkdir(parents=True)
    ingest([str(INTL)], db=path, workers=0, analysis=(6, 0))
    return path


@pytest.fixture(scope="module")
def client(db: Path) -> Iterator[TestClient]:
    from api.app import create_app

    app = create_app(db)
    with TestClient(app) as c:
        app.state.token = TOKEN
        yield c


@contextlib.contextmanager
def _cur(client: TestClient) -> Iterator[Any]:
    cur = client.app.state.store.cursor()  # type: ignore[attr-defined]
    try:
        yield cur
    finally:
        cur.close()


def _auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


def _player(client: TestClient, seat: int = 0) -> str:
    seats = client.get("/api/matches/m-example-1").json()["seats"]
    return str(next(s["player"] for s in seats if s["seat"] == seat))


def test_the_move_list_has_every_ply_its_marks_and_the_current_one(client: TestClient) -> None:
    twin = client.get("/api/" + HAND.lstrip("/")).json()
    page = client.get(HAND + "?ply=5").text
    items = re.findall(r'<li class="([^"]*)" data-ply="(\d+)"', page)
    assert [int(n) for _, n in items] == list(range(len(twin["plies"])))
    assert [n for c, n in items if "cur" in c.split()] == ["5"]
    for r in twin["review"]:
        cls = next(c for c, n in items if int(n) == r["ply"])
        if r["mark"] in ("?!", "?", "??"):
            assert f"g-{r['class']}" in cls
        elif r["mark"] == "too close to call":
            assert "close" in cls and r["class"] is None
    assert any(r["mark"] for r in twin["review"])
    forced = [p["ply"] for p in twin["plies"] if p["forced"]]
    assert forced and all(f'data-ply="{k}"' in page for k in forced)


def test_every_graded_ply_has_its_lines_and_reasons(client: TestClient) -> None:
    twin = client.get("/api/" + HAND.lstrip("/")).json()
    a = {p["ply"]: p for p in twin["info"]["analysis"]["plies"]}
    decisions = [k for k, p in a.items() if not p["forced"]]
    review = {r["ply"]: r for r in twin["review"]}
    assert set(review) == set(a)
    for k in decisions:
        r = review[k]
        if r["line_played"] is None:  # the closing passes of a block: nothing left to play
            continue
        assert r["line_played"][0] == a[k]["played"] and r["line_best"][0] == r["best"]
        assert r["why"] and all(isinstance(s, str) for s in r["why"])
        assert twin["plies"][k]["review"] == r
    assert sum(1 for k in decisions if review[k]["line_played"]) >= len(decisions) - 4


def test_the_best_move_is_on_the_board(client: TestClient) -> None:
    twin = client.get("/api/" + HAND.lstrip("/")).json()
    other = [r for r in twin["review"] if r["best"] and r["best"] != r["played"]]
    assert other
    page = client.get(HAND).text
    assert page.count('class="ghost"') == len(other)
    # the opening's best tile too, drawn above the tile that opened the line
    opening = next(r for r in twin["review"] if r["ply"] == 1)
    assert opening["best"] != opening["played"]
    assert f"<title>the best move: [{opening['best'][0]}|{opening['best'][1]}] to open the line</title>" in page
    # the best tile ringed in the mover's hand, unless it is the tile played (on the other end)
    assert page.count('class="bestring"') == len([r for r in other if r["best"][:2] != r["played"][:2]])


def test_a_seat_sees_its_own_grades_on_what_it_could_know(client: TestClient) -> None:
    for seat in range(4):
        twin = client.get(f"/api/{HAND.lstrip('/')}?view=seat{seat}").json()
        assert twin["info"]["analysis"] is None
        assert twin["review"] and all(r["ply"] for r in twin["review"])
        held = {t for p in twin["plies"] for t in ((p["hands"] or [None] * 4)[seat] or [])}
        for r in twin["review"]:
            assert set(r) == {"ply", "mark", "lost", "class", "best", "played", "forced"}  # no line, no exact value
            assert twin["plies"][r["ply"]]["seat"] == seat
            if r["best"] and r["best"] not in ("pass", "draw", "yield"):
                assert r["best"][:2] in held or r["best"][:2][::-1] in held
        page = client.get(f"{HAND}?view=seat{seat}").text
        assert "Your move" in page and ">exact<" not in page and 'class="pline"' not in page


_LINE_TILE = re.compile(r'<use href="#([hv]\d\d)" x="([\d.]+)" y="([\d.]+)" width="(22|44)" height="(22|44)">'
                        r"<title>\[(\d)\|(\d)\]</title>")


def test_a_line_lies_where_the_board_lays_its_tiles(client: TestClient) -> None:
    """The JSON twin lays each principal line on the board: where the played
    line follows the hand as it went, its tiles take the very slots the
    board draws them in, and each tile leaves the hand of the seat that plays it."""
    twin = client.get("/api/" + HAND.lstrip("/")).json()
    page = client.get(HAND).text
    slot = {f"{m[5]}{m[6]}": [m[0], float(m[1]), float(m[2]), int(m[3]), int(m[4])] for m in _LINE_TILE.findall(page)}
    plies = twin["plies"]
    compared = 0
    for r in twin["review"]:
        if not r["line_played"]:
            continue
        k = r["ply"]
        for which in ("played", "best"):
            moves, steps, ghosts = r[f"line_{which}"], r[f"steps_{which}"], r[f"ghosts_{which}"]
            assert len(ghosts) == len(moves)
            for m, (seat, _, _), g in zip(moves, steps, ghosts, strict=True):
                assert (g is None) == (m in ("pass", "draw"))
                if g is not None and g[5] is not None:
                    assert g[5][0] == seat
        # the played line, as long as it is the hand's own continuation
        for j, (m, g) in enumerate(zip(r["line_played"], r["ghosts_played"], strict=True)):
            real = plies[k + j] if k + j < len(plies) else None
            if real is None or real["kind"] != "play" or f"{real['tile']} {real['end']}" != m:
                break
            tile = real["tile"]
            assert g[:5] == slot.get(tile) or g[:5] == slot.get(tile[::-1]), (k, j, m)
            compared += 1
    assert compared > 20


def test_a_seats_view_draws_no_line_and_no_tile_it_did_not_see(client: TestClient) -> None:
    """A seat's view draws its own best moves only, from its own hand: no
    line (a line speaks of every hand), no ghost or ring of a tile it did not hold."""
    full = client.get("/api/" + HAND.lstrip("/")).json()
    assert any(r["ghosts_best"] for r in full["review"])  # the whole view has them
    drawn = 0
    for seat in range(4):
        body = client.get(f"/api/{HAND.lstrip('/')}?view=seat{seat}").text
        assert "ghosts_" not in body and "line_played" not in body and "steps_" not in body
        page = client.get(f"{HAND}?view=seat{seat}").text
        assert "data-json" not in page and 'id="mover-only"' not in page
        held = {t for p in full["plies"] for t in (p["hands"] or [[]] * 4)[seat]}
        held |= {t[::-1] for t in held}
        shown = re.findall(r"<title>the best move: \[(\d)\|(\d)\]", page)
        assert all(a + b in held for a, b in shown), seat
        drawn += len(shown)
        for g in re.findall(r'<g class="ghost"><use href="#h(\d\d)"', page):
            assert g in held, (seat, g)
    assert drawn  # some seat's own best move is on its board


def test_a_flagged_player_is_marked_on_a_hand_page_a_render_worker_draws(db: Path) -> None:
    """A render worker has no store to ask who is flagged: the server sends
    the hand's flags with it. The mark is beside the name in the seats, the
    accuracy table and on the board, and a cached page is redrawn when the
    flags change though the match did not."""
    import api.pages
    from api.app import create_app

    try:
        with TestClient(create_app(db, render_workers=1)) as c:
            pool = c.app.state.render_pool  # type: ignore[attr-defined]
            store = c.app.state.store  # type: ignore[attr-defined]
            player = _player(c, 1)
            api.pages.mark_flagged(lambda: frozenset())
            for _ in range(2):  # drawn, then kept across a generation with its version learnt
                store.bump()
                page = c.get(HAND).text
                assert "flagmark" not in page and "flagtext" not in page
            api.pages.mark_flagged(lambda: frozenset({player, "someone-else"}))
            store.bump()  # a new grade: the flags change, the match does not
            page = c.get(HAND).text
            assert pool.live  # drawn by the worker, not in this process
            mark = f'<a class="flagmark" href="/suspicious/player?player={player}"'
            seats = page[page.index("<h2>Seats in this hand</h2>"):]
            assert seats.count(mark) == 1 and seats.count("flagmark") == 1
            acc = page[page.index('<table class="grid narrow acc">'):]
            assert mark in acc[: acc.index("</table>")]
            assert page.count('<tspan class="flagtext">') == 1
    finally:
        api.pages._flag_source.clear()


def test_render_workers_draw_the_same_json_twins(client: TestClient, db: Path) -> None:
    """The JSON twin drawn by a render worker (replay serve) equals the one
    drawn in-process, principal lines and their ghosts included, in the whole
    view and a seat's; a seat the hand does not have is still refused."""
    from api.app import create_app

    urls = ["/api/matches/m-example-1/hands/1", "/api/matches/m-example-1/hands/2?view=seat1"]
    want = [client.get(u).json() for u in urls]
    assert any(r.get("ghosts_best") for r in want[0]["review"])  # the lines are laid on the board
    with TestClient(create_app(db, render_workers=1)) as c:
        pool = c.app.state.render_pool  # type: ignore[attr-defined]
        assert [c.get(u).json() for u in urls] == want
        assert pool.live  # drawn by the worker, not in this process
        assert c.get("/api/matches/m-example-1/hands/1?view=seat9").status_code == 422
        assert c.get("/api/matches/m-example-1/hands/999").status_code == 404


def test_the_twin_drawn_without_the_solvers_replay_is_the_same(client: TestClient) -> None:
    """A render worker gets the hand without its replay for the solver
    (`for_drawing`: the scoring alone); every twin of the match reads the same."""
    from api import queries
    from api.hand_cache import hand_parts
    from api.hand_page import hand_json
    from api.review import for_drawing, line_book

    book = line_book(client.app.state)  # type: ignore[attr-defined]
    with _cur(client) as cur:
        b = queries.match_bundle(cur, "m-example-1")
        assert b is not None
        parts = [p for h in sorted(b.hands) if (p := hand_parts(b, "m-example-1", h, cur)) is not None]
        whole = [(book.attach(p[0], cur), *p[1:]) for p in parts]
    light = [(for_drawing(p[0]), *p[1:]) for p in whole]
    assert all(h.review is None and h.scoring is not None for h, _, _ in light if h.analysis is not None)
    assert [hand_json(*p) for p in light] == [hand_json(*p) for p in whole]
    assert sum(1 for h, _, _ in light if h.lines) > 1


def test_stepping_through_a_match_draws_its_twins_without_a_thread(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a restart, the match's first twin reads the store (on a thread);
    the next hands' come from what the server then holds (the bundle, the
    solver's replays, the stored lines read with the first): no thread, the
    same twins."""
    import anyio.to_thread

    import api.hand_cache as cache_mod
    from api.app import create_app

    urls = [f"/api/matches/m-example-1/hands/{h}" for h in range(1, 5)]
    with TestClient(create_app(db)) as c:
        want = [c.get(u).json() for u in urls]  # the lines worked out and stored
    assert sum(1 for t in want for r in t["review"] if r["line_played"]) > 3
    calls: list[object] = []
    real = anyio.to_thread.run_sync

    async def run_sync(fn: object, *args: object, **kw: object) -> object:
        calls.append(fn)
        return await real(fn, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(cache_mod.anyio.to_thread, "run_sync", run_sync)
    with TestClient(create_app(db)) as c:
        got = [c.get(u).json() for u in urls]
        book = cache_mod.line_book(c.app.state)  # type: ignore[attr-defined]
        assert (book.worked, book.read) == (0, sum(1 for t in want if any(r["line_played"] for r in t["review"])))
    assert got == want
    assert calls.count(cache_mod.twin_parts) == 1


def test_costliest_moves_sort_and_filter(client: TestClient, db: Path) -> None:
    player = _player(client)
    got = client.get(f"/api/players/{player}/costliest").json()
    losses = [m["loss"] for m in got["moves"]]
    assert losses and losses == sorted(losses, reverse=True) and got["total"] == len(losses)
    with _cur(client) as con:
        n = con.execute("""SELECT count(*) FROM move_analysis a JOIN seats s ON s.match = a.match AND s.seat = a.seat
                           WHERE s.player = ? AND NOT a.forced AND coalesce(a.pimc_loss, a.dd_loss) > 0""",
                        [player]).fetchone()[0]
    assert got["total"] == n
    m = got["moves"][0]
    assert m["replay"] == f"/matches/m-example-1/hands/{m['hand']}?ply={m['ply']}"
    assert client.get(m["replay"]).status_code == 200
    late = client.get(f"/api/players/{player}/costliest?phase=late&sort=date&order=asc").json()
    assert all(x["phase"] == "late" for x in late["moves"]) and late["total"] <= got["total"]
    cls = client.get(f"/api/players/{player}/costliest?class=mistake").json()
    assert all(x["class"] == "mistake" for x in cls["moves"])
    assert client.get(f"/players/{player}/costliest?sort=dd_loss").status_code == 200
    assert client.get("/api/players/nobody/costliest").status_code == 404
    assert client.get(f"/api/players/{player}/costliest?phase=noon").status_code == 422


def test_a_training_round_schedules_the_position(client: TestClient) -> None:
    player = _player(client, 1)
    r = client.get(f"/api/train?player={player}").json()
    assert r["counts"]["cards"] == 0 and r["new"] and r["next"] is not None
    pos = r["position"]
    assert pos["seat"] in range(4) and pos["moves"]
    hands = pos["position"]["hands"]
    assert all(h is None for s, h in enumerate(hands) if s != pos["seat"])  # as the seat saw it
    body = {**r["next"], "player": player, "move": pos["moves"][0]}
    assert client.post("/api/train/answer", json=body).status_code in (401, 403)  # a write
    got = client.post("/api/train/answer", json=body, headers=_auth()).json()
    assert got["schedule"]["answers"] == 1 and got["why"]
    assert got["schedule"]["rating"] == ("good" if got["loss"] <= 0 else "hard" if got["loss"] < 5 else "again")
    after = client.get(f"/api/train?player={player}").json()
    assert after["counts"]["cards"] == 1
    assert (after["cards"][0]["match"], after["cards"][0]["ply"]) == (r["next"]["match"], r["next"]["ply"])
    assert after["next"] != r["next"]  # the position waits for its time
    # a position that is not the player's own decision is refused
    other = _player(client, 2)
    if other != player:
        assert client.post("/api/train/answer", json={**body, "player": other}, headers=_auth()).status_code == 422
    assert client.get(f"/train?player={player}").status_code == 200


def test_puzzles_are_clear_under_both_grades(client: TestClient, db: Path) -> None:
    got = client.get("/api/puzzles").json()
    assert got["puzzles"] and got["hands"] > 0
    assert got["per_10000_hands"] == round(10_000 * got["found"] / got["hands"], 1)
    with _cur(client) as con:
        for p in got["puzzles"]:
            (alts,) = con.execute("SELECT alternatives FROM move_analysis WHERE match = ? AND hand = ? AND ply = ?",
                                  [p["match"], p["hand"], p["ply"]]).fetchone()
            dd = sorted((a["dd"] for a in alts), reverse=True)
            pi = sorted((a["pimc"] for a in alts), reverse=True)
            assert dd[0] - dd[1] >= 10 and pi[0] - pi[1] >= 10
            assert "answer" not in p and "played" not in p
    p = got["puzzles"][0]
    theme = next((t for q in got["puzzles"] for t in q["themes"]), None)
    if theme is not None:
        f = client.get("/api/puzzles", params={"theme": theme.split(" in ")[0]}).json()
        assert f["puzzles"] and all(any(t.startswith(theme.split(" in ")[0]) for t in q["themes"]) for q in f["puzzles"])
    body = {"match": p["match"], "hand": p["hand"], "ply": p["ply"], "move": p["moves"][0]}
    a = client.post("/api/puzzles/answer", json=body, headers=_auth()).json()
    right = {**body, "move": a["answer"]}
    assert client.post("/api/puzzles/answer", json=right, headers=_auth()).json()["solved"] is True
    after = next(q for q in client.get("/api/puzzles").json()["puzzles"] if (q["match"], q["hand"], q["ply"]) == (p["match"], p["hand"], p["ply"]))
    assert after["tries"] == 2 and after["solved"] == 1 + int(a["solved"])
    page = client.get(f"/puzzles?match={p['match']}&hand={p['hand']}&ply={p['ply']}").text
    assert 'id="trainer"' in page and "★" not in page and "known" not in page.split('id="trainer"')[1]


def test_any_alternative_has_its_line_on_demand(client: TestClient) -> None:
    twin = client.get("/api/" + HAND.lstrip("/")).json()
    a = next(p for p in twin["info"]["analysis"]["plies"] if not p["forced"] and len(p["alternatives"]) >= 3)
    for alt in a["alternatives"]:
        got = client.get("/api/lines", params={"match": "m-example-1", "hand": 1, "ply": a["ply"], "move": alt["move"]})
        assert got.status_code == 200
        j = got.json()
        assert j["line"][0] == alt["move"] and j["value"] == alt["dd"] and j["value_played"] == a["dd"]
        assert j["why"] and "(best)" not in " ".join(j["why"])
    bad = client.get("/api/lines", params={"match": "m-example-1", "hand": 1, "ply": a["ply"], "move": "66 left"})
    assert bad.status_code == 404 or "66 left" in {x["move"] for x in a["alternatives"]}


def test_a_seats_own_values_do_not_depend_on_tiles_it_did_not_see() -> None:
    """What a seat's view shows of its own decisions (the values on what it
    could know) is the same whatever the others held, among the deals that
    agree with what the seat saw: a differential test over the decisions of
    the sample hands, each graded again with the others' tiles (and the
    boneyard) replaced by another such deal."""
    import random

    from replay.analysis.grades import Analyzer, decision_rng, engine_move, inputs_from_report
    from replay.engine import apply, legal_moves, new_hand
    from replay.knowledge import Tracker
    from replay.validate.run import validate_paths

    an = Analyzer(samples=6, seed=0)
    rep = validate_paths([INTL, Path(__file__).resolve().parent.parent / "sample_logs" / "domena_2p.jsonl"],
                         keep_moves=True)
    checked = changed = 0
    rng = random.Random(5)
    for m in rep.matches:
        for inp in inputs_from_report(m)[:3]:
            if inp.skip is not None:
                continue
            state = new_hand(inp.rules, [list(h) for h in inp.dealt], leader=inp.leader, opening=inp.opening,
                             stock=inp.stock)
            tracker = Tracker(state, fixed_by=inp.fixed_by)
            for k, (_, kind, tile, end) in enumerate(inp.moves, 1):
                move, laid = engine_move(state, kind, tile, end)
                if len(legal_moves(state)) > 1 and state.result is None and k % 2 == 0:
                    s = state.turn
                    hands, stock = tracker.hidden(state, s).sample(1, rng)[0]
                    other = state._replace(hands=tuple(hands), stock=tuple(stock))
                    assert other.hands[s] == state.hands[s]
                    changed += other.hands != state.hands
                    mine = an.sampled(state, tracker, inp.context, decision_rng(0, inp.match, inp.hand, k))
                    theirs = an.sampled(other, tracker, inp.context, decision_rng(0, inp.match, inp.hand, k))
                    assert mine == theirs, (inp.match, inp.hand, k)
                    checked += 1
                tracker.see(state, move)
                state = apply(state, laid)
    assert checked > 50 and changed > checked // 2
