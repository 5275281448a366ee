"""The command line of `replay ingest` and `replay reingest`."""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from cli.words import count
from replay.accel import native
from replay.analysis.run import analyze_store
from replay.ingest.batch_id import CodeMismatch
from replay.ingest.load import IngestSummary
from replay.ingest.pool import ClusterError
from replay.ingest.route import CHUNK_HANDS
from replay.ingest.run import AUTO_BUDGET, AUTO_SAMPLES, INGEST_SAMPLES, ingest, reingest
from replay.reader import UsageError
from replay.store import StoreLocked

__all__ = ["add_ingest_parsers", "run_ingest", "run_reingest"]


def add_ingest_parsers(subparsers: Any) -> None:
    """Add `ingest` and `reingest` to an argparse subparsers object."""

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--db", default=None,
                       help="database file (default $REPLAY_DB or ./data/replay.duckdb)")  # fmt: skip
        p.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1),
                       help="validating processes (default 2; 0: in this process)")  # fmt: skip
        p.add_argument("--chunk-hands", type=int, default=CHUNK_HANDS, help=argparse.SUPPRESS)
        p.add_argument("--cluster", metavar="ADDRESS", default=None,
                       help="validate on a dask.distributed cluster: a scheduler address "
                       "(tcp://host:8786), or local[:N] for N worker processes here "
                       "(docs/scale.md)")  # fmt: skip
        p.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
        p.add_argument("--no-analysis", action="store_true",
                       help="do not analyse the hands (replay analyze --db can do it later)")  # fmt: skip
        p.add_argument("--analysis-samples", type=int, default=None, metavar="N",
                       help=f"sampled deals per decision of the analysis, made while validating (0: "
                       f"perfect information only). Default: perfect information while validating, "
                       f"then {AUTO_SAMPLES} sampled deals a decision if the store lacks at most "
                       f"{AUTO_BUDGET:.0f} CPU-seconds of them; more are left to the server's background "
                       "grading, or to replay analyze --db")  # fmt: skip
        p.add_argument("--seed", type=int, default=0, help="the analysis's sampling seed (default 0)")
        p.add_argument("--analyze-anyway", action="store_true", help=argparse.SUPPRESS)  # without the C solver

    p = subparsers.add_parser(
        "ingest",
        help="validate log files and store them in the database",
        description="Validate table logs and store everything (logs kept by sha256, matches, "
        "hands, moves, findings) in DuckDB. Ingesting a file twice changes nothing.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help=".jsonl / .jsonl.gz files or folders")
    common(p)
    p.set_defaults(func=run_ingest)
    p = subparsers.add_parser(
        "reingest",
        help="validate the kept logs again and rebuild the stored results",
        description="Validate every kept log file again (e.g. after a rules fix) and replace "
        "the stored matches, hands, moves and findings.",
    )
    common(p)
    p.set_defaults(func=run_reingest)


def _analysis_arg(args: argparse.Namespace) -> tuple[int, int] | None:
    if args.no_analysis:
        return None
    if args.analysis_samples is not None and not 0 <= args.analysis_samples <= 10000:
        raise UsageError("--analysis-samples must be 0..10000")
    if native is None and not args.analyze_anyway:
        # the pure-Python solver takes seconds a hand (the C one 20 ms)
        sys.stderr.write("replay: the C solver is not compiled here (or REPLAY_PURE is set): the hands are "
                         "not analysed (replay analyze --db does it, slowly; --analyze-anyway here)\n")  # fmt: skip
        return None
    return (INGEST_SAMPLES if args.analysis_samples is None else args.analysis_samples), args.seed


def _report(summary: IngestSummary, quiet: bool) -> None:
    if not quiet:
        for line in summary.lines_out():
            sys.stderr.write(line + "\n")


def _sampled_grade(args: argparse.Namespace, summary: IngestSummary) -> None:
    """Without --analysis-samples: the sampled grade of what the store lacks,
    here and now if predicted to cost at most AUTO_BUDGET CPU-seconds
    (replay.ingest.run), so that a small ingest's accuracy never waits for
    the server's background grading."""
    if args.analysis_samples is not None or args.no_analysis or native is None:
        return  # (the budget is the C solver's time: the pure one takes a hundred times as long)
    t0 = time.monotonic()
    s: dict[str, Any] = {"deferred": "held"}  # left in the spool: a server holds the store
    if summary.loaded:
        s = analyze_store(summary.db, samples=AUTO_SAMPLES, seed=args.seed, workers=args.workers,
                          progress_out=None if args.quiet else sys.stderr, budget=AUTO_BUDGET)  # fmt: skip
    if args.quiet:
        return
    deferred = s["deferred"]
    if deferred == "held":
        line = "the server that holds the store grades the new hands in the background"
    elif deferred:
        secs = deferred["seconds"]
        cost = f"{secs:,.0f} CPU-seconds" if secs < 120 else f"{secs / 60:,.0f} CPU-minutes"
        line = (f"{count(deferred['hands'], 'hand')} lack it, about {cost} (over the {AUTO_BUDGET:.0f} graded "
                f"here): the server grades them in the background (replay serve), or replay analyze --db "
                f"--samples {AUTO_SAMPLES}")  # fmt: skip
    elif s["analysed"]:
        line = f"{count(s['analysed'], 'hand')} graded in {time.monotonic() - t0:.1f} s"
    else:
        line = "nothing lacks it"
    sys.stderr.write(f"sampled grade ({AUTO_SAMPLES} deals a decision): {line}\n")


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments `ingest` and `reingest` share, from the command line."""
    return {"db": args.db, "workers": args.workers, "chunk_hands": args.chunk_hands,
            "progress_out": None if args.quiet else sys.stderr, "cluster": args.cluster,
            "analysis": _analysis_arg(args)}  # fmt: skip


def run_ingest(args: argparse.Namespace) -> int:
    """`replay ingest`: 0 when everything read is stored (or spooled), whatever
    the verdicts; 1 when a file is no table log at all (the rest is stored),
    or a batch waiting in the spool was refused (damaged, or for another
    store: its files are not stored, and ingesting them again stores them);
    2 for a path that does not exist or a folder with no log (UsageError), or
    a cluster that cannot be used."""
    try:
        summary = ingest(args.paths, **_options(args))
    except (ClusterError, CodeMismatch) as exc:
        sys.stderr.write(f"replay ingest: {exc}\n")
        return 2
    _report(summary, args.quiet)
    _sampled_grade(args, summary)
    if args.quiet:  # errors are said even when quiet
        for what in (*summary.not_logs, *summary.refused):
            sys.stderr.write(f"error: {what}\n")
    return 1 if summary.not_logs or summary.refused else 0


def run_reingest(args: argparse.Namespace) -> int:
    """`replay reingest`: 0 when done, 1 if the database is held by another
    process, 2 for a cluster that cannot be used."""
    try:
        summary = reingest(**_options(args))
    except (ClusterError, CodeMismatch) as exc:
        sys.stderr.write(f"replay reingest: {exc}\n")
        return 2
    except StoreLocked as exc:
        sys.stderr.write(f"replay reingest: the database is in use (stop the server first): {exc}\n")
        return 1
    _report(summary, args.quiet)
    _sampled_grade(args, summary)
    if args.quiet:
        for what in summary.refused:
            sys.stderr.write(f"error: {what}\n")
    return 1 if summary.refused else 0

