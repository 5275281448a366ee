"""The web app over a store built from the sample logs: every route, HTML and JSON.

Security checks: escaping of names that look like HTML, bearer token on
writes, upload size limits (raw and gzip bombs), and no hidden tile of an
unfinished hand in any response.
"""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.board import table_svg
from api.hand_page import build_plies
from api.middleware import MAX_INFLATED, MAX_UPLOAD
from api.replay_model import FindingRow, HandData, MoveRow, SeatLabel
from api.tile_svg import ply_style
from replay.tiles import parse_tile

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
DEFECTS = ROOT / "sample_logs_defects"  # the planted-defect demo, a folder of its own
EXAMPLE_2P = ROOT / "tests" / "data" / "examples" / "domena-2p-to-40.jsonl"
TOKEN = "test-token-1234"
EVIL_NAME = "<script>alert(1)</script>"
EVIL_ID = "p-<i>x</i>"
# m-example-2 cut at seq 44: hand 2 is on, seat 1 has drawn 52, 50 and 33
OPEN_MATCH = "m-example-2"
HIDDEN = ("52", "50", "33", "51", "21")  # held, never shown before the cut


def open_hand_log(dest: Path) -> Path:
    """The 2-player example, renamed players, cut in the middle of hand 2."""
    out = []
    for raw in EXAMPLE_2P.read_bytes().splitlines():
        ev = orjson.loads(raw)
        if ev["seq"] > 44:
            break
        if ev["type"] == "match_start":
            ev["seats"][0] = {"seat": 0, "player": EVIL_ID, "name": EVIL_NAME}
        out.append(orjson.dumps(ev))
    path = dest / "open-hand.jsonl"
    path.write_bytes(b"\n".join(out) + b"\n")
    return path


def build_store(data: Path, paths: list[Path]) -> Path:
    """Ingest `paths` into a fresh store under `data`; the database path."""
    from replay.ingest import ingest

    data.mkdir(parents=True, exist_ok=True)
    db = data / "replay.duckdb"
    ingest([str(p) for p in paths], db=db, workers=0)
    return db


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("api")
    extra = open_hand_log(base)
    return build_store(base / "data", [SAMPLES, DEFECTS, extra])


@pytest.fixture(scope="module")
def client(store: Path) -> Iterator[TestClient]:
    with TestClient(create_app(store, token=TOKEN)) as c:
        yield c


@pytest.fixture()
def writable(store: Path, tmp_path: Path) -> Iterator[TestClient]:
    """A client over a copy of the store (for uploads and deletes)."""
    dest = tmp_path / "data"
    shutil.copytree(store.parent, dest)
    with TestClient(create_app(dest / store.name, token=TOKEN)) as c:
        yield c


def _j(client: TestClient, url: str) -> dict:
    r = client.get(url)
    assert r.status_code == 200, (url, r.text[:300])
    return r.json()


def _first(client: TestClient, **filters: str) -> dict:
    rows = _j(client, "/api/matches?" + "&".join(f"{k}={v}" for k, v in filters.items()))["matches"]
    assert rows, filters
    return rows[0]


# --- pages and twins ------------------------------------------------------------------


def test_home_lists_invalid_first(client: TestClient) -> None:
    data = _j(client, "/api/summary")
    assert data["counts"]["matches"] > 100
    assert data["counts"]["invalid"] >= 30
    assert data["invalid"] and all(m["verdict"] != "valid" for m in data["invalid"])
    html = client.get("/").text
    assert html.index("Invalid matches first") < html.index("Recent matches")
    assert data["invalid"][0]["match"] in html


def test_matches_filters_and_paging(client: TestClient) -> None:
    inv = _j(client, "/api/matches?verdict=invalid&per_page=500")
    assert inv["total"] >= 30 and all(m["verdict"] == "invalid" for m in inv["matches"])
    prof = _j(client, "/api/matches?profile=pr_3p")
    assert prof["total"] >= 3 and {m["profile"] for m in prof["matches"]} == {"pr_3p"}
    p1 = _j(client, "/api/matches?per_page=5&page=1")
    p2 = _j(client, "/api/matches?per_page=5&page=2")
    assert len(p1["matches"]) == 5 and p1["pages"] >= 2
    assert not {m["match"] for m in p1["matches"]} & {m["match"] for m in p2["matches"]}
    player = _j(client, "/api/matches?player=p-00005&per_page=500")
    assert player["total"] > 0
    for m in player["matches"][:5]:
        seats = _j(client, f"/api/matches/{m['match']}")
        held = {c["player"] for c in seats["seat_changes"]} | {s["player"] for s in seats["seats"]}
        assert "p-00005" in held
    none = _j(client, "/api/matches?date_from=2100-01-01")
    assert none["total"] == 0
    some = _j(client, "/api/matches?date_from=2000-01-01&date_to=2100-01-01")
    assert some["total"] > 0
    html = client.get("/matches?verdict=valid&page=2").text
    assert "page 2 of" in html and 'name="verdict"' in html
    assert client.get("/api/matches?verdict=bogus").status_code == 422


def test_match_page_score_sheet(client: TestClient) -> None:
    mid = _first(client, profile="venezuela", verdict="valid")["match"]
    data = _j(client, f"/api/matches/{mid}")
    hands = data["hands"]
    assert hands and data["match"]["verdict"] == "valid"
    # the running score is the sum of the hands' points
    total = [0, 0]
    for h in hands:
        if h["result"] in ("domino", "block"):
            total = [a + b for a, b in zip(total, h["points"], strict=True)]
        assert h["score"] == total
    # venezuela's (estimate) cells are named with their values
    cells = {c["option"] for c in data["match"]["estimate_cells"]}
    assert cells == {"count", "match_end"}
    html = client.get(f"/matches/{mid}").text
    assert "(estimate) cells" in html and "count = " in html
    assert html.count("replay →") == len(hands)


def test_match_findings_link_to_their_ply(client: TestClient) -> None:
    data = _j(client, "/api/findings?code=FALSE_PASS")
    f = data["findings"][0]
    assert f["code"] == "FALSE_PASS" and f["ply"] > 0
    hand = _j(client, f"/api/matches/{f['match']}/hands/{f['hand']}")
    ply = hand["plies"][f["ply"]]
    assert ply["seq"] == f["seq"]
    assert any(n["kind"] == "finding" and "FALSE_PASS" in n["text"] for n in ply["notes"])
    # a false pass reveals nothing: no void is inferred, and the pass is shown as not legal
    assert not any(n["kind"] == "pass" for n in ply["notes"])
    assert ply["voids"][ply["seat"]] == [] and "not legal: FALSE_PASS" in ply["title"]
    assert {"move": "pass (not legal)", "played": True} in ply["alternatives"]
    html = client.get(f"/matches/{f['match']}").text
    assert f"ply={f['ply']}" in html and f"#ply={f['ply']}" in html


def test_seat_changes_and_bots(client: TestClient) -> None:
    mid = "m-6000-0002"  # seat 1 goes to bot-random from hand 4
    data = _j(client, f"/api/matches/{mid}")
    change = [c for c in data["seat_changes"] if c["player"] == "bot-random"]
    assert change and change[0]["bot"] and change[0]["from_hand"] == 4
    by_hand = {h["hand"]: h["seats"][1] for h in data["hands"]}
    assert by_hand[3]["player"] != "bot-random" and by_hand[4]["player"] == "bot-random"
    html = client.get(f"/matches/{mid}").text
    assert "Seat changes" in html and 'class="bot"' in html


def test_matches_stored_before_numbers_read_the_same(store: Path, tmp_path: Path) -> None:
    """Every match reads the same from its packed replay (migration 008), from
    its rows by number (a store from before 008), and by match id (before
    006, mno NULL; the analysis rows too: tests/test_analysis.py reads a
    store's analysis by number and by id)."""
    import duckdb

    from api.queries import match_bundle
    from replay.store import NUMBERED

    dest = tmp_path / "data"
    shutil.copytree(store.parent, dest)
    con = duckdb.connect(str(dest / store.name))
    try:
        ids = [m for (m,) in con.execute("SELECT match FROM matches ORDER BY match").fetchall()]
        assert con.execute("SELECT count(replay) FROM matches").fetchall() == [(len(ids),)]
        packed = [match_bundle(con.cursor(), m) for m in ids]
        con.execute("UPDATE matches SET replay = NULL")
        by_number = [match_bundle(con.cursor(), m) for m in ids]
        for t in NUMBERED:  # the analysis rows too (migration 021)
            con.execute(f"UPDATE {t} SET mno = NULL")
        by_id = [match_bundle(con.cursor(), m) for m in ids]
    finally:
        con.close()
    assert len(ids) > 5 and by_id == by_number == packed
    assert sum(len(b.findings) for b in by_id if b is not None) > 0
    con = duckdb.connect(str(dest / store.name))
    try:  # the bundle skips the findings of a match whose counts are 0
        assert con.execute("SELECT count(*) FROM matches m WHERE errors + warnings <> "
                           "(SELECT count(*) FROM findings f WHERE f.match = m.match)").fetchall() == [(0,)]
    finally:
        con.close()
    assert sum(len(b.moves) for b in by_id if b is not None) > 0


def test_hand_replay_plies(client: TestClient) -> None:
    mid = "m-example-2"
    assert _j(client, f"/api/matches/{mid}")  # present (the cut copy)
    m = _first(client, profile="international", verdict="valid")["match"]
    data = _j(client, f"/api/matches/{m}/hands/1")
    plies = data["plies"]
    assert plies[0]["kind"] == "deal" and plies[0]["line"] == []
    assert all(len(h) == 7 for h in plies[0]["hands"])
    for a, b in zip(plies, plies[1:], strict=False):
        if b["kind"] == "play":
            assert len(b["line"]) == len(a["line"]) + 1
            assert b["tile"] in (b["line"][0], b["line"][-1]) or b["tile"][::-1] in (b["line"][0], b["line"][-1])
            played = [x for x in b["alternatives"] if x["played"]]
            assert len(played) == 1
    last = plies[-1]
    # pips shown equal the pips of the hands shown
    for hand, pips in zip(last["hands"], last["pips"], strict=True):
        assert sum(int(t[0]) + int(t[1]) for t in hand) == pips
    # no-JS stepping: ?ply=N shows that section only, and the style of ply N
    html = client.get(f"/matches/{m}/hands/1?ply=2").text
    shown = re.findall(r'<section class="ply" id="ply-(\d+)" data-ply="\d+">', html)
    assert shown == ["2"]
    assert html.count('<section class="ply"') == len(plies)
    assert html.count('<svg class="board') == 1
    style = re.search(r'<style id="ply-style">([^<]*)</style>', html)
    assert style is not None and "svg.board .on3," in style.group(1) and "svg.board .off2{" in style.group(1)
    assert "svg.board .on2," not in style.group(1)


def test_hand_page_defines_every_symbol_it_uses(client: TestClient) -> None:
    """The board carries the tile symbols it draws, and only those."""
    rows = _j(client, "/api/matches?per_page=20")["matches"]
    for r in rows[:6]:
        html = client.get(f"/matches/{r['match']}/hands/1").text
        used = set(re.findall(r'href="#([A-Za-z0-9_-]+)"', html)) - {"main"}  # the skip link
        defined = set(re.findall(r'<symbol id="([^"]+)"', html))
        assert used <= defined, (r["match"], used - defined)
        tiles = {x for x in defined if x[0] in "hv"}
        assert tiles <= used and len(tiles) <= 2 * 28, r["match"]


def test_hand_page_parameters(client: TestClient) -> None:
    """The replay page (a plain Starlette route) checks what FastAPI checked:
    a bad ply is a 422 page, an unknown or absurd hand a 404 page."""
    m = _first(client, profile="international", verdict="valid")["match"]
    base = f"/matches/{m}/hands/1"
    assert client.get(base + "?ply=").text == client.get(base).text
    assert client.get(base + "?ply=0").text == client.get(base).text
    last = client.get(base + "?ply=10000")
    assert last.status_code == 200 and last.headers["content-type"] == "text/html; charset=utf-8"
    for bad in ("-1", "x", "10001", "1.5", "\u00b2"):
        r = client.get(base, params={"ply": bad})
        assert r.status_code == 422 and "ply must be a whole number" in r.text, bad
    for gone in (f"/matches/{m}/hands/999", f"/matches/{m}/hands/1000001", f"/matches/{m}/hands/abc",
                 "/matches/no-such-match/hands/1"):
        r = client.get(gone)
        assert r.status_code == 404 and "text/html" in r.headers["content-type"], gone


def test_next_hand_is_drawn_without_reading_the_store(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stepping through a match, the hands after the first are drawn from the
    cached match (no store read, no thread waiting on one), the same pages as
    drawn cold. (Without render workers, as here, the drawing itself is on a thread.)"""
    import api.hand_cache as cache_mod
    import api.queries as queries

    with TestClient(create_app(store, token=TOKEN)) as c:
        rows = _j(c, "/api/matches?verdict=valid&per_page=500")["matches"]
        m = next(r["match"] for r in rows if r["hands"] >= 3)
        hands = [h["hand"] for h in _j(c, f"/api/matches/{m}")["hands"]][:3]
        cold = []
        for h in hands:
            c.app.state.bundle_cache.data.clear()  # type: ignore[attr-defined]
            cold.append(c.get(f"/matches/{m}/hands/{h}").text)
    reads: list[str] = []
    real = queries.match_bundle

    def counted(cur: object, match: str) -> object:
        reads.append(match)
        return real(cur, match)  # type: ignore[arg-type]

    monkeypatch.setattr(queries, "match_bundle", counted)
    monkeypatch.setattr(cache_mod.anyio.to_thread, "run_sync", _no_thread_after(reads))
    with TestClient(create_app(store, token=TOKEN)) as c:
        assert [c.get(f"/matches/{m}/hands/{h}").text for h in hands] == cold
    assert reads == [m]


def _no_thread_after(reads: list[str]) -> object:
    """anyio's run_sync, refusing the store path (`stored_page`) once the match is read."""
    import anyio.to_thread

    import api.hand_cache as cache_mod

    real = anyio.to_thread.run_sync

    async def run_sync(fn: object, *args: object, **kw: object) -> object:
        assert not (reads and fn is cache_mod.stored_page), "the store path after the match was read"
        return await real(fn, *args, **kw)  # type: ignore[arg-type]

    return run_sync


def test_render_workers_draw_the_same_pages(client: TestClient, store: Path) -> None:
    """Pages drawn by the render pool (replay serve) equal those drawn in-process;
    a pool whose worker dies falls back to drawing in the server process."""
    m = _first(client, profile="international", verdict="valid")["match"]
    urls = [f"/matches/{m}/hands/{h}?ply=3" for h in (1, 2)]
    want = [client.get(u).text for u in urls]
    with TestClient(create_app(store, token=TOKEN, render_workers=1)) as c:
        pool = c.app.state.render_pool  # type: ignore[attr-defined]
        assert pool.workers == 1 and pool.live
        assert [c.get(u).text for u in urls] == want
        for proc in list(pool._procs):  # kill the worker
            proc.kill()
            proc.join()
        c.app.state.hand_cache.data.clear()  # type: ignore[attr-defined]
        assert c.get(urls[0]).text == want[0]  # drawn in-process now
        assert not pool.live


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_render_pool_queues_cancels_and_reports_errors(client: TestClient, loop: str) -> None:
    """More pages than workers wait their turn; a request cancelled mid-page
    leaves its worker's reply to itself, not to the next request; a drawing
    that fails raises in the server with the worker's message, and the
    worker stays. On both event loops (uvicorn runs uvloop, which puts the
    sockets it watches in non-blocking mode)."""
    import asyncio

    from api import queries
    from api.hand_cache import hand_parts
    from api.hand_page import hand_json
    from api.pages import draw_hand_page
    from api.pool import RenderPool

    cur = client.app.state.store.cursor()  # type: ignore[attr-defined]
    parts = []
    for row in _j(client, "/api/matches?verdict=valid&per_page=4")["matches"]:
        b = queries.match_bundle(cur, row["match"])
        assert b is not None
        parts += [p for h in sorted(b.hands) if (p := hand_parts(b, row["match"], h)) is not None]
    cur.close()
    parts = parts[:7]
    want = [draw_hand_page(*p, None) for p in parts]

    async def run() -> None:
        pool = RenderPool(2)
        try:
            # both workers up first (a spawned one takes a second or more to
            # start on a busy machine, while the other could draw every page)
            assert await asyncio.gather(*(pool.page(*p, None) for p in parts[:2])) == want[:2]
            tasks = [asyncio.ensure_future(pool.page(*p, None)) for p in parts]
            await asyncio.sleep(0)
            tasks[0].cancel()  # being drawn
            tasks[5].cancel()  # waiting for a worker
            got = await asyncio.gather(*tasks, return_exceptions=True)
            for i, (g, w) in enumerate(zip(got, want, strict=True)):
                if i in (0, 5):
                    assert isinstance(g, asyncio.CancelledError)
                else:
                    assert g == w, i
            assert await pool.page(*parts[0], None) == want[0]
            assert await pool.twin(*parts[2], None) == hand_json(*parts[2], None)
            with pytest.raises(RuntimeError, match="render worker: TypeError"):
                await pool.page(parts[0][0], parts[0][1], None, None)  # type: ignore[arg-type]
            # the cancelled request's page may still be in its worker (its reply is
            # read all the same): give it a moment to come back idle
            for _ in range(50):
                if len(pool._idle) == 2:
                    break
                await asyncio.sleep(0.1)
            assert pool.live and len(pool._idle) == 2
            assert await pool.page(*parts[1], 2) == draw_hand_page(*parts[1], 2)
        finally:
            pool.close()

    if loop == "uvloop":
        uvloop = pytest.importorskip("uvloop")
        uvloop.run(run())
    else:
        asyncio.run(run())


def test_player_pages_read_the_kept_report(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A player's page reads the report kept at load time (migration 007),
    the same as the one worked out on the spot, which is asked for only
    when none is kept."""
    import api.routes.players as app_mod

    with TestClient(create_app(store, token=TOKEN)) as c:
        want = _j(c, "/api/players/p-00001")

    def nowhere(*_: object) -> None:
        raise AssertionError("worked out although kept")

    monkeypatch.setattr(app_mod, "player_report", nowhere)
    with TestClient(create_app(store, token=TOKEN)) as c:
        assert _j(c, "/api/players/p-00001") == want
        assert "Deal luck" in c.get("/players/p-00001").text


def test_threads_bound_the_routes_running_at_once(store: Path) -> None:
    """`replay serve --threads N`: N requests run their route at once, the others wait."""
    import anyio.to_thread

    def tokens() -> float:
        return anyio.to_thread.current_default_thread_limiter().total_tokens

    with TestClient(create_app(store, token=TOKEN, threads=2)) as c:
        assert c.portal is not None and c.portal.call(tokens) == 2
        assert c.get("/api/summary").status_code == 200
    with TestClient(create_app(store, token=TOKEN)) as c:
        assert c.portal is not None and c.portal.call(tokens) == 40  # anyio's default


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")  # exited (a zombie until someone reaps it)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_render_workers_leave_with_a_killed_server() -> None:
    """kill -9 of the server must not leave its render workers behind."""
    code = (
        "from api.pool import RenderPool; import time; p = RenderPool(2); "
        "print(*[w.pid for w in p._procs], flush=True); time.sleep(120)"
    )
    root = Path(__file__).resolve().parent.parent
    server = subprocess.Popen([sys.executable, "-c", code], cwd=root, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    pids = [int(x) for x in server.stdout.readline().split()]
    assert len(pids) == 2 and not any(_gone(p) for p in pids)
    server.kill()
    server.wait()
    deadline = time.monotonic() + 15
    while not all(_gone(p) for p in pids):
        assert time.monotonic() < deadline, "render workers outlived the server"
        time.sleep(0.2)


def test_annotations_across_hands(client: TestClient) -> None:
    """Somewhere in the samples: a pass's voids, a forced move, puerta, tranque, capicua."""
    kinds: set[str] = set()
    for mid in ("m-8000-0001", "m-16000-0001", "m-12000-0001"):
        for h in _j(client, f"/api/matches/{mid}")["hands"]:
            for p in _j(client, f"/api/matches/{mid}/hands/{h['hand']}")["plies"]:
                kinds |= {n["kind"] for n in p["notes"]}
                if p["kind"] == "pass" and any(n["kind"] == "pass" for n in p["notes"]):
                    note = next(n for n in p["notes"] if n["kind"] == "pass")
                    assert re.fullmatch(r"seat \d holds no \d( and no \d)?", note["text"])
                    assert all(int(x) in p["voids"][p["seat"]] for x in re.findall(r"no (\d)", note["text"]))
    assert {"pass", "forced", "puerta", "tranque", "result"} <= kinds
    assert kinds & {"capicua", "chuchazo", "dominao"}


def test_players_and_report(client: TestClient) -> None:
    rows = _j(client, "/api/players?q=p-0000")["players"]
    assert rows
    rep = _j(client, "/api/players/p-00001")
    assert rep["hands"] == rep["wins"] + rep["losses"] + rep["ties"]
    assert rep["wins"] == rep["wins_by_domino"] + rep["wins_by_block"]
    assert rep["points_per_hand"] == round(rep["points_for"] / rep["hands"], 2)
    assert rep["deal_luck"]["hands"] >= rep["hands"]
    assert 30 < rep["deal_luck"]["pips_mean"] < 54
    assert rep["profiles"] and sum(p["hands"] for p in rep["profiles"]) == rep["hands"]
    assert rep["trend"] and sum(t["hands"] for t in rep["trend"]) == rep["hands"]
    html = client.get("/players/p-00001").text
    assert "Deal luck" in html and "<svg class=\"trend\"" in html and "Results per partner" in html
    assert client.get("/players/nobody-here").status_code == 404
    assert client.get("/api/players/nobody-here").status_code == 404


def test_player_counts_follow_the_seat(client: TestClient) -> None:
    """A player is charged with the hands they sat for (seat changes)."""
    con = client.app.state.store.cursor()  # type: ignore[attr-defined]
    try:
        mid = "m-6000-0002"
        first = con.execute(
            "SELECT player FROM seats WHERE match = ? AND seat = 1 AND from_hand = 1", [mid]
        ).fetchall()[0][0]
        played = con.execute(
            "SELECT count(*) FROM hands WHERE match = ? AND result IN ('domino','block') AND hand < 4",
            [mid],
        ).fetchall()[0][0]
    finally:
        con.close()
    rep = _j(client, f"/api/players/{first}")
    bot = _j(client, "/api/players/bot-random")
    assert bot["bot"] and bot["hands_as_bot"] == bot["hands"] > 0
    assert played > 0 and rep["hands"] >= played


def test_findings_browser(client: TestClient) -> None:
    data = _j(client, "/api/findings?severity=warning")
    assert data["findings"] and all(f["severity"] == "warning" for f in data["findings"])
    one = _j(client, "/api/findings?match=m-seq-gap-0")
    assert one["findings"] and {f["match"] for f in one["findings"]} == {"m-seq-gap-0"}
    # a line of no match is shown in full (only a hand still on withholds details)
    lost = _j(client, "/api/findings?code=SCHEMA_ERROR")["findings"]
    assert lost and all("withheld" not in f["message"] for f in lost if f["match"] is None)
    html = client.get("/findings?code=SEQ_GAP").text
    assert "SEQ_GAP" in html and "m-seq-gap-0" in html
    assert client.get("/api/findings?severity=fatal").status_code == 422


def test_not_found(client: TestClient) -> None:
    assert client.get("/matches/none-such").status_code == 404
    assert client.get("/api/matches/none-such").status_code == 404
    assert client.get("/matches/m-8000-0001/hands/999").status_code == 404
    assert client.get("/api/matches/m-8000-0001/hands/999").status_code == 404
    assert "no match" in client.get("/matches/none-such").text


# --- security -----------------------------------------------------------------------------


def test_html_looking_names_are_escaped(client: TestClient) -> None:
    for url in (
        f"/matches/{OPEN_MATCH}",
        f"/matches/{OPEN_MATCH}/hands/1",
        "/players/p-00005",
        "/players?q=script",
        "/matches?player=" + EVIL_NAME,
    ):
        html = client.get(url).text
        assert "<script>alert" not in html, url
        assert "<i>x</i>" not in html, url
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in client.get("/players/p-00005").text
    hand = client.get(f"/matches/{OPEN_MATCH}/hands/1").text
    # the SVG seat label carries the escaped name too
    assert re.search(r'class="name">&lt;script&gt;', hand)
    # ids from logs are quoted in links
    assert "/players/p-%3Ci%3Ex%3C%2Fi%3E" in client.get(f"/matches/{OPEN_MATCH}").text


def test_unfinished_hand_hides_every_hand(client: TestClient) -> None:
    r = client.get(f"/api/matches/{OPEN_MATCH}/hands/2")
    assert r.status_code == 200
    data = r.json()
    assert data["info"]["finished"] is False
    plies = data["plies"]
    assert len(plies) > 10
    for p in plies:
        assert p["hands"] is None and p["pips"] is None and p["alternatives"] == []
        assert p["forced"] is None
        if p["kind"] == "draw":
            assert p["tile"] is None and "draws a tile" in p["title"]
    text = r.text
    for t in HIDDEN:
        assert f'"{t}"' not in text, t
    html = client.get(f"/matches/{OPEN_MATCH}/hands/2").text
    assert "hidden until the hand is over" in html
    for t in HIDDEN:
        hi, lo = t[0], t[1]
        for sym in (f"#v{hi}{lo}", f"#v{lo}{hi}", f"#h{hi}{lo}", f"#h{lo}{hi}"):
            assert f'href="{sym}"' not in html, sym
    # the finished hand 1 of the same match does show its hands
    done = _j(client, f"/api/matches/{OPEN_MATCH}/hands/1")
    assert done["plies"][0]["hands"] is not None
    # nor does the open hand's deal enter the player's deal luck
    from urllib.parse import quote

    rep = _j(client, "/api/players/" + quote(EVIL_ID, safe=""))
    assert rep["hands"] == 1 and rep["unfinished"] == 1 and rep["deal_luck"]["hands"] == 1


def test_writes_need_the_token(client: TestClient) -> None:
    files = {"file": ("x.jsonl", b"{}\n", "application/octet-stream")}
    r = client.post("/api/upload", files=files)
    assert r.status_code == 401 and "Bearer" in r.json()["detail"]
    r = client.post("/api/upload", files=files, headers={"Authorization": "Bearer wrong"})
    assert r.status_code == 401
    assert client.delete(f"/api/matches/{OPEN_MATCH}").status_code == 401
    assert client.get(f"/api/matches/{OPEN_MATCH}").status_code == 200


def test_writes_refused_without_a_configured_token(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REPLAY_TOKEN", raising=False)
    with TestClient(create_app(store)) as c:
        r = c.delete("/api/matches/x", headers={"Authorization": "Bearer anything"})
        assert r.status_code == 403 and "REPLAY_TOKEN" in r.json()["detail"]
        assert "REPLAY_TOKEN" in c.get("/upload").text


def _auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


def test_upload_ingests_and_links(writable: TestClient, tmp_path: Path) -> None:
    from replay.simulate import SimConfig, simulate

    lines = list(simulate(SimConfig(profiles=("pagat",), matches=1, seed=424242)))
    body = gzip.compress(b"\n".join(lines) + b"\n")
    r = writable.post("/api/upload", files={"file": ("new.jsonl.gz", body)}, headers=_auth())
    assert r.status_code == 200, r.text
    got = r.json()
    assert len(got["matches"]) == 1
    m = got["matches"][0]
    assert m["verdict"] == "valid" and m["url"] == f"/matches/{m['match']}"
    assert writable.get(m["url"]).status_code == 200
    # the same file again changes nothing and still links its match
    again = writable.post("/api/upload", files={"file": ("new.jsonl.gz", body)}, headers=_auth())
    assert [x["match"] for x in again.json()["matches"]] == [m["match"]]
    bad = writable.post("/api/upload", files={"file": ("x.txt", b"hi")}, headers=_auth())
    assert bad.status_code == 415


def test_upload_size_limit(writable: TestClient) -> None:
    big = b"x" * (MAX_UPLOAD + 1024)
    r = writable.post("/api/upload", files={"file": ("big.jsonl", big)}, headers=_auth())
    assert r.status_code == 413 and "too large" in r.json()["detail"]


def test_upload_gzip_bomb(writable: TestClient) -> None:
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip container
    chunk = b"\0" * (1 << 20)
    parts = [comp.compress(chunk) for _ in range(MAX_INFLATED // len(chunk) + 8)]
    bomb = b"".join(parts) + comp.flush()
    assert len(bomb) < MAX_UPLOAD
    r = writable.post("/api/upload", files={"file": ("bomb.jsonl.gz", bomb)}, headers=_auth())
    assert r.status_code == 413 and "decompressed" in r.json()["detail"]
    # a gzip stream under a plain name is checked too (the reader goes by content)
    r = writable.post("/api/upload", files={"file": ("plain.jsonl", bomb)}, headers=_auth())
    assert r.status_code == 413 and "decompressed" in r.json()["detail"]


def test_delete_match(writable: TestClient) -> None:
    mid = "m-8000-0001"
    assert writable.get(f"/api/matches/{mid}").status_code == 200
    before = _j(writable, "/api/summary")["counts"]  # cached per store generation
    assert writable.get("/").status_code == 200
    r = writable.delete(f"/api/matches/{mid}", headers=_auth())
    assert r.status_code == 200 and r.json() == {"deleted": mid}
    assert _j(writable, "/api/summary")["counts"]["matches"] == before["matches"] - 1
    assert writable.get(f"/api/matches/{mid}").status_code == 404
    assert writable.get(f"/api/matches/{mid}/hands/1").status_code == 404
    assert writable.delete(f"/api/matches/{mid}", headers=_auth()).status_code == 404


def test_upload_page_and_static(client: TestClient) -> None:
    html = client.get("/upload").text
    assert 'type="file"' in html and "/static/upload.js" in html
    assert client.get("/static/replay.js").status_code == 200
    assert "ArrowRight" in client.get("/static/replay.js").text
    spec = _j(client, "/openapi.json")
    assert "/api/matches/{match_id}/hands/{hand}" in spec["paths"]
    assert "/api/upload" in spec["paths"]


# --- rendering, without the store ----------------------------------------------------------


def _t(name: str) -> int:
    return parse_tile(name)


def _hand(moves: list[MoveRow], dealt: list[list[str]], result: str | None = "domino",
          notes: tuple[str, ...] = ()) -> HandData:
    return HandData(
        match="m", hand=1, players=len(dealt), teams="individual", result=result, winner=0,
        points=(0, 0), score=(0, 0), notes=notes, leader=0, blocker=None,
        dealt=tuple(tuple(_t(x) for x in h) for h in dealt), stock0=0,
        seats=tuple(SeatLabel(i, f"p{i}") for i in range(len(dealt))),
        moves=tuple(moves), findings=(FindingRow("TIME_ORDER", "warning", 1, 11, "ts goes back"),),
    )


def _mv(ply: int, seat: int, kind: str, tile: str | None, end: str | None, left: int, right: int,
        legal: tuple[str, ...] = ()) -> MoveRow:
    return MoveRow(ply, 10 + ply, seat, kind, _t(tile) if tile else None, end, left, right, 0,
                   legal, len(legal) == 1)


def test_build_plies_line_voids_puerta_ahorcado() -> None:
    # seat 0 opens 6-5 (high half left), 1 plays 5-5 across on the right, 0 plays 6-4 left
    moves = [
        _mv(1, 0, "play", "65", None, 6, 5, ("65:left", "64:left")),
        _mv(2, 1, "play", "55", "right", 6, 5, ("55:right",)),
        _mv(3, 0, "play", "64", "left", 4, 5, ("64:left",)),
        _mv(4, 1, "pass", None, None, 4, 5, ("PASS",)),
    ]
    plies = build_plies(_hand(moves, [["65", "64", "00"], ["55", "11", "22"]], result=None))
    assert [len(p.line) for p in plies] == [0, 1, 2, 3, 3]
    assert [(p.a, p.b) for p in plies[3].line] == [(4, 6), (6, 5), (5, 5)]
    assert (plies[3].left, plies[3].right) == (4, 5)
    assert plies[4].voids[1] == (4, 5)
    assert any(n.text == "seat 1 holds no 4 and no 5" for n in plies[4].notes)
    assert all(p.hands is None for p in plies)  # not finished: nothing held is shown
    finished = build_plies(_hand(moves, [["65", "64", "00"], ["55", "11", "22"]]))
    assert finished[0].hands == [(_t("65"), _t("64"), _t("00")), (_t("55"), _t("22"), _t("11"))]
    assert finished[3].hands[0] == (_t("00"),) and finished[3].pips == [0, 6]
    assert finished[1].alternatives == [("[6|5]", True), ("[6|4]", False)]
    # a finding lands on the ply of its seq
    assert any(n.kind == "finding" and "TIME_ORDER" in n.text for n in finished[1].notes)
    svg = table_svg(finished, _hand(moves, [["65"], ["55"]]).seats, 2, "individual")
    # each tile of the line is drawn once, shown from the ply it is laid on
    # (6-4 laid on the left: 4 faces out), and marked on that ply only
    assert svg.count('href="#h65"') == 1 and svg.count('href="#h46"') == 1
    assert '<g class="on2"><use href="#v55"' in svg and '<g class="on3"><use href="#h46"' in svg
    assert svg.count('class="hl"') == 3 and '<g class="on3 off4"><rect' in svg
    assert "<title>[5|5]</title>" in svg and "<title>[6|4]</title>" in svg
    # the ends' badges move with the ends: 6 on the left until ply 3 lays 6-4 there
    assert re.search(r'<g class="on1 off3"><g class="end endL"><circle [^>]*/><text [^>]*>6<', svg)
    assert re.search(r'<g class="on3"><g class="end endL"><circle [^>]*/><text [^>]*>4<', svg)
    assert len(re.findall(r'class="end endR"><circle [^>]*/><text [^>]*>5<', svg)) == 2  # 5-5 on ply 2
    assert re.search(r'<g class="off1"><text [^>]*class="muted" text-anchor="middle">the line is empty', svg)
    # each hand is drawn once per change: seat 0 holds 3, 2, then 1 tile; seat 1 3 then 2
    assert svg.count("pips</text>") == 3 + 2
    assert re.search(r'<g class="on3"><use href="#v00"[^>]*><title>\[0\|0\]</title></use><text [^>]*>0 pips<', svg)
    assert re.search(r'<g class="on4"><text [^>]*class="void"[^>]*>no 4,5<', svg)
    assert ply_style(2, 4) == ('<style id="ply-style">svg.board .on3,svg.board .on4,'
                               'svg.board .off1,svg.board .off2{display:none}</style>')


def test_puerta_and_ahorcado() -> None:
    # every 3 but 3-3 goes down; 3-3 stays in seat 1's hand: ahorcado, then puerta is impossible
    seq = ["31", "10", "03", "32", "21", "14", "43", "35", "53"]
    line_moves = [
        _mv(1, 0, "play", "31", None, 3, 1),
        _mv(2, 0, "play", "10", "right", 3, 0),
        _mv(3, 0, "play", "30", "right", 3, 3),
        _mv(4, 0, "play", "32", "left", 2, 3),
        _mv(5, 0, "play", "63", "right", 2, 6),
        _mv(6, 0, "play", "62", "right", 2, 2),
    ]
    plies = build_plies(_hand(line_moves, [["31", "10", "30", "32", "63", "62", "00"], ["33", "43", "53"]]))
    assert seq  # the tiles of 3 so far: 31 30 32 63 (4 of 6)
    assert not any(n.kind == "ahorcado" for p in plies for n in p.notes)
    more = line_moves + [
        _mv(7, 0, "play", "42", "left", 4, 2),
        _mv(8, 0, "play", "43", "left", 3, 2),
        _mv(9, 0, "play", "53", "left", 5, 2),
    ]
    plies = build_plies(_hand(more, [["31", "10", "30", "32", "63", "62", "42", "43", "53"], ["33"]]))
    notes = [n for p in plies for n in p.notes if n.kind in ("ahorcado", "puerta")]
    assert [n.kind for n in notes] == ["ahorcado"]
    assert "[3|3] can no longer be played (held by seat 1)" in notes[0].text
    assert plies[-1].hanged == [_t("33")]


def test_spool_is_loaded_on_a_timer(tmp_path: Path) -> None:
    """`replay ingest` while the server holds the database: its batches wait in
    the spool and the server loads them within a few seconds."""
    import subprocess
    import sys
    import time

    from replay.store import layout

    db = build_store(tmp_path / "data", [SAMPLES / "pr_2p.jsonl"])
    app = create_app(db, token=TOKEN, spool_dir=layout(db).spool, load_every=0.2)
    with TestClient(app) as c:
        before = _j(c, "/api/summary")["counts"]["matches"]
        gen = app.state.store.generation
        mid = _j(c, "/api/matches")["matches"][0]["match"]
        seen = _j(c, f"/api/matches/{mid}/hands/1")
        done = subprocess.run(
            [sys.executable, "-m", "replay", "ingest", str(SAMPLES / "mexico.jsonl"), "--db", str(db), "--no-analysis"],
            capture_output=True, text=True, timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert "spool" in done.stdout + done.stderr  # the server holds the file
        deadline = time.monotonic() + 20
        while _j(c, "/api/summary")["counts"]["matches"] == before:
            assert time.monotonic() < deadline, "spool not loaded"
            time.sleep(0.2)
        assert _j(c, "/api/summary")["counts"]["matches"] == before + 3
        assert app.state.store.generation > gen
        # a page of a match the load did not touch is the same page; once its
        # version is known (at the first change) a reload keeps it cached
        assert _j(c, f"/api/matches/{mid}/hands/1") == seen
        view = app.state.hand_cache.get((mid, 1, "json"))[2]
        app.state.store.bump()
        assert _j(c, f"/api/matches/{mid}/hands/1") == seen
        assert app.state.hand_cache.get((mid, 1, "json"))[2] is view


def test_templates_are_compiled_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """`pages.warm` (run by the app's start-up and by each render worker)
    compiles every page template: none is read from disk afterwards."""
    from api import pages

    pages.warm()
    names = pages.env.list_templates(filter_func=lambda n: n.endswith(".html"))
    assert {"hand.html", "player.html", "base.html", "fairness.html"} <= set(names)

    def no_disk(*_: object) -> None:
        raise AssertionError("a template read after warm()")

    monkeypatch.setattr(pages.env.loader, "get_source", no_disk)
    for name in names:
        assert pages.env.get_template(name) is not None
