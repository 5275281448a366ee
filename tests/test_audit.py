"""The fairness audit of stored hands: deterministic checks, battery input, filters, CLI, page.

Stores are built the real way: simulated bot matches (replay.simulate)
ingested with replay.ingest, plus planted defect logs; a few checks edit a
copy of a store with SQL to make what no log can (a malformed deal, a lost
seat history).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import numpy as np
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.fairness import luck_svg
from cli.main import main as replay_main
from replay.ingest import ingest
from replay.simulate import SimConfig, defect_log, simulate, write_lines
from replay.store import open_store
from replay.tiles import IS_DOUBLE
from reports.audit import AuditReport, Filters, audit_window, hand_url, load_window, run_audit

PROFILES = ("international", "domena_2p", "doubles_in_boneyard", "venezuela")
CFG = SimConfig(profiles=PROFILES, hands=320, seed=11, tables=4, players_pool=24)


def _ingest(data: Path, files: list[Path]) -> Path:
    data.mkdir(parents=True, exist_ok=True)
    db = data / "replay.duckdb"
    ingest([str(p) for p in files], db=db, workers=0)
    return db


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("audit-logs")
    out = {"sim": d / "sim.jsonl", "deal": d / "deal.jsonl", "seed": d / "seed.jsonl"}
    write_lines(simulate(CFG), out["sim"])
    write_lines(defect_log("DEAL_MISMATCH"), out["deal"])
    write_lines(defect_log("SEED_REUSED"), out["seed"])
    return out


@pytest.fixture(scope="module")
def clean_db(logs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _ingest(tmp_path_factory.mktemp("clean"), [logs["sim"]])


@pytest.fixture(scope="module")
def planted_db(logs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _ingest(tmp_path_factory.mktemp("planted"), [logs["sim"], logs["deal"], logs["seed"]])


def _ro(db: Path) -> duckdb.DuckDBPyConnection:
    return open_store(db, read_only=True)


def _audit(db: Path, filters: Filters | None = None) -> AuditReport:
    conn = _ro(db)
    try:
        return run_audit(conn, filters)
    finally:
        conn.close()


def _scalar(db: Path, sql: str, params: list | None = None) -> object:
    conn = _ro(db)
    try:
        return conn.execute(sql, params or []).fetchall()[0][0]
    finally:
        conn.close()


# --------------------------------------------------------------------------- a clean store


def test_clean_store_passes_every_check(clean_db: Path) -> None:
    rep = _audit(clean_db)
    hands = _scalar(clean_db, "SELECT count(*) FROM hands")
    assert rep.window["hands"] == hands >= CFG.hands
    assert {p["profile"] for p in rep.window["profiles"]} == set(PROFILES)
    det = rep.deterministic
    assert det.ok and det.failing_total == 0 and det.failing == ()
    by = {c.name: c for c in det.checks}
    assert all(c.failed == 0 for c in det.checks)
    # every hand of the window was checked, not a sample
    for name in ("seed_chain", "deal", "tiles", "reveal"):
        assert by[name].checked == by[name].passed == hands, name
    draw_hands = _scalar(
        clean_db, "SELECT count(*) FROM hands JOIN matches USING (match) WHERE rules->>'stock' = 'draw'"
    )
    assert draw_hands and by["draws"].checked == draw_hands
    matches = _scalar(clean_db, "SELECT count(*) FROM matches")
    assert by["seed_reuse"].checked == hands + matches  # each hand's seed and each anchor
    assert by["lead_draw"].checked == _scalar(clean_db, "SELECT count(*) FROM matches WHERE len(lead_draw) > 0")
    # every deal goes to the battery, in its group
    assert rep.window["deals_in_battery"] == hands and rep.window["excluded"] == {}
    assert set(rep.window["groups"]) == {"4p", "2p", "3p_aside"}
    assert rep.battery is not None and rep.battery.verdict == "PASS"
    assert all(t.verdict == "PASS" for t in rep.battery.full.tests)
    assert rep.luck is not None and rep.luck.flagged == ()
    assert rep.verdict == "PASS" and rep.exit_code == 0


def test_profiles_with_estimated_rules_are_named(clean_db: Path) -> None:
    rep = _audit(clean_db)
    est = {p["profile"]: p["estimates"] for p in rep.window["profiles"]}
    assert est["venezuela"] == ["count", "match_end"]
    assert est["international"] == []
    text = _cli(clean_db)[1]
    assert "venezuela" in text and "rules marked estimate: count, match_end" in text


def test_battery_deck_is_dealt_by_seat_then_stock(clean_db: Path) -> None:
    conn = _ro(clean_db)
    try:
        for profile, kind, n_tiles in (("domena_2p", "2p", 28), ("doubles_in_boneyard", "3p_aside", 21)):
            match = conn.execute(
                "SELECT match FROM matches WHERE profile = ? ORDER BY match LIMIT 1", [profile]
            ).fetchall()[0][0]
            w = load_window(conn, Filters(match=match))
            rows = conn.execute(
                "SELECT flatten(dealt) || stock FROM hands WHERE match = ? ORDER BY started, hand", [match]
            ).fetchall()
            (g,) = w.deals.groups
            assert g.spec.kind == kind
            assert g.deck.tolist() == [r[0] for r in rows]
            assert all(sorted(d) == sorted(g.spec.tiles) and len(d) == n_tiles for d in g.deck.tolist())
            if kind == "3p_aside":
                assert not np.array(IS_DOUBLE)[g.deck].any()
    finally:
        conn.close()


# --------------------------------------------------------------------------- planted defects


def test_planted_bad_deal_is_a_failing_hand_with_its_link(planted_db: Path) -> None:
    match, hand = _findings(planted_db, "DEAL_MISMATCH")[0]
    rep = _audit(planted_db)
    assert rep.verdict == "FAIL" and rep.exit_code == 1
    by = {c.name: c for c in rep.deterministic.checks}
    assert by["deal"].failed == 1
    bad = [f for f in rep.deterministic.failing if "DEAL_MISMATCH" in f.problems]
    assert [(f.match, f.hand) for f in bad] == [(match, hand)]
    assert bad[0].url == f"/matches/{match}/hands/{hand}"
    # the battery still sees the deal: it is what the players were dealt
    assert rep.window["deals_in_battery"] == rep.window["hands"]


def test_reused_seed_shows_up_with_the_other_match(planted_db: Path) -> None:
    pairs = _findings(planted_db, "SEED_REUSED")
    matches = sorted({m for m, _ in pairs})
    assert len(matches) == 2
    a, b = matches
    rep = _audit(planted_db, Filters(match=a))  # the other match is outside this window
    fails = rep.deterministic.failing
    anchor = [f for f in fails if f.hand is None]
    assert len(anchor) == 1 and anchor[0].url == f"/matches/{a}"
    assert b in anchor[0].detail and anchor[0].problems == ("SEED_REUSED",)
    hands = {f.hand for f in fails if "SEED_REUSED" in f.problems and f.hand is not None}
    assert hands == {h for m, h in pairs if m == a and h is not None}
    assert all(b in f.detail for f in fails)
    assert {c.name: c.failed for c in rep.deterministic.checks}["seed_reuse"] == len(hands) + 1
    assert rep.verdict == "FAIL"


def _findings(db: Path, code: str) -> list[tuple[str, int | None]]:
    conn = _ro(db)
    try:
        rows = conn.execute(
            "SELECT match, hand FROM findings WHERE code = ? ORDER BY match, hand", [code]
        ).fetchall()
    finally:
        conn.close()
    assert rows, code
    return [(m, h) for m, h in rows]


@pytest.fixture(scope="module")
def edited_db(clean_db: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A copy of the clean store, edited: what each edit should make of one hand/match."""
    db = tmp_path_factory.mktemp("edited") / "replay.duckdb"
    shutil.copy(clean_db, db)
    conn = open_store(db)
    pick = {
        p: conn.execute(
            "SELECT match FROM matches WHERE profile = ? ORDER BY match LIMIT 1 OFFSET 1", [p]
        ).fetchall()[0][0]
        for p in PROFILES
    }
    # a 4p deal with a tile twice (seat 0's first tile is seat 1's first tile)
    conn.execute(
        "UPDATE hands SET dealt = list_concat([list_concat([dealt[2][1]], dealt[1][2:])], dealt[2:]) "
        "WHERE match = ? AND hand = 1", [pick["international"]]
    )  # fmt: skip
    # a doubles-aside deal that holds a double (6-6, id 27)
    conn.execute(
        "UPDATE hands SET dealt = list_concat([list_concat([27::TINYINT], dealt[1][2:])], dealt[2:]) "
        "WHERE match = ? AND hand = 1", [pick["doubles_in_boneyard"]]
    )  # fmt: skip
    # a boneyard game whose deal could not be checked: the stock order is unknown
    conn.execute("UPDATE hands SET deal_ok = NULL WHERE match = ? AND hand = 1", [pick["domena_2p"]])
    # a seat history that lost seat 0
    conn.execute("DELETE FROM seats WHERE match = ? AND seat = 0", [pick["venezuela"]])
    n_ven = conn.execute("SELECT count(*) FROM hands WHERE match = ?", [pick["venezuela"]]).fetchall()[0][0]
    conn.close()
    return {"db": db, "pick": pick, "n_ven": n_ven}


def test_tile_check_and_battery_exclusions(edited_db: dict[str, object]) -> None:
    db, pick = edited_db["db"], edited_db["pick"]
    assert isinstance(db, Path) and isinstance(pick, dict)
    rep = _audit(db)
    by = {c.name: c for c in rep.deterministic.checks}
    assert by["tiles"].failed == 2
    tiles = {(f.match, f.hand) for f in rep.deterministic.failing if "TILES" in f.problems}
    assert tiles == {(pick["international"], 1), (pick["doubles_in_boneyard"], 1)}
    assert by["deal"].not_checked == 1 and by["draws"].not_checked == 1
    ex = {k: v["deals"] for k, v in rep.window["excluded"].items()}
    assert ex == {"malformed": 2, "stock_order_unknown": 1, "seats_unknown": edited_db["n_ven"]}
    assert rep.window["deals_in_battery"] == rep.window["hands"] - sum(ex.values())
    assert rep.verdict == "FAIL"


def test_undealt_tiles_out_of_play_are_checked_but_not_in_the_battery(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    # 3 players, no boneyard: 7 tiles stay out of play in an order no log shows
    cfg = SimConfig(profiles=("pr_3p",), overrides={"stock": "none"}, hands=30, seed=5)
    log = tmp_path / "none3.jsonl"
    write_lines(simulate(cfg), log)
    db = _ingest(tmp_path / "data", [log])
    rep = _audit(db)
    assert rep.deterministic.ok
    assert {c.name: c for c in rep.deterministic.checks}["tiles"].passed == rep.window["hands"]
    assert rep.window["excluded"]["out_of_play_order"]["deals"] == rep.window["hands"]
    assert rep.battery is None and rep.verdict == "PASS"
    assert any("battery" in n for n in rep.notes)


# --------------------------------------------------------------------------- filters


def _seat_players(db: Path) -> dict[tuple[str, int], set[str]]:
    """Who held a seat in each hand, from the seat history, computed in Python."""
    conn = _ro(db)
    try:
        seats = conn.execute("SELECT match, seat, player, from_hand, seq FROM seats").fetchall()
        hands = conn.execute("SELECT match, hand FROM hands").fetchall()
    finally:
        conn.close()
    out: dict[tuple[str, int], set[str]] = {}
    for m, h in hands:
        best: dict[int, tuple[int, int, str]] = {}
        for sm, seat, player, fh, seq in seats:
            if sm == m and fh <= h and (seat not in best or (fh, seq) > best[seat][:2]):
                best[seat] = (fh, seq, player)
        out[(m, h)] = {v[2] for v in best.values()}
    return out


def test_filters_narrow_the_window(clean_db: Path) -> None:
    total = _audit(clean_db).window["hands"]
    table = _scalar(clean_db, "SELECT min(table_id) FROM matches")
    rep = _audit(clean_db, Filters(table=table))
    assert rep.window["tables"] == [table]
    assert rep.window["hands"] == _scalar(
        clean_db, "SELECT count(*) FROM hands JOIN matches USING (match) WHERE table_id = ?", [table]
    ) < total
    rep = _audit(clean_db, Filters(profile="domena_2p"))
    assert [p["profile"] for p in rep.window["profiles"]] == ["domena_2p"]
    assert set(rep.window["groups"]) == {"2p"}
    match = _scalar(clean_db, "SELECT min(match) FROM matches")
    rep = _audit(clean_db, Filters(match=match))
    assert rep.window["matches"] == 1
    assert rep.window["hands"] == _scalar(clean_db, "SELECT count(*) FROM hands WHERE match = ?", [match])
    # both filters at once: the intersection
    both = _audit(clean_db, Filters(table=table, profile="domena_2p")).window["hands"]
    assert both == _scalar(
        clean_db,
        "SELECT count(*) FROM hands JOIN matches USING (match) WHERE table_id = ? AND profile = ?",
        [table, "domena_2p"],
    )


def test_player_filter_follows_the_seat_history(clean_db: Path) -> None:
    held = _seat_players(clean_db)
    changed = _scalar(clean_db, "SELECT count(*) FROM seats WHERE from_hand > 1")
    assert changed, "the simulation should have seat changes"
    # a player who took a seat mid-match: only the hands from then on
    player, name = _scalar(
        clean_db,
        "SELECT [s.player, coalesce(p.name, s.player)] FROM seats s JOIN players p USING (player) "
        "WHERE s.from_hand > 1 ORDER BY s.match, s.seat LIMIT 1",
    )  # type: ignore[misc]
    want = sorted(k for k, ps in held.items() if player in ps)
    conn = _ro(clean_db)
    try:
        w = load_window(conn, Filters(player=player))
        by_name = load_window(conn, Filters(player=name.upper()))
    finally:
        conn.close()
    got = sorted(zip(w.hands["match"].to_list(), w.hands["hand"].to_list(), strict=True))
    assert got == want
    assert all(player in sp for sp in w.hands["seat_players"].to_list())
    assert by_name.hands.height >= len(want)  # names may be shared; never fewer


def test_date_filter_is_inclusive_utc_days(planted_db: Path) -> None:
    # the defect logs are dated 40 days after the simulated ones
    conn = _ro(planted_db)
    try:
        starts = [r[0] for r in conn.execute("SELECT timezone('UTC', started) FROM hands").fetchall()]
    finally:
        conn.close()
    days = sorted({s.date() for s in starts})
    assert len(days) >= 2
    day = days[len(days) // 2]
    for f, keep in (
        (Filters(date_from=day), lambda d: d >= day),
        (Filters(date_to=day), lambda d: d <= day),
        (Filters(date_from=day, date_to=day), lambda d: d == day),
    ):
        assert _audit(planted_db, f).window["hands"] == sum(keep(s.date()) for s in starts)
    assert _audit(planted_db, Filters(date_from=dt.date(2001, 1, 1), date_to=dt.date.max)).window["hands"] == len(starts)


# --------------------------------------------------------------------------- command line


def _cli(db: Path, *args: str) -> tuple[int, str, str]:
    """`replay audit --db DB ARGS` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = replay_main(["audit", "--db", str(db), *args])
        except SystemExit as exc:  # argparse's usage errors
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def test_cli_json_and_exit_codes(clean_db: Path, planted_db: Path, tmp_path: Path) -> None:
    code, out, _ = _cli(clean_db, "--json")
    data = json.loads(out)
    assert code == 0 and data["verdict"] == "PASS"
    assert data["window"]["hands"] == _scalar(clean_db, "SELECT count(*) FROM hands")
    assert {t["name"].split("[")[0] for t in data["battery"]["full"]["tests"]} >= {"tile_seat", "repeated_deals"}
    code, out, _ = _cli(planted_db, "--json")
    data = json.loads(out)
    assert code == 1 and data["verdict"] == "FAIL"
    assert any("DEAL_MISMATCH" in f["problems"] for f in data["deterministic"]["failing"])
    code, out, _ = _cli(planted_db)
    assert code == 1 and "DEAL_MISMATCH" in out and out.rstrip().endswith("Window verdict: FAIL")
    assert "adj p" in out and "tile_seat[4p]" in out
    code, _, err = _cli(clean_db, "--match", "no-such-match")
    assert code == 2 and "no hand matches" in err
    code, _, err = _cli(clean_db, "--from", "2026-02-30")
    assert code == 2 and "not a date" in err
    code, _, err = _cli(tmp_path / "missing.duckdb")
    assert code == 2 and "cannot read" in err


def test_cli_filters(clean_db: Path) -> None:
    code, out, _ = _cli(clean_db, "--profile", "venezuela", "--json")
    data = json.loads(out)
    assert code == 0
    assert data["filters"]["profile"] == "venezuela"
    assert [p["profile"] for p in data["window"]["profiles"]] == ["venezuela"]


def test_cli_says_when_a_writer_holds_the_store(clean_db: Path, tmp_path: Path) -> None:
    # DuckDB: several read-only processes, or one writer; a reader is refused while it writes
    db = tmp_path / "replay.duckdb"
    shutil.copy(clean_db, db)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('ready', flush=True); sys.stdin.read()",
         str(db)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        code, _, err = _cli(db)
        assert code == 2 and "locked by another process" in err
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    assert _cli(db)[0] == 0  # readable again once the writer is gone


# --------------------------------------------------------------------------- the page and its twin


@pytest.fixture(scope="module")
def client(planted_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    # a copy: the app holds its store for writing, the other tests read theirs
    db = tmp_path_factory.mktemp("app") / "replay.duckdb"
    shutil.copy(planted_db, db)
    with TestClient(create_app(db)) as c:
        yield c


def test_json_twin_matches_the_report(client: TestClient) -> None:
    data = client.get("/api/fairness").json()
    assert data["verdict"] == "FAIL"
    assert data["deterministic"]["failing_total"] >= 2
    (bad,) = [f for f in data["deterministic"]["failing"] if "DEAL_MISMATCH" in f["problems"]]
    assert bad["url"] == hand_url(bad["match"], bad["hand"])
    assert client.get(bad["url"]).status_code == 200  # the link is the app's replay route
    players = data["luck"]["players"]
    assert players and all(p["url"] == f"/players/{p['player']}" for p in players)
    narrowed = client.get("/api/fairness", params={"profile": "domena_2p"}).json()
    assert narrowed["filters"]["profile"] == "domena_2p" and narrowed["verdict"] == "PASS"
    assert narrowed["window"]["hands"] < data["window"]["hands"]
    assert client.get("/api/fairness", params={"date_from": "2026-99-01"}).status_code == 422
    empty = client.get("/api/fairness", params={"match": "nope"}).json()
    assert empty["window"]["hands"] == 0 and empty["battery"] is None


def test_page_shows_verdict_tables_chart_and_escapes(client: TestClient) -> None:
    r = client.get("/fairness")
    assert r.status_code == 200
    html = r.text
    assert 'class="banner f-FAIL"' in html
    assert '<a href="/fairness" aria-current="page">Fairness</a>' in html  # the nav links here
    data = client.get("/api/fairness").json()
    for f in data["deterministic"]["failing"]:
        assert f'href="{f["url"]}"' in html
    assert "tile_seat[4p]" in html and "adjusted p" in html
    assert '<svg class="lucksvg"' in html
    # the simulator's pool has a player named <script>alert(1)</script>
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # the form's empty fields are no filter; a bad date is refused
    same = client.get("/fairness", params={"table": "", "date_from": "", "date_to": "", "player": ""})
    assert same.status_code == 200 and 'class="banner f-FAIL"' in same.text
    assert client.get("/fairness", params={"date_to": "soon"}).status_code == 422
    page = client.get("/fairness", params={"profile": "venezuela"}).text
    assert 'class="banner f-PASS"' in page and "count, match_end" in page
    assert client.get("/fairness", params={"match": "nope"}).text.count("No hand matches") == 1


def test_luck_chart_draws_one_bar_per_nonempty_bin() -> None:
    edges = [x / 2 for x in range(-8, 9)]
    counts = [0] * (len(edges) + 1)
    counts[0], counts[9], counts[-1] = 1, 5, 2
    hist = {"edges": edges, "counts": counts, "expected": [0.5] * len(counts)}
    svg = luck_svg({"pips": hist, "doubles": {**hist, "counts": [0] * len(counts)}})
    assert svg.count('class="bar pips"') == 3 and 'class="bar doubles"' not in svg
    assert "&lt;-4" in svg and "≥4" in svg and "<polyline" in svg
    assert "no player" in luck_svg({"pips": {**hist, "counts": [0] * len(counts)}})


def test_report_json_is_strict(planted_db: Path) -> None:
    conn = _ro(planted_db)
    try:
        w = load_window(conn, Filters())
    finally:
        conn.close()
    rep = audit_window(w, limit=3)
    text = json.dumps(rep.to_dict(), allow_nan=False)  # no NaN or numpy scalars leak out
    assert json.loads(text)["deterministic"]["failing_total"] > 3
    assert len(rep.deterministic.failing) == 3
