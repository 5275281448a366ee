"""Speed of the fairness battery over a large window of 4-player deals.

    python bench/battery.py          # 200,000 deals
    python bench/battery.py --full   # 1,000,000 deals (the target: <= 10 s)

Deals come from the vectorized fair shuffler (not timed); 50 tables, 800
players. Timed: run_battery (the headline), player_luck, and audit (the
battery on the window and on both halves).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from reports.battery import DealWindow, audit, player_luck, run_battery
from reports.shufflers import batch_fisher_yates


def _label(n: int) -> str:
    return f"{n // 1_000_000}m" if n % 1_000_000 == 0 else f"{n // 1000}k"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="1,000,000 deals")
    ap.add_argument("--deals", type=int, help="window size")
    args = ap.parse_args()
    n = args.deals or (1_000_000 if args.full else 200_000)

    rng = np.random.default_rng(1)
    t0 = time.perf_counter()
    deck = batch_fisher_yates(rng, n, 28)
    table = np.arange(n) % 50
    player = table[:, None] * 16 + rng.integers(0, 16, (n, 1)) // 4 * 4 + np.arange(4)
    window = DealWindow.from_decks(deck, 4, table, player)
    print(f"generated {n:,} deals in {time.perf_counter() - t0:.1f} s (not timed)")
    run_battery(DealWindow.from_decks(deck[:2000]))  # build the exact tables once

    t0 = time.perf_counter()
    report = run_battery(window)
    t_battery = time.perf_counter() - t0
    t0 = time.perf_counter()
    luck = player_luck(window)
    t_luck = time.perf_counter() - t0
    t0 = time.perf_counter()
    result = audit(window)
    t_audit = time.perf_counter() - t0

    for t in report.tests:
        print(f"  {t.name:26s} stat {t.statistic:10.2f}  p {t.p_value:.3g}  {t.verdict}")
    print(f"verdict {report.verdict}, audit {result.verdict}, luck flagged {len(luck.flagged)}")
    label = _label(n)
    print(f"player_luck_{label}_deals_s: {t_luck:.2f} s")
    print(f"audit_{label}_deals_s: {t_audit:.2f} s")
    print(f"battery_{label}_deals_s: {t_battery:.2f} s")


if __name__ == "__main__":
    main()
