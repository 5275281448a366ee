"""What the commands over the store share: the store opened for a command,
a result printed as JSON or text."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from os import PathLike
from typing import Any

import duckdb

from cli.errors import CommandError
from replay.store import StoreLocked, open_store


@contextmanager
def opened_store(
    db: str | PathLike[str], *, read_only: bool, locked: str, unreadable: str | None = None,
    errors: tuple[type[BaseException], ...] = (duckdb.Error, RuntimeError), code: int = 2,
) -> Iterator[duckdb.DuckDBPyConnection]:
    """The store at `db`, closed after the block. A store held by another
    process is `CommandError(locked)`; with `unreadable`, one of `errors`
    is `CommandError(unreadable: the error)`. `{db}` and `{exc}` in the
    messages are filled in."""
    try:
        conn = open_store(db, read_only=read_only)
    except StoreLocked as exc:
        raise CommandError(locked.format(db=db, exc=exc), code) from exc
    except errors as exc:
        if unreadable is None:
            raise
        raise CommandError(f"{unreadable.format(db=db)}: {exc}", code) from exc
    try:
        yield conn
    finally:
        conn.close()


def emit(
    as_json: bool, data: Callable[[], Any], text: Callable[[], str], *,
    default: Callable[[Any], Any] | None = None,
) -> None:
    """Print `data()` as one line of JSON, or `text()` (only the one asked is made)."""
    if as_json:
        sys.stdout.write(json.dumps(data(), ensure_ascii=False, default=default) + "\n")
    else:
        sys.stdout.write(text())
