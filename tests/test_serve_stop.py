"""`replay serve` stops everything it started on SIGTERM and SIGINT.

The real server runs in a process group of its own, over a store whose
hands lack the sampled grade, so that it starts its background sampling (a
process under the multiprocessing fork server) and its render workers; once
that work is under way it is sent the signal, and within 5 seconds no
process of its group may be left (the sampling process used to run on,
orphaned, for as long as it had work).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from api.serve import STOP_SECONDS, descendants
from replay.ingest import ingest
from tests.conftest import needs_native

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "stop-test"


def group(pgid: int) -> list[int]:
    """The live processes (not zombies) of a process group."""
    out = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            out.append(int(entry.name))
    return out


def depth(pid: int, root: int) -> int:
    """How far below ``root`` ``pid`` is (0 if it is not below it)."""
    n = 0
    while pid not in (root, 0, 1):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return 0
        pid = int(stat[stat.rindex(")") + 2 :].split()[1])
        n += 1
    return n if pid == root else 0


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("stop") / "replay.duckdb"
    ingest([ROOT / "sample_logs" / "international.jsonl", ROOT / "sample_logs" / "puerto_rico.jsonl"],
           db=db, workers=0, analysis=(0, 0))  # fmt: skip
    return db


@needs_native
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_the_server_leaves_no_process_of_its_group(store: Path, sig: signal.Signals) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    env = {**os.environ, "PYTHONPATH": str(ROOT), "REPLAY_TOKEN": TOKEN}
    proc = subprocess.Popen(
        [sys.executable, "-m", "replay", "serve", "--db", str(store), "--port", str(port),
         "--render-workers", "1", "--deepen", "50"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        # its background work under way: a process below the fork server (two levels down)
        while not any(depth(p, proc.pid) >= 2 for p in descendants(proc.pid)):
            assert proc.poll() is None, "the server ended"
            assert time.monotonic() < deadline, f"no background work started: {descendants(proc.pid)}"
            time.sleep(0.2)
        assert httpx.get(url + "/api/summary", timeout=10).status_code == 200
        started = descendants(proc.pid)
        assert len(started) >= 3  # the render worker, the fork server, the sampling process
        t0 = time.monotonic()
        proc.send_signal(sig)
        left = group(proc.pid)
        while left and time.monotonic() - t0 < STOP_SECONDS:
            proc.poll()  # reap the server itself
            time.sleep(0.05)
            left = group(proc.pid)
        assert left == [], f"{len(left)} processes of the server's group outlived it by {STOP_SECONDS} s"
        assert proc.wait(timeout=1) != 0 or sig == signal.SIGINT
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
