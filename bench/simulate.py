"""Throughput of the simulator: international hands written to a log file.

    python bench/simulate.py            # 20,000 hands
    python bench/simulate.py --full     # 100,000 hands (target: at most 60 s)

Whole matches of the three bot styles at one table, everything included:
seed chains, deal-v1 derivations, the engine, scoring, JSON lines, the
file write. The headline figure is printed last.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from replay.simulate import SimConfig, SimStats, simulate, write_lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=20_000, help="hands to simulate (default 20,000)")
    ap.add_argument("--full", action="store_true", help="simulate 100,000 hands")
    ap.add_argument("--out", default=None, help="keep the log here (default: a temp file)")
    ap.add_argument("--gz", action="store_true", help="gzip the log")
    args = ap.parse_args()
    n = 100_000 if args.full else args.n

    with tempfile.TemporaryDirectory() as tmp:
        path = args.out or os.path.join(tmp, "bench.jsonl" + (".gz" if args.gz else ""))
        stats = SimStats()
        t0 = time.perf_counter()
        lines = write_lines(simulate(SimConfig(hands=n, seed=1), stats), path, gz=args.gz)
        dt = time.perf_counter() - t0
        size = os.path.getsize(path)

    print(f"hands: {stats.hands}  matches: {stats.matches}  lines: {lines}  seconds: {dt:.2f}")
    print(f"bytes_per_hand: {size / stats.hands:.0f} bytes")
    print(f"us_per_line: {dt / lines * 1e6:.1f} us")
    print(f"simulate_hands_per_s: {stats.hands / dt:.0f} hands/s")


if __name__ == "__main__":
    main()
