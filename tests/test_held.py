"""The player rows the workers make (replay.store.player_rows) against the SQL derivation
(replay.store._PLAYER_ROWS), which stays for batches spooled before them:
the same rows, on every sample log and on simulated matches of every profile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from replay.ingest import ingest
from replay.rules import PROFILES
from replay.simulate import SimConfig, simulate
from replay.store import PLAYER_TABLES, derive_player_rows, open_store

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"


def _rows(conn: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[Any, ...]]]:
    return {t: conn.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in PLAYER_TABLES}


def _brought_and_derived(db: Path) -> tuple[dict[str, list[tuple[Any, ...]]], dict[str, list[tuple[Any, ...]]]]:
    """The player rows as ingest stored them, and as the SQL derives them."""
    conn = open_store(db)
    try:
        assert conn.execute("SELECT count(*) FROM player_pending").fetchall() == [(0,)]
        brought = _rows(conn)
        conn.execute("INSERT INTO player_pending SELECT match FROM matches")
        for t in PLAYER_TABLES:
            conn.execute(f"DELETE FROM {t}")
        derive_player_rows(conn, reports=False)
        return brought, _rows(conn)
    finally:
        conn.close()


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
