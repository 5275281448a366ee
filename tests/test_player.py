"""The player report over a store built from the sample logs, checked against
figures counted independently from `moves` and `seats` in plain SQL; and
migration 002 (hands.passes) on a store that predates it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from replay import store as store_mod
from replay.store import migrations, open_store, schema_version
from replay.tiles import IS_DOUBLE, PIPS
from reports.player import player_report

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
        m.setattr(store_mod, "migrations", lambda: first)
        c = open_store(old)
    assert schema_version(c) == 1
    hand_cols = [r[0] for r in c.execute("DESCRIBE hands").fetchall()]
    assert "passes" not in hand_cols
    c.execute(f"ATTACH '{db}' AS src (READ_ONLY)")
    for (t,) in c.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = 'src' AND table_name <> 'schema_version'"
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
        assert differ == [(0,)]  # the SQL backfill and replay.frames agree
        assert c.execute("SELECT count(*) FROM hands WHERE dealt_tiles IS NULL").fetchall() == [
            (0,)
        ]
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
