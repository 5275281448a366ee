"""The `replay` command: validate, schema, simulate, ingest, export, serve, audit."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from replay.reader import UsageError

if TYPE_CHECKING:
    from replay.report import ValidationReport


def _cmd_validate(args: argparse.Namespace) -> int:
    from replay.validate import validate_paths, without_gc

    if args.cluster:
        from replay.ingest import validate_routed
        from replay.ingest.pool import ClusterError, connect
        from replay.reader import iter_paths

        list(iter_paths(args.paths))  # a missing path is a usage error before any cluster starts
        try:
            with connect(args.cluster) as pool, without_gc():
                report = validate_routed(args.paths, pool)
        except ClusterError as exc:
            sys.stderr.write(f"replay validate: {exc}\n")
            return 2
        return _report(report, args)
    with without_gc():  # the report is millions of acyclic objects: see without_gc
        return _report(validate_paths(args.paths), args)


def _report(report: ValidationReport, args: argparse.Namespace) -> int:
    if args.json:
        sys.stdout.write(json.dumps(report.to_json(), ensure_ascii=False) + "\n")
        return 0 if report.ok else 1
    out = sys.stdout
    for f in report.files:
        bad = f", {f.bad_lines:,} bad" if f.bad_lines else ""
        out.write(f"file {f.path}: {_n(f.lines, 'line')}{bad}\n")
    for fd in report.findings:
        out.write(f"  {fd.severity.upper():7} {fd.code} {fd.file}:{fd.line}: {fd.message}\n")
    for m in report.matches:
        played = sum(1 for h in m.hands if h.result in ("domino", "block"))
        outcome = m.result or "unfinished"
        if m.winner is not None:
            outcome += f" (side {m.winner})"
        out.write(
            f"{m.verdict.upper():10} {m.match}  {m.profile or '?'}  {played} hands  "
            f"score {list(m.score)}  {outcome}\n"
        )
        for fd in m.findings:
            where = f"{fd.file}:{fd.line}" if fd.file else f"{m.match}/hand {fd.hand}/seq {fd.seq}"
            out.write(f"  {fd.severity.upper():7} {fd.code} {where}: {fd.message}\n")
    out.write(summary_line(report) + "\n")
    return 0 if report.ok else 1


def summary_line(report: ValidationReport) -> str:
    """The last line of `replay validate`: what was found, and whether it is all valid
    (exactly when the exit code is 0), lines of no match included.

    >>> from replay.report import FileReport, Finding, ValidationReport
    >>> bad = Finding("MALFORMED_LINE", "line 1: not JSON", file="a.jsonl", line=1)
    >>> summary_line(ValidationReport((FileReport("a.jsonl", 1, 1),), (bad,)))
    '1 file, 1 line (1 bad); 0 matches; 1 error in lines of no match: NOT VALID'
    """
    files = report.files
    lines = sum(f.lines for f in files)
    bad = sum(f.bad_lines for f in files)
    n = len(report.matches)
    valid = sum(1 for m in report.matches if m.verdict == "valid")
    parts = [
        f"{_n(len(files), 'file')}, {_n(lines, 'line')}" + (f" ({bad:,} bad)" if bad else ""),
        f"{_n(n, 'match', 'matches')}" + (f", {valid:,} valid, {n - valid:,} not" if n else ""),
    ]
    errors = sum(1 for f in report.findings if f.severity == "error")
    warnings = len(report.findings) - errors
    loose = [_n(k, what) for k, what in ((errors, "error"), (warnings, "warning")) if k]
    if loose:
        parts.append(f"{', '.join(loose)} in lines of no match")
    return "; ".join(parts) + (": all valid" if report.ok else ": NOT VALID")


def _n(k: int, one: str, many: str | None = None) -> str:
    return f"{k:,} {one if k == 1 else many or one + 's'}"


def _cmd_schema(args: argparse.Namespace) -> int:
    from replay.events import schema

    sys.stdout.write(json.dumps(schema(), indent=2) + "\n")
    return 0


_CORE: tuple[str, ...] = ("validate", "schema")


def _version() -> str:
    """The installed package's version (pyproject.toml), else the source's."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("domino-replay")
    except PackageNotFoundError:  # run from a source tree that was never installed
        from replay import __version__

        return __version__


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; for `command` validate or schema, without the other commands
    (their modules import polars, scipy and DuckDB: 2 s before a small log)."""
    parser = argparse.ArgumentParser(
        prog="replay",
        description="The audit desk for online dominoes: validate table logs, verify deals, "
        "recompute scores, store them and serve replays and audits.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("validate", help="validate log files or folders")
    p.add_argument("paths", nargs="+", metavar="PATH", help=".jsonl / .jsonl.gz files or folders")
    p.add_argument("--json", action="store_true", help="print the JSON report of the spec")
    p.add_argument("--cluster", metavar="ADDRESS", default=None,
                   help="validate on a dask.distributed cluster: tcp://host:8786, or local[:N] "
                   "(docs/scale.md)")  # fmt: skip
    p.set_defaults(func=_cmd_validate)
    p = sub.add_parser("schema", help="print the JSON Schema of a log line")
    p.set_defaults(func=_cmd_schema)
    if command not in _CORE:
        _optional(sub)
    return parser


def _optional(sub: argparse._SubParsersAction) -> None:
    """Commands that live in their own modules."""
    import importlib

    hooks = (
        ("replay.simulate", "add_simulate_parser"),
        ("replay.ingest.cli", "add_ingest_parsers"),
        ("replay.analyze", "add_analyze_parser"),
        ("replay.export", "add_export_parser"),
        ("api.serve", "add_serve_parser"),
        ("reports.audit", "add_audit_parser"),
        ("reports.cheats", "add_insights_parser"),
    )
    for name, hook in hooks:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # not built yet; any other missing module is a real error
                continue
            raise
        getattr(module, hook)(sub)


def _wire() -> None:
    """The composition root of the commands that write the store: the reports
    keep their tables after its commits, and it validates matches again
    through the ingest (which hands it its revalidator on import)."""
    # here, not at the top: `validate` and `schema` load neither DuckDB nor polars
    import replay.ingest  # noqa: F401, PLC0415
    from reports import derived  # noqa: PLC0415

    derived.subscribe()


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words[0] if words else None)
    args = parser.parse_args(words)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    if args.command not in _CORE:
        _wire()
    try:
        return int(args.func(args))
    except UsageError as exc:
        sys.stderr.write(f"replay: {exc}\n")
        return 2
    except BrokenPipeError:
        return 0


def run() -> None:
    """The console script: main(), then exit without freeing the heap.

    A large report is a gigabyte of small objects; freeing them one by one
    at exit took longer than writing the report. Everything is flushed first.
    """
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # the reader went away (| head): nothing more to say
        pass
    os._exit(code)


if __name__ == "__main__":
    run()
