"""Writes at the same moment, through the real server: 20 readers, uploads
and deletes together. Every write takes the store's one write lock, so no
request fails (0 answers of 5xx) and every answer is true: an upload lists
exactly the matches of its file, a delete is gone when it says so, and
after a delete through the API the store is consistent (the other match of
a reused seed keeps no SEED_REUSED finding naming the deleted one; the
players table counts what the seats hold).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import httpx
import pytest

from replay.ingest import ingest

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "concurrent-writes"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
BASE = ["international.jsonl", "chiva.jsonl", "pagat.jsonl", "milo.jsonl", "venezuela.jsonl"]
UPLOADS = [ROOT / "sample_logs" / n for n in ("mexico.jsonl", "pr_3p.jsonl", "colombia.jsonl", "dominican.jsonl")]
SEED = ROOT / "sample_logs_defects" / "SEED_REUSED.jsonl"
READERS = 20
READ_PATHS = ["/", "/api/summary", "/api/matches", "/matches", "/api/findings", "/findings", "/api/players",
              "/players", "/api/matches.csv"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def match_ids(path: Path) -> set[str]:
    out = set()
    for line in path.read_text().splitlines():
        obj = json.loads(line)
        if obj.get("type") == "match_start":
            out.add(obj["match"])
    return out


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[tuple[str, Path, subprocess.Popen[str]]]:
    db = tmp_path / "data" / "replay.duckdb"
    ingest([ROOT / "sample_logs" / n for n in BASE], db=db, workers=0)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "REPLAY_TOKEN": TOKEN}
    proc = subprocess.Popen(
        [sys.executable, "-m", "replay", "serve", "--db", str(db), "--port", str(port), "--deepen", "0",
         "--render-workers", "0", "--load-every", "0.5"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(url + "/api/summary", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)
        yield url, db, proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_twenty_readers_uploads_and_deletes_at_once(server: tuple[str, Path, subprocess.Popen[str]]) -> None:
    url, db, proc = server
    first = httpx.get(url + "/api/matches", params={"per_page": 500}, timeout=30).json()
    stored = [r["match"] for r in first["matches"]]
    assert len(stored) >= 8
    doomed = random.Random(7).sample(stored, 6)
    statuses: Counter[int] = Counter()
    wrong: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()

    def note(status: int, what: str, ok: bool = True) -> None:
        with lock:
            statuses[status] += 1
            if status >= 500 or not ok:
                wrong.append(f"{status} {what}")

    def reader(k: int) -> None:
        rng = random.Random(k)
        with httpx.Client(base_url=url, timeout=60) as c:
            while not stop.is_set():
                path = rng.choice([*READ_PATHS, f"/api/matches/{rng.choice(stored)}"])
                r = c.get(path)
                # a match deleted meanwhile is a true 404
                ok = r.status_code == 200 or (r.status_code == 404 and "/api/matches/" in path)
                note(r.status_code, f"{path}: {r.text[:300] if not ok else ''}", ok)

    uploads: list[tuple[Path, dict[str, Any]]] = []

    def uploader() -> None:
        with httpx.Client(base_url=url, timeout=120, headers=AUTH) as c:
            for path in [*UPLOADS, SEED]:
                r = c.post("/api/upload", files={"file": (path.name, path.read_bytes())})
                note(r.status_code, f"upload {path.name}: {r.text[:500]}", r.status_code == 200)
                if r.status_code == 200:
                    uploads.append((path, r.json()))

    def deleter() -> None:
        with httpx.Client(base_url=url, timeout=120, headers=AUTH) as c:
            for m in doomed:
                r = c.delete(f"/api/matches/{m}")
                note(r.status_code, f"delete {m}: {r.text[:500]}", r.status_code == 200 and r.json() == {"deleted": m})
                gone = c.get(f"/api/matches/{m}")
                note(gone.status_code, f"after delete {m}", gone.status_code == 404)

    readers = [threading.Thread(target=reader, args=(k,)) for k in range(READERS)]
    writers = [threading.Thread(target=uploader), threading.Thread(target=deleter)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join(timeout=300)
    stop.set()
    for t in readers:
        t.join(timeout=120)
    assert not wrong, wrong[:10]
    assert sum(statuses.values()) > 100 and not any(s >= 500 for s in statuses)
    # every upload said exactly the matches of its file, and they are there
    assert len(uploads) == len(UPLOADS) + 1
    for path, answer in uploads:
        assert {r["match"] for r in answer["matches"]} == match_ids(path), path.name
        assert answer["already_stored"] is False
    # then one match of the reused seed deleted through the API
    seeded = sorted(match_ids(SEED))
    r = httpx.delete(f"{url}/api/matches/{seeded[1]}", headers=AUTH, timeout=60)
    assert r.status_code == 200
    left = httpx.get(f"{url}/api/findings", params={"code": "SEED_REUSED", "per_page": 500}, timeout=30).json()
    assert not any(seeded[1] in json.dumps(f) for f in left["findings"])
    # the store as the server leaves it (stopped: it holds the file)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    with duckdb.connect(str(db), read_only=True) as conn:
        ids = {m for (m,) in conn.execute("SELECT match FROM matches").fetchall()}
        assert not ids & {*doomed, seeded[1]}
        for path, _ in uploads:
            assert match_ids(path) - {seeded[1]} <= ids
        players = dict(conn.execute("SELECT player, matches FROM players").fetchall())
        seated = dict(conn.execute("SELECT player, count(DISTINCT match) FROM seats GROUP BY ALL").fetchall())
        assert players == seated
        said = conn.execute("SELECT message FROM findings WHERE code = 'SEED_REUSED'").fetchall()
        assert not any(seeded[1] in m for (m,) in said)
