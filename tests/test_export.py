"""`replay export --parquet DIR`: the store as a hive-partitioned Parquet dataset
that DuckDB and polars read with the store's own counts."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import polars as pl
import pytest

from cli.main import main as cli_main
from replay.export import MARKER, PARTITIONED, UNPARTITIONED, export_parquet
from replay.ingest import ingest
from replay.store import open_store, table_counts
from tests.test_ingest import hold, sim_lines, write

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("export")
    logs = d / "logs"
    write(logs / "a.jsonl", sim_lines(120, seed=31))
    db = d / "data" / "r.duckdb"
    ingest([logs], db=db, workers=0, analysis=(0, 0))  # perfect information only: quick
    ingest([ROOT / "sample_logs", ROOT / "sample_logs_defects"], db=db, workers=0)
    return db


def counts(db: Path) -> dict[str, int]:
    conn = open_store(db, read_only=True)
    try:
        return {t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0]) for t in (*PARTITIONED, *UNPARTITIONED)}
    finally:
        conn.close()


def test_duckdb_and_polars_read_the_export_with_the_store_s_counts(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "parquet"
    assert cli_main(["export", "--parquet", str(out), "--db", str(store)]) == 0
    want = counts(store)
    assert want["moves"] > 1000 and want["findings"] > 0 and want["move_analysis"] > 1000
    assert json.loads((out / MARKER).read_text())["rows"] == want
    conn = duckdb.connect()
    for t, n in want.items():
        glob = str(out / t / "**" / "*.parquet")
        assert conn.execute(f"SELECT count(*) FROM read_parquet('{glob}', hive_partitioning = true)").fetchall()[0][0] == n, t
        assert pl.scan_parquet(glob, hive_partitioning=True).select(pl.len()).collect().item() == n, t
    # partitioned by profile and day: a profile's moves are its folders' moves
    profiles = {p.name for p in (out / "moves").iterdir()}
    assert len(profiles) > 5 and all(p.startswith("profile=") for p in profiles)
    moves = str(out / "moves" / "**" / "*.parquet")
    by_profile = dict(conn.execute(
        f"SELECT profile, count(*) FROM read_parquet('{moves}', hive_partitioning = true) GROUP BY profile"
    ).fetchall())  # fmt: skip
    db = open_store(store, read_only=True)
    stored = dict(db.execute(
        "SELECT m.profile, count(*) FROM moves JOIN matches m USING (match) GROUP BY m.profile"
    ).fetchall())  # fmt: skip
    # the rows themselves, not only their number
    a = db.execute("SELECT sum(hash(match, hand, ply, tile, pips)::HUGEINT) FROM moves").fetchall()
    db.close()
    assert by_profile == stored
    b = conn.execute(
        f"SELECT sum(hash(match, hand, ply, tile, pips)::HUGEINT) FROM read_parquet('{moves}', hive_partitioning = true)"
    ).fetchall()
    assert a == b
    days = conn.execute(
        f"SELECT DISTINCT typeof(day) FROM read_parquet('{moves}', hive_partitioning = true)"
    ).fetchall()
    assert days == [("DATE",)]
    # the lines of no match: findings without a match, in the unknown partition
    top = conn.execute(
        f"SELECT count(*) FROM read_parquet('{out / 'findings' / '**' / '*.parquet'}', hive_partitioning = true) "
        "WHERE match IS NULL AND profile IS NULL"
    ).fetchall()[0][0]
    db = open_store(store, read_only=True)
    try:
        assert top == db.execute("SELECT count(*) FROM findings WHERE match IS NULL").fetchall()[0][0] > 0
    finally:
        db.close()


def test_an_export_replaces_an_export_and_nothing_else(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    conn = open_store(store, read_only=True)
    try:
        export_parquet(conn, out)
        (out / "moves" / "stale.parquet").write_bytes(b"old")
        rows = export_parquet(conn, out)
        assert not (out / "moves" / "stale.parquet").exists()
        assert rows == counts(store) and rows["matches"] == table_counts(conn)["matches"]
        assert [p.name for p in tmp_path.iterdir()] == ["ds"]  # no temporary folder left
        mine = tmp_path / "mine"
        mine.mkdir()
        (mine / "notes.txt").write_text("keep")
        with pytest.raises(FileExistsError, match="not an export"):
            export_parquet(conn, mine)
        assert (mine / "notes.txt").read_text() == "keep"
    finally:
        conn.close()


def test_export_of_a_held_store_says_so(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server = hold(store)
    try:
        assert cli_main(["export", "--parquet", str(tmp_path / "x"), "--db", str(store)]) == 1
    finally:
        server.communicate("")
    assert "in use" in capsys.readouterr().err
    assert cli_main(["export", "--parquet", str(tmp_path / "x"), "--db", str(tmp_path / "none.duckdb")]) == 1


def test_an_empty_table_is_an_empty_dataset_with_its_columns(tmp_path: Path) -> None:
    db = tmp_path / "data" / "r.duckdb"
    ingest([ROOT / "sample_logs_defects"], db=db, workers=0)  # no analysis: those tables are empty
    conn = open_store(db, read_only=True)
    try:
        export_parquet(conn, tmp_path / "x")
    finally:
        conn.close()
    glob = str(tmp_path / "x" / "move_analysis" / "**" / "*.parquet")
    got = duckdb.connect().execute(
        f"SELECT count(*), count(profile) FROM read_parquet('{glob}', hive_partitioning = true)"
    ).fetchall()
    assert got == [(0, 0)]
    frame = pl.scan_parquet(glob, hive_partitioning=True).collect()
    assert frame.height == 0 and {"match", "hand", "ply", "profile", "day"} <= set(frame.columns)
