"""Validate N simulated `international` hands end to end, stage by stage.

Usage: python bench/validate.py [--hands N] [--full]

Stages, each timed on the same file in one run:
  read     LogReader: lines -> typed events (orjson-free pydantic path)
  group    lines grouped by match
  deal     deal-v1 derivation of every hand (HMAC_DRBG + shuffle)
  replay   validate_grouped: seeds, deals, every move, claims
  total    validate_paths end to end (what `replay validate` does)
and, beside them, DuckDB's own read_json over the same file.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import duckdb

from replay.deal import derive_deal
from replay.reader import EventLine, LogReader
from replay.simulate import SimConfig, simulate, write_lines
from replay.validate import group_records, validate_grouped, validate_paths, without_gc


def make_log(hands: int, path: Path) -> None:
    if path.exists():
        return
    cfg = SimConfig(profiles=("international",), hands=hands, seed=11, tables=8)
    tmp = path.with_suffix(".tmp")
    write_lines(simulate(cfg), tmp)
    tmp.rename(path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=20_000)
    ap.add_argument("--full", action="store_true", help="100,000 hands")
    args = ap.parse_args(argv)
    hands = 100_000 if args.full else args.hands
    path = Path(f"/tmp/bench-validate-{hands}.jsonl")
    make_log(hands, path)
    size = path.stat().st_size

    with without_gc():
        return _run(path, size)


def _run(path: Path, size: int) -> int:
    t0 = time.perf_counter()
    records = list(LogReader(path).records())
    t_read = time.perf_counter() - t0

    t0 = time.perf_counter()
    by_match, _ = group_records(records)
    t_group = time.perf_counter() - t0

    deals = []
    starts = {}
    reveals = {}
    for rec in records:
        if isinstance(rec, EventLine):
            e = rec.event
            if e.type == "match_start":
                starts[e.match] = e
            elif e.type == "deal":
                deals.append(e)
            elif e.type == "reveal":
                reveals[(e.match, e.hand)] = bytes.fromhex(e.server_seed)
    t0 = time.perf_counter()
    for d in deals:
        st = starts[d.match]
        derive_deal(reveals[(d.match, d.hand)], table=st.table, match=d.match, hand=d.hand,
                    players=4, client_seeds=d.client_seeds, beacon=st.beacon)  # fmt: skip
    t_deal = time.perf_counter() - t0

    t0 = time.perf_counter()
    reports = validate_grouped(by_match)
    t_replay = time.perf_counter() - t0
    n_hands = sum(len(r.hands) for r in reports)
    bad = sum(r.verdict != "valid" for r in reports)
    del records, by_match, reports

    t0 = time.perf_counter()
    rep = validate_paths([path])
    t_total = time.perf_counter() - t0
    assert rep.ok, "the simulated log must validate clean"

    con = duckdb.connect()
    t0 = time.perf_counter()
    # materialise every column: a bare count(*) lets DuckDB skip the parsing
    con.execute(
        "CREATE TEMP TABLE parsed AS SELECT * FROM read_json(?, format='newline_delimited', "
        "union_by_name=true, maximum_object_size=1048576)",
        [str(path)],
    )
    t_duck = time.perf_counter() - t0

    lines = sum(f.lines for f in rep.files)
    print(f"file: {path} ({size / 1e6:.1f} MB, {lines} lines, {n_hands} hands, {bad} invalid)")
    for name, t in [("read+parse", t_read), ("group", t_group), ("deal derivation", t_deal),
                    ("replay (incl. deals)", t_replay), ("end to end", t_total),
                    ("duckdb read_json", t_duck)]:  # fmt: skip
        print(f"  {name:22} {t:7.2f} s  {n_hands / t:10,.0f} hands/s  {1e6 * t / n_hands:7.1f} us/hand")
    print(f"validate_vs_duckdb_read_json: {t_total / t_duck:.1f} x")
    print(f"read_us_per_hand: {1e6 * t_read / n_hands:.1f} us")
    print(f"deal_us_per_hand: {1e6 * t_deal / n_hands:.1f} us")
    print(f"replay_us_per_hand: {1e6 * (t_replay - t_deal) / n_hands:.1f} us")
    print(f"validate_hands_per_s: {n_hands / t_total:.0f} hands/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
