"""Power of the fairness battery: how many deals until each cheat is caught.

For every broken shuffler (reports.shufflers) and window size, simulate
independent 4-player windows (4 tables, reseated every 10 deals), run the
battery and count windows whose verdict is WEAK or FAIL. The friend (one
player given an extra double in 10% of his hands) is counted as caught
when the per-player luck family flags exactly him. Fair windows give the
false-alarm rates.

    python bench/fairness_power.py          # quick: 10 windows per cell (< 1 min)
    python bench/fairness_power.py --full   # 100 windows per cell, 1,000 fair windows
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from reports.battery import player_luck, run_battery
from reports.shufflers import BATCH, FRIEND_RATE, simulate_window

SIZES = (500, 1000, 2000, 5000, 10000)
CATCH_RATE = 0.9


def detected(cheat: str, n: int, rng: np.random.Generator) -> tuple[bool, list[str]]:
    """Is this window caught, and by which tests (or 'luck')."""
    if cheat == "friend":
        window = simulate_window("fair", n, rng, friend_rate=FRIEND_RATE)
        luck = player_luck(window)
        return "0" in luck.flagged, ["luck"] if luck.flagged else []
    report = run_battery(simulate_window(cheat, n, rng))
    by = [t.name.split("[")[0] for t in report.tests if t.verdict != "PASS"]
    return report.verdict != "PASS", by


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="100 windows per cell, 1000 fair windows")
    ap.add_argument("--windows", type=int, help="windows per (cheat, size) cell")
    ap.add_argument("--fair", type=int, help="fair windows for the false-alarm rate")
    ap.add_argument("--fair-size", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=20240601)
    args = ap.parse_args()
    windows = args.windows or (100 if args.full else 10)
    n_fair = args.fair or (1000 if args.full else 40)
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()

    cheats = [name for name in BATCH if name != "fair"] + ["friend"]
    caught_at: dict[str, int | None] = {}
    print(f"detection rate over {windows} windows per cell (4 players, 4 tables)")
    print("| cheat | " + " | ".join(f"{n:,}" for n in SIZES) + " | caught by |")
    print("|---" * (len(SIZES) + 2) + "|")
    for cheat in cheats:
        rates, tests = [], {}
        caught_at[cheat] = None
        for n in SIZES:
            hits = 0
            for _ in range(windows):
                hit, by = detected(cheat, n, rng)
                hits += hit
                for name in by:
                    tests[name] = tests.get(name, 0) + 1
            rate = hits / windows
            rates.append(rate)
            if caught_at[cheat] is None and rate >= CATCH_RATE:
                caught_at[cheat] = n
        by_tests = ", ".join(k for k, _ in sorted(tests.items(), key=lambda kv: -kv[1])[:3])
        print(f"| {cheat} | " + " | ".join(f"{r:.0%}" for r in rates) + f" | {by_tests} |")

    alarms, luck_alarms, alarm_tests = 0, 0, []
    for _ in range(n_fair):
        window = simulate_window("fair", args.fair_size, rng)
        report = run_battery(window)
        alarms += report.verdict != "PASS"
        alarm_tests += [
            f"{t.name} (p={t.p_value:.2g})" for t in report.tests if t.verdict != "PASS"
        ]
        luck_alarms += bool(player_luck(window).flagged)
    elapsed = time.perf_counter() - start
    print(f"\nfair windows: {n_fair} x {args.fair_size:,} deals; elapsed {elapsed:.0f} s")
    print("false alarms by: " + (", ".join(alarm_tests) or "none"))
    for cheat in cheats:
        at = caught_at[cheat]
        print(f"caught_at_{cheat}: {at if at else '>' + str(SIZES[-1])} deals")
    print(f"false_alarm_rate: {100 * alarms / n_fair:.1f} %")
    print(f"luck_false_alarm_rate: {100 * luck_alarms / n_fair:.1f} %")


if __name__ == "__main__":
    main()
