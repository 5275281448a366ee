"""The player rows (replay.store.player_rows, their one definition) as the
workers bring them, as the store makes them from its stored rows, and as a
reference in SQL derives them: the same rows, on every sample log and on
simulated matches of every profile. The shutout words cover every profile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from replay.ingest import ingest
from replay.rules import PROFILES
from replay.simulate import SimConfig, simulate
from replay.store import PLAYER_TABLES, derive_player_rows, open_store
from replay.store.player_rows import SHUTOUTS

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"

#: The player rows of the matches of the table ``_pm`` in SQL, as the store
#: derived them before replay.store.player_rows was their one definition: the
#: reference the rows are checked against. A held hand is a seat row joined
#: to the hands of its range.
REFERENCE = """
CREATE OR REPLACE TEMP TABLE _pm_seats AS
SELECT match, seat, player, name, bot, from_hand,
       coalesce(lead(from_hand) OVER (PARTITION BY match, seat ORDER BY from_hand, seq),
                2147483647) AS to_hand, seq
FROM seats WHERE match IN (SELECT match FROM _pm);

INSERT INTO player_seats
SELECT p.player, s.match, s.seat, s.player, s.name, s.bot, s.from_hand, s.to_hand, s.seq, m.batch
FROM (SELECT DISTINCT match, player FROM _pm_seats) p
JOIN _pm_seats s ON s.match = p.match
JOIN (SELECT match, batch FROM matches WHERE match IN (SELECT match FROM _pm)) m ON m.match = p.match
ORDER BY p.player, s.match, s.seq, s.seat;

INSERT INTO player_held
WITH m AS (
    -- the rules' JSON read once a match, not once a player and hand
    SELECT match, profile, rules->>'teams' AS teams, rules->>'stock' AS stock,
           rules->>'block_end' AS block_end, result AS match_result, winner AS match_winner,
           notes AS match_notes
    FROM matches WHERE match IN (SELECT match FROM _pm)
), held AS (
    SELECT s.player AS of_player, s.seat, s.bot, h.match, h.hand, h.result, h.winner, h.points,
           h.notes, h.passes, h.dealt_pips, h.dealt_doubles, h.dealt_tiles, h.started,
           m.profile, m.teams, m.stock, m.block_end, m.match_result, m.match_winner, m.match_notes
    FROM _pm_seats s
    JOIN (SELECT match, hand, result, winner, points, notes, passes, dealt_pips, dealt_doubles,
                 dealt_tiles, started
          FROM hands WHERE match IN (SELECT match FROM _pm)) h
      ON h.match = s.match AND h.hand >= s.from_hand AND h.hand < s.to_hand
    JOIN m ON m.match = s.match
), partner AS (
    SELECT x.of_player, x.match, x.hand, ps.player, ps.name, ps.bot
    FROM held x
    JOIN _pm_seats ps ON ps.match = x.match
     AND ps.seat = (x.seat + 2) % 4 AND x.hand >= ps.from_hand AND x.hand < ps.to_hand
    WHERE x.teams = 'pairs'
)
SELECT x.of_player, x.match, x.hand, x.seat, x.bot, p.player, p.name, p.bot,
       x.result, x.winner,
       x.points[(CASE WHEN x.teams = 'pairs' THEN x.seat % 2 ELSE x.seat END) + 1],
       list_sum(x.points), CASE WHEN x.result = 'domino' AND x.winner = x.seat THEN x.notes END,
       x.passes[x.seat + 1], x.dealt_pips[x.seat + 1], x.dealt_doubles[x.seat + 1], x.dealt_tiles[x.seat + 1],
       timezone('UTC', x.started), x.profile, x.teams, x.stock, x.block_end, x.match_result, x.match_winner,
       list_has_any(x.match_notes, ['shutout', 'chiva', 'zapato'])
FROM held x
LEFT JOIN partner p ON p.of_player = x.of_player AND p.match = x.match AND p.hand = x.hand
ORDER BY x.of_player, x.match, x.hand, x.seat;

DROP TABLE _pm_seats
"""


def _rows(conn: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[Any, ...]]]:
    return {t: conn.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in PLAYER_TABLES}


def _brought_and_derived(db: Path) -> tuple[dict[str, list[tuple[Any, ...]]], dict[str, list[tuple[Any, ...]]]]:
    """The player rows as ingest stored them, and as the store makes them from
    its rows (checked against the reference SQL's)."""
    conn = open_store(db)
    try:
        assert conn.execute("SELECT count(*) FROM player_pending").fetchall() == [(0,)]
        brought = _rows(conn)
        conn.execute("INSERT INTO player_pending SELECT match FROM matches")
        for t in PLAYER_TABLES:
            conn.execute(f"DELETE FROM {t}")
        derive_player_rows(conn, reports=False)
        derived = _rows(conn)
        for t in PLAYER_TABLES:
            conn.execute(f"DELETE FROM {t}")
        conn.execute("CREATE TEMP TABLE _pm AS SELECT match FROM matches")
        conn.execute(REFERENCE)
        assert _rows(conn) == derived
        return brought, derived
    finally:
        conn.close()


def test_shutout_words_are_the_profiles() -> None:
    words = {p.shutout_note for p in PROFILES.values()}
    assert words == SHUTOUTS and {"shutout", "chiva", "zapato"} <= words
    for p in PROFILES.values():
        assert p.shutout_note in SHUTOUTS, p.name


def test_sample_logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import replay.store.derive as store_mod

    used: list[int] = []
    real = store_mod._insert_held

    def spy(conn: duckdb.DuckDBPyConnection, held: store_mod.HeldRows, had: int) -> int:
        used.append(len(held.usable()))
        return real(conn, held, had)

    monkeypatch.setattr(store_mod, "_insert_held", spy)
    db = tmp_path / "data" / "replay.duckdb"
    ingest([SAMPLES], db=db, workers=0)
    assert used and used[0] > 50  # the rows the batches brought, not the SQL's
    brought, derived = _brought_and_derived(db)
    assert brought == derived
    held = brought["player_held"]
    assert len(held) > 1000
    assert any(r[5] is not None for r in held)  # partners (pairs)
    conn = open_store(db, read_only=True)
    try:  # seat changes: a seat with more than one occupant in a match
        assert conn.execute(
            "SELECT count(*) FROM (SELECT match, seat FROM seats GROUP BY ALL HAVING count(*) > 1)"
        ).fetchall()[0][0] > 0
    finally:
        conn.close()


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_simulated_profile(profile: str, tmp_path: Path) -> None:
    log = tmp_path / "logs" / f"{profile}.jsonl"
    log.parent.mkdir()
    log.write_bytes(b"".join(line + b"\n" for line in simulate(
        SimConfig(profiles=(profile,), matches=4, seed=11, tables=2))))  # fmt: skip
    db = tmp_path / "data" / "replay.duckdb"
    ingest([log], db=db, workers=0)
    brought, derived = _brought_and_derived(db)
    assert brought["player_held"] and brought == derived


def test_defect_samples(tmp_path: Path) -> None:
    """Broken logs (claims that disagree, bad seats, unreadable lines) too."""
    db = tmp_path / "data" / "replay.duckdb"
    ingest([SAMPLES.parent / "sample_logs_defects"], db=db, workers=0)
    brought, derived = _brought_and_derived(db)
    assert brought["player_held"] and brought == derived


def test_a_match_read_again_in_the_load_of_its_first_batch_keeps_one_set_of_rows(tmp_path: Path) -> None:
    """A match with lines after its end (here: its lines again in a second
    file) is in a batch, then read again whole in a `replace` batch. When
    both batches are in one load, the first one's player files are set aside
    too (for its other matches), with that match's rows in them: only the
    batch that covers a match may give its rows (they were doubled)."""
    lines = list(simulate(SimConfig(hands=60, tables=2, seed=8)))
    again = lines[0].split(b'"match":"')[1].split(b'"')[0]
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))
    (logs / "b.jsonl").write_bytes(b"".join(line + b"\n" for line in lines if b'"match":"' + again + b'"' in line))
    db = tmp_path / "data" / "replay.duckdb"
    summary = ingest([logs], db=db, workers=0, chunk_hands=1000)
    assert summary.batches <= 8  # one load, one group: both batches of each match in it
    brought, derived = _brought_and_derived(db)
    assert brought["player_held"] and brought == derived
