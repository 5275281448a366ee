"""Kill -9 an ingest at random moments, then run it again: nothing lost, nothing doubled.

Each trial ingests the sample logs (in small chunks: many batches) into a
fresh store, kills the ingest's whole process group with SIGKILL at a
random moment, runs the same ingest again to its end, and compares the
store with one ingested once, undisturbed: every table's row count, every
match with its verdict and hands, every finding code's count.

Half the trials run with the store held by `replay serve` (the ingest
spools its batches and the server loads them), while 20 clients read its
pages the whole time: every answer must be a 200.

    python bench/fuzz_ingest.py              # 4 trials each way (about a minute and a half)
    python bench/fuzz_ingest.py --trials 25  # 25 each way

Headline figures last, one per line: ``name: value unit``. The tests run a
short version (tests/test_spool_kill.py).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's replay, whatever an editable install elsewhere points to
LOGS = ROOT / "sample_logs"
CHUNK = 40  # hands a batch: some twenty-five batches for the sample logs
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
CLIENTS = 20
PAGES = ["/", "/api/summary", "/api/matches", "/matches", "/api/findings", "/findings", "/api/players",
         "/players"]
TABLES = ["matches", "seats", "hands", "moves", "findings", "seeds", "match_files", "log_files", "players",
          "player_seats", "player_held"]


def ingest_cmd(db: Path) -> list[str]:
    return [sys.executable, "-m", "replay", "ingest", str(LOGS), "--db", str(db), "--quiet", "--no-analysis",
            "--chunk-hands", str(CHUNK)]


def digest(db: Path) -> dict[str, Any]:
    """What the store holds, without when or in which batches it was loaded."""
    with duckdb.connect(str(db), read_only=True) as conn:
        out: dict[str, Any] = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in TABLES}
        out["matches_rows"] = sorted(conn.execute("SELECT match, verdict, hands FROM matches").fetchall())
        out["codes"] = sorted(conn.execute("SELECT code, count(*) FROM findings GROUP BY code").fetchall())
        out["files"] = sorted(conn.execute("SELECT sha256, lines, bad_lines FROM log_files").fetchall())
    return out


def reference(where: Path) -> tuple[dict[str, Any], float]:
    """The store of one undisturbed ingest, and how long that ingest took."""
    db = where / "reference" / "replay.duckdb"
    t0 = time.monotonic()
    subprocess.run(ingest_cmd(db), env=ENV, check=True, timeout=300)
    return digest(db), time.monotonic() - t0


def kill_at(db: Path, delay: float) -> bool:
    """Start the ingest and SIGKILL its process group after ``delay`` seconds;
    whether it was still running then."""
    proc = subprocess.Popen(ingest_cmd(db), env=ENV, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        proc.wait(timeout=delay)
        return False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return True


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Served:
    """`replay serve` over a store and 20 clients reading its pages meanwhile."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.port = free_port()
        self.statuses: Counter[int] = Counter()
        self.errors: list[str] = []
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[bytes] | None = None
        self.threads: list[threading.Thread] = []

    def __enter__(self) -> Served:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "replay", "serve", "--db", str(self.db), "--port", str(self.port),
             "--deepen", "0", "--render-workers", "0", "--load-every", "0.5", "--create"],
            env=ENV, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while self.get("/api/summary")[0] != 200:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.2)
        self.threads = [threading.Thread(target=self.client, args=(k,), daemon=True) for k in range(CLIENTS)]
        for t in self.threads:
            t.start()
        return self

    def get(self, path: str) -> tuple[int, bytes]:
        import http.client  # noqa: PLC0415 - only the bench's clients use it

        try:
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            c.request("GET", path)
            r = c.getresponse()
            body = r.read()
            c.close()
            return r.status, body
        except OSError:
            return 0, b""

    def client(self, k: int) -> None:
        rng = random.Random(k)
        while not self.stop.is_set():
            path = rng.choice(PAGES)
            status, body = self.get(path)
            with self.lock:
                self.statuses[status] += 1
                if status != 200:
                    self.errors.append(f"{status} {path} {body[:200]!r}")

    def matches(self) -> int:
        status, body = self.get("/api/summary")
        return int(json.loads(body)["counts"]["matches"]) if status == 200 else -1

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=60)
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=30)


def trial(where: Path, ref: dict[str, Any], took: float, rng: random.Random, *, served: bool) -> dict[str, Any]:
    """One kill, at a moment drawn from the time an ingest takes, and a rerun; what it found."""
    db = where / "replay.duckdb"
    delay = rng.uniform(0.3, took)
    out: dict[str, Any] = {"delay": round(delay, 2), "served": served}
    srv = Served(db) if served else None
    with srv if srv is not None else contextlib.nullcontext():
        out["killed"] = kill_at(db, delay)
        subprocess.run(ingest_cmd(db), env=ENV, check=True, timeout=300)
        if srv is not None:
            deadline = time.monotonic() + 120
            while srv.matches() != len(ref["matches_rows"]) and time.monotonic() < deadline:
                time.sleep(0.3)
            time.sleep(1.0)  # the server's next loads: nothing more may come
            out["requests"] = sum(srv.statuses.values())
            out["errors"] = list(srv.errors)
    got = digest(db)
    out["same"] = got == ref
    out["diff"] = {k: (got[k], ref[k]) for k in TABLES if got[k] != ref[k]}
    return out


def run(trials: int, seed: int, where: Path) -> list[dict[str, Any]]:
    ref, took = reference(where)
    rng = random.Random(seed)
    results = []
    for k in range(trials):
        for served in (False, True):
            home = where / f"t{k}-{'served' if served else 'alone'}"
            results.append(trial(home, ref, took, rng, served=served))
            shutil.rmtree(home, ignore_errors=True)
            r = results[-1]
            print(f"trial {k} {'served' if served else 'alone '}: killed at {r['delay']:5.2f} s "
                  f"({'mid-run' if r['killed'] else 'after it ended'}), rerun {'same' if r['same'] else r['diff']}"
                  + (f", {r['requests']} requests, {len(r['errors'])} errors" if served else ""), flush=True)
    return results


def headline(results: list[dict[str, Any]]) -> list[str]:
    served = [r for r in results if r["served"]]
    return [
        f"kill_trials: {len(results)} runs",
        f"killed_mid_run: {sum(r['killed'] for r in results)} runs",
        f"stores_differing_after_rerun: {sum(not r['same'] for r in results)} runs",
        f"requests_while_ingesting: {sum(r['requests'] for r in served)} requests",
        f"server_errors: {sum(len(r['errors']) for r in served)} requests",
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=4, help="trials each way (default 4)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="replay-fuzz-ingest-") as tmp:
        results = run(args.trials, args.seed, Path(tmp))
    for line in headline(results):
        print(line)
    return 0 if all(r["same"] and not r.get("errors") for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
