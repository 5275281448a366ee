"""Validate N simulated `international` hands end to end, stage by stage.

Usage: python bench/validate.py [--hands N] [--full]

Each measured on the same file in one run (one process):
  read        the file's bytes, in the buffers the scanner takes
  scan        replay._native.scan over them, and the other lines parsed
              in Python (scan_paths)
  deal        deal-v1 derivation of every hand in C (HMAC_DRBG + shuffle)
  validate    validate_sources: every match hand by hand (seed chain,
              deals, moves, scores, claims) or line by line if it must
  end to end  validate_paths (what `replay validate` does)
  command     `replay validate --json` in a fresh process, interpreter start,
              imports and writing the JSON report included
  pure        validate_paths without the C accelerator (REPLAY_PURE's path:
              pydantic per line, the engine per move), for the ratio
and, beside them, DuckDB's own read_json over the same file.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import duckdb

# This checkout's replay, whatever an editable install elsewhere points to.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from replay.accel import native  # noqa: E402
from replay.canonical_reader import BUFFER_BYTES, DEAL, OTHER, REVEAL, scan_paths  # noqa: E402
from replay.deal import DEAL_LABEL, enc_int, enc_str  # noqa: E402
from replay.reader import read_chunks, whole_lines  # noqa: E402
from replay.simulate import SimConfig, simulate, write_lines  # noqa: E402
from replay.validate import run as validate_mod  # noqa: E402
from replay.validate import validate_paths, validate_sources, without_gc  # noqa: E402


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
    if native is None:
        print("replay._native is not built: pip install -e . compiles it", file=sys.stderr)
        return 2
    hands = 100_000 if args.full else args.hands
    path = Path(f"/tmp/bench-validate-{hands}.jsonl")
    make_log(hands, path)
    size = path.stat().st_size
    with without_gc():
        return _run(path, size)


def _deals(path: Path) -> float:
    """Seconds to derive every deal of the file in C, as validate.fast_path does."""
    _, sources, _ = scan_paths([path])
    jobs = []
    for srcs in sources.values():
        src = srcs[0]
        start = next(rec.event for _, rec in src.others if rec.event.type == "match_start")  # type: ignore[union-attr]
        nonce = enc_str(start.table) + enc_str(start.match)
        pers = enc_str(DEAL_LABEL) + enc_str(start.beacon or "") + enc_int(4)
        seeds = {e[5]: bytes.fromhex(e[6]) for seg in src.segments for e in seg.events if e[0] == REVEAL}
        jobs += [(seeds[e[5]], nonce, e[5], pers, e[6]) for seg in src.segments for e in seg.events
                 if e[0] == DEAL]  # fmt: skip
    ids = bytes(range(28))
    deal = native.deal  # type: ignore[union-attr]
    t0 = time.perf_counter()
    for seed, nonce, hand, pers, client in jobs:
        deal(seed, nonce, hand, pers, client, ids, 4)
    return time.perf_counter() - t0


def _run(path: Path, size: int) -> int:
    t0 = time.perf_counter()
    for _ in whole_lines(read_chunks(path), BUFFER_BYTES):
        pass
    t_read = time.perf_counter() - t0

    t0 = time.perf_counter()
    files, sources, _ = scan_paths([path])
    t_scan = time.perf_counter() - t0
    others = sum(1 for srcs in sources.values() for s in srcs for e in s.segments[0].events if e[0] == OTHER)

    t0 = time.perf_counter()
    reports = validate_sources(sources)
    t_validate = time.perf_counter() - t0
    n_hands = sum(len(r.hands) for r in reports)
    del sources, reports

    t_deal = _deals(path)

    t0 = time.perf_counter()
    rep = validate_paths([path])
    t_total = time.perf_counter() - t0
    assert rep.ok, "the simulated log must validate clean"
    del rep

    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "replay", "validate", str(path), "--json"],
                          stdout=subprocess.DEVNULL, check=False)  # fmt: skip
    t_command = time.perf_counter() - t0
    assert done.returncode == 0, "the simulated log must validate clean"

    saved = validate_mod.native
    validate_mod.native = None  # the pure-Python path, in the same process
    try:
        t0 = time.perf_counter()
        pure = validate_paths([path])
        t_pure = time.perf_counter() - t0
    finally:
        validate_mod.native = saved
    assert pure.ok
    del pure

    con = duckdb.connect()
    t0 = time.perf_counter()
    # materialise every column: a bare count(*) lets DuckDB skip the parsing
    con.execute(
        "CREATE TEMP TABLE parsed AS SELECT * FROM read_json(?, format='newline_delimited', "
        "union_by_name=true, maximum_object_size=1048576)",
        [str(path)],
    )
    t_duck = time.perf_counter() - t0

    lines = files[0].lines
    print(f"file: {path} ({size / 1e6:.1f} MB, {lines} lines, {n_hands} hands; {others} lines read in Python)")
    for name, t in [("read", t_read), ("scan (C + others)", t_scan), ("deal derivation (C)", t_deal),
                    ("validate (incl. deals)", t_validate), ("end to end", t_total),
                    ("command (fresh process)", t_command), ("pure-Python path", t_pure), ("duckdb read_json", t_duck)]:  # fmt: skip
        print(f"  {name:24} {t:7.2f} s  {n_hands / t:10,.0f} hands/s  {1e6 * t / n_hands:7.1f} us/hand")
    print(f"validate_vs_duckdb_read_json: {t_total / t_duck:.1f} x")
    print(f"speedup_over_pure_python: {t_pure / t_total:.1f} x")
    print(f"read_us_per_hand: {1e6 * t_read / n_hands:.1f} us")
    print(f"scan_us_per_hand: {1e6 * t_scan / n_hands:.1f} us")
    print(f"deal_us_per_hand: {1e6 * t_deal / n_hands:.1f} us")
    print(f"replay_us_per_hand: {1e6 * (t_validate - t_deal) / n_hands:.1f} us")
    print(f"validate_hands_per_s: {n_hands / t_total:.0f} hands/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
