"""`--cluster`: validation and ingest on dask.distributed give what one process
gives, table by table; a worker that dies loses and doubles nothing; a
re-run writes nothing new."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest

from cli.validate import print_report
from replay.ingest import ingest, reingest, validate_routed
from replay.ingest.batch_id import CodeMismatch, code_version
from replay.ingest.pool import ClusterError, ClusterPool, connect, parse_address
from replay.ingest.worker import Task, work
from replay.reader import iter_paths
from replay.simulate import SimConfig, defect_log, simulate
from replay.store import layout, load_spool, open_store, pending_batches
from replay.validate import validate_paths
from tests.test_ingest import PLAYER_TABLES, hold, sim_lines, snapshot, table_hashes, write

ROOT = Path(__file__).resolve().parents[1]
CHUNK = 40  # hands a shard: several tasks even for small logs


@pytest.fixture(scope="module")
def cluster() -> Iterator[ClusterPool]:
    """Two worker processes for the module (a LocalCluster starts in about a second)."""
    with connect("local:2") as pool:
        yield pool


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What routing must get right: interleaved tables in two files (one gzip),
    rematches, a match cut over two files, a line after its match's end,
    unreadable lines, and defects (SEED_REUSED, REMATCH_UNKNOWN among them)."""
    d = tmp_path_factory.mktemp("logs")
    write(d / "a.jsonl", sim_lines(80, seed=11))
    write(d / "b.jsonl.gz", sim_lines(80, seed=12))
    cut = sim_lines(80, seed=21, tables=6)
    write(d / "day1.jsonl", cut[: len(cut) // 2])
    write(d / "day2.jsonl", cut[len(cut) // 2 :])
    late = sim_lines(80, seed=8, tables=2)
    mid = orjson.loads(late[0])["match"]
    mine = [i for i, x in enumerate(late) if orjson.loads(x)["match"] == mid]
    reveal = next(i for i in reversed(mine) if b'"type":"reveal"' in late[i])
    write(d / "late.jsonl", late[:reveal] + late[reveal + 1 :] + [late[reveal]])
    write(d / "mixed.jsonl", late[:3] + [b"not json", b"", b'{"type":"pass","seq":3}', b"\xff\xfe"] + late[3:])
    for code in ("SEED_REUSED", "REMATCH_UNKNOWN", "TILE_NOT_IN_HAND", "MALFORMED_LINE", "SCORE_MISMATCH"):
        write(d / "defects" / f"{code.lower()}.jsonl", defect_log(code, 1))
    write(d / "domena.jsonl", list(simulate(SimConfig(profiles=("domena_2p",), hands=40, seed=5))))
    return d


def batch_names(db: Path) -> set[str]:
    conn = duckdb.connect(str(db), read_only=True)
    try:
        return {b for (b,) in conn.execute("SELECT batch FROM batches").fetchall()}
    finally:
        conn.close()


def whole(db: Path) -> tuple[Any, Any]:
    return snapshot(db), table_hashes(db, PLAYER_TABLES)


# -- validate ---------------------------------------------------------------------------


def printed(report: Any, *, as_json: bool, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = print_report(report, as_json)
    return code, capsys.readouterr().out


@pytest.mark.parametrize("where", ["sample_logs", "sample_logs_defects", "tests/data/examples", "logs"])
def test_validate_on_a_cluster_prints_what_validate_prints(
    where: str, logs: Path, cluster: ClusterPool, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = [logs] if where == "logs" else [ROOT / where]
    for as_json in (True, False):
        want = printed(validate_paths(paths), as_json=as_json, capsys=capsys)
        got = printed(validate_routed(paths, cluster), as_json=as_json, capsys=capsys)
        assert got == want
    assert want[1]  # something was printed


def test_validate_cluster_on_the_command_line(tmp_path: Path) -> None:
    """A LocalCluster of its own, started and stopped by the command."""
    cmd = [sys.executable, "-m", "replay", "validate", "--json", str(ROOT / "sample_logs_defects")]
    plain = subprocess.run(cmd, capture_output=True, check=False)
    on = subprocess.run([*cmd, "--cluster", "local:2"], capture_output=True, check=False, cwd=tmp_path)
    assert (on.returncode, on.stdout) == (plain.returncode, plain.stdout) == (1, plain.stdout)
    assert json.loads(on.stdout)["matches"]
    bad = subprocess.run([*cmd, "--cluster", "local:none"], capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "wants a number of workers" in bad.stderr


# -- ingest -----------------------------------------------------------------------------


def test_a_cluster_store_equals_a_one_process_store(logs: Path, cluster: ClusterPool, tmp_path: Path) -> None:
    one, many = tmp_path / "one" / "r.duckdb", tmp_path / "many" / "r.duckdb"
    a = ingest([logs], db=one, workers=0, chunk_hands=CHUNK)
    b = ingest([logs], db=many, chunk_hands=CHUNK, cluster=cluster)
    assert b.loaded and b.batches == a.batches > 5
    assert (b.matches, b.hands, b.verdicts, b.findings) == (a.matches, a.hands, a.verdicts, a.findings)
    assert {"SEED_REUSED", "REMATCH_UNKNOWN", "MALFORMED_LINE"} <= set(b.findings)
    assert whole(many) == whole(one)
    # the same shards, the same content names, whoever validated them
    assert batch_names(many) == batch_names(one)
    assert pending_batches(layout(many).spool) == []


def test_reingest_on_a_cluster_equals_one_in_process(logs: Path, cluster: ClusterPool, tmp_path: Path) -> None:
    one, many = tmp_path / "one" / "r.duckdb", tmp_path / "many" / "r.duckdb"
    for db in (one, many):
        ingest([logs], db=db, workers=0, chunk_hands=CHUNK)
        conn = open_store(db)
        conn.execute("DELETE FROM moves WHERE hand = 1")  # damage to be repaired
        conn.close()
    reingest(db=one, workers=0, chunk_hands=200)
    reingest(db=many, chunk_hands=200, cluster=cluster)
    assert whole(many) == whole(one)


def test_a_rerun_writes_nothing_new(logs: Path, cluster: ClusterPool, tmp_path: Path) -> None:
    """The server holds the store: a second run of the same ingest finds its
    batches pending under the same names and writes none of them again."""
    db = tmp_path / "data" / "r.duckdb"
    spool = layout(db).spool
    server = hold(db)
    try:
        first = ingest([logs], db=db, chunk_hands=CHUNK, cluster=cluster)
        assert not first.loaded and first.pending == first.batches
        made = {p.name: p.stat().st_mtime_ns for p in pending_batches(spool)}
        assert all(name.startswith("s") for name in made)
        again = ingest([logs], db=db, chunk_hands=CHUNK, cluster=cluster)
        assert {p.name: p.stat().st_mtime_ns for p in pending_batches(spool)} == made
        assert again.pending == len(made)
    finally:
        server.communicate("")
    conn = open_store(db)
    assert load_spool(conn) == len(made)
    conn.close()
    clean = tmp_path / "clean" / "r.duckdb"
    ingest([logs], db=clean, workers=0, chunk_hands=CHUNK)
    assert whole(db) == whole(clean)
    # and into a store that has them all: nothing to read, nothing written
    last = ingest([logs], db=db, chunk_hands=CHUNK, cluster=cluster)
    assert last.files_known == len(list(iter_paths([logs]))) and last.matches == last.batches == 0
    assert pending_batches(spool) == []


class DieOnce:
    """A worker plugin: the first task to start anywhere kills its worker
    (os._exit, as a machine that goes away), once for the whole cluster."""

    name = "replay-die-once"

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def setup(self, worker: Any) -> None:
        self.worker = worker

    def teardown(self, worker: Any) -> None:
        pass

    def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
        if finish == "executing" and str(key).startswith("replay-"):
            try:
                fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                return
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
            os._exit(1)


def test_a_killed_worker_s_shard_is_redone(logs: Path, tmp_path: Path) -> None:
    from distributed.diagnostics.plugin import WorkerPlugin

    class Plugin(DieOnce, WorkerPlugin):
        pass

    marker = tmp_path / "died"
    one, many = tmp_path / "one" / "r.duckdb", tmp_path / "many" / "r.duckdb"
    ingest([logs], db=one, workers=0, chunk_hands=CHUNK)
    with connect("local:2") as pool:
        pool.client.register_plugin(Plugin(str(marker)))
        got = ingest([logs], db=many, chunk_hands=CHUNK, cluster=pool)
    assert marker.exists()  # a worker did die, in the middle of a shard
    assert got.loaded and got.batches == len(batch_names(one))
    assert whole(many) == whole(one)
    assert batch_names(many) == batch_names(one)


# -- the code on the workers --------------------------------------------------------------


def test_a_worker_refuses_a_task_from_other_code() -> None:
    task = Task("b", "add", None, [], version="0" * 64)
    with pytest.raises(CodeMismatch, match="other replay code"):
        work(task)
    assert len(code_version()) == 64 and code_version() == code_version()


def test_a_cluster_with_other_code_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.ingest import pool as mod

    class Client:
        def run(self, fn: Any) -> dict[str, str]:
            return {"tcp://a:1": code_version(), "tcp://b:2": "f" * 64}

    with pytest.raises(ClusterError, match="worker tcp://b:2 runs other replay code"):
        mod._check_workers(Client())


def test_cluster_addresses() -> None:
    assert parse_address("local:2") == ("local", 2)
    assert parse_address("tcp://10.0.0.5:8786") == ("tcp://10.0.0.5:8786", None)
    with pytest.raises(ClusterError):
        parse_address("local:0")
    with pytest.raises(ClusterError, match="cluster tcp://127.0.0.1:9"), connect("tcp://127.0.0.1:9", timeout=2):
        pass


# -- the analysis (replay.analysis) on the workers -------------------------------------------

ANALYSED = ROOT / "sample_logs" / "international.jsonl"  # 29 hands: a few seconds of analysis


def analysis_rows(db: Path) -> dict[str, Any]:
    return table_hashes(db, ("move_analysis", "hand_analysis"))


def test_cluster_ingest_analyses_the_hands_as_one_process_does(cluster: ClusterPool, tmp_path: Path) -> None:
    one, many = tmp_path / "one" / "r.duckdb", tmp_path / "many" / "r.duckdb"
    ingest([ANALYSED], db=one, workers=0, analysis=(2, 7))
    ingest([ANALYSED], db=many, cluster=cluster, analysis=(2, 7))
    rows = analysis_rows(many)
    assert rows["hand_analysis"][0] >= 20 and rows["move_analysis"][0] > 200
    assert rows == analysis_rows(one)
    assert whole(many) == whole(one)
    assert batch_names(many) == batch_names(one)
    # the analysis is part of a batch's content: without it, other names
    # (but for the run's last batch, which records the files)
    plain = tmp_path / "plain" / "r.duckdb"
    ingest([ANALYSED], db=plain, workers=0)
    assert len(batch_names(one) & batch_names(plain)) == 1 < len(batch_names(one))


def test_analyze_on_a_cluster_prints_what_analyze_prints(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "replay", "analyze", str(ANALYSED), "--json", "--samples", "2", "--quiet"]
    here = subprocess.run([*cmd, "--workers", "0"], capture_output=True, check=False)
    there = subprocess.run([*cmd, "--cluster", "local:2"], capture_output=True, check=False, cwd=tmp_path)
    assert (there.returncode, there.stdout) == (here.returncode, here.stdout) == (0, here.stdout)
    assert sum(len(m["hands"]) for m in json.loads(there.stdout)["matches"]) >= 20
