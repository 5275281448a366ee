"""Ratings refresh speed (reports.ratings.refresh_ratings) on a simulated store.

Generates and ingests (once, cached under /tmp/replay-bench/) matches of
four profiles (international pairs, 2-player Domenà, 3-player doubles in
the boneyard, 4-player Royal Rumble: every kind of side), then times, on a
copy of the store:

- a full rating from nothing (every match: what a reingest or an early
  match replaced costs at worst);
- the usual refresh after a load: the last 10% of the matches new;
- a match in the middle replaced: half the matches rated again, from the
  history before it;
- a refresh with nothing new (each load pays it).

Run: python bench/ratings.py           (~2,000 matches, ~28,000 hands, under a minute)
     python bench/ratings.py --full    (72,000 matches, ~1,000,000 hands)
Headline figures last, one per line: ``name: value unit``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

CACHE = Path("/tmp/replay-bench")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PROFILES = ("international", "domena_2p", "doubles_in_boneyard", "royal_rumble")


def _simulate(args: tuple[int, int, str]) -> None:
    from replay.simulate import SimConfig, simulate, write_lines

    matches, seed, out = args
    cfg = SimConfig(profiles=PROFILES, matches=matches, seed=seed, tables=16, players_pool=400)
    write_lines(simulate(cfg), out)


def dataset(matches: int) -> Path:
    """The cached store of `matches` matches (two streams, made in parallel)."""
    folder = CACHE / f"ratings-{matches}"
    db = folder / "data" / "replay.duckdb"
    if (folder / ".complete").exists():
        return db
    from replay.ingest import ingest
    from reports import derived

    derived.subscribe()  # the ratings, reports and insights follow the loads, as `replay ingest`

    shutil.rmtree(folder, ignore_errors=True)
    (folder / "logs").mkdir(parents=True)
    t0 = time.perf_counter()
    half = matches // 2
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(_simulate, [(half, 1, str(folder / "logs" / "a.jsonl")),
                                  (matches - half, 2, str(folder / "logs" / "b.jsonl"))]))
    ingest([str(folder / "logs")], db=db)
    (folder / ".complete").write_text(str(matches))
    print(f"simulated and stored {matches:,} matches in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return db


def timed(work: Callable[[], int]) -> tuple[int, float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    n = work()
    return n, time.perf_counter() - t0, time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true", help="72,000 matches (about 1,000,000 hands)")
    ap.add_argument("--matches", type=int, default=None)
    args = ap.parse_args()
    matches = args.matches or (72_000 if args.full else 2_000)
    src = dataset(matches)
    from replay.store import open_store
    from reports.ratings import refresh_ratings

    with tempfile.TemporaryDirectory(prefix="replay-bench-ratings-") as tmp:
        db = Path(tmp) / "replay.duckdb"
        shutil.copy(src, db)
        conn = open_store(db)
        hands = conn.execute("SELECT count(*) FROM hands").fetchall()[0][0]

        def clear(from_pos: int = 1) -> None:
            for t in ("rating_matches", "rating_history"):
                conn.execute(f"DELETE FROM {t} WHERE pos >= ?", [from_pos])
            if from_pos == 1:
                conn.execute("DELETE FROM ratings")

        clear()
        n_full, full, full_cpu = timed(lambda: refresh_ratings(conn))
        rows = conn.execute("SELECT count(*) FROM rating_history").fetchall()[0][0]
        _, noop, _ = timed(lambda: refresh_ratings(conn))
        # the last 10% new: the ratings table as it stood before them
        keep = n_full - n_full // 10
        clear()
        conn.execute(f"CREATE TEMP TABLE _keep AS SELECT match FROM matches ORDER BY ended, match LIMIT {keep}")
        conn.execute("UPDATE matches SET verdict = 'held' WHERE match NOT IN (SELECT match FROM _keep)")
        refresh_ratings(conn)
        conn.execute("UPDATE matches SET verdict = 'valid' WHERE verdict = 'held'")
        n_tail, tail, tail_cpu = timed(lambda: refresh_ratings(conn))
        # a match in the middle changed: the second half rated again from the history
        clear(n_full // 2)
        n_mid, mid, _ = timed(lambda: refresh_ratings(conn))
        conn.close()
    per_match = full_cpu / max(n_full, 1)
    print(f"store: {n_full:,} rated matches, {hands:,} hands, {rows:,} history rows")
    print(f"ratings_full_seconds: {full:.2f} s")
    print(f"ratings_full_cpu_seconds: {full_cpu:.2f} s")
    print(f"ratings_matches_per_s: {n_full / full:.0f} matches/s")
    print(f"ratings_full_per_100k_matches_cpu: {per_match * 100_000:.1f} s")
    print(f"ratings_new_tenth_seconds: {tail:.2f} s ({n_tail:,} matches, {tail_cpu:.2f} CPU-s)")
    print(f"ratings_second_half_again_seconds: {mid:.2f} s ({n_mid:,} matches)")
    print(f"ratings_nothing_new_seconds: {noop * 1000:.0f} ms")


if __name__ == "__main__":
    main()
