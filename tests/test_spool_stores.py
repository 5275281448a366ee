"""Two stores in one folder (the README's two demos), both served at once,
share nothing: an ingest into one lands only there, and `replay analyze
--db X` reads only X's kept logs and leaves its rows only in X's spool.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import httpx
import pytest

from replay.ingest import ingest
from replay.store import layout, open_store, pending_batches

ROOT = Path(__file__).resolve().parents[1]
DEMO = [ROOT / "sample_logs" / n for n in ("international.jsonl", "chiva.jsonl")]
DEFECTS = [ROOT / "sample_logs_defects" / n for n in ("SEED_REUSED.jsonl", "FALSE_PASS.jsonl")]
LATE = ROOT / "sample_logs" / "pagat.jsonl"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def matches_in(paths: list[Path]) -> set[str]:
    return {json.loads(line)["match"] for p in paths for line in p.read_text().splitlines()
            if '"match_start"' in line}  # fmt: skip


def serve(db: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    proc = subprocess.Popen(
        [sys.executable, "-m", "replay", "serve", "--db", str(db), "--port", str(port), "--deepen", "0",
         "--render-workers", "0", "--load-every", "0.3"],
        env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    return proc, f"http://127.0.0.1:{port}"


def served(url: str) -> set[str]:
    got = httpx.get(url + "/api/matches", params={"per_page": 500}, timeout=30).json()
    return {r["match"] for r in got["matches"]}


@pytest.fixture()
def two(tmp_path: Path) -> Iterator[tuple[Path, str, Path, str]]:
    data = tmp_path / "data"
    a, b = data / "replay.duckdb", data / "defects.duckdb"
    ingest(DEMO, db=a, workers=0, analysis=None)
    ingest(DEFECTS, db=b, workers=0, analysis=None)
    procs = []
    try:
        (pa, ua), (pb, ub) = serve(a), serve(b)
        procs = [pa, pb]
        deadline = time.monotonic() + 60
        for url in (ua, ub):
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(url + "/api/summary", timeout=2).status_code == 200:
                        break
                assert time.monotonic() < deadline and all(p.poll() is None for p in procs)
                time.sleep(0.2)
        yield a, ua, b, ub
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            p.wait(timeout=20)


def test_two_stores_in_one_folder_have_a_spool_and_logs_each(two: tuple[Path, str, Path, str]) -> None:
    a, ua, b, ub = two
    la, lb = layout(a), layout(b)
    assert la.spool != lb.spool and la.logs != lb.logs
    assert la.data.parent == lb.data.parent == a.parent
    assert served(ua) == matches_in(DEMO) and served(ub) == matches_in(DEFECTS)
    # an ingest into the defects store while both serve: spooled for its server alone
    subprocess.run([sys.executable, "-m", "replay", "ingest", str(LATE), "--db", str(b), "--quiet",
                    "--workers", "0", "--no-analysis"], env=ENV, check=True, timeout=120)  # fmt: skip
    deadline = time.monotonic() + 60
    while served(ub) != matches_in([*DEFECTS, LATE]):
        assert time.monotonic() < deadline, "the defects server did not load the batch"
        time.sleep(0.3)
    time.sleep(1.0)  # a few more of the other server's loads
    assert served(ua) == matches_in(DEMO)
    assert pending_batches(la.spool) == [] and not (la.spool / ".failed").exists()
    assert sorted(p.name for p in lb.logs.iterdir()) != sorted(p.name for p in la.logs.iterdir())


def test_analyze_db_reads_only_its_own_kept_logs(two: tuple[Path, str, Path, str]) -> None:
    a, _, b, ub = two
    done = subprocess.run([sys.executable, "-m", "replay", "analyze", "--db", str(a), "--samples", "0",
                           "--workers", "0", "--quiet"], env=ENV, capture_output=True, text=True,
                          timeout=300, check=True)  # fmt: skip
    said = done.stderr.strip().splitlines()[-1]
    assert said.startswith(f"{len(matches_in(DEMO))} matches,"), said
    assert "left in the spool" in said
    # its rows wait in its own spool (or its server took them already); none in the other's
    assert pending_batches(layout(b).spool) == [] and not (layout(b).spool / ".failed").exists()
    assert served(ub) == matches_in(DEFECTS)


def test_a_store_of_the_shared_layout_takes_its_own_logs_into_its_folder(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    """A store made when every store of a folder shared `logs/` and `spool/`:
    opened for writing, it links the kept logs its `log_files` name into its
    own folder (not the other stores'), and names the batches left in the
    shared spool without loading them (they say for which store nowhere)."""
    data = tmp_path / "data"
    a, b = data / "replay.duckdb", data / "defects.duckdb"
    ingest(DEMO, db=a, workers=0, analysis=None)
    ingest(DEFECTS, db=b, workers=0, analysis=None)
    shared = data / "logs"
    shared.mkdir()
    for db in (a, b):  # back to the shared layout
        for f in layout(db).logs.iterdir():
            f.rename(shared / f.name)
    (data / "spool" / "20261201T000000000000-1-000001").mkdir(parents=True)
    (data / "spool" / "20261201T000000000000-1-000001" / "manifest.json").write_text("{}")
    mine = {f.name for f in shared.iterdir()}
    with caplog.at_level("WARNING", logger="replay.store"):
        open_store(a).close()
    got = {f.name for f in layout(a).logs.iterdir()}
    assert got and got < mine  # its own files, not the other store's
    assert "name no store" in caplog.text
    with duckdb.connect(str(a), read_only=True) as conn:
        stored = {Path(s).name for (s,) in conn.execute("SELECT stored FROM log_files").fetchall()}
    assert got == stored
    assert pending_batches(layout(a).spool) == []

