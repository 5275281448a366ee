"""A spool batch is whole or refused: every kind of file of a batch damaged
(cut short, 64 bytes overwritten, the manifest broken) leaves nothing of its
run stored, says so, and a plain ingest of the same files again repairs it.

The batches are made by a real `replay ingest` run while this process holds
the store (so they wait in the spool, as they do for a running server), in
chunks of a few hands (a run of several batches and its last one).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

from cli.main import main
from replay.ingest import ingest
from replay.store import (
    BatchRefused,
    Refusal,
    layout,
    load_spool,
    open_store,
    pending_batches,
    refusals,
    table_counts,
)
from replay.store.spool import check_batch, read_part

ROOT = Path(__file__).resolve().parents[1]
LOGS = [ROOT / "sample_logs" / "international.jsonl", ROOT / "sample_logs" / "milo.jsonl"]


def spooled_ingest(db: Path, *paths: Path, chunk_hands: int = 8) -> None:
    """`replay ingest` in a process of its own while this one holds the store:
    its batches stay in the spool."""
    hold = open_store(db)
    try:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        subprocess.run([sys.executable, "-m", "replay", "ingest", *map(str, paths), "--db", str(db),
                        "--no-analysis", "--quiet", "--workers", "0", "--chunk-hands", str(chunk_hands)],
                       env=env, check=True, timeout=120)  # fmt: skip
    finally:
        hold.close()


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with nothing loaded and one run of several batches in its spool."""
    where = tmp_path_factory.mktemp("base")
    db = where / "replay.duckdb"
    spooled_ingest(db, *LOGS)
    assert len(pending_batches(layout(db).spool)) >= 3
    return where


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> dict[str, int]:
    """What the same files store when nothing is damaged."""
    db = tmp_path_factory.mktemp("whole") / "replay.duckdb"
    ingest(LOGS, db=db, workers=0)
    conn = open_store(db)
    try:
        return counts(conn)
    finally:
        conn.close()


def counts(conn: duckdb.DuckDBPyConnection) -> dict[str, int]:
    got = table_counts(conn)
    return {t: got[t] for t in ("matches", "hands", "moves", "findings", "log_files")}


def copy_of(base: Path, where: Path) -> Path:
    shutil.copytree(base, where)
    return where / "replay.duckdb"


def damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncate":
        path.write_bytes(data[: len(data) // 2])
    else:  # 64 bytes overwritten in the middle
        k = len(data) // 2
        path.write_bytes(data[:k] + bytes((b ^ 0x5A) for b in data[k : k + 64]) + data[k + 64 :])


def file_kinds(base: Path) -> list[tuple[str, str]]:
    """(batch, file) for one batch of every kind of file the run wrote."""
    seen: dict[str, str] = {}
    for b in pending_batches(layout(base / "replay.duckdb").spool):
        for f in sorted(b.iterdir()):
            seen.setdefault(f.name, b.name)
    return sorted((b, f) for f, b in seen.items())


def test_the_run_is_spooled_as_several_batches_and_its_last(base: Path) -> None:
    spool = layout(base / "replay.duckdb").spool
    found = pending_batches(spool)
    last = [b for b in found if "run_batches" in json.loads((b / "manifest.json").read_text())]
    assert len(last) == 1
    named = json.loads((last[0] / "manifest.json").read_text())["run_batches"]
    assert sorted(named) == sorted(b.name for b in found if b != last[0])
    kinds = {f for _, f in file_kinds(base)}
    assert {"manifest.json", "matches.arrow", "hands.arrow", "moves.arrow", "log_files.arrow"} <= kinds


@pytest.mark.parametrize("how", ["truncate", "overwrite"])
def test_any_damaged_file_refuses_the_whole_run_and_a_plain_reingest_repairs_it(
    base: Path, whole: dict[str, int], tmp_path: Path, how: str,
) -> None:
    for batch, name in file_kinds(base):
        db = copy_of(base, tmp_path / f"{how}-{batch}-{name}")
        spool = layout(db).spool
        damage(spool / batch / name, how)
        conn = open_store(db)
        try:
            refused: list[Refusal] = []
            assert load_spool(conn, refused=refused) == 0, (batch, name)
            # nothing of the run: not its matches, not its files (so they are not "stored")
            assert set(counts(conn).values()) == {0}, (batch, name)
            assert refused and any(r.batch == batch for r in refused)
            assert name in " ".join(r.reason for r in refused) or name == "manifest.json"
            assert pending_batches(spool) == []  # set aside, all of the run
            assert {r.batch for r in refusals(spool)} == {r.batch for r in refused}
            assert any("international.jsonl" in r.line() for r in refused)  # which files to ingest again
        finally:
            conn.close()
        ingest(LOGS, db=db, workers=0)  # the same files again, nothing else
        conn = open_store(db)
        try:
            assert counts(conn) == whole, (batch, name)
        finally:
            conn.close()


def test_a_batch_for_another_store_is_refused(base: Path, tmp_path: Path) -> None:
    """Two stores in one folder: a batch moved from one spool into the other
    carries the first store's identity and is not loaded into the second."""
    db_a = copy_of(base, tmp_path / "two")
    db_b = db_a.with_name("defects.duckdb")
    open_store(db_b).close()
    spool_a, spool_b = layout(db_a).spool, layout(db_b).spool
    assert spool_a != spool_b and layout(db_a).logs != layout(db_b).logs
    for b in pending_batches(spool_a):
        shutil.move(b, spool_b / b.name)
    conn = open_store(db_b)
    try:
        refused: list[Refusal] = []
        assert load_spool(conn, refused=refused) == 0
        assert refused and all("another store" in r.reason for r in refused)
        assert set(counts(conn).values()) == {0}
    finally:
        conn.close()


def test_valid_looking_bytes_of_invalid_arrow_are_refused_not_loaded(tmp_path: Path) -> None:
    """A file whose checksum holds but whose Arrow is not valid (strings that
    are not UTF-8, which only the full check reads) is refused."""
    offsets = pa.array([0, 1, 2], pa.int32()).buffers()[1]
    bad = pa.Array.from_buffers(pa.string(), 2, [None, offsets, pa.py_buffer(b"\xff\xfe")])
    path = tmp_path / "matches.arrow"
    table = pa.table({"match": bad})
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as out:
        out.write_table(table)
    with pytest.raises(BatchRefused, match="not valid Arrow"):
        read_part(path, None)


def test_a_damaged_manifest_does_not_end_an_ingest(base: Path, tmp_path: Path) -> None:
    """`replay ingest` meets a refused batch in the spool: it stores its own
    files, says which batch it refused and why, and exits 1."""
    db = copy_of(base, tmp_path / "cli")
    spool = layout(db).spool
    target = pending_batches(spool)[0] / "manifest.json"
    target.write_text(target.read_text()[:-20])
    code = main(["ingest", str(ROOT / "sample_logs" / "pagat.jsonl"), "--db", str(db), "--quiet",
                 "--workers", "0", "--no-analysis"])  # fmt: skip
    assert code == 1
    conn = open_store(db)
    try:
        files = [p for (p,) in conn.execute("SELECT path FROM log_files").fetchall()]
        assert files == ["pagat.jsonl"]  # named as given, not by its server path
    finally:
        conn.close()
    assert refusals(spool)


def test_a_checked_batch_is_read_into_memory_not_mapped(base: Path, tmp_path: Path) -> None:
    """What the loader registers is its own copy: the file cut short after
    the check cannot pull memory out from under DuckDB."""
    db = copy_of(base, tmp_path / "mem")
    b = pending_batches(layout(db).spool)[0]
    body: dict[str, Any] = check_batch(b, (layout(db).data / "store-id").read_text().strip())
    table = read_part(b / "matches.arrow", body["parts"]["matches.arrow"])
    (b / "matches.arrow").write_bytes(b"")
    assert table.num_rows > 0 and table.validate(full=True) is None


def test_the_home_page_tells_the_token_holder_until_the_files_are_stored(base: Path, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient  # noqa: PLC0415 - the web stack only here

    from api.app import create_app  # noqa: PLC0415

    db = copy_of(base, tmp_path / "home")
    spool = layout(db).spool
    damage(pending_batches(spool)[0] / "hands.arrow", "truncate")
    auth = {"Authorization": "Bearer t"}
    with TestClient(create_app(db, token="t", spool_dir=spool)) as c:
        assert refusals(spool)  # refused by the load at start
        said = c.get("/", headers=auth).text
        assert "refused" in said and "international.jsonl" in said
        assert "refused" not in c.get("/").text  # not for anyone else
        assert "refused" not in c.get("/api/summary").json()
        assert c.get("/api/summary", headers=auth).json()["refused"]
    ingest(LOGS, db=db, workers=0)  # stored now: the line goes
    with TestClient(create_app(db, token="t", spool_dir=spool)) as c:
        assert "refused" not in c.get("/", headers=auth).text


def test_a_load_that_fails_midway_stores_nothing_of_the_run(
    base: Path, whole: dict[str, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A full disk while the run loads (its second batch): the run's
    transaction is rolled back whole, the run refused and said, and the same
    files ingested again are stored whole (it used to keep 3 matches of 19
    and mark the file stored)."""
    import replay.store.load as load_mod  # noqa: PLC0415 - the loader's insides, patched

    db = copy_of(base, tmp_path / "full")
    real = load_mod.BatchLoader.load
    calls: list[str] = []

    def load(self: Any) -> tuple[int, int]:
        calls.append(self.batch)
        if len(calls) == 2:
            raise duckdb.IOException("could not write file: No space left on device")
        return real(self)

    monkeypatch.setattr(load_mod.BatchLoader, "load", load)
    conn = open_store(db)
    try:
        refused: list[Refusal] = []
        assert load_spool(conn, refused=refused) == 0
        assert len(calls) == 2 and set(counts(conn).values()) == {0}
        assert refused and all("No space left" in r.reason for r in refused)
    finally:
        conn.close()
    monkeypatch.undo()
    ingest(LOGS, db=db, workers=0)
    conn = open_store(db)
    try:
        assert counts(conn) == whole
    finally:
        conn.close()
