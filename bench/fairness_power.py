"""Power of the fairness battery: how many deals until each cheat is caught.

For every broken shuffler (reports.shufflers) and window size, simulate
independent 4-player windows (4 tables, reseated every 10 deals) and count
windows the certificate does not PASS: the battery and the targeted tests
(reports.targeted) as one Holm family at 0.25%, the per-player luck family
at 0.25% (together at most 0.5% on a fair server: reports.certificate.power). The battery alone at 1%
(the fairness page's rule) is shown beside it at 2,000 deals. The friend
(one player given an extra double in 10% of his hands) is counted as caught
when the luck family flags exactly him; beside him, the Neyman-Pearson
limit: the most powerful test against that cheat, told who he is. Fair
windows give the false-alarm rates, all from the same run.

    python bench/fairness_power.py          # quick: 10 windows per cell (< 1 min)
    python bench/fairness_power.py --full   # 100 windows per cell, 1,000 fair windows
    python bench/fairness_power.py --full --write reports/certificate/power.json
    python bench/fairness_power.py --monitor        # the live monitor: false alarms, delay

The monitor mode streams one table's deals through ``reports.monitor``'s
check (the latest 2,000 deals, every 1,000 new deals, Holm at 0.1%): fair
tables give its false-alarm rate per check and per busy-table year; a table
that deals 2,000 fair deals and then switches to a broken shuffler gives the
deals from the switch to the alarm.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from reports import monitor
from reports.battery import DealWindow, player_luck, run_battery
from reports.certificate.power import DEALS_ALPHA, LUCK_ALPHA, friend_limit
from reports.shufflers import BATCH, FRIEND_RATE, simulate_window
from reports.targeted import battery_with_targeted

SIZES = (250, 500, 1000, 2000, 5000)
QUICK_SIZES = (500, 2000)
TABLES = 4
CATCH_RATE = 0.9
TARGET = 2000


def detected(cheat: str, n: int, rng: np.random.Generator) -> tuple[bool, bool, list[str]]:
    """Is this window caught by the certificate, by the battery alone (1%), and by which tests."""
    if cheat == "friend":
        window = simulate_window("fair", n, rng, tables=TABLES, friend_rate=FRIEND_RATE)
        cert = "0" in player_luck(window, LUCK_ALPHA).flagged
        alone = "0" in player_luck(window).flagged if n == TARGET else False
        return cert, alone, ["luck"] if cert else []
    window = simulate_window(cheat, n, rng, tables=TABLES)
    report = battery_with_targeted(window, DEALS_ALPHA)
    by = [t.name.split("[")[0] for t in report.tests if t.verdict != "PASS"]
    alone = run_battery(window).verdict != "PASS" if n == TARGET else False
    return report.verdict != "PASS", alone, by


def _first_alarm(decks: np.ndarray, start: int) -> int | None:
    """Checks as the monitor makes them, from deal ``start`` on: the deal count of the first alarm."""
    n = len(decks)
    players = np.broadcast_to(np.arange(4), (n, 4))
    for k in range(start, n + 1, monitor.STEP):
        lo = max(0, k - monitor.WINDOW)
        window = DealWindow.from_decks(decks[lo:k], 4, np.zeros(k - lo, dtype=np.int64), players[lo:k])
        if monitor.check_window(window).verdict != "PASS":
            return k
    return None


def run_monitor(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(args.seed)
    tables = args.fair or (40 if args.full else 4)
    length = 50_000 if args.full else 5_000
    trials = args.windows or (20 if args.full else 3)
    horizon = 5_000
    start = time.perf_counter()
    alarms = checks = 0
    for _ in range(tables):
        decks = BATCH["fair"](rng, length, 28)
        k = monitor.MIN_DEALS
        while k <= length:
            at = _first_alarm(decks[:length], k)
            if at is None:
                checks += (length - k) // monitor.STEP + 1
                break
            alarms += 1
            checks += (at - k) // monitor.STEP + 1
            k = at + monitor.STEP
    per_check = alarms / checks
    print(f"monitor: window {monitor.WINDOW:,} deals, a check every {monitor.STEP} new deals, Holm at "
          f"{monitor.ALPHA:g}; bound {monitor.expected_false_alarms_a_year():.2f} false alarms a busy-table year")  # fmt: skip
    print(f"fair: {alarms} alarms in {checks:,} checks over {tables} tables x {length:,} deals")
    print(f"\n| shufflers after 2,000 fair deals | caught (of {trials}) | median deals to alarm | "
          "90th percentile |\n|---|---|---|---|")  # fmt: skip
    delays: dict[str, float] = {}
    for cheat in [c for c in BATCH if c != "fair"]:
        got = []
        for _ in range(trials):
            fair = BATCH["fair"](rng, 2000, 28)
            bad = BATCH[cheat](rng, horizon, 28)
            at = _first_alarm(np.concatenate([fair, bad]), 2000 + monitor.STEP)
            got.append(np.inf if at is None else at - 2000)
        arr = np.array(got)
        delays[cheat] = float(np.median(arr))
        caught = int(np.isfinite(arr).sum())
        print(f"| {cheat} | {caught} | {np.median(arr):.0f} | {np.quantile(arr, 0.9):.0f} |")
    print(f"\nelapsed {time.perf_counter() - start:.0f} s")
    for cheat, d in delays.items():
        print(f"monitor_deals_to_alarm_{cheat}: {d:.0f} deals")
    print(f"monitor_false_alarms_per_check: {per_check:.5f}")
    print(f"monitor_false_alarms_a_busy_year: {per_check * monitor.BUSY_DEALS_A_YEAR / monitor.STEP:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="100 windows per cell, 1000 fair windows")
    ap.add_argument("--windows", type=int, help="windows per (cheat, size) cell")
    ap.add_argument("--fair", type=int, help="fair windows for the false-alarm rate")
    ap.add_argument("--fair-size", type=int, default=TARGET)
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--write", type=Path, help="write the power table (JSON) the certificates read")
    ap.add_argument("--monitor", action="store_true", help="the live monitor's false alarms and delay")
    args = ap.parse_args()
    if args.monitor:
        run_monitor(args)
        return
    windows = args.windows or (100 if args.full else 10)
    n_fair = args.fair or (1000 if args.full else 40)
    sizes = SIZES if args.full or args.write else QUICK_SIZES
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()

    cheats = [name for name in BATCH if name != "fair"] + ["friend"]
    table: dict[str, dict[str, object]] = {}
    print(f"catch rate over {windows} windows per cell ({TABLES} tables, 4 players; "
          f"certificate rule: deals at {DEALS_ALPHA:.2%}, luck at {LUCK_ALPHA:.2%})")  # fmt: skip
    print("| cheat | " + " | ".join(f"{n:,}" for n in sizes) + " | battery alone at 2,000 | caught by |")
    print("|---" * (len(sizes) + 3) + "|")
    for cheat in cheats:
        rates, tests, alone_hits = [], {}, 0
        for n in sizes:
            hits = 0
            for _ in range(windows):
                hit, alone, by = detected(cheat, n, rng)
                hits += hit
                alone_hits += alone
                for name in by:
                    tests[name] = tests.get(name, 0) + 1
            rates.append(hits / windows)
        alone_rate = alone_hits / windows if TARGET in sizes else None
        by_tests = ", ".join(k for k, _ in sorted(tests.items(), key=lambda kv: -kv[1])[:3])
        shown = "-" if alone_rate is None else f"{alone_rate:.0%}"
        print(f"| {cheat} | " + " | ".join(f"{r:.0%}" for r in rates) + f" | {shown} | {by_tests} |")
        table[cheat] = {"rates": rates, "battery_alone_2000": alone_rate, "caught_by": by_tests}

    limit = friend_limit(TARGET // TABLES, FRIEND_RATE)
    print(f"\nfriend, Neyman-Pearson limit at {TARGET:,} deals ({TARGET // TABLES} of his hands, "
          f"his identity known, one-sided at {LUCK_ALPHA:.2%}): {limit:.0%}")  # fmt: skip

    alarms = luck_alarms = either = 0
    alarm_tests: list[str] = []
    for _ in range(n_fair):
        window = simulate_window("fair", args.fair_size, rng, tables=TABLES)
        report = battery_with_targeted(window, DEALS_ALPHA)
        deals_bad = report.verdict != "PASS"
        luck_bad = bool(player_luck(window, LUCK_ALPHA).flagged)
        alarms += deals_bad
        luck_alarms += luck_bad
        either += deals_bad or luck_bad
        alarm_tests += [f"{t.name} (p={t.p_value:.2g})" for t in report.tests if t.verdict != "PASS"]
    elapsed = time.perf_counter() - start
    print(f"\nfair windows: {n_fair} x {args.fair_size:,} deals; elapsed {elapsed:.0f} s")
    print("false alarms by: " + (", ".join(alarm_tests) or "none"))
    if args.write:
        args.write.write_text(json.dumps({
            "sizes": list(sizes), "windows": windows, "tables": TABLES,
            "deals_alpha": DEALS_ALPHA, "luck_alpha": LUCK_ALPHA, "cheats": table,
            "friend_np_limit_2000": limit,
            "fair": {"windows": n_fair, "deals": args.fair_size, "deals_alarm_rate": alarms / n_fair,
                     "luck_alarm_rate": luck_alarms / n_fair, "alarm_rate": either / n_fair},
            "seed": args.seed,
        }, indent=1) + "\n")  # fmt: skip
        print(f"wrote {args.write}")
    k = sizes.index(TARGET)
    for cheat in cheats:
        rates = table[cheat]["rates"]
        assert isinstance(rates, list)
        print(f"power_{cheat}_at_2000: {100 * rates[k]:.0f} %")
    print(f"friend_np_limit_at_2000: {100 * limit:.0f} %")
    print(f"false_alarm_rate_deals: {100 * alarms / n_fair:.1f} %")
    print(f"false_alarm_rate_luck: {100 * luck_alarms / n_fair:.1f} %")
    print(f"false_alarm_rate: {100 * either / n_fair:.1f} %")


if __name__ == "__main__":
    main()
