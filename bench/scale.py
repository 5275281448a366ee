"""Scale-out: `replay ingest --cluster` with 1 and 2 local dask workers, and
the model for N machines (docs/scale.md).

Input: simulated international hands (bench/ingest.py's cached data sets,
matches crossing file boundaries). For 1 and then 2 worker processes (a
LocalCluster, one thread each, started before the clock starts), the same
files are ingested into an empty store, twice over:

- as ``replay ingest --cluster`` does by default: every hand validated and
  analysed (replay.analysis, at ingest's default of sampled deals): the
  headline ``hands_per_s_1_worker`` / ``hands_per_s_2_workers``, on a
  smaller set (the analysis costs far more a hand than the validation);
- validation only (``--no-analysis``), on a larger set.

From the runs' stage times it derives the numbers of the model: the hands
one worker handles per CPU-second (the part that scales with machines),
and the owner's ceiling: what the one process that owns the store takes
whatever the number of workers (the busier of its main thread, which keeps
and routes the files and writes the batches that come back, and its loader
thread, which inserts them into DuckDB). Then hands/s for N workers is
min(N x worker rate, owner ceiling).

Run: python bench/scale.py          (under a minute)
     python bench/scale.py --full   (4 times the hands)
The machine is shared (2 cores): the figures say what this machine did then.
Headline figures last, one per line: ``name: value unit``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# This checkout's replay and bench helpers, whatever an editable install elsewhere points to.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.append(str(Path(__file__).resolve().parent))  # last: bench/api.py is not the api package

from ingest import dataset  # noqa: E402  (bench/ingest.py)


def run(files: list[Path], workers: int, chunk_hands: int, analysis: tuple[int, int] | None) -> dict[str, Any]:
    """One ingest on a fresh LocalCluster of ``workers`` processes."""
    from replay.ingest import ingest
    from replay.ingest.pool import connect

    work = Path(tempfile.mkdtemp(prefix="replay-scale-"))
    try:
        with connect(f"local:{workers}") as pool:
            # every worker has imported replay (and the solver) before the clock starts
            pool.client.run(lambda: (__import__("replay.ingest"), __import__("replay.analysis")))
            t0 = time.perf_counter()
            summary = ingest(files, db=work / "data" / "replay.duckdb", chunk_hands=chunk_hands, cluster=pool,
                             analysis=analysis)  # fmt: skip
            wall = time.perf_counter() - t0
    finally:
        shutil.rmtree(work, ignore_errors=True)
    st = summary.stages
    worker_cpu = sum(st.get(f"{k} (workers)", 0.0) for k in ("parse", "validate", "frames", "write", "analysis"))
    loader = st.get("load (wall)", 0.0) + st.get("derive (wall)", 0.0) + st.get("reports (wall)", 0.0)
    owner = max(st.get("route (main)", 0.0), loader) + st.get("checkpoint (wall)", 0.0)
    tag = f"{'analysis' if analysis else 'validation'}, {workers} worker{'s' if workers > 1 else ''}"
    for line in summary.lines_out():
        print(f"  [{tag}] {line}", file=sys.stderr)
    return {"hands": summary.hands, "wall": wall, "worker_cpu": worker_cpu, "owner": owner}


def main() -> None:
    from replay.ingest import INGEST_SAMPLES

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true", help="4 times the hands")
    args = ap.parse_args()
    k = 4 if args.full else 1
    plain, small = dataset(30_000 * k, 4), dataset(600 * k, 2)
    size = sum(f.stat().st_size for f in plain)
    print(f"input: {len(plain)} files, {size / 2**20:,.0f} MiB, {30_000 * k:,} hands; {600 * k} hands analysed",
          file=sys.stderr)  # fmt: skip
    load0 = os.getloadavg()[0]
    # chunks of 2,500 hands (ingest's own: 10,000) and of 50 analysed hands
    # (its own: 500): a small run still has a dozen tasks to share
    checked = {n: run(plain, n, 2500, None) for n in (1, 2)}
    analysed = {n: run(small, n, 50, (INGEST_SAMPLES, 0)) for n in (1, 2)}
    print(f"load average: {load0:.1f} before, {os.getloadavg()[0]:.1f} after (2 cores, shared)", file=sys.stderr)

    def rate(r: dict[str, Any]) -> float:
        return r["hands"] / r["wall"]

    def per_worker(rs: dict[int, dict[str, Any]]) -> float:
        return max(r["hands"] / r["worker_cpu"] for r in rs.values() if r["worker_cpu"])

    ceiling = min(r["hands"] / r["owner"] for r in checked.values() if r["owner"])
    for name, rs in (("validation", checked), ("analysis", analysed)):
        w = per_worker(rs)
        for n in (1, 2, 8, 32, 128, 512, 2048):
            print(f"model_{name}_hands_per_s_{n}_workers: {min(n * w, ceiling):.1f} hands/s")
        print(f"{name}_worker_hands_per_cpu_s: {w:.1f} hands/s")
    print(f"owner_ceiling_hands_per_s: {ceiling:.0f} hands/s")
    print(f"validation_hands_per_s_1_worker: {rate(checked[1]):.0f} hands/s")
    print(f"validation_hands_per_s_2_workers: {rate(checked[2]):.0f} hands/s")
    print(f"hands_per_s_1_worker: {rate(analysed[1]):.2f} hands/s")
    print(f"hands_per_s_2_workers: {rate(analysed[2]):.2f} hands/s")


if __name__ == "__main__":
    main()
