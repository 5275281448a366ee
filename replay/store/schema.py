"""The store's file: where it lives, its versioned schema, and opening it.

Layout beside the database file, in a folder of the store's own named after
it (two stores in one folder share nothing)::

    replay.duckdb                the database (one writing process at a time)
    replay/store-id              the store's identity, which every batch carries
    replay/logs/<sha256>.jsonl   every log file read, kept as read (.jsonl.gz if gzip)
    replay/spool/<batch>/        validated results waiting to be loaded: one Arrow
                                 file per table and a manifest.json
    replay/spool/.tmp/           batches being written (renamed into spool/ when whole)

Migrations are the files ``replay/sql/NNN_name.sql``, applied in order at
open and recorded in ``schema_version``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import tempfile
import uuid
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
    "adopt_legacy",
    "db_layout",
    "default_db_path",
    "layout",
    "match_ids",
    "migrate",
    "migrations",
    "numbered_rows",
    "one",
    "open_store",
    "registered",
    "schema_version",
    "store_identity",
    "transaction",
]


DEFAULT_DB: Final = Path("data") / "replay.duckdb"

_MIGRATION = re.compile(r"^(\d{3})_(\w+)\.sql$")


def default_db_path() -> Path:
    """``$REPLAY_DB`` if set, else ``./data/replay.duckdb``."""
    return Path(os.environ.get("REPLAY_DB") or DEFAULT_DB)


log = logging.getLogger("replay.store")


@dataclass(frozen=True, slots=True)
class Layout:
    """Where the store keeps things: ``data``, a folder of its own beside the
    database, named after it (``data/replay.duckdb`` keeps ``data/replay/``).

    Two stores in one folder (the README's two demos) so share neither the
    spool nor the kept logs: an ingest for one never lands in the other,
    and an analysis of one reads only its own logs.
    """

    db: Path
    data: Path
    logs: Path
    spool: Path

    @property
    def tmp(self) -> Path:
        return self.spool / ".tmp"

    @property
    def failed(self) -> Path:
        return self.spool / ".failed"

    def make(self) -> Layout:
        for d in (self.data, self.logs, self.spool, self.tmp):
            d.mkdir(parents=True, exist_ok=True)
        store_identity(self.data, create=True)
        return self


#: The file that names a store: a random id made with its folder, which
#: every batch written for it carries (``replay.store.spool``).
IDENTITY: Final = "store-id"


def store_identity(data: Path, *, create: bool = False) -> str | None:
    """The identity of the store whose folder is ``data`` (made if ``create``
    and there is none yet; None if there is none)."""
    path = data / IDENTITY
    try:
        return path.read_text().strip() or None
    except FileNotFoundError:
        if not create:
            return None
    # written whole under a temporary name, then linked under its own: two
    # processes making the folder at once agree on the first one's id
    fd, tmp = tempfile.mkstemp(dir=data, prefix=".id.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(uuid.uuid4().hex + "\n")
            f.flush()
            os.fsync(f.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        os.unlink(tmp)
    return path.read_text().strip() or None


def layout(db_path: str | os.PathLike[str]) -> Layout:
    db = Path(db_path)
    # the database's name without its suffix; a name without one gets ".d"
    # (the folder must not be the database file itself)
    data = db.parent / (db.stem if db.suffix else db.name + ".d")
    return Layout(db, data, data / "logs", data / "spool")


def _legacy(lay: Layout) -> Path:
    """Where every store of a folder kept its logs and spool before each had its own."""
    return lay.db.parent


def adopt_legacy(conn: duckdb.DuckDBPyConnection, lay: Layout) -> int:
    """Bring a store made when every store of a folder shared ``logs/`` and
    ``spool/`` into its own folder: its own kept logs (those its
    ``log_files`` name; hard links, else copies) go into its logs folder,
    and batches left in the shared spool are named in a warning, not loaded
    (they name no store: whichever store they were for, ingesting their
    logs again stores them). The number of kept logs brought in."""
    old = _legacy(lay)
    if old == lay.data or not (old / "logs").is_dir():
        got = 0
    else:
        got = 0
        for (stored,) in conn.execute("SELECT stored FROM log_files").fetchall():
            new, src = lay.data / stored, old / stored
            if new.exists() or not src.is_file():
                continue
            new.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(src, new)
            except OSError:
                shutil.copy2(src, new)
            got += 1
    shared = old / "spool"
    if shared != lay.spool and shared.is_dir():
        left = [p.name for p in shared.iterdir() if p.is_dir() and (p / "manifest.json").exists()]
        if left:
            log.warning("%s holds %d batches written before each store had its own spool (%s): they "
                        "name no store and are not loaded; ingest their logs again into the store they "
                        "were for", shared, len(left), ", ".join(sorted(left)[:3]))  # fmt: skip
    return got


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
        adopt_legacy(conn, layout(path))
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


#: Tables whose rows carry their match's number, ``mno`` (migrations 006, 021).
NUMBERED: Final = ("matches", "seats", "hands", "moves", "findings", "move_analysis", "hand_analysis")


def numbered_rows(rows: str, take: str, ply: bool = False) -> str:
    """A SELECT of analysis `rows` (a table or view without ``mno``) for the
    hands of `take` (columns match, hand), each with its match's number, in
    number order: a batch appended so keeps each match's rows together, and
    a replay page's read by number (migration 021) prunes the rest.

    >>> print(numbered_rows("_ha", "_dh"))  # doctest: +NORMALIZE_WHITESPACE
    SELECT r.*, m.mno FROM _ha r JOIN _dh t ON t.match = r.match AND t.hand = r.hand
    JOIN matches m ON m.match = r.match ORDER BY m.mno, r.match, r.hand
    """
    order = "m.mno, r.match, r.hand" + (", r.ply" if ply else "")
    return (f"SELECT r.*, m.mno FROM {rows} r JOIN {take} t ON t.match = r.match AND t.hand = r.hand "
            f"JOIN matches m ON m.match = r.match ORDER BY {order}")


def match_ids(values: Iterable[str]) -> pa.Table:
    return pa.table({"match": pa.array(sorted(values), pa.string())})
