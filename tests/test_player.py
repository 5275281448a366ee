"""The player report over a store built from the sample logs, checked against
figures counted independently from `moves` and `seats` in plain SQL; and
migration 002 (hands.passes) on a store that predates it. The tables keyed
by player (migration 003) against the base tables they are derived from:
the same report for every player, after a load and after a match is replaced.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import orjson
import polars as pl
import pytest

from replay import store as store_mod
from replay.store import migrations, open_store, schema_version
from replay.tiles import IS_DOUBLE, PIPS
from reports import player as player_mod
from reports.player import kept_report, player_report

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"

# Passes by (match, hand, seat), counted from the moves.
_MOVE_PASSES = """
SELECT match, hand, seat, count(*) AS n FROM moves WHERE kind = 'pass' GROUP BY ALL
"""

# Per player, from seats, hands and moves only: hands played and passes made
# while holding the seat (the closing pass of an all_pass block not counted).
_EXPECTED = f"""
WITH r AS (
    SELECT match, seat, player, from_hand,
           coalesce(lead(from_hand) OVER (PARTITION BY match, seat ORDER BY from_hand, seq),
                    2147483647) AS to_hand
    FROM seats
), held AS (
    SELECT r.player, h.match, h.hand, r.seat, h.result, m.rules->>'block_end' AS block_end
    FROM hands h
    JOIN r ON r.match = h.match AND h.hand >= r.from_hand AND h.hand < r.to_hand
    JOIN matches m ON m.match = h.match
), p AS ({_MOVE_PASSES})
SELECT player,
       count(*) FILTER (WHERE result IN ('domino', 'block')) AS hands,
       coalesce(sum(greatest(coalesce(p.n, 0)
           - CASE WHEN result = 'block' AND block_end = 'all_pass' THEN 1 ELSE 0 END, 0))
           FILTER (WHERE result IN ('domino', 'block')), 0) AS passes
FROM held LEFT JOIN p USING (match, hand, seat)
GROUP BY player ORDER BY player
"""

# hands.passes entries that differ from the count in `moves` (both directions).
_WRONG_PASSES = f"""
WITH p AS ({_MOVE_PASSES})
SELECT count(*) FROM hands h
LEFT JOIN matches m USING (match)
CROSS JOIN range(0, 8) AS s(seat)
LEFT JOIN p ON p.match = h.match AND p.hand = h.hand AND p.seat = s.seat
WHERE h.passes IS NULL
   OR coalesce(h.passes[s.seat + 1], 0) <> coalesce(p.n, 0)
   OR (s.seat < coalesce(m.players, 0) AND len(h.passes) <= s.seat)
"""


def _ingest(data: Path) -> Path:
    from replay.ingest import ingest

    data.mkdir(parents=True, exist_ok=True)
    db = data / "replay.duckdb"
    ingest([str(SAMPLES)], db=db, workers=0)
    return db


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _ingest(tmp_path_factory.mktemp("player") / "data")


@pytest.fixture(scope="module")
def conn(db: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    c = open_store(db, read_only=True)
    yield c
    c.close()


def test_hand_passes_equal_the_moves(conn: duckdb.DuckDBPyConnection) -> None:
    assert conn.execute(_WRONG_PASSES).fetchall() == [(0,)]
    total = conn.execute("SELECT sum(list_sum(passes)) FROM hands").fetchall()[0][0]
    moved = conn.execute("SELECT count(*) FROM moves WHERE kind = 'pass'").fetchall()[0][0]
    assert total == moved > 0


def test_deal_summaries_equal_the_deal(conn: duckdb.DuckDBPyConnection) -> None:
    rows = conn.execute(
        "SELECT dealt, dealt_pips, dealt_doubles, dealt_tiles FROM hands"
    ).fetchall()
    assert rows
    for dealt, pips, dbl, tiles in rows:
        assert pips == [sum(PIPS[t] for t in d) for d in dealt]
        assert dbl == [sum(IS_DOUBLE[t] for t in d) for d in dealt]
        assert tiles == [len(d) for d in dealt]


def test_report_passes_and_hands_match_independent_counts(conn: duckdb.DuckDBPyConnection) -> None:
    expected = conn.execute(_EXPECTED).fetchall()
    assert len(expected) > 20
    assert any(passes for _, _, passes in expected)
    # the all_pass closing pass is exercised by the samples
    assert (
        conn.execute(
            "SELECT count(*) FROM hands JOIN matches m USING (match) "
            "WHERE hands.result = 'block' AND m.rules->>'block_end' = 'all_pass'"
        ).fetchall()[0][0]
        > 0
    )
    for player, hands, passes in expected:
        rep = player_report(conn.cursor(), player)
        assert rep is not None, player
        assert (rep["hands"], rep["passes"]) == (hands, passes), player
        assert rep["passes_per_hand"] == (round(passes / hands, 3) if hands else None), player


def test_migration_002_backfills_an_old_store(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store at schema 001 (built from the same ingest) opened by the new code:
    hands.passes is filled from moves, equal to what the ingest computed."""
    first = migrations()[:1]
    assert first[0][0] == 1
    old = tmp_path / "data" / "replay.duckdb"
    old.parent.mkdir(parents=True)
    with monkeypatch.context() as m:
        m.setattr(store_mod.schema, "migrations", lambda: first)
        c = open_store(old)
    assert schema_version(c) == 1
    hand_cols = [r[0] for r in c.execute("DESCRIBE hands").fetchall()]
    assert "passes" not in hand_cols
    c.execute(f"ATTACH '{db}' AS src (READ_ONLY)")
    for (t,) in c.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = 'src' AND table_name <> 'schema_version' "
        "AND table_name IN (SELECT table_name FROM duckdb_tables() WHERE database_name = current_database())"
    ).fetchall():
        cols = ", ".join(r[0] for r in c.execute(f"DESCRIBE {t}").fetchall())
        c.execute(f"INSERT INTO {t} ({cols}) SELECT {cols} FROM src.{t}")
    c.execute("DETACH src")
    c.close()

    c = open_store(old)
    try:
        assert schema_version(c) == max(v for v, _, _ in migrations()) >= 2
        assert c.execute(_WRONG_PASSES).fetchall() == [(0,)]
        c.execute(f"ATTACH '{db}' AS src (READ_ONLY)")
        differ = c.execute(
            "SELECT count(*) FROM hands h FULL JOIN src.hands s USING (match, hand) "
            "WHERE h.passes IS DISTINCT FROM s.passes OR h.dealt_pips IS DISTINCT FROM s.dealt_pips "
            "OR h.dealt_doubles IS DISTINCT FROM s.dealt_doubles "
            "OR h.dealt_tiles IS DISTINCT FROM s.dealt_tiles"
        ).fetchall()
        assert differ == [(0,)]  # the SQL backfill and replay.store.rows agree
        assert c.execute("SELECT count(*) FROM hands WHERE dealt_tiles IS NULL").fetchall() == [
            (0,)
        ]
        # migration 003 builds the player tables as the load does
        assert _stale_player_rows(c) == 0
        for t in store_mod.PLAYER_TABLES:
            assert c.execute(
                f"SELECT count(*) FROM (FROM {t} EXCEPT ALL FROM src.{t}) "
                f"UNION ALL SELECT count(*) FROM (FROM src.{t} EXCEPT ALL FROM {t})"
            ).fetchall() == [(0,), (0,)], t
        c.execute("DETACH src")
        players = [p for (p,) in c.execute("SELECT player FROM players ORDER BY player").fetchall()]
        src = open_store(db, read_only=True)
        try:
            for p in players[:10]:
                assert player_report(c.cursor(), p) == player_report(src.cursor(), p), p
        finally:
            src.close()
    finally:
        c.close()


# -- the tables keyed by player (migration 003) ------------------------------------------

# What player_seats must hold, and the keys player_held must hold, from the base tables.
_DERIVED = {
    "player_seats": """
        SELECT p.player, s.match, s.seat, s.player, s.name, s.bot, s.from_hand,
               coalesce(n.from_hand, 2147483647), s.seq, m.batch
        FROM (SELECT DISTINCT match, player FROM seats) p
        JOIN seats s USING (match)
        LEFT JOIN seats n ON n.match = s.match AND n.seat = s.seat
            AND (n.from_hand, n.seq) > (s.from_hand, s.seq)
            AND NOT EXISTS (SELECT 1 FROM seats x WHERE x.match = s.match AND x.seat = s.seat
                AND (x.from_hand, x.seq) > (s.from_hand, s.seq) AND (x.from_hand, x.seq) < (n.from_hand, n.seq)) JOIN matches m USING (match)""",
    # the key of every held hand: each seat row with the hands of its range
    "player_held": """
        SELECT s.player, s.match, h.hand, s.seat
        FROM seats s JOIN hands h USING (match)
        LEFT JOIN seats n ON n.match = s.match AND n.seat = s.seat
            AND (n.from_hand, n.seq) > (s.from_hand, s.seq)
            AND NOT EXISTS (SELECT 1 FROM seats x WHERE x.match = s.match AND x.seat = s.seat
                AND (x.from_hand, x.seq) > (s.from_hand, s.seq) AND (x.from_hand, x.seq) < (n.from_hand, n.seq))
        WHERE h.hand >= s.from_hand AND h.hand < coalesce(n.from_hand, 2147483647)""",
}

# The report's reads before migration 003: the base tables.
_BASE_MINE = "(SELECT match FROM seats WHERE player = $player)"
_BASE_SEATS = f"SELECT match, seat, player, name, bot, from_hand, seq FROM seats WHERE match IN {_BASE_MINE}"


def _base_ranges(cur: duckdb.DuckDBPyConnection, player: str) -> pl.LazyFrame:
    """The seat ranges as the report computed them before migration 003 (in polars)."""
    seats = cur.sql(_BASE_SEATS, params={"player": player}).pl().lazy()
    return seats.sort("match", "seat", "from_hand", "seq").with_columns(
        to_hand=pl.col("from_hand").shift(-1).over("match", "seat").fill_null(2**31 - 1)
    )
_BASE_HANDS = f"""
WITH mm AS MATERIALIZED (
    SELECT match, profile, rules->>'teams' AS teams, rules->>'stock' AS stock,
           rules->>'block_end' AS block_end, result AS match_result, winner AS match_winner,
           notes AS match_notes
    FROM matches WHERE match IN {_BASE_MINE}
)
SELECT h.match, h.hand, h.result, h.winner, h.points, h.notes, h.passes AS seat_passes,
       h.dealt_pips AS seat_pips, h.dealt_doubles AS seat_doubles, h.dealt_tiles AS seat_tiles,
       timezone('UTC', h.started) AS started, mm.* EXCLUDE (match)
FROM hands h JOIN mm ON mm.match = h.match
"""


def _stale_player_rows(c: duckdb.DuckDBPyConnection) -> int:
    """Rows of the player tables missing or extra against the base tables."""
    n = 0
    for t, q in _DERIVED.items():
        got = "SELECT of_player, match, hand, seat FROM player_held" if t == "player_held" else f"FROM {t}"
        n += c.execute(
            f"SELECT (SELECT count(*) FROM ({got} EXCEPT ALL {q})) "
            f"+ (SELECT count(*) FROM ({q} EXCEPT ALL {got}))"
        ).fetchall()[0][0]
    return n


def _all_players(c: duckdb.DuckDBPyConnection) -> list[str]:
    return [p for (p,) in c.execute(
        "SELECT player FROM players UNION SELECT player FROM seats ORDER BY 1").fetchall()]


def _base_seat_hands(cur: duckdb.DuckDBPyConnection, player: str) -> pl.DataFrame:
    """The rows of player_held as the report joined them in polars before
    migration 004, from the base tables (seats, hands, matches)."""
    ranges = _base_ranges(cur, player)
    hands = cur.sql(_BASE_HANDS, params={"player": player}).pl().lazy()
    in_range = (pl.col("hand") >= pl.col("from_hand")) & (pl.col("hand") < pl.col("to_hand"))
    mine = ranges.filter(pl.col("player") == player).select("match", "seat", "bot", "from_hand", "to_hand")
    held = hands.join(mine, on="match").filter(in_range).drop("from_hand", "to_hand")
    partner = (
        held.filter(pl.col("teams") == "pairs")
        .select("match", "hand", pseat=((pl.col("seat") + 2) % 4).cast(pl.Int8))
        .join(ranges.rename({"seat": "pseat"}).with_columns(pl.col("pseat").cast(pl.Int8)),
              on=["match", "pseat"])
        .filter(in_range)
        .select("match", "hand", partner="player", partner_name="name", partner_bot="bot")
    )
    seat = pl.col("seat").cast(pl.Int64)
    side = pl.when(pl.col("teams") == "pairs").then(pl.col("seat") % 2).otherwise(pl.col("seat"))
    closing = (pl.col("result") == "block") & (pl.col("block_end") == "all_pass")
    return (
        held.join(partner, on=["match", "hand"], how="left")
        .with_columns(
            passes=pl.col("seat_passes").list.get(seat, null_on_oob=True).cast(pl.Int32),
            dealt_pips=pl.col("seat_pips").list.get(seat, null_on_oob=True).cast(pl.Int32),
            dealt_doubles=pl.col("seat_doubles").list.get(seat, null_on_oob=True).cast(pl.Int32),
            dealt_tiles=pl.col("seat_tiles").list.get(seat, null_on_oob=True).cast(pl.UInt32),
            side_points=pl.col("points").list.get(side.cast(pl.Int64), null_on_oob=True),
            all_points=pl.col("points").list.sum(),
            match_shutout=pl.col("match_notes")
            .list.eval(pl.element().is_in(list(player_mod.SHUTOUT_NOTES))).list.any(),
        )
        .with_columns(passes=(pl.col("passes").fill_null(0) - closing.cast(pl.Int32)).clip(lower_bound=0))
        .drop("seat_passes", "seat_pips", "seat_doubles", "seat_tiles", "points", "match_notes")
        .sort("started", "match", "hand", nulls_last=True)
        .collect()
    )


def _reports_from_base(c: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    def base_hands_of(cur: duckdb.DuckDBPyConnection, players: list[str], filters: object = None) -> pl.DataFrame:
        assert not filters  # the unfiltered reports are compared
        return pl.concat([_base_seat_hands(cur, p).with_columns(of_player=pl.lit(p)) for p in players])

    with monkeypatch.context() as m:
        m.setattr(player_mod, "hands_of", base_hands_of)
        return {p: player_report(c.cursor(), p) for p in _all_players(c)}


def _same_reports(c: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch) -> int:
    """Every player's report, byte for byte as JSON, from both sources, and as
    kept at load time (every player with hands has one); their number."""
    base = _reports_from_base(c, monkeypatch)
    for p, rep in base.items():
        got = player_report(c.cursor(), p)
        assert orjson.dumps(got) == orjson.dumps(rep), p
    assert _kept_are_reports(c) > 0
    return len(base)


def _kept_are_reports(c: duckdb.DuckDBPyConnection) -> int:
    """Each player with hands has a kept report, and it is their report; how many."""
    held = [p for (p,) in c.execute("SELECT DISTINCT of_player FROM player_held ORDER BY 1").fetchall()]
    for p in held:
        kept = kept_report(c.cursor(), p)
        assert kept is not None, p
        assert orjson.dumps(kept) == orjson.dumps(player_report(c.cursor(), p)), p
    assert c.execute("SELECT count(*), count(DISTINCT player) FROM player_reports").fetchall() == [
        (len(held), len(held))]
    return len(held)


def test_player_tables_match_the_base_tables(
    conn: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert conn.execute("SELECT count(*) FROM player_held").fetchall()[0][0] > 0
    assert _stale_player_rows(conn) == 0
    assert _same_reports(conn, monkeypatch) > 20
    assert player_report(conn.cursor(), "nobody-at-all") is None


def test_player_tables_follow_a_replaced_match(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A log ingested while its matches were still on, then again grown (the
    matches replaced), and a match whose lines come in two files (validated
    again from both): the player tables hold the final rows, no stale ones."""
    from replay.ingest import ingest

    monkeypatch.setattr(store_mod.derive, "RESORT_MIN_ROWS", 0)  # rewritten in player order as it grows
    lines = [x for x in (SAMPLES / "domena_4p.jsonl").read_bytes().splitlines(keepends=True) if x.strip()]
    more = [x for x in (SAMPLES / "dominican.jsonl").read_bytes().splitlines(keepends=True) if x.strip()]
    log = tmp_path / "logs" / "table.jsonl"
    log.parent.mkdir(parents=True)
    db = tmp_path / "data" / "replay.duckdb"
    log.write_bytes(b"".join(lines[: len(lines) // 2]))
    ingest([log], db=db, workers=0)
    c = open_store(db, read_only=True)
    before = c.execute("SELECT count(*) FROM player_held").fetchall()[0][0]
    hands_before = dict(c.execute("SELECT match, hands FROM matches").fetchall())
    c.close()
    log.write_bytes(b"".join(lines))  # the same log, grown
    (tmp_path / "logs" / "day1.jsonl").write_bytes(b"".join(more[: len(more) // 2]))
    ingest([tmp_path / "logs"], db=db, workers=0)
    (tmp_path / "logs2").mkdir()
    (tmp_path / "logs2" / "day2.jsonl").write_bytes(b"".join(more[len(more) // 2:]))
    ingest([tmp_path / "logs2"], db=db, workers=0)

    c = open_store(db, read_only=True)
    try:
        hands_after = dict(c.execute("SELECT match, hands FROM matches").fetchall())
        assert any(hands_after[m] > n for m, n in hands_before.items())  # a match replaced, grown
        assert c.execute(
            "SELECT count(*) FROM (SELECT match FROM match_files GROUP BY match HAVING count(*) > 1)"
        ).fetchall()[0][0] > 0  # matches validated again from two files
        assert c.execute("SELECT count(*) FROM player_held").fetchall()[0][0] > before
        assert _stale_player_rows(c) == 0
        assert c.execute("SELECT sorted_rows FROM player_order").fetchall()[0][0] > before
        # no match left twice, none missing
        assert c.execute(
            "SELECT count(*) FROM (SELECT of_player, match, hand, seat FROM player_held GROUP BY ALL HAVING count(*) > 1)"
        ).fetchall() == [(0,)]
        assert _same_reports(c, monkeypatch) > 0
        grown = {p: player_report(c.cursor(), p) for p in _all_players(c)}
    finally:
        c.close()
    # the same as a store that read the whole logs at once
    whole = tmp_path / "whole"
    (whole / "logs").mkdir(parents=True)
    (whole / "logs" / "table.jsonl").write_bytes(b"".join(lines))
    (whole / "logs" / "day.jsonl").write_bytes(b"".join(more))
    ingest([whole / "logs"], db=whole / "data" / "replay.duckdb", workers=0)
    c = open_store(whole / "data" / "replay.duckdb", read_only=True)
    try:
        assert orjson.dumps({p: player_report(c.cursor(), p) for p in _all_players(c)}) == orjson.dumps(grown)
    finally:
        c.close()


def test_delete_match_removes_its_player_rows(tmp_path: Path) -> None:
    db = _ingest(tmp_path / "data")
    c = open_store(db)
    try:
        m = c.execute("SELECT match FROM player_held LIMIT 1").fetchall()[0][0]
        assert store_mod.delete_match(c, m)
        assert c.execute("SELECT count(*) FROM player_held WHERE match = ?", [m]).fetchall() == [(0,)]
        assert c.execute("SELECT count(*) FROM player_seats WHERE match = ?", [m]).fetchall() == [(0,)]
        assert _stale_player_rows(c) == 0
        # its players' kept reports are worked out again without it, as after a load
        _kept_are_reports(c)
    finally:
        c.close()


def test_a_store_migrated_to_007_gets_its_reports(tmp_path: Path) -> None:
    """Reports kept from the first load that finds none (an older store, or
    every kept report lost), even with nothing to derive."""
    db = _ingest(tmp_path / "data")
    c = open_store(db)
    try:
        n = _kept_are_reports(c)
        c.execute("DELETE FROM player_reports")
        assert store_mod.derive_player_rows(c) == 0  # nothing pending
        assert _kept_are_reports(c) == n > 20
    finally:
        c.close()
