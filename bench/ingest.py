"""Ingest speed: simulated international hands into an empty store.

Generates (once, cached under /tmp/replay-bench/) N hands of interleaved
international tables, as two server streams each cut into files by line
count (so matches cross file boundaries), then measures in the same run:

- DuckDB's own read_json over the same files (a fresh process, 2 threads,
  schema auto-detected, every column of every line converted, nothing
  stored): the floor for "parse every line";
- `replay ingest` of the files into an empty database (2 workers): wall
  time, hands/s, and peak memory of the whole process tree (main, loader,
  fork server, workers), sampled every 50 ms (sum of RSS, and of PSS which
  counts shared pages once).

Run: python bench/ingest.py            (~50,000 hands, under a minute)
     python bench/ingest.py --full     (1,000,000 hands)
Headline figures last, one per line: ``name: value unit``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

CACHE = Path("/tmp/replay-bench")
# This checkout's replay, whatever an editable install elsewhere points to.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _stream(args: tuple[int, int, int, int, str]) -> list[str]:
    """One server stream of `hands` hands, cut into `parts` files."""
    from replay.simulate import SimConfig, SimStats, simulate

    hands, seed, parts, first, folder = args
    stats = SimStats()
    lines = simulate(SimConfig(hands=hands, tables=64, seed=seed, players_pool=400), stats)
    # cut by expected line count: ~29 lines per international hand
    per_file = max(1, hands * 29 // parts)
    out = [str(Path(folder) / f"server-{k:02d}.jsonl") for k in range(first, first + parts)]
    k = 0
    count = 0
    f = open(out[0], "wb")  # noqa: SIM115
    for line in lines:
        if count >= per_file and k < parts - 1:
            f.close()
            k += 1
            f = open(out[k], "wb")  # noqa: SIM115
            count = 0
        f.write(line + b"\n")
        count += 1
    f.close()
    return out


def dataset(hands: int, files: int) -> list[Path]:
    """The cached input; generated in parallel the first time (not timed)."""
    folder = CACHE / f"intl-{hands}-{files}"
    done = folder / ".complete"
    if not done.exists():
        shutil.rmtree(folder, ignore_errors=True)
        CACHE.mkdir(exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=CACHE, prefix=".tmp-"))
        streams = 2
        per = [files // streams + (i < files % streams) for i in range(streams)]
        starts = [sum(per[:i]) for i in range(streams)]
        t0 = time.perf_counter()
        with ProcessPoolExecutor(streams) as pool:
            jobs = [(hands // streams, 1000 + i, per[i], starts[i], str(tmp)) for i in range(streams)]
            list(pool.map(_stream, jobs))
        print(f"generated {hands:,} hands in {time.perf_counter() - t0:.0f} s -> {folder}", file=sys.stderr)
        (tmp / ".complete").write_text(str(hands))
        os.rename(tmp, folder)
    return sorted(folder.glob("*.jsonl"))


_READ_JSON = """
import sys, time, duckdb
files = sys.argv[1:]
c = duckdb.connect(config={"threads": 2})
c.execute("SET enable_progress_bar = false")  # it would print on stdout
t = time.perf_counter()
# count(COLUMNS(*)): every column of every line is parsed and converted
# (the detected schema: 30 columns, lists, structs, maps), nothing stored.
row = c.execute(
    "SELECT count(COLUMNS(*)) FROM read_json(?, format='newline_delimited')", [files]
).fetchall()[0]
print(time.perf_counter() - t, row[0])
"""


def read_json_seconds(files: list[Path]) -> tuple[float, int]:
    out = subprocess.run(
        [sys.executable, "-c", _READ_JSON, *map(str, files)], check=True, capture_output=True, text=True
    ).stdout.split()
    return float(out[0]), int(out[1])


def _tree(pid: int) -> list[int]:
    out = [pid]
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                for child in f.read().split():
                    out += _tree(int(child))
    except OSError:
        pass
    return out


_PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


def _rss(pid: int) -> int:
    """RSS in kB of one process (/proc/PID/statm: the kernel's counters, O(1))."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * _PAGE_KB
    except (OSError, IndexError, ValueError):
        return 0


def _pss(pid: int) -> int:
    """PSS in kB of one process (/proc/PID/smaps_rollup: walks its page tables)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Sampler(threading.Thread):
    """Peak memory of this process tree: RSS every 50 ms, PSS every second.

    smaps_rollup walks a process's page tables under its memory map lock
    (0.5 ms for a process of 1 GB; read every 50 ms from four processes,
    about 4% of a core, taken from the run it measures). statm reads the
    counters the kernel keeps (0.04 ms).
    """

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.rss = self.pss = 0

    def run(self) -> None:
        tick = 0
        while not self.stop.wait(0.05):
            tree = _tree(os.getpid())
            self.rss = max(self.rss, sum(map(_rss, tree)))
            if tick % 20 == 0:
                self.pss = max(self.pss, sum(map(_pss, tree)))
            tick += 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true", help="1,000,000 hands")
    ap.add_argument("--hands", type=int, default=None)
    ap.add_argument("--files", type=int, default=None)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--prepare", action="store_true", help="only generate (and cache) the input")
    args = ap.parse_args()
    hands = args.hands or (1_000_000 if args.full else 50_000)
    nfiles = args.files or (8 if hands >= 500_000 else 4)
    files = dataset(hands, nfiles)
    if args.prepare:
        return
    size = sum(f.stat().st_size for f in files)
    print(f"input: {len(files)} files, {size / 2**20:,.0f} MiB", file=sys.stderr)

    rj, lines = read_json_seconds(files)
    print(f"read_json: {lines:,} lines in {rj:.1f} s", file=sys.stderr)

    from replay.ingest import ingest
    from replay.store import open_store, table_counts

    load0 = os.getloadavg()[0]
    work = Path(tempfile.mkdtemp(prefix="replay-bench-db-"))
    db = work / "data" / "replay.duckdb"
    sampler = Sampler()
    sampler.start()
    t0 = time.perf_counter()
    summary = ingest(files, db=db, workers=args.workers, progress_out=sys.stderr)
    wall = time.perf_counter() - t0
    sampler.stop.set()
    sampler.join()
    for line in summary.lines_out():
        print(line, file=sys.stderr)
    # the machine is shared: say how busy it was (1-minute load, 2 cores)
    print(f"load average: {load0:.1f} before, {os.getloadavg()[0]:.1f} after", file=sys.stderr)
    conn = open_store(db, read_only=True)
    counts = table_counts(conn)
    conn.close()
    print("rows: " + ", ".join(f"{t} {n:,}" for t, n in counts.items()), file=sys.stderr)
    db_mib = sum(p.stat().st_size for p in db.parent.glob("replay.duckdb*")) / 2**20
    self_max = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child_max = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    shutil.rmtree(work, ignore_errors=True)

    print(f"hands: {summary.hands} hands")
    print(f"lines: {lines} lines")
    print(f"db_size: {db_mib:.0f} MiB")
    print(f"peak_rss_main: {self_max:.0f} MiB")
    print(f"peak_rss_largest_child: {child_max:.0f} MiB")
    print(f"peak_pss_total: {sampler.pss / 1024:.0f} MiB")
    print(f"read_json_seconds: {rj:.1f} s")
    print(f"ingest_seconds: {wall:.1f} s")
    print(f"ingest_hands_per_s: {summary.hands / wall:.0f} hands/s")
    print(f"peak_rss_total: {sampler.rss / 1024:.0f} MiB")
    print(f"ingest_over_read_json: {wall / rj:.2f} x")


if __name__ == "__main__":
    main()
