"""The long fault campaign: generated bad logs through both validation paths.

Usage: python bench/fuzz.py [--cases N] [--seed S] [--limit SECONDS]

Every case (tests/fuzzing.py) is a file of whole sample matches, one of them
damaged (truncation, bad JSON, wrong types, huge and negative numbers, odd
times, reordered, duplicated, interleaved and flooded lines, encodings, line
endings, gzip bombs and broken gzip) or a folder with a special file in it
(a named pipe, a folder named like a log, an empty file, a broken link).
Each is validated by the C path and the pure path under a time limit and
checked: no exception, no hang, the damaged match told with a file and a
line, every untouched match read as undamaged, the same report on both
paths; every tenth case is also ingested, damaged and not, and the untouched
matches must be stored alike. The figures come last: cases, crashes, hangs, differences between
the paths, untouched matches lost (and damaged matches with no finding that
names a line). No arguments: 300 cases, under a minute.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

# This checkout's replay, whatever an editable install elsewhere points to.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from replay.accel import native  # noqa: E402
from tests.fuzzing import TIME_LIMIT, Tally, corpus, ingest_lost, make_case, run_case  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--limit", type=float, default=TIME_LIMIT, help="seconds a case may take on one path")
    ap.add_argument("--ingest-every", type=int, default=10,
                    help="ingest every Nth case, damaged and not, and compare the untouched matches stored")
    args = ap.parse_args()
    if native is None:
        print("the C build is missing (or REPLAY_PURE is set): only the pure path runs", file=sys.stderr)
    rng = random.Random(args.seed)
    tally = Tally()
    kinds: Counter[str] = Counter()
    slowest = (0.0, "")
    ingested = 0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="replay-fuzz-") as tmp:
        for n in range(args.cases):
            case = make_case(rng, n, corpus())
            kinds[case.kind] += 1
            t = time.perf_counter()
            out = run_case(case, Path(tmp) / f"c{n}", limit=args.limit)
            if args.ingest_every and n % args.ingest_every == 0 and not (out.crash or out.hang):
                stored_lost = ingest_lost(case, Path(tmp) / f"i{n}")
                out.lost += [f"{m} (stored)" for m in stored_lost]
                ingested += 1
            took = time.perf_counter() - t
            slowest = max(slowest, (took, case.name))
            tally.add(out)
            if out in tally.bad:
                print(f"{case.name}: crash={out.crash} hang={out.hang} differs={out.differs} "
                      f"lost={out.lost} unexplained={out.unexplained}", file=sys.stderr)
    wall = time.perf_counter() - t0
    print("kinds: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    print(f"slowest case: {slowest[1]} ({slowest[0]:.1f} s, both paths)")
    print(f"wall: {wall:.1f} s")
    print(f"ingested: {ingested} cases")
    print(f"cases: {tally.cases} cases")
    print(f"crashes: {tally.crashes} cases")
    print(f"hangs: {tally.hangs} cases")
    print(f"differences: {tally.differences} cases")
    print(f"matches_lost: {tally.lost} matches")
    print(f"unexplained: {tally.unexplained} matches")
    return 0 if not tally.bad else 1


if __name__ == "__main__":
    raise SystemExit(main())
