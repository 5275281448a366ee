"""`replay validate` and `replay schema`.

Light on purpose: `cli.main` builds these two commands alone, so that
`replay validate` starts without DuckDB, polars, `api` or `reports`
(their import took 2 s before a small log). The validator loads when a
validation runs; ``--cluster`` loads the ingest's routing and dask, when
asked.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from cli.words import count
from replay.events import schema
from replay.reader import iter_paths

if TYPE_CHECKING:
    from replay.findings import ValidationReport

__all__ = ["add_validate_parsers", "print_report", "run_schema", "run_validate", "summary_line"]


def add_validate_parsers(subparsers: Any) -> None:
    """Add `validate` and `schema` to an argparse subparsers object."""
    p = subparsers.add_parser("validate", help="validate log files or folders")
    p.add_argument("paths", nargs="+", metavar="PATH", help=".jsonl / .jsonl.gz files or folders")
    p.add_argument("--json", action="store_true", help="print the JSON report of the spec")
    p.add_argument("--cluster", metavar="ADDRESS", default=None,
                   help="validate on a dask.distributed cluster: tcp://host:8786, or local[:N] "
                   "(docs/scale.md)")  # fmt: skip
    p.set_defaults(func=run_validate)
    p = subparsers.add_parser("schema", help="print the JSON Schema of a log line")
    p.set_defaults(func=run_schema)


def run_validate(args: argparse.Namespace) -> int:
    # here, not at the top: `replay schema` and `--help` need no validator
    from replay.validate import validate_paths, without_gc  # noqa: PLC0415

    if args.cluster:
        # the ingest's routing (DuckDB) and dask: only for --cluster, so that
        # `replay validate` starts light
        from replay.ingest import validate_routed  # noqa: PLC0415
        from replay.ingest.pool import ClusterError, connect  # noqa: PLC0415

        list(iter_paths(args.paths))  # a missing path is a usage error before any cluster starts
        try:
            with connect(args.cluster) as pool, without_gc():
                report = validate_routed(args.paths, pool)
        except ClusterError as exc:
            sys.stderr.write(f"replay validate: {exc}\n")
            return 2
        return print_report(report, args.json)
    with without_gc():  # the report is millions of acyclic objects: see without_gc
        return print_report(validate_paths(args.paths), args.json)


def print_report(report: ValidationReport, as_json: bool) -> int:
    """Print the report (JSON, or a line a file, finding and match); the exit code."""
    if as_json:
        sys.stdout.write(json.dumps(report.to_json(), ensure_ascii=False) + "\n")
        return 0 if report.ok else 1
    out = sys.stdout
    for f in report.files:
        bad = f", {f.bad_lines:,} bad" if f.bad_lines else ""
        out.write(f"file {f.path}: {count(f.lines, 'line')}{bad}\n")
    for fd in report.findings:
        out.write(f"  {fd.severity.upper():7} {fd.code} {fd.file}:{fd.line}: {fd.message}\n")
    doubtful = _bad_lines(report)
    for m in report.matches:
        played = sum(1 for h in m.hands if h.result in ("domino", "block"))
        outcome = m.result or "unfinished"
        if m.winner is not None:
            outcome += f" (side {m.winner})"
        lost = sum(doubtful.get(f, 0) for f in m.files) if m.verdict == "valid" else 0
        # a bad line of its file may have been one of its own: not shown as VALID
        verdict = "UNSURE" if lost else m.verdict.upper()
        doubt = f"  (valid as read; its file has {count(lost, 'bad line')}, maybe its own)" if lost else ""
        out.write(
            f"{verdict:10} {m.match}  {m.profile or '?'}  {count(played, 'hand')}  "
            f"score {list(m.score)}  {outcome}{doubt}\n"
        )
        for fd in m.findings:
            where = f"{fd.file}:{fd.line}" if fd.file else f"{m.match}/hand {fd.hand}/seq {fd.seq}"
            out.write(f"  {fd.severity.upper():7} {fd.code} {where}: {fd.message}\n")
    out.write(summary_line(report) + "\n")
    return 0 if report.ok else 1


def summary_line(report: ValidationReport) -> str:
    """The last line of `replay validate`: what was found, and whether it is all valid
    (exactly when the exit code is 0), lines of no match included.

    >>> from replay.findings import FileReport, Finding, ValidationReport
    >>> bad = Finding("MALFORMED_LINE", "line 1: not JSON", file="a.jsonl", line=1)
    >>> summary_line(ValidationReport((FileReport("a.jsonl", 1, 1),), (bad,)))
    '1 file, 1 line (1 bad); 0 matches; 1 error in lines of no match: NOT VALID'
    """
    files = report.files
    lines = sum(f.lines for f in files)
    bad = sum(f.bad_lines for f in files)
    n = len(report.matches)
    doubtful = _bad_lines(report)
    unsure = sum(1 for m in report.matches if m.verdict == "valid" and any(f in doubtful for f in m.files))
    valid = sum(1 for m in report.matches if m.verdict == "valid") - unsure
    parts = [
        f"{count(len(files), 'file')}, {count(lines, 'line')}" + (f" ({bad:,} bad)" if bad else ""),
        f"{count(n, 'match', 'matches')}" + (f", {valid:,} valid" + (f", {unsure:,} unsure" if unsure else "")
                                           + f", {n - valid - unsure:,} not" if n else ""),
    ]
    errors = sum(1 for f in report.findings if f.severity == "error")
    warnings = len(report.findings) - errors
    loose = [count(k, what) for k, what in ((errors, "error"), (warnings, "warning")) if k]
    if loose:
        parts.append(f"{', '.join(loose)} in lines of no match")
    return "; ".join(parts) + (": all valid" if report.ok else ": NOT VALID")


def _bad_lines(report: ValidationReport) -> dict[str, int]:
    """Errors in lines of no match (a line that is not JSON, say), by file."""
    got: dict[str, int] = {}
    for f in report.findings:
        if f.severity == "error" and f.file:
            got[f.file] = got.get(f.file, 0) + 1
    return got


def run_schema(args: argparse.Namespace) -> int:
    sys.stdout.write(json.dumps(schema(), indent=2) + "\n")
    return 0
