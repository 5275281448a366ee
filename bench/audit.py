"""Speed of the fairness audit over stored deals: load the window from DuckDB, run the battery.

    python bench/audit.py          # 100,000 deals
    python bench/audit.py --full   # 1,000,000 deals (the target: <= 10 s)
    python bench/audit.py --certificate [--deals N]   # a certificate: issue and verify

With ``--certificate`` the store also gets kept log files, one per table,
in the server's canonical layout (a match_start, and per hand a deal line,
24 play lines and a hand_end: 26 lines, about 2.9 kB a hand), in the
store's own logs folder, registered in log_files and match_files and each
hand's digest stored with it (replay.store.line_digests) as an ingest
would, so that verification reads real files again. Timed: ``replay certify``'s work (compute, HTML, PDF,
signature; the desk's key made first, not timed), verification from the
store (signature, files, every figure and every leaf recomputed), and the
live monitor after a load of 10,000 hands (its due tables checked).

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
import datetime as dt
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from replay.store import layout, line_digests, open_store
from reports import monitor
from reports.audit import Filters, audit_window, load_window
from reports.battery import audit, player_luck
from reports.certificate import keys
from reports.certificate.build import Scope
from reports.certificate.issue import issue
from reports.certificate.verify import verify_folder

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
        "INSERT INTO seats (match, seat, player, name, bot, from_hand, seq) SELECT 'm-' || m, seat, 'p-' || lpad(p::VARCHAR, 5, '0'), NULL, false, 1, 0 FROM _seat"
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
        "INSERT INTO seeds (seed, match, hand) SELECT server_seed, match, hand FROM hands "
        "UNION ALL SELECT anchor, match, 0 FROM matches"
    )
    conn.execute(
        "INSERT INTO players (player, name, bot, matches, first_seen, last_seen) SELECT DISTINCT player, 'Player ' || player, false, 1, NULL, NULL FROM seats"
    )
    conn.execute("CHECKPOINT")
    conn.close()


def write_logs(db: Path) -> int:
    """Kept log files for the filled store (one per table), registered as an ingest would."""
    import hashlib  # noqa: PLC0415 -- only the certificate bench writes logs

    conn = open_store(db)
    data = layout(db).data  # the store's own folder: its kept logs are data/logs/<sha256>.jsonl
    (data / "logs").mkdir(parents=True, exist_ok=True)
    hands = conn.execute(
        "SELECT m.table_id, h.match, h.hand, h.dealt, strftime(h.started, '%Y-%m-%dT%H:%M:%S.000Z') "
        "FROM hands h JOIN matches m USING (match) ORDER BY m.table_id, h.match, h.hand"
    ).fetchall()
    pair = [f"{a}{b}" for b in range(7) for a in range(b, 7)]  # not the real ids: only bytes matter here
    files: dict[str, list[str]] = {}
    seq: dict[str, int] = {}
    for table, match, hand, dealt, ts in hands:
        out = files.setdefault(table, [])
        if match not in seq:
            seq[match] = 1
            out.append(f'{{"type":"match_start","match":"{match}","seq":0,"ts":"{ts}","v":1,"table":"{table}",'
                       f'"profile":"international","rules":{{}},"seats":[],"scheme":"deal-v1","anchor":"00"}}')  # fmt: skip
        k = seq[match]
        tiles = [[pair[t] for t in s] for s in dealt]
        out.append(f'{{"type":"deal","match":"{match}","seq":{k},"ts":"{ts}","hand":{hand},'
                   f'"client_seeds":["a","b","c","d"],"hands":{tiles},"stock":0,"leader":0}}'.replace("'", '"'))  # fmt: skip
        for p in range(24):
            out.append(f'{{"type":"play","match":"{match}","seq":{k + 1 + p},"ts":"{ts}","hand":{hand},'
                       f'"seat":{p % 4},"tile":"{tiles[p % 4][p // 4]}","end":"left"}}')  # fmt: skip
        out.append(f'{{"type":"hand_end","match":"{match}","seq":{k + 25},"ts":"{ts}","hand":{hand},'
                   f'"result":"domino","winner":0,"points":[10,0],"score":[10,0]}}')  # fmt: skip
        seq[match] = k + 26
    lines = 0
    for table, out in files.items():
        body = ("\n".join(out) + "\n").encode()
        sha = hashlib.sha256(body).hexdigest()
        (data / "logs" / f"{sha}.jsonl").write_bytes(body)
        conn.execute("INSERT INTO log_files (sha256, path, paths, size, read_at, lines, bad_lines, stored) "
                     "VALUES (?, ?, [?], ?, now(), ?, 0, ?)",
                     [sha, f"{table}.jsonl", f"{table}.jsonl", len(body), len(out), f"logs/{sha}.jsonl"])  # fmt: skip
        conn.execute("INSERT INTO match_files (match, sha256, lines) SELECT match, ?, 0 FROM matches WHERE table_id = ?", [sha, table])
        lines += len(out)
    store_digests(conn, sorted((data / "logs").glob("*.jsonl")))
    conn.execute("CHECKPOINT")
    conn.close()
    return lines


def store_digests(conn: duckdb.DuckDBPyConnection, files: list[Path]) -> None:
    """Each hand's digest of its lines, stored with it as the ingest stores it."""
    got = line_digests.of_files(files)
    conn.register("_digests", got)
    conn.execute("UPDATE hands h SET log_digest = d.digest, log_lines = d.lines FROM _digests d "
                 "WHERE h.match = d.match AND h.hand = d.hand")  # fmt: skip
    conn.execute("UPDATE matches m SET log_digest = d.digest, log_lines = d.lines FROM _digests d "
                 "WHERE m.match = d.match AND d.hand = 0")  # fmt: skip
    conn.unregister("_digests")


def bench_certificate(n: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-cert-") as tmp:
        db = Path(tmp) / "replay.duckdb"
        t0 = time.perf_counter()
        fill(db, n)
        lines = write_logs(db)
        keys.init_keys(db.parent)
        size = sum(p.stat().st_size for p in layout(db).logs.iterdir())
        print(f"filled a store with {n:,} deals and {lines:,} log lines ({size / 1e6:,.0f} MB) "
              f"in {time.perf_counter() - t0:.1f} s (not timed)")  # fmt: skip
        conn = open_store(db, read_only=True)
        scope = Scope(dt.date(2026, 1, 1), dt.date(2027, 12, 31))
        t0 = time.perf_counter()
        got = issue(conn, db.parent, scope, Path(tmp) / "cert")
        t_issue = time.perf_counter() - t0
        t0 = time.perf_counter()
        v = verify_folder(got.folder, desk_key=keys.load_public(db.parent), conn=conn, data_dir=db.parent)
        t_verify = time.perf_counter() - t0
        conn.close()
        print(f"certificate {got.id}: {got.content['verdict']['verdict']}, "
              f"{got.content['completeness']['leaves']:,} leaves; verified: {v.ok} {v.problems[:3]}")  # fmt: skip
        conn = open_store(db)
        # a load of 10,000 hands spread over the tables: each table last checked at its own
        # point of its cycle (0 .. STEP-1 deals before the load), so some are due, as in life
        conn.execute("DELETE FROM fairness_monitor")
        conn.execute(
            "INSERT INTO fairness_monitor SELECT m.table_id, count(*) - ? - hash(m.table_id) % ?, "
            "TIMESTAMPTZ '2000-01-01 00:00:00+00', 'PASS', NULL FROM hands h JOIN matches m USING (match) GROUP BY 1",
            [10_000 // TABLES, monitor.STEP],
        )
        t0 = time.perf_counter()
        raised = monitor.watch(conn)
        t_monitor = time.perf_counter() - t0
        checked = conn.execute("SELECT count(*) FROM fairness_monitor WHERE checked_at > TIMESTAMPTZ '2001-01-01'").fetchone()
        conn.close()
    print(f"monitor: {checked[0] if checked else 0} of {TABLES} tables due and checked, {raised} alerts")
    print(f"certificate_deals: {n:,} deals")
    print(f"certify_s: {t_issue:.1f} s")
    print(f"verify_from_store_s: {t_verify:.1f} s")
    print(f"monitor_after_10000_hands_s: {t_monitor:.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="1,000,000 deals")
    ap.add_argument("--deals", type=int, help="window size")
    ap.add_argument("--certificate", action="store_true", help="issue and verify a certificate")
    args = ap.parse_args()
    n = args.deals or (1_000_000 if args.full else 100_000)
    if args.certificate:
        bench_certificate(n)
        return
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
