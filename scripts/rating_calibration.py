"""How well do ratings forecast matches? The figures of docs/insights.md.

Simulates (once, cached under /tmp/replay-calibration/) 4 runs of 3,000
matches of four profiles (international pairs, 2-player Domenà, 3-player
doubles in the boneyard, 4-player Royal Rumble), 120 players whose bot
style (random, heavy, partner: replay.bots) is fixed by their number, and
ingests them; or takes a store (`--db`). Then it rates the matches with
each openskill model and several betas (the performance spread) and prints,
as Markdown, the log-loss of the forecasts of the first 80% of each
profile's matches (what a beta is chosen on) and of the held-out last 20%
(reports.ratings.calibration), against every side alike and the seats'
base rates; then the held-out figures by group and the reliability table
of the store's own model (reports.ratings.default_model).

Run: python scripts/rating_calibration.py [--db FILE] [--holdout 0.2]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CACHE = Path("/tmp/replay-calibration")
PROFILES = ("international", "domena_2p", "doubles_in_boneyard", "royal_rumble")
SEEDS = (1, 2, 3, 4)
MATCHES = 3000
BETAS = (25 / 6, 8.0, 16.0, 24.0, 32.0)


def _simulate(args: tuple[int, str]) -> str:
    from replay.simulate import SimConfig, simulate, write_lines

    seed, out = args
    cfg = SimConfig(profiles=PROFILES, matches=MATCHES, seed=seed, tables=8, players_pool=120)
    write_lines(simulate(cfg), out)
    return out


def dataset() -> Path:
    """The simulated store (made the first time, in two processes)."""
    db = CACHE / "data" / "replay.duckdb"
    if (CACHE / ".complete").exists():
        return db
    from replay.ingest import ingest
    from reports import derived

    derived.subscribe()  # the ratings, reports and insights follow the loads, as `replay ingest`

    shutil.rmtree(CACHE, ignore_errors=True)
    CACHE.mkdir(parents=True)
    logs = Path(tempfile.mkdtemp(dir=CACHE, prefix="logs-"))
    t0 = time.perf_counter()
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(_simulate, [(s, str(logs / f"sim-{s}.jsonl")) for s in SEEDS]))
    ingest([str(logs)], db=db)
    (CACHE / ".complete").write_text("done")
    print(f"simulated and stored in {time.perf_counter() - t0:.0f} s -> {db}", file=sys.stderr)
    return db


def contests(db: Path) -> list[Any]:
    """Every rated match of the store as a contest, in rating order."""
    from replay.store import open_store
    from reports.ratings import contests as read

    conn = open_store(db, read_only=True)
    try:
        todo = conn.sql(
            "SELECT CAST(row_number() OVER (ORDER BY coalesce(ended, started), match) AS INTEGER) AS pos, "
            "match, mno FROM matches WHERE verdict = 'valid' AND result IN ('win', 'tie') "
            "AND coalesce(ended, started) IS NOT NULL ORDER BY pos"
        ).to_arrow_table()
        conn.execute("BEGIN")  # (its temporary tables go with the rollback)
        got = [(x.pos, c) for x, c in read(conn, todo) if c is not None]
        conn.execute("ROLLBACK")
        return got
    finally:
        conn.close()


def rate(cs: list[Any], model: Any, holdout: float) -> dict[str, Any]:
    from reports.ratings import ALL, Ratings, calibration

    r = Ratings(model=model)
    rows = []
    for pos, c in cs:
        p = r.play(c, pos)
        rows.append((pos, c.profile, c.places, p[ALL], p[c.profile]))
    return calibration(rows, holdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", type=Path, help="a store to use instead of the simulated one")
    ap.add_argument("--holdout", type=float, default=0.2)
    args = ap.parse_args()
    from openskill.models import BradleyTerryFull, PlackettLuce, ThurstoneMostellerFull

    from reports.ratings import BETA, default_model

    db = args.db or dataset()
    cs = contests(db)
    print(f"{len(cs):,} rated matches from {db}; held out: the last {args.holdout:.0%} of each profile's\n")
    print("| model | beta | first 80%: log-loss | held out: log-loss | Brier | 2 sides | 3 sides | 4 sides |")
    print("|---|---|---|---|---|---|---|---|")
    base: dict[str, Any] = {}
    for name, cls in (("Plackett-Luce", PlackettLuce), ("Bradley-Terry (full)", BradleyTerryFull),
                      ("Thurstone-Mosteller (full)", ThurstoneMostellerFull)):
        for beta in BETAS:
            cal = rate(cs, cls(beta=beta), args.holdout)
            g = cal["groups"]
            base = g
            mark = " **(ours)**" if cls is PlackettLuce and beta == BETA else ""
            print(f"| {name}{mark} | {beta:.3g} | {cal['train']['ratings_log_loss']:.4f} | "
                  f"{g['all']['ratings_log_loss']:.4f} | {g['all']['ratings_brier']:.4f} | "
                  + " | ".join(f"{g[k]['ratings_log_loss']:.4f}" if k in g else "–"
                               for k in ("2 sides", "3 sides", "4 sides")) + " |")
    for key, label in (("uniform", "every side alike (1/n)"), ("base_rate", "the seats' base rates")):
        print(f"| {label} | | | {base['all'][f'{key}_log_loss']:.4f} | {base['all'][f'{key}_brier']:.4f} | "
              + " | ".join(f"{base[k][f'{key}_log_loss']:.4f}" if k in base else "–"
                           for k in ("2 sides", "3 sides", "4 sides")) + " |")
    ours = rate(cs, default_model(), args.holdout)
    print("\nHeld out, the store's model, by group (log-loss; Brier):\n")
    print("| group | matches | ratings, pool * | ratings, profile pool | 1/n | base rate |")
    print("|---|---|---|---|---|---|")
    for g, v in ours["groups"].items():
        print(f"| {g} | {v['matches']} | {v['ratings_log_loss']:.4f}; {v['ratings_brier']:.4f} | "
              f"{v['ratings_profile_log_loss']:.4f}; {v['ratings_profile_brier']:.4f} | "
              f"{v['uniform_log_loss']:.4f}; {v['uniform_brier']:.4f} | "
              f"{v['base_rate_log_loss']:.4f}; {v['base_rate_brier']:.4f} |")
    print("\nReliability, two-sided matches (the chance forecast for side 0, and how often it won):\n")
    print("| forecast | matches | mean forecast | won |")
    print("|---|---|---|---|")
    for b in ours["reliability"]:
        print(f"| {b['bin']} | {b['matches']} | {b['predicted']:.3f} | {b['observed']:.3f} |")


if __name__ == "__main__":
    main()
