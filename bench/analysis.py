"""Hand analysis speed: perfect-information grades, sampled grades, and ingest.

    python bench/analysis.py            # 200 hands graded, 40 decisions sampled, 400 hands ingested
    python bench/analysis.py --full     # 1,000 hands, 300 decisions, 100,000 hands ingested

1. Grading every alternative at every ply of a whole `international` hand
   (4 players) under perfect information: one solver a run, its table
   cleared between hands (as the analysis does); per hand p50, p95, max.
2. The imperfect-information grade of one decision with 100 sampled deals
   (every legal move scored on each deal): decisions of simulated hands,
   median and p95.
3. Analysis at ingest on both cores: `replay ingest` of simulated
   `international` hands with the analysis on (as the command runs it:
   perfect information, `--ingest-samples` sampled deals a decision, 0 by
   default), wall time and hands/s, beside the same ingest without it.

Simulated hands (replay.simulate's bots) are generated first, not timed.
Figures last, one per line, as ``name: value unit``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _hands(n: int, seed: int) -> list:
    """`n` finished, valid international hands as the analysis reads them."""
    from replay.analysis import inputs_from_report
    from replay.simulate import SimConfig, SimStats, simulate
    from replay.validate import validate_paths

    lines = simulate(SimConfig(hands=int(n * 1.2) + 20, tables=8, seed=seed), SimStats())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "hands.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        report = validate_paths([path], keep_moves=True)
    out = [i for m in report.matches for i in inputs_from_report(m) if i.skip is None]
    return out[:n]


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def bench_dd(hands: list) -> list[float]:
    """Per hand ms: every ply's every alternative, exactly."""
    from replay.analysis import Analyzer

    an = Analyzer(samples=0)
    an.hand(hands[0])  # warm up (tables allocated)
    times = []
    for inp in hands:
        t0 = time.perf_counter()
        a = an.hand(inp)
        times.append((time.perf_counter() - t0) * 1000)
        assert a.skip is None
    return times


def bench_pimc(hands: list, decisions: int, samples: int, seed: int) -> list[float]:
    """Per decision ms: `samples` deals, every legal move scored on each."""
    from replay.analysis import Analyzer, decision_rng, engine_move
    from replay.engine import apply, legal_moves, new_hand

    an = Analyzer(samples=samples, seed=seed)
    picked: list[tuple] = []
    for inp in hands:
        state = new_hand(inp.rules, [list(h) for h in inp.dealt], leader=inp.leader, opening=inp.opening,
                         stock=inp.stock)  # fmt: skip
        for k, (_, kind, tile, end) in enumerate(inp.moves, 1):
            if len(legal_moves(state)) > 1 and state.result is None:
                picked.append((inp, k, state))
            state = apply(state, engine_move(state, kind, tile, end)[1])
    random.Random(seed).shuffle(picked)
    times = []
    _, pi = an.solvers(hands[0].rules)
    for inp, k, state in picked[:decisions]:
        tracker = _tracker_at(inp, k)  # what the seat saw, untimed
        t0 = time.perf_counter()
        an._pimc(state, tracker, inp.context, pi, decision_rng(seed, inp.match, inp.hand, k))
        times.append((time.perf_counter() - t0) * 1000)
    return times


def _tracker_at(inp, k: int):  # type: ignore[no-untyped-def]
    from replay.analysis import engine_move
    from replay.engine import apply, new_hand
    from replay.knowledge import Tracker

    state = new_hand(inp.rules, [list(h) for h in inp.dealt], leader=inp.leader, opening=inp.opening, stock=inp.stock)
    tracker = Tracker(state, fixed_by=inp.fixed_by)
    for _, kind, tile, end in inp.moves[: k - 1]:
        move, laid = engine_move(state, kind, tile, end)
        tracker.see(state, move)
        state = apply(state, laid)
    return tracker


def bench_ingest(hands: int, samples: int, workers: int) -> tuple[float, float, int]:
    """Wall seconds of `replay ingest` with and without the analysis; hands stored."""
    from replay.ingest import ingest
    from replay.simulate import SimConfig, SimStats, simulate

    cache = Path("/tmp/replay-bench")
    cache.mkdir(exist_ok=True)
    log = cache / f"analysis-intl-{hands}.jsonl"  # generated once, not timed
    if not log.exists():
        tmp = log.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            stats = SimStats()
            for line in simulate(SimConfig(hands=hands, tables=64, seed=77, players_pool=400), stats):
                f.write(line + b"\n")
        os.rename(tmp, log)
    out = []
    stored = 0
    for analysis in (None, (samples, 0)):
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            db = Path(tmp) / "data" / "replay.duckdb"
            db.parent.mkdir()
            t0 = time.perf_counter()
            s = ingest([str(log)], db=db, workers=workers, analysis=analysis)
            out.append(time.perf_counter() - t0)
            stored = s.hands
    return out[0], out[1], stored


def main() -> None:
    from replay.ingest import INGEST_SAMPLES

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true", help="1,000 hands, 300 decisions, 100,000 hands ingested")
    ap.add_argument("--hands", type=int, default=None, help="hands graded under perfect information")
    ap.add_argument("--decisions", type=int, default=None, help="decisions sampled")
    ap.add_argument("--ingest", type=int, default=None, help="hands ingested with the analysis (0: skip)")
    ap.add_argument("--samples", type=int, default=100, help="deals per sampled decision (default 100)")
    ap.add_argument("--ingest-samples", type=int, default=INGEST_SAMPLES,
                    help=f"sampled deals a decision at ingest (default {INGEST_SAMPLES}, as replay ingest)")
    args = ap.parse_args()
    n_hands = args.hands or (1000 if args.full else 200)
    n_dec = args.decisions or (300 if args.full else 40)
    n_ingest = args.ingest if args.ingest is not None else (100_000 if args.full else 400)

    t0 = time.perf_counter()
    hands = _hands(max(n_hands, 40), seed=3)
    print(f"{len(hands)} international hands simulated in {time.perf_counter() - t0:.1f} s", file=sys.stderr)

    dd = bench_dd(hands[:n_hands])
    print(f"perfect information, {len(dd)} whole hands: p50 {statistics.median(dd):.1f} ms, "
          f"p95 {_pct(dd, 0.95):.1f} ms, max {max(dd):.1f} ms", file=sys.stderr)  # fmt: skip
    pi = bench_pimc(hands[:40], n_dec, args.samples, seed=1)
    print(f"sampled grade, {len(pi)} decisions x {args.samples} deals: p50 {statistics.median(pi):.1f} ms, "
          f"p95 {_pct(pi, 0.95):.1f} ms, max {max(pi):.1f} ms", file=sys.stderr)  # fmt: skip
    ingest_line = []
    if n_ingest:
        plain, analysed, stored = bench_ingest(n_ingest, args.ingest_samples, workers=2)
        print(f"ingest of {stored:,} hands on 2 cores: {plain:.1f} s without the analysis, {analysed:.1f} s with it "
              f"({args.ingest_samples} sampled deals a decision)", file=sys.stderr)  # fmt: skip
        ingest_line = [
            f"ingest_analysis_hands: {stored} hands",
            f"ingest_analysis_wall: {analysed:.1f} s",
            f"ingest_analysis_hands_per_s: {stored / analysed:.1f} hands/s",
            f"ingest_plain_wall: {plain:.1f} s",
        ]
    print(f"dd_hand_p50: {statistics.median(dd):.1f} ms")
    print(f"dd_hand_p95: {_pct(dd, 0.95):.1f} ms")
    print(f"dd_hand_max: {max(dd):.1f} ms")
    print(f"pimc_decision_p50: {statistics.median(pi):.1f} ms")
    print(f"pimc_decision_p95: {_pct(pi, 0.95):.1f} ms")
    for line in ingest_line:
        print(line)


if __name__ == "__main__":
    main()
