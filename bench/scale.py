"""Scale-out: `replay ingest --cluster` with 1 and 2 local dask workers, and
the model for N machines (docs/scale.md).

Input: simulated international hands (bench/ingest.py's cached data set,
several files, matches crossing file boundaries). For 1 and then 2 worker
processes (a LocalCluster, one thread each), the same files are ingested
into an empty store; the cluster is started before the clock starts.

From the runs' stage times it also derives the two numbers of the model:

- ``worker_hands_per_cpu_s``: hands one worker validates per CPU second
  (parse, validate, Arrow frames, encode), the part that scales with
  machines;
- ``owner_ceiling_hands_per_s``: what the one process that owns the store
  can take, whatever the number of workers: the busier of its main thread
  (keeping and routing the files, writing the batches that come back) and
  its loader thread (DuckDB inserts, one transaction per 8 batches).

and prints the model's hands/s for N workers: min(N x worker rate,
owner ceiling).

Run: python bench/scale.py          (~30,000 hands, under a minute)
     python bench/scale.py --full   (200,000 hands)
The machine is shared (2 cores): the figures say what this machine did.
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ingest import dataset  # noqa: E402  (bench/ingest.py)


def run(files: list[Path], workers: int, chunk_hands: int, *, pure: bool = False) -> dict[str, Any]:
    """One ingest on a fresh LocalCluster of ``workers`` processes (``pure``:
    the workers without the C fast path, every line parsed and replayed)."""
    from replay.cluster import connect
    from replay.ingest import ingest

    work = Path(tempfile.mkdtemp(prefix="replay-scale-"))
    if pure:  # the workers are spawned with this environment; this process keeps its own
        os.environ["REPLAY_PURE"] = "1"
    try:
        with connect(f"local:{workers}") as pool:
            os.environ.pop("REPLAY_PURE", None)
            # every worker has imported replay before the clock starts
            pool.client.run(lambda: __import__("replay.ingest"))
            t0 = time.perf_counter()
            summary = ingest(files, db=work / "data" / "replay.duckdb", chunk_hands=chunk_hands, cluster=pool)
            wall = time.perf_counter() - t0
    finally:
        os.environ.pop("REPLAY_PURE", None)
        shutil.rmtree(work, ignore_errors=True)
    st = summary.stages
    worker_cpu = sum(st.get(f"{k} (workers)", 0.0) for k in ("parse", "validate", "frames", "write"))
    loader = st.get("load (wall)", 0.0) + st.get("derive (wall)", 0.0) + st.get("reports (wall)", 0.0)
    owner = max(st.get("route (main)", 0.0), loader) + st.get("checkpoint (wall)", 0.0)
    tag = f"{'pure, ' if pure else ''}{workers} worker{'s' if workers > 1 else ''}"
    for line in summary.lines_out():
        print(f"  [{tag}] {line}", file=sys.stderr)
    return {"hands": summary.hands, "wall": wall, "worker_cpu": worker_cpu, "owner": owner}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true", help="200,000 hands")
    ap.add_argument("--hands", type=int, default=None)
    ap.add_argument("--chunk-hands", type=int, default=2500,
                    help="hands a task (default 2,500: a small run still has a dozen tasks; "
                    "ingest's own default is 10,000)")  # fmt: skip
    args = ap.parse_args()
    hands = args.hands or (200_000 if args.full else 30_000)
    files = dataset(hands, 4)
    size = sum(f.stat().st_size for f in files)
    print(f"input: {len(files)} files, {size / 2**20:,.0f} MiB, {hands:,} hands", file=sys.stderr)
    load0 = os.getloadavg()[0]
    fast = {n: run(files, n, args.chunk_hands) for n in (1, 2)}
    # validation-bound: the same hands line by line (logs the C scanner does not
    # take, e.g. another server's layout), a quarter of them
    pure = {n: run(files[:1], n, args.chunk_hands // 4, pure=True) for n in (1, 2)}
    print(f"load average: {load0:.1f} before, {os.getloadavg()[0]:.1f} after (2 cores, shared)", file=sys.stderr)

    def rate(r: dict[str, Any]) -> float:
        return r["hands"] / r["wall"]

    def per_worker(rs: dict[int, dict[str, Any]]) -> float:
        return max(r["hands"] / r["worker_cpu"] for r in rs.values() if r["worker_cpu"])

    ceiling = min(r["hands"] / r["owner"] for r in (*fast.values(), *pure.values()) if r["owner"])
    for name, rs in (("fast", fast), ("pure", pure)):
        w = per_worker(rs)
        for n in (1, 2, 4, 8, 16, 32):
            print(f"model_{name}_hands_per_s_{n}_workers: {min(n * w, ceiling):.0f} hands/s")
        print(f"{name}_worker_hands_per_cpu_s: {w:.0f} hands/s")
    print(f"owner_ceiling_hands_per_s: {ceiling:.0f} hands/s")
    print(f"pure_hands_per_s_1_worker: {rate(pure[1]):.0f} hands/s")
    print(f"pure_hands_per_s_2_workers: {rate(pure[2]):.0f} hands/s")
    print(f"hands_per_s_1_worker: {rate(fast[1]):.0f} hands/s")
    print(f"hands_per_s_2_workers: {rate(fast[2]):.0f} hands/s")


if __name__ == "__main__":
    main()
