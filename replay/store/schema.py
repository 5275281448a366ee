"""The store's file: where it lives, its versioned schema, and opening it.

Layout under the data directory (the folder of the database file)::

    replay.duckdb          the database (one writing process at a time)
    logs/<sha256>.jsonl    every log file read, kept as read (.jsonl.gz if gzip)
    spool/<batch>/         validated results waiting to be loaded: one Arrow
                           file per table and a manifest.json
    spool/.tmp/            batches being written (renamed into spool/ when whole)

Migrations are the files ``replay/sql/NNN_name.sql``, applied in order at
open and recorded in ``schema_version``.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Final

import duckdb
import pyarrow as pa

__all__ = [
    "after_migrating",
    "DEFAULT_DB",
    "Layout",
    "NUMBERED",
    "StoreLocked",
    "db_layout",
    "default_db_path",
    "layout",
    "match_ids",
    "migrate",
    "migrations",
    "one",
    "open_store",
    "registered",
    "schema_version",
    "transaction",
]


DEFAULT_DB: Final = Path("data") / "replay.duckdb"

_MIGRATION = re.compile(r"^(\d{3})_(\w+)\.sql$")


def default_db_path() -> Path:
    """``$REPLAY_DB`` if set, else ``./data/replay.duckdb``."""
    return Path(os.environ.get("REPLAY_DB") or DEFAULT_DB)


@dataclass(frozen=True, slots=True)
class Layout:
    """Where the store keeps things (all under the database's folder)."""

    db: Path
    data: Path
    logs: Path
    spool: Path

    @property
    def tmp(self) -> Path:
        return self.spool / ".tmp"

    def make(self) -> Layout:
        for d in (self.data, self.logs, self.spool, self.tmp):
            d.mkdir(parents=True, exist_ok=True)
        return self


def layout(db_path: str | os.PathLike[str]) -> Layout:
    db = Path(db_path)
    data = db.parent
    return Layout(db, data, data / "logs", data / "spool")


class StoreLocked(RuntimeError):
    """The database is open for writing in another process (the server)."""


# -- opening and migrations ---------------------------------------------------


def one(
    conn: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] | None = None
) -> tuple[Any, ...] | None:
    """The first row of a query, or None. (fetchone() would leave the result
    open, and DuckDB refuses the connection's next statement until it ends.)"""
    rows = conn.execute(sql, params).fetchall() if params is not None else conn.execute(sql).fetchall()
    return rows[0] if rows else None


def migrations() -> list[tuple[int, str, str]]:
    """(version, name, SQL) of every schema file, in order."""
    out = []
    for entry in resources.files("replay").joinpath("sql").iterdir():
        m = _MIGRATION.match(entry.name)
        if m:
            out.append((int(m[1]), m[2], entry.read_text(encoding="utf-8")))
    return sorted(out)


def schema_version(conn: duckdb.DuckDBPyConnection) -> int:
    """The highest migration applied (0 for an empty database)."""
    try:
        row = one(conn, "SELECT max(version) FROM schema_version")
    except duckdb.CatalogException:
        return 0
    return int(row[0]) if row and row[0] is not None else 0


def migrate(conn: duckdb.DuckDBPyConnection) -> list[int]:
    """Apply the missing migrations, each in its own transaction; their versions."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_version ("
        "version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL)"
    )
    have = {v for (v,) in conn.execute("SELECT version FROM schema_version").fetchall()}
    known = migrations()
    if have and max(have) > known[-1][0]:
        raise RuntimeError(
            f"the database has schema version {max(have)}; this code knows up to {known[-1][0]}"
        )
    done = []
    for version, name, sql in known:
        if version in have:
            continue
        # DuckDB runs a multi-statement string in auto-commit mode: the
        # explicit transaction makes a migration all or nothing.
        with transaction(conn):
            conn.execute(sql)
            conn.execute(
                "INSERT INTO schema_version VALUES (?, ?, now())", [version, name]
            )
        done.append(version)
    if done:
        for step in _AFTER_MIGRATING:
            step(conn)
    return done


#: What runs once migrations were applied: the rows they leave to be made
#: in Python (the player rows 005 marks: :mod:`replay.store.derive` adds it).
_AFTER_MIGRATING: list[Callable[[duckdb.DuckDBPyConnection], object]] = []


def after_migrating(step: Callable[[duckdb.DuckDBPyConnection], object]) -> None:
    """Run ``step(conn)`` after any migration was applied (once a store)."""
    if step not in _AFTER_MIGRATING:
        _AFTER_MIGRATING.append(step)


def open_store(
    db_path: str | os.PathLike[str] | None = None,
    read_only: bool = False,
    *,
    threads: int | None = None,
    memory_limit: str | None = None,
) -> duckdb.DuckDBPyConnection:
    """Open (and create or migrate, unless read-only) the database.

    Raises :class:`StoreLocked` when another process holds it for writing.
    """
    path = Path(db_path) if db_path is not None else default_db_path()
    # No replacement scans: a missing table must be an error, not whatever
    # Python variable of that name is in scope (frames are register()ed).
    config: dict[str, Any] = {"python_enable_replacements": False}
    if threads:
        config["threads"] = threads
    if memory_limit:
        config["memory_limit"] = memory_limit
    if not read_only:
        layout(path).make()
    try:
        conn = duckdb.connect(str(path), read_only=read_only, config=config)
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            raise StoreLocked(str(exc)) from exc
        raise
    if read_only:
        if schema_version(conn) == 0:
            conn.close()
            raise RuntimeError(f"{path}: not a replay store (no schema); run `replay ingest` first")
    else:
        migrate(conn)
    return conn


def db_layout(conn: duckdb.DuckDBPyConnection) -> Layout:
    row = one(conn, "SELECT path FROM duckdb_databases() WHERE database_name = current_database()")
    if not row or not row[0]:
        raise ValueError("an in-memory database has no spool: pass spool_dir")
    return layout(row[0])


@contextlib.contextmanager
def transaction(conn: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """The block in one transaction: committed at its end, rolled back when it
    raises (the block's error is the one raised)."""
    conn.execute("BEGIN TRANSACTION")
    try:
        yield
    except BaseException:
        with contextlib.suppress(duckdb.Error):  # a failed COMMIT has already ended it
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


@contextlib.contextmanager
def registered(conn: duckdb.DuckDBPyConnection, name: str, table: Any) -> Iterator[str]:
    conn.register(name, table)
    try:
        yield name
    finally:
        conn.unregister(name)


#: Tables whose rows carry their match's number, ``mno`` (migration 006).
NUMBERED: Final = ("matches", "seats", "hands", "moves", "findings")


def match_ids(values: Iterable[str]) -> pa.Table:
    return pa.table({"match": pa.array(sorted(values), pa.string())})
