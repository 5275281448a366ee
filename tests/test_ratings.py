"""Ratings (reports.ratings, migration 013): the finishing order and the
sides, who is rated for a seat that changed hands (against player_held, the
player report's rows), stronger bots rated above weaker ones with forecasts
better than chance, the incremental refresh equal to a full one (new matches
later, earlier, a match deleted, a reingest), and the pair report against
the player report.
"""

from __future__ import annotations

import doctest
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reports.leaderboard
import reports.pairs
import reports.ratings
import reports.ratings.calibrate
import reports.ratings.model
from replay.simulate import SimConfig, make_pool, simulate, write_lines
from replay.store import open_store
from reports.leaderboard import leaderboard, player_ratings
from reports.pairs import pair_report
from reports.player import player_report
from reports.ratings import (
    ALL,
    Contest,
    Ratings,
    Side,
    Stint,
    finishing_order,
    rated_occupant,
    refresh_ratings,
    sides_of,
    store_calibration,
)


@pytest.mark.parametrize("module", [reports.ratings.model, reports.ratings.calibrate, reports.pairs,
                                    reports.leaderboard])
def test_doctests(module: Any) -> None:
    got = doctest.testmod(module)
    assert got.failed == 0


# --- the finishing order and the sides ------------------------------------------------


def test_finishing_order_cases() -> None:
    assert finishing_order("win", 0, [120, 80], "points") == (1, 2)
    assert finishing_order("tie", None, [0, 0], "points") == (1, 1)
    # the winner first even when the figures say otherwise (the rules decide)
    assert finishing_order("win", 1, [200, 150], "points") == (2, 1)
    # four individual players, two sharing second place: competition ranking
    assert finishing_order("win", 3, [40, 70, 70, 101], "points") == (4, 2, 2, 1)
    # Royal Rumble: points are bad
    assert finishing_order("win", 2, [61, 35, 12, 35], "fixed") == (4, 2, 1, 2)
    assert finishing_order("tie", None, [20, 12, 12, 30], "fixed") == (3, 1, 1, 4)
    # a tied rounds match is a tie for everybody, whatever the hand wins
    assert finishing_order("tie", None, [90, 40], "rounds", wins=[10, 3]) == (1, 1)
    # chiva: hand wins, then score
    assert finishing_order("win", 2, [10, 50, 30], "chiva", wins=[1, 1, 4]) == (3, 2, 1)
    with pytest.raises(ValueError, match="winner"):
        finishing_order("win", None, [1, 2], "points")
    with pytest.raises(ValueError, match="won or tied"):
        finishing_order("abandoned", None, [1, 2], "points")
    with pytest.raises(ValueError, match="two sides"):
        finishing_order("win", 0, [1], "points")


@settings(max_examples=200, deadline=None)
@given(
    scores=st.lists(st.integers(0, 300), min_size=2, max_size=4),
    kind=st.sampled_from(["points", "milo", "fixed", "chiva", "rounds"]),
    data=st.data(),
)
def test_finishing_order_is_a_competition_ranking(scores: list[int], kind: str, data: Any) -> None:
    n = len(scores)
    wins = data.draw(st.lists(st.integers(0, 12), min_size=n, max_size=n))
    result = data.draw(st.sampled_from(["win", "tie"]))
    winner = data.draw(st.integers(0, n - 1)) if result == "win" else None
    places = finishing_order(result, winner, scores, kind, wins)
    assert len(places) == n and min(places) == 1
    # competition ranking: a place is one more than the sides strictly ahead
    for p in places:
        assert p == 1 + sum(q < p for q in places)
    if result == "win":
        assert places[winner] == 1 and places.count(1) == 1
    elif kind != "fixed":
        assert places == (1,) * n
    # apart from the winner, the order follows what decides the match
    others = [i for i in range(n) if i != winner]
    for i in others:
        for j in others:
            if kind == "fixed" and scores[i] < scores[j]:
                assert places[i] <= places[j]
            if kind in ("points", "milo") and scores[i] > scores[j] and result == "win":
                assert places[i] < places[j]
            if kind in ("chiva", "rounds") and (wins[i], scores[i]) > (wins[j], scores[j]) and result == "win":
                assert places[i] < places[j]


def test_sides() -> None:
    assert sides_of("pairs", 4) == [(0, 2), (1, 3)]
    assert sides_of("individual", 2) == [(0,), (1,)]
    assert sides_of("individual", 4) == [(0,), (1,), (2,), (3,)]
    with pytest.raises(ValueError):
        sides_of("pairs", 3)


def test_rated_occupant_most_hands_then_first() -> None:
    a, b, c = Stint("a", False, 1, 4), Stint("bot-x", True, 5, 4), Stint("c", False, 9, 7)
    assert rated_occupant([a, b]).player == "a"  # equal hands: who sat first
    assert rated_occupant([a, b, c]).player == "c"
    assert rated_occupant([b]).player == "bot-x"
    with pytest.raises(ValueError):
        rated_occupant([])


def _side(*players: str) -> Side:
    return Side(tuple(Stint(p, p.startswith("bot"), 1, 10, 50, 40) for p in players))


def test_teams_of_two_and_a_pair_entity() -> None:
    import datetime as dt

    r = Ratings()
    c = Contest("m", 1, dt.datetime(2026, 1, 1, tzinfo=dt.UTC), "international", "pairs",
                (_side("a", "c"), _side("b", "d")), (2, 1))
    chances = r.play(c, 1)
    assert chances[ALL] == pytest.approx([0.5, 0.5]) and chances["international"] == pytest.approx([0.5, 0.5])
    for pool in (ALL, "international"):
        assert r.standing(pool, "b").rating.mu == r.standing(pool, "d").rating.mu > 25
        assert r.standing(pool, "a").rating.mu < 25 and r.standing(pool, "a").losses == 1
        assert r.standing(pool, "b", "d").wins == 1 and r.standing(pool, "a", "c").losses == 1
    rows = r.take_rows().to_pylist()
    assert len(rows) == 2 * (4 + 2)
    assert {(x["player"], x["partner"]) for x in rows if x["partner"]} == {("a", "c"), ("b", "d")}
    # the same id in two seats: rated for the first only, and no pair is formed
    r2 = Ratings()
    r2.play(Contest("m", 1, c.ended, "international", "pairs", (_side("a", "bot-x"), _side("bot-x", "d")), (1, 2)), 1)
    assert r2.standing(ALL, "bot-x").wins == 1 and r2.standing(ALL, "bot-x").matches == 1
    assert all(k[2] is None for k in r2.state)


# --- on simulated stores ---------------------------------------------------------------

STYLE_OF = {p.id: p.style for p in make_pool(12)}


def _store(base: Path, runs: list[SimConfig]) -> Path:
    from replay.ingest import ingest

    logs = base / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    for cfg in runs:
        write_lines(simulate(cfg), logs / f"sim-{cfg.seed}.jsonl")
    db = base / "data" / "replay.duckdb"
    ingest([str(logs)], db=db, workers=0)
    return db


@pytest.fixture(scope="module")
def skill_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cfg = SimConfig(profiles=("domena_2p", "doubles_in_boneyard"), matches=480, seed=31, tables=2,
                    players_pool=12, seat_change_rate=0.0)
    return _store(tmp_path_factory.mktemp("skill"), [cfg])


def test_stronger_bots_rate_higher(skill_store: Path) -> None:
    conn = open_store(skill_store, read_only=True)
    rows = conn.execute(
        "SELECT player, rating, mu FROM ratings WHERE pool = ? AND partner IS NULL AND NOT bot", [ALL]
    ).fetchall()
    by_style: dict[str, list[float]] = {}
    for player, _, mu in rows:
        by_style.setdefault(STYLE_OF[player], []).append(mu)
    mean = {k: sum(v) / len(v) for k, v in by_style.items()}
    # random is the weakest style; partner (the heuristic that keeps its
    # strong number open) the strongest in these profiles
    assert mean["partner"] > mean["heavy"] > mean["random"]
    assert min(by_style["partner"]) > max(by_style["random"])
    board = leaderboard(conn, per_page=None)
    assert [r["place"] for r in board["rows"]] == sorted(r["place"] for r in board["rows"])
    assert STYLE_OF[board["rows"][0]["player"]] == "partner"
    assert STYLE_OF[board["rows"][-1]["player"]] == "random"
    # the held-out forecasts beat chance
    cal = store_calibration(conn)
    g = cal["groups"]["all"]
    assert cal["held_out"] == g["matches"] > 50
    assert g["ratings_log_loss"] < g["uniform_log_loss"] and g["ratings_brier"] < g["uniform_brier"]
    assert g["ratings_profile_log_loss"] < g["base_rate_log_loss"]
    conn.close()


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Partnership, 3- and 4-player games with many seat changes (bots and players)."""
    cfg = SimConfig(profiles=("international", "royal_rumble", "doubles_in_boneyard"), matches=60,
                    seed=7, tables=3, players_pool=18, seat_change_rate=0.6, abandon_rate=0.01)
    return _store(tmp_path_factory.mktemp("mixed"), [cfg])


# the seat's player of the most played hands (then the first to sit), from player_held
_EXPECTED_SEATS = """
WITH c AS (
    SELECT match, seat, of_player, bool_or(bot) AS bot, min(hand) AS first,
           count(*) FILTER (WHERE result IN ('domino', 'block')) AS n
    FROM player_held GROUP BY ALL
)
SELECT match, seat, arg_min(of_player, (-n, first, of_player)) AS player FROM c
WHERE match IN (SELECT match FROM rating_matches) GROUP BY ALL
"""


def test_seat_changes_rate_the_player_of_most_hands(mixed: Path) -> None:
    conn = open_store(mixed, read_only=True)
    changed = conn.execute("SELECT count(DISTINCT match) FROM seats WHERE from_hand > 1").fetchall()[0][0]
    assert changed >= 10
    expected = {(m, s): p for m, s, p in conn.execute(_EXPECTED_SEATS).fetchall()}
    rated = conn.execute(
        """SELECT h.match, h.side, h.player, m.teams FROM rating_history h JOIN rating_matches m USING (pos)
           WHERE h.pool = ? AND h.partner IS NULL""", [ALL]).fetchall()
    got: dict[tuple[str, int], set[str]] = {}
    for match, side, player, _ in rated:
        got.setdefault((match, side), set()).add(player)
    want: dict[tuple[str, int], set[str]] = {}
    for (match, seat), player in expected.items():
        teams = conn.execute("SELECT teams FROM rating_matches WHERE match = ?", [match]).fetchall()[0][0]
        want.setdefault((match, seat % 2 if teams == "pairs" else seat), set()).add(player)
    # (a bot id in two seats of a match is rated once)
    assert {k: v for k, v in got.items()} == {k: v for k, v in want.items() if k in got}
    assert set(want) == set(got)
    # only valid, finished matches, each once
    n = conn.execute("SELECT count(*) FROM matches WHERE verdict = 'valid' AND result IN ('win', 'tie')").fetchall()
    assert conn.execute("SELECT count(*), count(DISTINCT match), max(pos) FROM rating_matches").fetchall()[0] == (
        n[0][0], n[0][0], n[0][0])
    conn.close()


def _snapshot(conn: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[Any, ...]]]:
    cols = {"rating_matches": "pos, match, ended, profile, teams, places, p_all, p_profile",
            "rating_history": "*", "ratings": "*"}
    return {t: sorted(map(tuple, conn.execute(f"SELECT {c} FROM {t}").fetchall()), key=repr)
            for t, c in cols.items()}


def _from_scratch(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    conn = open_store(db)
    try:
        for t in ("rating_matches", "rating_history", "ratings"):
            conn.execute(f"DELETE FROM {t}")
        refresh_ratings(conn)
        return _snapshot(conn)
    finally:
        conn.close()


@pytest.fixture()
def copy_of(tmp_path: Path) -> Iterator[Any]:
    import shutil

    def copy(db: Path, name: str = "c") -> Path:
        dest = tmp_path / name
        shutil.copytree(db.parent, dest)
        return dest / db.name

    yield copy


def test_incremental_refresh_equals_a_full_one(tmp_path: Path, copy_of: Any) -> None:
    from replay.ingest import ingest, reingest

    logs = tmp_path / "logs"
    logs.mkdir()
    # seed 2 starts on a later day than seed 1, seed 0 on an earlier one
    base = {"profiles": ("international", "royal_rumble"), "matches": 16, "tables": 2, "players_pool": 10,
            "seat_change_rate": 0.4}
    for seed in (0, 1, 2):
        write_lines(simulate(SimConfig(seed=seed, **base)), logs / f"s{seed}.jsonl")
    db = tmp_path / "data" / "replay.duckdb"

    def check(step: str) -> dict[str, list[tuple[Any, ...]]]:
        conn = open_store(db, read_only=True)
        now = _snapshot(conn)
        conn.close()
        assert now == _from_scratch(copy_of(db, step)), step
        return now

    ingest([str(logs / "s1.jsonl")], db=db, workers=0)
    first = check("first")
    ingest([str(logs / "s2.jsonl")], db=db, workers=0)  # later matches: appended
    second = check("later")
    assert len(second["rating_matches"]) == 2 * len(first["rating_matches"])
    ingest([str(logs / "s0.jsonl")], db=db, workers=0)  # earlier ones: everything after is rated again
    third = check("earlier")
    assert third["rating_matches"][0][1].startswith("m-0-") or any(
        r[1].startswith("m-0-") for r in third["rating_matches"])
    # a match deleted through the API
    from fastapi.testclient import TestClient

    from api.app import create_app

    conn = open_store(db, read_only=True)
    victim = conn.execute("SELECT match FROM rating_matches WHERE pos = 5").fetchall()[0][0]
    conn.close()
    with TestClient(create_app(db, token="t")) as c:
        assert c.delete(f"/api/matches/{victim}", headers={"Authorization": "Bearer t"}).status_code == 200
    after = check("deleted")
    assert victim not in {r[1] for r in after["rating_matches"]}
    assert len(after["rating_matches"]) == len(third["rating_matches"]) - 1
    # reingest validates every kept file again (the deleted match comes back)
    # and replaces every match (new numbers): the same ratings as before it
    reingest(db=db, workers=0)
    again = check("reingest")
    assert again == third


def test_pair_report_agrees_with_the_player_reports(mixed: Path) -> None:
    conn = open_store(mixed, read_only=True)
    a, b = conn.execute(
        "SELECT player, partner FROM ratings WHERE pool = ? AND partner IS NOT NULL AND NOT bot "
        "ORDER BY matches DESC, player LIMIT 1", [ALL]).fetchall()[0]
    r = pair_report(conn, b, a)  # either order
    assert r is not None and [p["player"] for p in r["players"]] == sorted([a, b])
    for me, other in ((a, b), (b, a)):
        rep = player_report(conn, me)
        assert rep is not None
        row = next(p for p in rep["partners"] if p["partner"] == other)
        assert (row["hands"], row["wins"], row["losses"], row["pts_for"], row["pts_against"]) == (
            r["together"]["hands"], r["together"]["wins"], r["together"]["losses"],
            r["together"]["points_for"], r["together"]["points_against"])
    std = {s["pool"]: s for s in r["standings"]}
    assert std[ALL]["matches"] == r["rated"]["matches"] == len(r["matches"]) == len(r["history"])
    assert r["rated"]["wins"] == std[ALL]["wins"]
    assert sum(o["matches"] for o in r["opponents"]) == len(r["matches"])
    assert r["history"][-1]["rating"] == pytest.approx(std[ALL]["rating"], abs=0.01)
    # each player's page lists the pair
    mine = player_ratings(conn, a)
    assert any(p["partner"] == b for p in mine["pairs"])
    assert mine["standings"][0]["pool"] == ALL and mine["history"]
    assert pair_report(conn, a, a) is None and pair_report(conn, a, "nobody") is None
    conn.close()


def test_leaderboard_filters_and_sorts(mixed: Path) -> None:
    conn = open_store(mixed, read_only=True)
    all_rows = leaderboard(conn, bots=True, per_page=None)["rows"]
    assert any(r["bot"] for r in all_rows)
    humans = leaderboard(conn, per_page=None)["rows"]
    assert humans and not any(r["bot"] for r in humans)
    assert [r["rating"] for r in humans] == sorted((r["rating"] for r in humans), reverse=True)
    by_matches = leaderboard(conn, sort="matches", order="asc", per_page=None)["rows"]
    assert [r["matches"] for r in by_matches] == sorted(r["matches"] for r in by_matches)
    assert sorted(r["place"] for r in by_matches) == sorted(r["place"] for r in humans)
    rumble = leaderboard(conn, pool="royal_rumble", per_page=None)["rows"]
    assert rumble and all(r["pool"] == "royal_rumble" for r in rumble)
    pairs = leaderboard(conn, kind="pairs", pool="international", per_page=3, page=1)
    assert pairs["rows"] and all(r["partner"] for r in pairs["rows"]) and pairs["total"] >= len(pairs["rows"])
    few = leaderboard(conn, min_matches=10**6)
    assert few["rows"] == [] and few["total"] == 0
    named = humans[0]
    found = leaderboard(conn, q=named["name"][:4].lower(), per_page=None)["rows"]
    assert named["player"] in {r["player"] for r in found}
    with pytest.raises(ValueError, match="sort by"):
        leaderboard(conn, sort="nope")
    conn.close()


def test_refresh_without_changes_is_a_no_op(mixed: Path, copy_of: Any) -> None:
    db = copy_of(mixed)
    conn = open_store(db)
    before = _snapshot(conn)
    assert refresh_ratings(conn) == 0
    assert _snapshot(conn) == before
    conn.close()


def test_calibration_shapes() -> None:
    rng = random.Random(3)
    rows = []
    for pos in range(1, 201):
        k = rng.choice([2, 3])
        places = tuple(rng.sample(range(1, k + 1), k))
        p = [1.0 / k] * k
        rows.append((pos, f"p{k}", places, p, p))
    rows.append((201, "p2", (), [], []))  # kept unrated: left out
    cal = reports.ratings.calibration(rows, 0.25)
    assert cal["matches"] == 200 and cal["held_out"] == 50
    g = cal["groups"]
    assert g["all"]["matches"] == 50 == g["2 sides"]["matches"] + g["3 sides"]["matches"]
    # forecasting 1/n is the uniform baseline itself
    assert g["all"]["ratings_log_loss"] == g["all"]["uniform_log_loss"]
    assert cal["train"]["matches"] == 150


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_update_in_place_equals_openskill_rate(data: Any) -> None:
    """Ratings.update (openskill's _compute on the objects) is model.rate()."""
    from reports.ratings import default_model

    r = Ratings()
    model = default_model()
    n = data.draw(st.integers(2, 4))
    size = data.draw(st.integers(1, 2))
    ratings = st.tuples(st.floats(0, 50), st.floats(0.5, 9))
    teams = [[model.rating(*data.draw(ratings)) for _ in range(size)] for _ in range(n)]
    ranks = data.draw(st.lists(st.integers(1, n), min_size=n, max_size=n))
    expected = model.rate(teams, ranks=list(ranks))
    r.update(teams, list(ranks))
    got = [[(p.mu, p.sigma) for p in team] for team in teams]
    assert got == [[(p.mu, p.sigma) for p in team] for team in expected]
