"""Player insights from the hand analysis (reports.skill, reports.cheats; migration 014):
the sums agree with the analysis tables, the refresh keeps them equal to a
refresh from nothing, luck averages out, the cheat signals' null model holds
for honest bots and catches planted cheaters, and the partner-peeking audit."""

from __future__ import annotations

import math
import random
import shutil
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay.analysis.run import analyze_store
from replay.ingest import ingest
from replay.simulate import SimConfig, make_pool, simulate, write_lines
from replay.store import delete_match, open_store
from reports.cheats import (
    ALLOWANCE,
    ALPHA,
    audit_player,
    evidence,
    player_signals,
    signal,
    suspicious,
)
from reports.derived import keep_ratings
from reports.skill import (
    pair_skill,
    percentiles,
    player_skill,
    refresh_insights,
    support,
)

SAMPLES = 6  # sampled deals a decision: enough for the tests, quick


def _store(base: Path, cfg: SimConfig) -> Path:
    log = base / "run.jsonl"
    write_lines(simulate(cfg), log)
    db = base / "data" / "replay.duckdb"
    ingest([log], db=db, workers=0, analysis=(SAMPLES, 0))
    return db


@pytest.fixture(scope="module")
def cheat_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four players at one partnership table, every hand: p-00001 omniscient."""
    cfg = SimConfig(profiles=("international",), hands=36, seed=4, players_pool=4, seat_change_rate=0.0,
                    bots=("random", "heavy", "partner", "sampler"), cheaters=(("p-00001", "omniscient"),),
                    search_samples=6)  # fmt: skip
    return _store(tmp_path_factory.mktemp("cheat"), cfg)


@pytest.fixture(scope="module")
def mixed_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Several profiles and players, seat changes, a 3-player game: the sums' bookkeeping."""
    cfg = SimConfig(profiles=("international", "domena_2p", "doubles_in_boneyard"), hands=45, seed=9,
                    players_pool=8, tables=3, seat_change_rate=0.5)  # fmt: skip
    return _store(tmp_path_factory.mktemp("mixed"), cfg)


def _copy(db: Path, tmp: Path) -> duckdb.DuckDBPyConnection:
    shutil.copy(db, tmp / "copy.duckdb")
    return open_store(tmp / "copy.duckdb")


# -- the sums -------------------------------------------------------------------------------

_BY_HAND = """
WITH r AS (
    SELECT match, seat, player, from_hand,
           coalesce(lead(from_hand) OVER (PARTITION BY match, seat ORDER BY from_hand, seq), 2147483647) AS to_hand
    FROM seats
), h AS (
    SELECT match, hand, unnest(range(len(par))) AS seat, unnest(result) AS result, unnest(lost) AS lost,
           unnest(stake) AS stake, unnest(lost_dd) AS lost_dd, unnest(stake_dd) AS stake_dd
    FROM hand_analysis WHERE skip IS NULL
)
SELECT r.player, count(*), sum(h.result), sum(h.lost), sum(h.stake), sum(h.lost_dd), sum(h.stake_dd)
FROM h JOIN r ON r.match = h.match AND r.seat = h.seat AND h.hand >= r.from_hand AND h.hand < r.to_hand
GROUP BY r.player ORDER BY r.player
"""


def test_sums_agree_with_the_analysis(mixed_store: Path) -> None:
    conn = open_store(mixed_store, read_only=True)
    try:
        want = conn.execute(_BY_HAND).fetchall()
        got = conn.execute(
            "SELECT player, sum(hands), sum(points), sum(lost), sum(stake), sum(lost_dd), sum(stake_dd) "
            "FROM skill_rows GROUP BY player ORDER BY player").fetchall()  # fmt: skip
        assert len(got) == len(want) > 8  # players and the bots that took seats over
        for a, b in zip(got, want, strict=True):
            assert a[:3] == b[:3]
            assert a[3:] == pytest.approx(b[3:], abs=1e-6)
        totals = conn.execute("SELECT player, hands, decisions FROM skill_players WHERE profile = '*' "
                              "ORDER BY player").fetchall()  # fmt: skip
        assert [(p, h) for p, h, _ in totals] == [(p, h) for p, h, *_ in want]
        # per profile, the same hands again
        per = dict(conn.execute("SELECT player, sum(hands) FROM skill_players WHERE profile <> '*' "
                                "GROUP BY player").fetchall())  # fmt: skip
        assert per == {p: h for p, h, _ in totals}
        # decisions by phase add up to the decisions
        rows = conn.execute("SELECT decisions, dec_p0 + dec_p1 + dec_p2 + dec_p3, stake, "
                            "stake_p0 + stake_p1 + stake_p2 + stake_p3 FROM skill_rows").fetchall()  # fmt: skip
        assert all(a == b and c == pytest.approx(d) for a, b, c, d in rows)
    finally:
        conn.close()


def test_luck_averages_out_by_profile_and_role(mixed_store: Path) -> None:
    conn = open_store(mixed_store, read_only=True)
    try:
        # every hand and seat once: the luck of a profile's hands adds up to zero
        got = conn.execute(
            "SELECT r.profile, sum(" + " + ".join(f"r.par_r{k} - r.role_r{k} * coalesce(b{k}.par, 0)" for k in range(4))
            + ") FROM skill_rows r " + " ".join(f"LEFT JOIN luck_base b{k} ON b{k}.profile = r.profile AND b{k}.role = {k}"
                                               for k in range(4)) + " GROUP BY r.profile").fetchall()  # fmt: skip
        assert len(got) == 3 and all(abs(v) < 1e-6 for _, v in got)
        # two sides: the leading side's mean par is minus the other's
        base = dict(((p, r), v) for p, r, v in conn.execute(
            "SELECT profile, role, par FROM luck_base").fetchall())  # fmt: skip
        assert base["international", 0] == pytest.approx(-base["international", 1])
        assert {r for p, r in base if p == "doubles_in_boneyard"} == {0, 1, 2}
    finally:
        conn.close()


def test_player_skill_figures(mixed_store: Path) -> None:
    conn = open_store(mixed_store, read_only=True)
    try:
        player = conn.execute("SELECT player FROM skill_players WHERE profile = '*' AND NOT bot "
                              "ORDER BY hands DESC LIMIT 1").fetchone()[0]  # fmt: skip
        sk = player_skill(conn, player)
        row = conn.execute("SELECT hands, points, luck, decisions, lost, stake FROM skill_players "
                           "WHERE player = ? AND profile = '*'", [player]).fetchone()  # fmt: skip
        assert (sk["hands"], sk["points"]) == (row[0], row[1])
        assert sk["luck"] == pytest.approx(row[2], abs=0.01)
        assert sk["accuracy"] == pytest.approx(100 * (1 - row[4] / row[5]), abs=0.01)
        assert sk["adjusted_points"] == pytest.approx(row[1] - row[2], abs=0.02)
        line = sk["line"]
        assert line["hands"][-1] == row[0] and line["points"][-1] == row[1]
        assert line["adjusted"][-1] == pytest.approx(row[1] - row[2], abs=0.05)
        assert sum(p["decisions"] for p in sk["phases"]) == row[3]
        assert sum(p["hands"] for p in sk["profiles"]) == row[0]
        assert sum(m["decisions"] for m in sk["months"]) == row[3]
        # a profile filter keeps that profile's rows only
        from reports.player import ReportFilters

        one = sk["profiles"][0]["profile"]
        only = player_skill(conn, player, ReportFilters(profile=one))
        assert only["hands"] == sk["profiles"][0]["hands"] and only["filters"] == {"profile": one}
        assert player_skill(conn, "nobody")["hands"] == 0
    finally:
        conn.close()


def test_percentiles_rank_the_pool(mixed_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import reports.skill as skill

    monkeypatch.setattr(skill, "MIN_DECISIONS", 5)  # a store this small: a lower bar to see the ranks
    conn = _copy(mixed_store, tmp_path)
    try:
        skill._totals(conn)
        rows = conn.execute("SELECT player, lost / decisions FROM skill_players WHERE profile = '*' AND NOT bot "
                            "AND decisions >= 5 ORDER BY 2, 1").fetchall()  # fmt: skip
        assert len(rows) >= 3
        best, worst = rows[0][0], rows[-1][0]
        top = percentiles(conn, best)["*"]
        low = percentiles(conn, worst)["*"]
        assert top["pool"] == low["pool"] == len(rows)
        assert top["lost_per_decision"] == 100.0 and low["lost_per_decision"] == 0.0
        # the middle: the share of the others it beats, as the definition says
        mid, value = rows[len(rows) // 2]
        others = [v for p, v in rows if p != mid]
        want = 100 * (sum(v > value for v in others) + 0.5 * sum(v == value for v in others)) / len(others)
        assert percentiles(conn, mid)["*"]["lost_per_decision"] == pytest.approx(want, abs=0.05)
        bot = conn.execute("SELECT player FROM skill_players WHERE bot LIMIT 1").fetchone()
        assert bot is None or percentiles(conn, bot[0]) == {}  # bots are not placed
    finally:
        conn.close()


def test_refresh_follows_every_change(mixed_store: Path, tmp_path: Path) -> None:
    """After a deletion, a reanalysis and new matches the tables equal a refresh from nothing."""
    tables = ("skill_rows", "skill_players", "luck_base")

    def snapshot(conn: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
        # sums of doubles to 1e-6: their order of addition is the threads'
        return {t: sorted(repr(tuple(round(v, 6) if isinstance(v, float) else v for v in row))
                          for row in conn.execute(f"SELECT * FROM {t}").fetchall()) for t in tables}

    conn = _copy(mixed_store, tmp_path)
    try:
        assert refresh_insights(conn) == 0  # nothing new: nothing redone
        matches = [m for (m,) in conn.execute("SELECT match FROM insight_matches ORDER BY match").fetchall()]
        # a match deleted (the store's delete: its subscribers refresh the
        # insights too), another analysed again
        delete_match(conn, matches[0])
        conn.execute("UPDATE matches SET analysis = 'again' WHERE match = ?", [matches[1]])
        conn.execute("UPDATE hand_analysis SET result = list_transform(result, lambda v: v + 1) WHERE match = ?",
                     [matches[1]])  # fmt: skip
        refresh_insights(conn)
        after = snapshot(conn)
        for t in ("skill_rows", "insight_matches", "skill_players", "luck_base", "insight_totals"):
            conn.execute(f"DELETE FROM {t}")
        refresh_insights(conn)
        assert snapshot(conn) == after
        assert matches[0] not in {m for (m,) in conn.execute("SELECT match FROM skill_rows").fetchall()}
    finally:
        conn.close()


def test_new_matches_are_added_by_a_load(tmp_path: Path) -> None:
    """Two ingests into one store: the second's matches join the sums (the ratings' refresh runs both)."""
    logs = []
    for seed in (1, 2):
        log = tmp_path / f"l{seed}.jsonl"
        write_lines(simulate(SimConfig(profiles=("domena_2p",), hands=6, seed=seed, players_pool=3)), log)
        logs.append(log)
    db = tmp_path / "data" / "replay.duckdb"
    ingest([logs[0]], db=db, workers=0, analysis=(0, 0))
    conn = open_store(db)
    first = conn.execute("SELECT count(*) FROM insight_matches").fetchone()[0]
    conn.close()
    ingest([logs[1]], db=db, workers=0, analysis=(0, 0))
    conn = open_store(db)
    try:
        assert conn.execute("SELECT count(*) FROM insight_matches").fetchone()[0] > first > 0
        have = conn.execute("SELECT sum(hands) FROM skill_rows").fetchone()[0]
        assert have == conn.execute("SELECT count(*) * 2 FROM hand_analysis WHERE skip IS NULL").fetchone()[0]
        # --samples 0: no sampled grade, the sums read perfect information
        assert conn.execute("SELECT sum(y_n) FROM skill_rows").fetchone()[0] == 0
        assert conn.execute("SELECT sum(lost) = sum(lost_dd) FROM skill_rows").fetchone()[0]
        keep_ratings(conn)  # nothing new: the same
        assert conn.execute("SELECT sum(hands) FROM skill_rows").fetchone()[0] == have
    finally:
        conn.close()


# -- partnerships --------------------------------------------------------------------------------


def test_pair_figures_and_support(cheat_store: Path) -> None:
    conn = open_store(cheat_store, read_only=True)
    try:
        a, b = "p-00002", "p-00004"  # seats change every match: find a pair that played together
        pairs = conn.execute("SELECT player, partner, sum(hands) FROM skill_rows WHERE partner IS NOT NULL "
                             "GROUP BY ALL ORDER BY 3 DESC, 1, 2").fetchall()  # fmt: skip
        a, b, hands = pairs[0]
        sk = pair_skill(conn, a, b)
        mine = conn.execute("SELECT sum(lost), sum(stake) FROM skill_rows WHERE (player, partner) IN "
                            "((?, ?), (?, ?))", [a, b, b, a]).fetchone()  # fmt: skip
        assert sk["combined"]["accuracy"] == pytest.approx(100 * (1 - mine[0] / mine[1]), abs=0.01)
        assert sk["combined"]["hands"] == hands
        assert {p["player"] for p in sk["players"]} == {a, b}
        # support: the partner's passes beside the player, counted by hand from player_held
        s = support(conn, a, b)
        rows = conn.execute("SELECT partner = ?, passes, result, block_end FROM player_held WHERE of_player = ? "
                            "AND partner IS NOT NULL AND result IN ('domino', 'block')", [a, b]).fetchall()  # fmt: skip
        beside = [p - (1 if r == "block" and e == "all_pass" else 0) for x, p, r, e in rows if x]
        assert s["hands_beside"] == len(beside) > 0
        assert s["passes_per_hand_beside"] == pytest.approx(sum(max(v, 0) for v in beside) / len(beside), abs=1e-3)
    finally:
        conn.close()


# -- the cheat signals ------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-50, 50, allow_nan=False), min_size=2, max_size=60), st.floats(0.1, 10))
def test_signal_is_the_t_test_of_the_hand_sums(ys: list[float], scale: float) -> None:
    n = len(ys)
    s = signal(3 * n, sum(ys), n, sum(y * y for y in ys))
    zero = signal(3 * n, sum(ys), n, sum(y * y for y in ys), allowance=0.0)
    scaled = signal(3 * n, scale * sum(ys), n, sum((scale * y) ** 2 for y in ys), allowance=0.0)
    mean = sum(ys) / n
    var = sum((y - mean) ** 2 for y in ys) / (n - 1)
    if var > 1e-9:
        assert s.t == pytest.approx((mean - ALLOWANCE) / math.sqrt(var / n), rel=1e-6, abs=1e-6)
        assert zero.t == pytest.approx(mean / math.sqrt(var / n), rel=1e-6, abs=1e-6)
        assert scaled.t == pytest.approx(zero.t, rel=1e-6, abs=1e-6)  # points or tenths: the same evidence
        assert s.p is not None and (s.p < 0.5) == (mean > ALLOWANCE)
        assert zero.p is not None and s.p >= zero.p  # the allowance only ever makes a flag harder
    assert not s.flagged or n >= 20 and s.p is not None and s.p < ALPHA
    assert not s.flagged or zero.flagged


def test_honest_null_holds_on_shuffled_signs() -> None:
    """Symmetric hand sums (an honest player's, by the null model) are flagged
    about ALPHA of the time at most: 2,000 players of 60 hands, none flagged."""
    rng = random.Random(3)
    flagged = 0
    for _ in range(2000):
        ys = [rng.choice((-1, 1)) * rng.expovariate(0.1) for _ in range(60)]
        flagged += signal(180, sum(ys), 60, sum(y * y for y in ys)).flagged
    assert flagged <= 2


def test_omniscient_cheater_is_flagged_and_honest_bots_are_not(cheat_store: Path) -> None:
    conn = open_store(cheat_store, read_only=True)
    try:
        data = suspicious(conn, bots=True)
        rows = {r["player"]: r for r in data["rows"]}
        cheat = rows["p-00001"]
        assert cheat["flagged"] and cheat["omniscience"]["flagged"] and data["rows"][0]["player"] == "p-00001"
        assert cheat["differs_hit"] == cheat["differs"] > 0  # always a perfect-information best move
        for p in ("p-00002", "p-00003", "p-00004"):
            assert not rows[p]["flagged"] and rows[p]["omniscience"]["p"] > ALPHA * 100
        # the omniscient bot never loses a point under perfect information
        assert conn.execute("SELECT max(lost_dd) FROM skill_players WHERE player = 'p-00001'").fetchone()[0] == 0
        ev = evidence(conn, "p-00001")
        assert ev and all(e["dd"] == e["dd_best"] and e["best_known"] != e["played"] for e in ev)
        assert [e["hindsight"] for e in ev] == sorted((e["hindsight"] for e in ev), reverse=True)
        assert data["rows"][0]["omniscience"]["p_adjusted"] == pytest.approx(
            min(1.0, data["rows"][0]["omniscience"]["p"] * data["players"]), rel=0.01)
    finally:
        conn.close()


def test_cheaters_are_opt_in() -> None:
    assert SimConfig().cheaters == () and not SimConfig().searching
    assert {p.style for p in make_pool(40)} == {"random", "heavy", "partner"}
    with pytest.raises(ValueError, match="no such player"):
        list(simulate(SimConfig(players_pool=4, cheaters=(("p-00009", "omniscient"),))))
    with pytest.raises(ValueError, match="unknown style"):
        list(simulate(SimConfig(players_pool=4, cheaters=(("p-00001", "psychic"),))))


def test_peeking_audit(cheat_store: Path, tmp_path: Path) -> None:
    conn = _copy(cheat_store, tmp_path)
    try:
        got = audit_player(conn, "p-00002", hands=12, samples=4)
        assert got["audit"]["state"] == "done" and got["peeking"]["hands"] == 12
        rows = conn.execute("SELECT p.match, p.hand, p.ply, p.peek, p.y_peek, m.alternatives, m.played "
                            "FROM peek_analysis p JOIN move_analysis m USING (match, hand, ply)").fetchall()  # fmt: skip
        assert len(rows) == got["peeking"]["decisions"] > 0
        for *_, peek, y, alts, played in rows:
            i = [a["move"] for a in alts].index(played)
            pimc = [a["pimc"] for a in alts]
            want = (peek[i] - sum(peek) / len(peek)) - (pimc[i] - sum(pimc) / len(pimc))
            assert len(peek) == len(alts) and y == pytest.approx(want)
        # again: the same decisions' rows replaced, not added
        audit_player(conn, "p-00002", hands=12, samples=4)
        assert conn.execute("SELECT count(*) FROM peek_analysis").fetchone()[0] == len(rows)
        assert conn.execute("SELECT count(*) FROM audits WHERE player = 'p-00002'").fetchone()[0] == 2
        # a match analysed again, stored as it was, keeps its grades, y_peek taken
        # against the new sampled grade (here one played move's pimc raised by 3)
        m, h, k, peek, y, alts, played = rows[0]
        i = [a["move"] for a in alts].index(played)
        conn.execute("UPDATE move_analysis SET alternatives = list_transform(alternatives, lambda a: "
                     "struct_pack(move := a.move, dd := a.dd, pimc := CASE WHEN a.move = played "
                     "THEN a.pimc + 3 ELSE a.pimc END, pimc_lo := a.pimc_lo, pimc_hi := a.pimc_hi)) "
                     "WHERE match = ? AND hand = ? AND ply = ?", [m, h, k])  # fmt: skip
        before = conn.execute("SELECT count(*) FROM peek_analysis WHERE match = ?", [m]).fetchone()[0]
        conn.execute("UPDATE matches SET analysis = 'again' WHERE match = ?", [m])
        refresh_insights(conn)
        assert conn.execute("SELECT count(*) FROM peek_analysis WHERE match = ?", [m]).fetchone()[0] == before
        got_y = conn.execute("SELECT y_peek FROM peek_analysis WHERE match = ? AND hand = ? AND ply = ?",
                             [m, h, k]).fetchone()[0]  # fmt: skip
        assert got_y == pytest.approx(y - 3 * (1 - 1 / len(alts)))
        # analysed again with a read grade: y_peek taken against the read values, as the
        # audit takes it (against pimc, an honest reader would drift as on the uniform belief)
        reads = [{"read": 5.0 * j, "read_lo": None, "read_hi": None} for j in range(len(alts))]
        conn.execute("UPDATE move_analysis SET reads = ? WHERE match = ? AND hand = ? AND ply = ?", [reads, m, h, k])
        conn.execute("UPDATE matches SET analysis = 'read' WHERE match = ?", [m])
        refresh_insights(conn)
        got_y = conn.execute("SELECT y_peek FROM peek_analysis WHERE match = ? AND hand = ? AND ply = ?",
                             [m, h, k]).fetchone()[0]  # fmt: skip
        want = (peek[i] - sum(peek) / len(peek)) - (5.0 * i - 5.0 * (len(alts) - 1) / 2)
        assert got_y == pytest.approx(want)
        # a match stored again (a new number) drops them: they graded other rows
        conn.execute("UPDATE matches SET mno = mno + 100000, analysis = 'stored again' WHERE match = ?", [m])
        refresh_insights(conn)
        assert not conn.execute("SELECT 1 FROM peek_analysis WHERE match = ?", [m]).fetchall()
    finally:
        conn.close()


def test_an_audit_writes_under_the_lock_it_is_given(cheat_store: Path, tmp_path: Path) -> None:
    """A server passes its load lock: the audit's writes (its row, the grades,
    the done state) happen under it, and its grading does not."""
    inside: list[bool] = []
    writes: list[bool] = []

    class Watch:
        def __enter__(self) -> None:
            inside.append(True)
            writes.append(True)

        def __exit__(self, *exc: object) -> None:
            inside.pop()

    def progress(done: int, total: int) -> None:
        assert not inside, "graded under the lock"

    conn = _copy(cheat_store, tmp_path)
    try:
        audit_player(conn, "p-00003", hands=4, samples=3, write_lock=Watch(), progress=progress)
        assert len(writes) == 2 and not inside  # the audit's row; then the grades with the done state
        assert conn.execute("SELECT state FROM audits WHERE player = 'p-00003'").fetchone()[0] == "done"
    finally:
        conn.close()


def test_hindsight_in_sql_equals_the_analysis(cheat_store: Path, tmp_path: Path) -> None:
    """Migration 014 (and the refresh, for rows an older spool brings) works
    hindsight out in SQL as replay.analysis.hindsight does at ingest."""
    from reports.skill import _HINDSIGHT  # noqa: PLC2701 - the SQL under test

    conn = _copy(cheat_store, tmp_path)
    try:
        want = conn.execute("SELECT match, hand, ply, hindsight FROM move_analysis ORDER BY ALL").fetchall()
        assert sum(1 for *_, h in want if h is not None) > 50
        conn.execute("UPDATE move_analysis SET hindsight = NULL")
        conn.execute(_HINDSIGHT)
        got = conn.execute("SELECT match, hand, ply, hindsight FROM move_analysis ORDER BY ALL").fetchall()
        assert [g[:3] for g in got] == [w[:3] for w in want]
        assert [g[3] for g in got] == pytest.approx([w[3] for w in want], abs=1e-9, nan_ok=True)
    finally:
        conn.close()


def test_peeker_sees_its_partner_only_in_pair_games() -> None:
    from replay.engine import new_hand
    from replay.rules import resolve
    from replay.searchbots import search_bot
    from replay.tiles import parse_tile as t

    hands = [[t(x) for x in h.split()] for h in (
        "66 65 64 63 62 61 60", "55 54 53 52 51 50 44", "43 42 41 40 33 32 31", "30 22 21 20 11 10 00")]
    pairs = new_hand(resolve("international"), hands, leader=1)
    alone = new_hand(resolve("international", {"teams": "individual"}), hands, leader=1)
    bot = search_bot("peeker", 4)
    assert bot.peek(pairs) == (3,) and bot.peek(alone) == ()
    assert search_bot("sampler", 4).peek(pairs) == ()


@pytest.mark.parametrize("module", ["reports.skill", "reports.cheats", "api.skill_charts", "api.insights"])
def test_doctests(module: str) -> None:
    """The examples in the docstrings (pytest collects doctests under replay/ only)."""
    import doctest
    import importlib

    got = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert got.attempted > 0 and got.failed == 0


def test_kept_figures_equal_those_worked_out_from_the_rows(mixed_store: Path) -> None:
    """The player page reads what the refresh kept; a filter that keeps every
    hand works them out from skill_rows: the two agree, chart and all."""
    import datetime as dt

    from reports.player import ReportFilters

    conn = open_store(mixed_store, read_only=True)
    try:
        everyone = [p for (p,) in conn.execute("SELECT DISTINCT player FROM skill_rows ORDER BY 1").fetchall()]
        for player in everyone:
            kept = player_skill(conn, player)
            rows = player_skill(conn, player, ReportFilters(date_from=dt.date(2000, 1, 1)))
            for k in ("matches", "hands", "points", "decisions", "accuracy", "accuracy_dd", "lost_per_decision",
                      "luck_per_hand", "adjusted_points", "blunders", "phases", "profiles", "months", "line",
                      "percentiles"):
                assert kept[k] == pytest.approx(rows[k], abs=0.011) if isinstance(kept[k], float) else \
                    kept[k] == rows[k], (player, k)
    finally:
        conn.close()


def test_kept_pages_equal_the_sections_worked_out_live(mixed_store: Path, tmp_path: Path) -> None:
    """The player page reads its rating and insight sections from rating_pages
    and skill_pages: they equal what the live queries give, for everyone."""
    from reports import leaderboard as lb

    conn = _copy(mixed_store, tmp_path)
    try:
        players = [p for (p,) in conn.execute("SELECT player FROM players ORDER BY 1").fetchall()]
        kept_r = {p: lb.player_ratings(conn, p) for p in players}
        kept_s = {p: player_skill(conn, p) for p in players}
        assert conn.execute("SELECT count(*) FROM rating_pages").fetchone()[0] > 5
        assert conn.execute("SELECT count(*) FROM skill_pages").fetchone()[0] > 5
        conn.execute("DELETE FROM rating_pages")
        conn.execute("DELETE FROM skill_pages")
        for p in players:
            assert lb.player_ratings(conn, p) == kept_r[p], p
            assert player_skill(conn, p) == kept_s[p], p
    finally:
        conn.close()


def test_an_audit_grades_hands_not_sampled_yet(tmp_path: Path) -> None:
    """A store analysed under perfect information only (ingest's default): the
    audit works out the sampled grade it compares with itself."""
    log = tmp_path / "run.jsonl"
    write_lines(simulate(SimConfig(profiles=("international",), hands=5, seed=8, players_pool=4,
                                   seat_change_rate=0.0)), log)  # fmt: skip
    db = tmp_path / "data" / "replay.duckdb"
    ingest([log], db=db, workers=0, analysis=(0, 0))
    conn = open_store(db)
    try:
        got = audit_player(conn, "p-00001", hands=5, samples=3)
        assert got["peeking"]["hands"] == 5 and got["peeking"]["decisions"] > 0
        assert got["omniscience"]["decisions"] == 0  # the index itself waits for the sampled grade
        before = player_skill(conn, "p-00001")
        assert before["sampled"] == 0 < before["decisions"]
    finally:
        conn.close()
    from fastapi.testclient import TestClient

    from api.app import create_app

    note = "decisions graded so far"
    with TestClient(create_app(db, deepen=0)) as client:
        assert note in client.get("/players/p-00001").text  # the page says the accuracy is not sampled yet
    # the store sampled afterwards (as the server's background sampling does):
    # the audit is kept, its y_peek taken against the stored sampled grade
    analyze_store(db, samples=3, workers=0)
    conn = open_store(db)
    try:
        after = player_signals(conn, "p-00001")
        assert after["peeking"]["decisions"] == got["peeking"]["decisions"]
        assert after["omniscience"]["decisions"] > 0
        now = player_skill(conn, "p-00001")
        assert now["sampled"] == now["decisions"] == before["decisions"]
        rows = conn.execute("SELECT p.peek, p.y_peek, m.alternatives, m.played "
                            "FROM peek_analysis p JOIN move_analysis m USING (match, hand, ply)").fetchall()  # fmt: skip
        assert len(rows) == got["peeking"]["decisions"]
        for peek, y, alts, played in rows:
            i = [a["move"] for a in alts].index(played)
            pimc = [a["pimc"] for a in alts]
            assert y == pytest.approx((peek[i] - sum(peek) / len(peek)) - (pimc[i] - sum(pimc) / len(pimc)))
    finally:
        conn.close()
    with TestClient(create_app(db, deepen=0)) as client:
        assert note not in client.get("/players/p-00001").text
