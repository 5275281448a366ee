"""Speed of the fairness audit over stored deals: load the window from DuckDB, run the battery.

    python bench/audit.py          # 100,000 deals
    python bench/audit.py --full   # 1,000,000 deals (the target: <= 10 s)

The store is filled directly with DuckDB SQL (not timed), not by simulate +
ingest, which would take an hour for a million hands: synthetic rows in
matches, seats, hands, seeds and players -- 4-player international matches
of 10 hands, 50 tables, 800 players, decks from numpy's Fisher-Yates
(`Generator.permuted`), random seed strings, every hand marked seed_ok and
deal_ok. The headline `audit_battery_s` is load_window + battery (window
and both halves) + player luck; `run_audit_s` adds the deterministic
checks, the reused-seed query and the summary (the whole `replay audit`
minus printing).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from replay.store import open_store
from reports.audit import Filters, audit_window, load_window
from reports.battery import audit, player_luck

HANDS_PER_MATCH = 10
TABLES = 50
PLAYERS = 800


def fill(db: Path, n: int, seed: int = 1) -> None:
    """A store with ``n`` synthetic 4-player deals (rounded up to whole matches)."""
    rng = np.random.default_rng(seed)
    n_matches = -(-n // HANDS_PER_MATCH)
    n = n_matches * HANDS_PER_MATCH
    decks = rng.permuted(np.tile(np.arange(28, dtype=np.int8), (n, 1)), axis=1)
    # each table's players sit together; reseated every match
    table = np.arange(n_matches) % TABLES
    seat_players = table[:, None] * (PLAYERS // TABLES) + rng.permuted(
        np.tile(np.arange(PLAYERS // TABLES), (n_matches, 1)), axis=1
    )[:, :4]
    conn = open_store(db)
    conn.register("_deck", pa.table({
        "i": np.arange(n),
        "deck": pa.FixedSizeListArray.from_arrays(pa.array(decks.ravel()), 28),
    }))  # fmt: skip
    conn.register("_seat", pa.table({
        "m": np.repeat(np.arange(n_matches), 4),
        "seat": np.tile(np.arange(4, dtype=np.int8), n_matches),
        "p": seat_players.ravel(),
    }))  # fmt: skip
    conn.execute(
        f"""INSERT INTO matches (match, table_id, profile, rules, players, verdict, result, started,
                                 hands, events, errors, warnings, anchor, lead_draw, estimates, batch)
        SELECT 'm-' || m, 't-' || (m % {TABLES}), 'international', '{{"stock": "none", "teams": "pairs"}}',
               4, 'valid', 'win', TIMESTAMPTZ '2026-11-01 00:00:00+00' + to_minutes(m * 15 // {TABLES}),
               {HANDS_PER_MATCH}, 400, 0, 0, md5('a' || m) || md5('b' || m), [], [], 'bench'
        FROM range({n_matches}) r(m)"""
    )
    conn.execute(
        "INSERT INTO seats SELECT 'm-' || m, seat, 'p-' || lpad(p::VARCHAR, 5, '0'), NULL, false, 1, 0 FROM _seat"
    )
    conn.execute(
        f"""INSERT INTO hands (match, hand, result, dealt, stock, server_seed, seed_ok, deal_ok,
                               play_ok, plies, started)
        SELECT 'm-' || (i // {HANDS_PER_MATCH}), i % {HANDS_PER_MATCH} + 1, 'domino',
               [deck[1:7], deck[8:14], deck[15:21], deck[22:28]]::TINYINT[][], []::TINYINT[],
               md5('s' || i) || md5('t' || i), true, true, true, 30,
               TIMESTAMPTZ '2026-11-01 00:00:00+00' + to_minutes((i // {HANDS_PER_MATCH}) * 15 // {TABLES})
                 + to_seconds(i % {HANDS_PER_MATCH} * 80)
        FROM _deck"""
    )
    conn.execute(
        "INSERT INTO seeds SELECT server_seed, match, hand FROM hands "
        "UNION ALL SELECT anchor, match, 0 FROM matches"
    )
    conn.execute(
        "INSERT INTO players SELECT DISTINCT player, 'Player ' || player, false, 1, NULL, NULL FROM seats"
    )
    conn.execute("CHECKPOINT")
    conn.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="1,000,000 deals")
    ap.add_argument("--deals", type=int, help="window size")
    args = ap.parse_args()
    n = args.deals or (1_000_000 if args.full else 100_000)
    with tempfile.TemporaryDirectory(prefix="bench-audit-") as tmp:
        db = Path(tmp) / "replay.duckdb"
        t0 = time.perf_counter()
        fill(db, n)
        print(f"filled a store with {n:,} deals in {time.perf_counter() - t0:.1f} s (not timed)")
        conn = open_store(db, read_only=True)
        # warm-up: the exact tables (built once per process) and the file cache
        load_window(conn, Filters(table="t-0"))
        audit(load_window(conn, Filters(table="t-0")).deals)

        t0 = time.perf_counter()
        window = load_window(conn, Filters())
        t_load = time.perf_counter() - t0
        t1 = time.perf_counter()
        result = audit(window.deals)
        luck = player_luck(window.deals)
        t_battery = time.perf_counter() - t1
        total = time.perf_counter() - t0

        t0 = time.perf_counter()
        report = audit_window(load_window(conn, Filters()))
        t_run = time.perf_counter() - t0
        conn.close()
    print(f"deals in the battery: {window.deals.n_deals:,}; battery {result.verdict}, "
          f"luck flagged {len(luck.flagged)}; window verdict {report.verdict}, "
          f"failing hands {report.deterministic.failing_total}")  # fmt: skip
    print(f"load_window_s: {t_load:.2f} s")
    print(f"battery_and_luck_s: {t_battery:.2f} s")
    print(f"run_audit_s: {t_run:.2f} s")
    print(f"audit_battery_s: {total:.2f} s")


if __name__ == "__main__":
    main()
