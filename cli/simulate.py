"""`replay simulate`: the command line of the simulator.

    replay simulate --profile P[,P2...] --matches N --seed S --out FILE
        [--rules JSON] [--players-pool N] [--bots random,heavy,partner]
        [--tables K] [--gz] [--hands N] [--defect CODE]
        [--cheater ID=STYLE ...] [--search-samples N]

Planted cheaters (`--cheater p-00003=omniscient`, or `peeker`) and the
honest searching bot (`--bots ...,sampler`) come from replay.searchbots; a
run has them only when asked.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from cli.words import count
from replay.bots import STYLES
from replay.rules import PROFILES, RulesError
from replay.simulate.config import SimConfig, SimStats
from replay.simulate.defects import defect_log
from replay.simulate.run import simulate
from replay.simulate.writer import write_lines


def add_simulate_parser(subparsers: Any) -> None:
    """Add `simulate` to an argparse subparsers object (sets `func=run_simulate`)."""
    p = subparsers.add_parser(
        "simulate",
        help="write simulated table logs (bot players, every profile)",
        description="Write whole matches of bot players as a table log (table-log.md v1).",
    )
    p.add_argument(
        "--profile",
        default="international",
        help="profile, or a comma list dealt to tables in turn",
    )
    p.add_argument("--matches", type=int, default=1, help="matches to play (default 1)")
    p.add_argument(
        "--hands", type=int, default=None, help="play matches until this many deals instead"
    )
    p.add_argument(
        "--seed", type=int, default=0, help="random seed; the output is a function of it"
    )
    p.add_argument("--out", default="-", help="output file ('-': standard output)")
    p.add_argument("--rules", default=None, help="option overrides as a JSON object")
    p.add_argument("--players-pool", type=int, default=40, help="players to seat (default 40)")
    p.add_argument(
        "--bots", default=",".join(STYLES), help=f"bot styles to mix (default {','.join(STYLES)})"
    )
    p.add_argument(
        "--tables", type=int, default=1, help="tables played at once, interleaved in time"
    )
    p.add_argument("--gz", action="store_true", help="gzip the output (also if --out ends in .gz)")
    p.add_argument(
        "--defect",
        default=None,
        metavar="CODE",
        help="write a tiny log with one planted error CODE (any finding code of the spec)",
    )
    p.add_argument(
        "--rematch-rate", type=float, default=0.3, help="chance a match is followed by its rematch"
    )
    p.add_argument(
        "--seat-change-rate", type=float, default=0.15, help="chance a player leaves a match"
    )
    p.add_argument(
        "--abandon-rate", type=float, default=0.0, help="chance per hand the match is abandoned"
    )
    p.add_argument(
        "--no-flip", action="store_true", help="always lay the opening tile high half left"
    )
    p.add_argument(
        "--cheater", action="append", default=[], metavar="ID=STYLE",
        help="plant a cheater: player ID (p-00001 ...) plays STYLE, omniscient (sees every hand) "
        "or peeker (sees its partner's hand); repeat for more",
    )
    p.add_argument(
        "--search-samples", type=int, default=16,
        help="deals a searching bot (sampler, peeker) scores per decision (default 16)",
    )
    p.set_defaults(func=run_simulate)


def config_from_args(args: argparse.Namespace) -> SimConfig:
    overrides = orjson.loads(args.rules) if args.rules else {}
    if not isinstance(overrides, dict):
        raise ValueError("--rules must be a JSON object")
    return SimConfig(
        profiles=tuple(p.strip() for p in args.profile.split(",") if p.strip()),
        overrides=overrides,
        matches=args.matches,
        hands=args.hands,
        seed=args.seed,
        players_pool=args.players_pool,
        bots=tuple(b.strip() for b in args.bots.split(",") if b.strip()),
        tables=args.tables,
        rematch_rate=args.rematch_rate,
        seat_change_rate=args.seat_change_rate,
        abandon_rate=args.abandon_rate,
        flip_openings=not args.no_flip,
        cheaters=tuple(_cheater(c) for c in args.cheater),
        search_samples=args.search_samples,
    )


def _cheater(text: str) -> tuple[str, str]:
    """``ID=STYLE`` of --cheater.

    >>> _cheater("p-00003=omniscient")
    ('p-00003', 'omniscient')
    """
    pid, sep, style = text.partition("=")
    if not sep or not pid.strip() or not style.strip():
        raise ValueError(f"--cheater {text!r}: give ID=STYLE, e.g. p-00003=omniscient")
    return pid.strip(), style.strip()


def run_simulate(args: argparse.Namespace) -> int:
    """`replay simulate`: 0 on success, 2 for bad arguments."""
    stats: SimStats | None = None
    try:
        if args.defect:
            lines: Iterable[bytes] = defect_log(args.defect, args.seed)
        else:
            stats = SimStats()
            lines = simulate(config_from_args(args), stats)
    except (ValueError, RulesError) as exc:  # JSONDecodeError is a ValueError
        hint = ""
        if isinstance(exc, RulesError) and exc.option is None and exc.value not in PROFILES:
            hint = f"; known profiles: {', '.join(sorted(PROFILES))}"
        print(f"replay simulate: {exc}{hint}", file=sys.stderr)
        return 2
    if args.out == "-":
        n = write_lines(lines, sys.stdout.buffer, gz=args.gz)
        sys.stdout.buffer.flush()
    else:
        n = write_lines(lines, args.out, gz=args.gz)
    what = (f"{count(stats.matches, 'match', 'matches')}, {count(stats.hands, 'hand')}" if stats
            else f"defect {args.defect}")
    print(f"replay simulate: {what}, {count(n, 'line')} -> {args.out}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m replay.simulate ...``: the same options as ``replay simulate``."""
    parser = argparse.ArgumentParser(prog="replay")
    sub = parser.add_subparsers(dest="command", required=True)
    add_simulate_parser(sub)
    args = parser.parse_args(["simulate", *(argv if argv is not None else sys.argv[1:])])
    return run_simulate(args)

