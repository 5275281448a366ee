"""The `replay` command: validate, schema, simulate, ingest, serve, audit."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from replay.reader import UsageError


def _cmd_validate(args: argparse.Namespace) -> int:
    from replay.validate import validate_paths

    report = validate_paths(args.paths)
    if args.json:
        sys.stdout.write(json.dumps(report.to_json(), ensure_ascii=False) + "\n")
        return 0 if report.ok else 1
    out = sys.stdout
    for f in report.files:
        bad = f", {f.bad_lines} bad" if f.bad_lines else ""
        out.write(f"file {f.path}: {f.lines} lines{bad}\n")
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
    valid = sum(1 for m in report.matches if m.verdict == "valid")
    out.write(f"{len(report.matches)} matches, {valid} valid, {len(report.matches) - valid} not\n")
    return 0 if report.ok else 1


def _cmd_schema(args: argparse.Namespace) -> int:
    from replay.events import schema

    sys.stdout.write(json.dumps(schema(), indent=2) + "\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="replay",
        description="The audit desk for online dominoes: validate table logs, verify deals, "
        "recompute scores, store them and serve replays and audits.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("validate", help="validate log files or folders")
    p.add_argument("paths", nargs="+", metavar="PATH", help=".jsonl / .jsonl.gz files or folders")
    p.add_argument("--json", action="store_true", help="print the JSON report of the spec")
    p.set_defaults(func=_cmd_validate)
    p = sub.add_parser("schema", help="print the JSON Schema of a log line")
    p.set_defaults(func=_cmd_schema)
    _optional(sub)
    return parser


def _optional(sub: argparse._SubParsersAction) -> None:
    """Commands that live in their own modules."""
    import importlib

    hooks = (
        ("replay.simulate", "add_simulate_parser"),
        ("replay.ingest", "add_ingest_parsers"),
        ("api.serve", "add_serve_parser"),
        ("reports.audit", "add_audit_parser"),
    )
    for name, hook in hooks:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # not built yet; any other missing module is a real error
                continue
            raise
        getattr(module, hook)(sub)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except UsageError as exc:
        sys.stderr.write(f"replay: {exc}\n")
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
