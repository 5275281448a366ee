"""Deleting a match leaves the store as if the match had never been ingested.

Two stores are built from the same log files: one ingests the match to delete
as well (in a run of its own, after the others) and then deletes it, the
other never sees it. Every table of the two must then hold the same rows,
derived tables included (SEED_REUSED findings and verdicts, ``players``, the
player tables and reports, ratings and insights). Left out are only the
columns that record when or where a row was loaded:

- ``batches`` (batch ids and load times), ``matches.batch`` and
  ``player_seats.batch`` (batch ids), ``schema_version.applied_at``;
- ``mno``, a match's number in load order, compared by rank instead (the
  store that loaded more matches numbers the later ones higher);
- ``log_files.read_at``; ``log_files`` also keeps the deleted match's file
  (a file read stays read: its kept copy is still under ``logs/``), so that
  one row is set apart;
- ``player_order`` and ``table_order``, the bookkeeping of the tables'
  physical order (how many rows were appended since the last rewrite).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from replay.ingest import ingest
from replay.store import delete_match, open_store

ROOT = Path(__file__).resolve().parent.parent

#: Columns that say when or where a row was loaded, by table.
WHEN: dict[str, set[str]] = {
    "schema_version": {"applied_at"},
    "matches": {"batch"},
    "player_seats": {"batch"},
    "log_files": {"read_at"},
}
#: Tables that only record loads or the physical order of other tables.
SKIPPED = {"batches", "player_order", "table_order"}


def _split(source: Path, match: str, into: Path) -> tuple[Path, Path]:
    """``source``'s lines of ``match`` and the others, as two files."""
    mine, rest = [], []
    for line in source.read_text(encoding="utf-8").splitlines(keepends=True):
        (mine if json.loads(line).get("match") == match else rest).append(line)
    assert mine and rest
    into.mkdir(parents=True, exist_ok=True)
    a, b = into / f"rest-{source.name}", into / f"only-{source.name}"
    a.write_text("".join(rest), encoding="utf-8")
    b.write_text("".join(mine), encoding="utf-8")
    return a, b


def _tables(conn: duckdb.DuckDBPyConnection) -> list[str]:
    return [t for (t,) in conn.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' ORDER BY table_name"
    ).fetchall() if t not in SKIPPED]  # fmt: skip


def _ranks(conn: duckdb.DuckDBPyConnection) -> dict[int, int]:
    mnos = [m for (m,) in conn.execute("SELECT mno FROM matches ORDER BY mno").fetchall()]
    return {m: k for k, m in enumerate(mnos, 1)}


def _norm(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_norm(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _norm(v)) for k, v in value.items()))
    return value


def snapshot(db: Path, skip_file: str | None = None) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows, sorted, without the columns of :data:`WHEN` (``mno`` as its rank)."""
    out = {}
    with duckdb.connect(str(db), read_only=True) as conn:
        ranks = _ranks(conn)
        for t in _tables(conn):
            cols = [c for (c,) in conn.execute(
                "SELECT column_name FROM duckdb_columns() WHERE table_name = ? ORDER BY column_index", [t]
            ).fetchall() if c not in WHEN.get(t, set())]  # fmt: skip
            names = ", ".join(f'"{c}"' for c in cols)
            rows = conn.execute(f"SELECT {names} FROM {t}").fetchall()
            if "mno" in cols:
                k = cols.index("mno")
                rows = [(*r[:k], ranks.get(r[k], r[k]), *r[k + 1 :]) for r in rows]
            if t == "log_files" and skip_file is not None:
                rows = [r for r in rows if r[cols.index("path")] != skip_file]
            out[t] = sorted((tuple(_norm(v) for v in r) for r in rows), key=repr)
    return out


def assert_same(got: dict[str, list[tuple[Any, ...]]], want: dict[str, list[tuple[Any, ...]]]) -> None:
    assert sorted(got) == sorted(want)
    for t in want:
        gone, extra = [r for r in want[t] if r not in got[t]], [r for r in got[t] if r not in want[t]]
        assert got[t] == want[t], f"{t}: missing {gone[:3]}, extra {extra[:3]}"


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield tmp_path_factory.mktemp("delete")


def _both(where: Path, source: Path, match: str) -> tuple[Path, Path, Path]:
    """The store that ingests ``match`` too (not yet deleted), the one that never
    sees it, and the file of its lines."""
    rest, only = _split(source, match, where / "logs")
    with_it, without = where / "with" / "replay.duckdb", where / "without" / "replay.duckdb"
    ingest([rest], db=with_it, workers=1)
    ingest([only], db=with_it, workers=1)
    ingest([rest], db=without, workers=1)
    return with_it, without, only


@pytest.mark.parametrize(
    ("source", "match"),
    [
        # the other match of a reused seed keeps no finding that names it; the
        # players who sat only in it go, and the others' match counts drop
        ("sample_logs_defects/SEED_REUSED.jsonl", "m-seed-reused-0-b"),
        # the first match of a rematch: the rematch is validated again without
        # it (REMATCH_UNKNOWN), as when it was never stored
        ("sample_logs/chiva.jsonl", "m-1000-0002"),
        # the rematch itself
        ("sample_logs/chiva.jsonl", "m-1000-0003"),
    ],
)
def test_deleted_is_never_ingested(cases: Path, source: str, match: str) -> None:
    where = cases / f"{Path(source).stem}-{match}"
    with_it, without, only = _both(where, ROOT / source, match)
    conn = open_store(with_it)
    try:
        assert conn.execute("SELECT count(*) FROM matches WHERE match = ?", [match]).fetchall() == [(1,)]
        assert delete_match(conn, match)
        assert not delete_match(conn, match)  # gone already
    finally:
        conn.close()
    assert_same(snapshot(with_it, skip_file=Path(only).name), snapshot(without))  # files go by their names


def test_seed_reused_after_delete(cases: Path) -> None:
    """What the issue saw through the API: no finding names the deleted match,
    and no player of it alone is left."""
    pytest.importorskip("fastapi")
    # the web stack is an optional dependency: imported once it is known to be there
    from fastapi.testclient import TestClient  # noqa: PLC0415

    from api.app import create_app  # noqa: PLC0415

    where = cases / "api"
    with_it, without, _ = _both(where, ROOT / "sample_logs_defects/SEED_REUSED.jsonl", "m-seed-reused-0-b")
    with TestClient(create_app(with_it, token="t")) as c:
        r = c.delete("/api/matches/m-seed-reused-0-b", headers={"Authorization": "Bearer t"})
        assert r.status_code == 200
    with duckdb.connect(str(with_it), read_only=True) as conn:
        said = conn.execute("SELECT message FROM findings WHERE code = 'SEED_REUSED'").fetchall()
        assert not any("m-seed-reused-0-b" in m for (m,) in said)
        players = dict(conn.execute("SELECT player, matches FROM players").fetchall())
        seated = dict(conn.execute("SELECT player, count(DISTINCT match) FROM seats GROUP BY ALL").fetchall())
        assert players == seated
    want = snapshot(without)
    got = snapshot(with_it, skip_file="only-SEED_REUSED.jsonl")
    assert_same(got, want)
