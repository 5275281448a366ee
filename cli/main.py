"""The `replay` command: validate, schema, simulate, ingest, export, serve, audit, insights, model.

This is the composition root: it alone imports `replay`, `reports` and
`api` together, and it wires the store's after-commit subscribers before a
command that may write the store runs (`_wire`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from cli import validate
from cli.errors import CommandError
from replay import __version__
from replay.reader import UsageError

#: The commands built alone, without importing the other commands' modules:
#: those load DuckDB, polars, scipy, `api` and `reports` (2 s before a small
#: log), and `replay validate` must start light.
_CORE: tuple[str, ...] = ("validate", "schema")


def _version() -> str:
    """The installed package's version (pyproject.toml), else the source's."""
    try:
        return version("domino-replay")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return __version__


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; for `command` validate or schema, without the other commands
    (see `_CORE`)."""
    parser = argparse.ArgumentParser(
        prog="replay",
        description="The audit desk for online dominoes: validate table logs, verify deals, "
        "recompute scores, store them and serve replays and audits.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    validate.add_validate_parsers(sub)
    if command not in _CORE:
        _add_heavy(sub)
    return parser


def _add_heavy(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The commands over the store, the simulator and the server."""
    # here, not at the top: `replay validate` loads neither DuckDB nor polars (_CORE)
    from cli import (  # noqa: PLC0415
        analyze,
        audit,
        certify,
        export,
        ingest,
        insights,
        keys,
        model,
        serve,
        simulate,
        train_key,
    )

    simulate.add_simulate_parser(sub)
    ingest.add_ingest_parsers(sub)
    analyze.add_analyze_parser(sub)
    export.add_export_parser(sub)
    serve.add_serve_parser(sub)
    audit.add_audit_parser(sub)
    insights.add_insights_parser(sub)
    certify.add_certify_parsers(sub)
    keys.add_keys_parser(sub)
    model.add_model_parser(sub)
    train_key.add_train_key_parser(sub)


def _wire() -> None:
    """The composition root of the commands that write the store: the reports
    keep their tables after its commits, and it validates matches again
    through the ingest (which hands it its revalidator on import)."""
    # here, not at the top: `validate` and `schema` load neither DuckDB nor polars (_CORE)
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
    except CommandError as exc:
        sys.stderr.write(f"replay {args.command}: {exc}\n")
        return exc.code
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
