"""The review's costs and yields: principal lines a hand, and puzzles per 10,000 hands.

Simulates hands (the profiles of bench/api.py's store, or one), analyses
each (perfect information, and with `--samples N` the grade on what the
player could know) and then computes every decision's two principal lines
and their explanation, as the replay page does on a hand's first view.
Prints the CPU milliseconds a hand for the analysis and for the lines (the
page's first-view cost; ingest would pay it for every hand), and, with
samples, the puzzles found among the hands (reports.puzzles's rule,
applied to the analysis in memory) per 10,000 hands. Headline figures last.

    python bench/review.py                        # 100 hands, 6 sampled deals a decision
    python bench/review.py --hands 3000 --samples 20
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from replay.analysis.explain import explain, themes
from replay.analysis.grades import THRESHOLDS, Analyzer, HandAnalysis, inputs_from_report
from replay.analysis.line import hand_lines
from replay.simulate import SimConfig, simulate, write_lines
from replay.validate.run import validate_paths

PROFILES = ("international", "domena_2p", "pr_3p", "puerto_rico", "venezuela", "dominican")


def puzzles_of(a: HandAnalysis, scoring: str) -> list[int]:
    """The plies of a hand that reports.puzzles would take: one move best by
    the mistake line under both grades, with clear evidence."""
    gap = THRESHOLDS.get(scoring, THRESHOLDS["pips"])[1]
    out = []
    for p in a.plies:
        alts = p.alternatives
        if p.forced or not p.samples or len(alts) < 2 or any(x.pimc is None for x in alts):
            continue
        dd = sorted((x.dd for x in alts), reverse=True)
        pi = sorted((x.pimc or 0.0 for x in alts), reverse=True)
        best_dd = next(x.move for x in alts if x.dd == dd[0])
        best = max(alts, key=lambda x: x.pimc or 0.0)
        if dd[0] - dd[1] < gap or pi[0] - pi[1] < gap or best_dd != best.move:
            continue
        if not p.exact and not all(best.pimc_ci is not None and x.pimc_ci is not None and best.pimc_ci[0] > x.pimc_ci[1]
                                   for x in alts if x is not best):
            continue
        out.append(p.ply)
    return out


def pct(xs: Sequence[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(len(s) * p / 100))]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=100)
    ap.add_argument("--samples", type=int, default=6, help="sampled deals a decision (0: no puzzles)")
    ap.add_argument("--profile", default=None, help="one profile (default: six)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "sim.jsonl"
        profiles = (args.profile,) if args.profile else PROFILES
        write_lines(simulate(SimConfig(profiles=profiles, hands=args.hands, seed=11)), log)
        rep = validate_paths([log], keep_moves=True)
    an = Analyzer(samples=args.samples, seed=0)
    t_an: list[float] = []
    t_ln: list[float] = []
    decisions = claims = found = hands = 0
    themed: dict[str, int] = {}
    for m in rep.matches:
        for inp in inputs_from_report(m):
            t0 = time.process_time()
            a = an.hand(inp)
            t1 = time.process_time()
            if a.skip is not None:
                continue
            hands += 1
            best = {}
            for p in a.plies:
                if p.forced:
                    continue
                key = (lambda x: x.pimc or 0.0) if p.samples else (lambda x: float(x.dd))
                best[p.ply] = max(p.alternatives, key=key).move
            lines = hand_lines(inp, best)
            said = {k: explain(inp.rules, pl) for k, pl in lines.items()}
            t2 = time.process_time()
            t_an.append(1000 * (t1 - t0))
            t_ln.append(1000 * (t2 - t1))
            decisions += len(lines)
            claims += sum(len(v) for v in said.values())
            for k in puzzles_of(a, inp.rules.scoring):
                found += 1
                for t in themes(inp.rules, lines[k]) if k in lines else []:
                    name = t.split(" in ")[0]
                    themed[name] = themed.get(name, 0) + 1
    print(f"{hands} hands, {decisions} decisions with lines, {claims} sentences; "
          f"{args.samples} sampled deals a decision", file=sys.stderr)
    print(f"analysis CPU ms a hand: p50 {statistics.median(t_an):.1f}, p95 {pct(t_an, 95):.1f}")
    print(f"lines and reasons CPU ms a hand: p50 {statistics.median(t_ln):.1f}, p95 {pct(t_ln, 95):.1f}, "
          f"mean {statistics.fmean(t_ln):.1f} ({statistics.fmean(t_ln) / statistics.fmean(t_an):.2f}x the analysis)")
    if args.samples:
        print("puzzle themes: " + ", ".join(f"{k} {v}" for k, v in sorted(themed.items(), key=lambda kv: -kv[1])))
        print(f"puzzles_per_10000_hands: {10_000 * found / max(hands, 1):.0f}")
    print(f"lines_ms_per_hand_p50: {statistics.median(t_ln):.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
