"""`replay analyze`: the value of every move of logs (``PATH...``), or of
what a store holds (``--db``); see `replay.analysis.run`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from cli.common import emit
from cli.words import count
from replay.analysis import SAMPLES, Alternative, HandAnalysis
from replay.analysis.run import analyze_paths, analyze_store, to_json
from replay.ingest.pool import ClusterError, ClusterPool, connect
from replay.reader import UsageError

__all__ = ["add_analyze_parser", "format_text", "run_analyze"]


def add_analyze_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "analyze",
        help="the value of every move: exact, and on what the player could know",
        description="Analyse every valid hand of the logs (or, with --db, of the store): the exact "
        "value of every legal move under perfect play, its mean value over the deals the player "
        "could face, the points each played move lost, and each player's accuracy.",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help=".jsonl / .jsonl.gz files or folders")
    p.add_argument("--db", nargs="?", const="", default=None, metavar="FILE",
                   help="analyse the store instead (default $REPLAY_DB or ./data/replay.duckdb)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the JSON contract of docs/analysis.md")
    p.add_argument("--samples", type=int, default=SAMPLES, metavar="N",
                   help=f"sampled deals per decision (default {SAMPLES}; 0: perfect information only)")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="the sampling's seed (default 0)")
    p.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1),
                   help="analysing processes (default 2; 0: in this process)")  # fmt: skip
    p.add_argument("--cluster", metavar="ADDRESS", default=None,
                   help="analyse on a dask.distributed cluster: tcp://host:8786, or local[:N] "
                   "(docs/scale.md)")  # fmt: skip
    p.add_argument("--force", action="store_true", help="with --db: analyse every stored hand again")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run_analyze)


def run_analyze(args: argparse.Namespace) -> int:
    if not 0 <= args.samples <= 10000:
        raise UsageError("--samples must be 0..10000")
    if args.cluster:
        try:
            with connect(args.cluster) as pool:
                return _run_analyze(args, pool)
        except ClusterError as exc:
            sys.stderr.write(f"replay analyze: {exc}\n")
            return 2
    return _run_analyze(args, None)


def _run_analyze(args: argparse.Namespace, cluster: ClusterPool | None) -> int:
    progress = None if args.quiet else sys.stderr
    if args.db is not None:
        if args.paths:
            raise UsageError("give either PATHs or --db, not both")
        s = analyze_store(args.db or None, samples=args.samples, seed=args.seed, workers=args.workers,
                          force=args.force, progress_out=progress, cluster=cluster)  # fmt: skip
        where = "left in the spool for the server that holds the store" if s["pending"] else "stored"
        sys.stderr.write(f"{count(s['matches'], 'match', 'matches')}, {count(s['hands'], 'hand')}: {s['analysed']:,} analysed, "
                         f"{s['skipped']} not (cancelled, unfinished or invalid); {where}\n")  # fmt: skip
        if args.samples > 0:
            models = ", ".join(s["read_models"]) or "none (no stored play model beats uniform: replay model fit)"
            sys.stderr.write(f"read grade by play model: {models}\n")
        return 0
    if not args.paths:
        raise UsageError("give log files or folders, or --db")
    results = analyze_paths(args.paths, samples=args.samples, seed=args.seed, workers=args.workers,
                            progress_out=progress, cluster=cluster)  # fmt: skip
    if not any(hands for _, hands in results):
        sys.stderr.write("replay analyze: no hand found in the logs given\n")
        if args.json:
            sys.stdout.write(json.dumps(to_json(results, args.samples, args.seed)) + "\n")
        return 1
    emit(args.json, lambda: to_json(results, args.samples, args.seed), lambda: format_text(results))
    return 0


def _known_value(a: Alternative) -> float:
    """A move's value on what the mover could know: read, else pimc, else dd."""
    if a.read is not None:
        return a.read
    return a.pimc if a.pimc is not None else a.dd


def format_text(results: Sequence[tuple[str, Sequence[HandAnalysis]]]) -> str:
    """The text of `replay analyze`: a line a hand, one a graded move."""
    out: list[str] = []
    marks = {"inaccuracy": "?!", "mistake": "?", "blunder": "??"}
    for m, hands in results:
        done = [h for h in hands if h.skip is None]
        out.append(f"{m}: {len(done)} of {count(len(hands), 'hand')} analysed\n")
        for h in hands:
            if h.skip is not None:
                out.append(f"  hand {h.hand}: not analysed: {h.skip}\n")
                continue
            acc = " ".join("-" if a is None else f"{a:.0f}%" for a in h.accuracy)
            lead = h.leader
            out.append(f"  hand {h.hand}: par {h.par[lead]:+d} result {h.result[lead]:+d} (seat {lead}'s side)"
                       f"  accuracy by seat {acc}\n")  # fmt: skip
            for p in h.plies:
                if p.cls is not None:
                    best = max(p.alternatives, key=_known_value)
                    loss = p.known_loss if p.known_loss is not None else p.dd_loss
                    out.append(f"    ply {p.ply} seat {p.seat}: {p.played}{marks[p.cls]} {p.cls}, "
                               f"lost {loss:.1f} (best {best.move}; perfect information lost {p.dd_loss})\n")  # fmt: skip
                elif p.close:
                    out.append(f"    ply {p.ply} seat {p.seat}: {p.played} too close to call\n")
    return "".join(out)
