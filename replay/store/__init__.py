"""The store: one DuckDB file, its versioned schema, the spool and thin reads.

Layout under the data directory (the folder of the database file)::

    replay.duckdb          the database (one writing process at a time)
    logs/<sha256>.jsonl    every log file read, kept as read (.jsonl.gz if gzip)
    spool/<batch>/         validated results waiting to be loaded: one Parquet
                           file per table and a manifest.json
    spool/.tmp/            batches being written (renamed into spool/ when whole)

Whoever holds the database for writing (``replay ingest``, or the API
server while it runs) loads the spool with :func:`load_spool`: one
transaction per batch, the batch id recorded in ``batches`` in the same
transaction, the folder deleted after the commit. A batch is therefore
loaded exactly once, and a crash anywhere leaves either the old state or
the new one.

Migrations are the files ``replay/sql/NNN_name.sql``, applied in order at
open and recorded in ``schema_version``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Final

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from replay.frames import SCHEMAS, TABLES

__all__ = [
    "DEFAULT_DB",
    "FILE_TABLES",
    "Layout",
    "StoreLocked",
    "arrow_on_malloc",
    "check_schemas",
    "clean_tmp",
    "default_db_path",
    "delete_match",
    "derive_player_rows",
    "encode_tables",
    "fsync_path",
    "keep_ratings",
    "keep_reports",
    "get_findings",
    "get_hands",
    "get_match",
    "get_moves",
    "layout",
    "load_batch",
    "load_batches",
    "load_spool",
    "migrate",
    "migrations",
    "one",
    "open_store",
    "pending_batches",
    "ratings_beside",
    "schema_version",
    "stored_files",
    "table_counts",
    "write_batch",
    "write_encoded",
]

DEFAULT_DB: Final = Path("data") / "replay.duckdb"

#: Tables of the final batch of a run: the files read and their unowned lines.
FILE_TABLES: Final = ("log_files", "file_findings")

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
    return done


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


# -- the spool ---------------------------------------------------------------


def fsync_path(path: Path) -> None:
    """fsync a file or a folder (by path: a new name in it is then durable)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_batch(
    spool: Path, batch: str, tables: Mapping[str, pa.Table], manifest: Mapping[str, Any],
    *, owner: int | None = None,
) -> Path:
    """Write a batch: Arrow files and manifest into spool/.tmp, fsync, then
    one rename into spool/ (atomic). Empty tables are left out.

    With ``owner`` (the pid of a process that holds the database and loads
    the batch itself, an ingest run), the batch stays in
    ``spool/.tmp/<batch>.<owner>``, unsynced and never renamed: only that
    process loads it (by the path returned), and its commit is what makes
    the rows durable. If it dies first, the next load drops the folder
    (:func:`_clean_tmp`), and since the run's files were not yet recorded in
    ``log_files`` the next run reads them again. The fsyncs cost the workers
    more than their CPU: each waited behind the writeback of the run's kept
    copies, and in the first 20 s of a 1M-hand run they left both cores
    idle (144.4 s with them, 123.5 s without, one run after the other).

    A batch of that name already pending in the spool is left as it is
    (a batch named by its content, :mod:`replay.shards`, made again).
    """

    def part(path: Path, table: pa.Table) -> None:
        # Arrow IPC, uncompressed: the spool is short-lived, and the loader (the
        # run's critical path) maps the file and inserts from it with no decoding:
        # half the time of reading the same rows from Parquet
        table = table.unify_dictionaries()  # an IPC file holds one dictionary a column
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as out:
            out.write_table(table)

    return _write_parts(spool, batch, {n: t for n, t in tables.items() if t.num_rows}, part, manifest, owner)


def encode_tables(tables: Mapping[str, pa.Table]) -> dict[str, bytes]:
    """The files :func:`write_batch` would write for ``tables``, as bytes (a
    cluster worker sends them to the process that owns the spool)."""
    out = {}
    for name, table in tables.items():
        if table.num_rows == 0:
            continue
        table = table.unify_dictionaries()
        sink = pa.BufferOutputStream()
        with pa.ipc.new_file(sink, table.schema) as w:
            w.write_table(table)
        out[name] = sink.getvalue().to_pybytes()
    return out


def write_encoded(
    spool: Path, batch: str, parts: Mapping[str, bytes], manifest: Mapping[str, Any],
    *, owner: int | None = None,
) -> Path:
    """:func:`write_batch` of tables already encoded (:func:`encode_tables`)."""

    def part(path: Path, data: bytes) -> None:
        with open(path, "wb") as f:
            f.write(data)

    return _write_parts(spool, batch, parts, part, manifest, owner)


def _write_parts(
    spool: Path, batch: str, parts: Mapping[str, Any], write: Callable[[Path, Any], None],
    manifest: Mapping[str, Any], owner: int | None,
) -> Path:
    final = spool / batch
    sync = owner is None
    if sync and (final / "manifest.json").exists():
        return final  # the same content, pending already
    tmp = spool / ".tmp" / f"{batch}.{owner if owner is not None else os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    for name, value in parts.items():
        path = tmp / f"{name}{SPOOL_SUFFIX}"
        write(path, value)
        if sync:
            fsync_path(path)
    body = {**manifest, "batch": batch, "tables": list(parts)}
    (tmp / "manifest.json").write_text(json.dumps(body, sort_keys=True))
    if not sync:
        return tmp
    fsync_path(tmp / "manifest.json")
    fsync_path(tmp)
    try:
        os.rename(tmp, final)
    except OSError:
        if not (final / "manifest.json").exists():
            raise
        shutil.rmtree(tmp, ignore_errors=True)  # another process wrote it meanwhile
        return final
    fsync_path(spool)
    return final


#: The file of each table of a batch; batches spooled as Parquet (before
#: 2026-12-01) load as well.
SPOOL_SUFFIX: Final = ".arrow"


def _part_path(bdir: Path, name: str) -> Path:
    path = bdir / f"{name}{SPOOL_SUFFIX}"
    return path if path.exists() else bdir / f"{name}.parquet"


def pending_batches(spool: str | os.PathLike[str]) -> list[Path]:
    """Whole batches waiting in the spool, in the order they were made.

    A batch named by its run and number sorts by its name; one named by its
    content (:mod:`replay.shards`) carries the same key as ``order`` in its
    manifest.
    """
    root = Path(spool)
    if not root.is_dir():
        return []
    found = [
        p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")
        and (p / "manifest.json").exists()
    ]  # fmt: skip
    return sorted(found, key=_made)


def _made(bdir: Path) -> tuple[str, str]:
    try:
        order = json.loads((bdir / "manifest.json").read_text()).get("order")
    except (OSError, ValueError):
        order = None
    return (order if isinstance(order, str) else bdir.name, bdir.name)


def _clean_tmp(spool: Path) -> None:
    """Drop half-written batches of processes that are gone (kill -9 while writing)."""
    tmp = spool / ".tmp"
    if not tmp.is_dir():
        return
    for p in tmp.iterdir():
        pid = p.name.rsplit(".", 1)[-1]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(p, ignore_errors=True)


def clean_tmp(lay: Layout) -> None:
    """Drop what killed processes left half-written: spool batches and
    copies of logs (``logs/.<pid>.<thread>.tmp``)."""
    _clean_tmp(lay.spool)
    if lay.logs.is_dir():
        for p in lay.logs.glob(".*.tmp"):
            pid = p.name.split(".")[1]
            if pid.isdigit() and not _alive(int(pid)):
                p.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _MallocPool:
    """Arrow's buffers from malloc (the system pool) while any load or run
    is inside, Arrow's default pool again once the last one is out.

    Arrow's default, mimalloc, keeps what the threads of a load free (the
    batches' tables, the player rows sorted in a thread). An ingest of 1M
    hands peaked at 1,483 MiB (the process tree) with it and 1,250 MiB with
    malloc, no slower; a server that had loaded a spool of 250,000 hands
    held 637 MiB with it and 347 MiB with malloc. Counted, not nested: the
    server's loads and an in-process ingest may overlap on two threads, and
    the first out must not put mimalloc back under the other.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._before: pa.MemoryPool | None = None

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._users == 0:
                self._before = pa.default_memory_pool()
                pa.set_memory_pool(pa.system_memory_pool())
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0 and self._before is not None:
                    pa.set_memory_pool(self._before)
                    self._before = None


#: ``with arrow_on_malloc():`` (or ``@arrow_on_malloc()``): see :class:`_MallocPool`.
arrow_on_malloc: Final = _MallocPool()


@arrow_on_malloc()
def load_spool(
    conn: duckdb.DuckDBPyConnection,
    spool_dir: str | os.PathLike[str] | None = None,
    *,
    only: Sequence[Path] | None = None,
) -> int:
    """Load the pending batches (or ``only`` those); the number loaded.

    They are loaded oldest first, up to :data:`GROUP_BATCHES` in one
    transaction (:func:`load_batches`). ``spool_dir`` defaults to the spool
    beside the connected database. The kept logs are looked up beside the
    spool (for matches that must be validated again from all their files).
    """
    spool = Path(spool_dir) if spool_dir is not None else _db_layout(conn).spool
    _clean_tmp(spool)
    todo = list(only) if only is not None else pending_batches(spool)
    loaded = 0
    with HeldRows(spool) as held, _then_derive(conn, held=held):  # also what a crash left marked
        for k in range(0, len(todo), GROUP_BATCHES):
            loaded += load_batches(conn, todo[k : k + GROUP_BATCHES], spool.parent, derive=False, held=held)
    return loaded


class HeldRows:
    """The player rows that loaded batches brought (replay.held), set aside
    at each commit for one sorted insert when the player tables are derived
    (:func:`derive_player_rows`), instead of the SQL joins.

    The files wait in ``spool/.tmp/held-<id>.<pid>`` (a killed process's are
    dropped by the next load; its matches stay marked in ``player_pending``
    and are derived in SQL). A match written more than once meanwhile, or
    written otherwise (validated again in the loader), is left to the SQL.
    Use as a context manager: the folder goes at the end.
    """

    def __init__(self, spool: Path) -> None:
        self.where = spool / ".tmp" / f"held-{id(self):x}.{os.getpid()}"
        self.files: dict[str, list[Path]] = {t: [] for t in PLAYER_TABLES}
        # the matches each file gives rows of: those its batch covered (the
        # file also holds rows of the batch's other matches, written later by
        # another batch of the same load, or left alone as already stored)
        self.covers: dict[Path, frozenset[str]] = {}
        self.taken: dict[str, int] = {}  # match -> times its rows were set aside
        self.others: set[str] = set()  # written otherwise since

    def __enter__(self) -> HeldRows:
        return self

    def __exit__(self, *exc: object) -> None:
        self.drop()

    def keep(self, loaders: Sequence[_BatchLoader], covered: Mapping[str, int]) -> None:
        """After a group's commit: move aside each batch's player files and note
        the matches whose rows they hold."""
        for i, b in enumerate(loaders):
            mine = [m for m, j in covered.items() if j == i]
            if any(b.parts[t].suffix != SPOOL_SUFFIX for t in PLAYER_TABLES if t in b.parts):
                mine = []  # a Parquet batch: its rows are derived in SQL
            self.others |= b.new - set(mine)
            if not mine:
                continue
            try:
                self.where.mkdir(parents=True, exist_ok=True)
                moved = []
                for t in PLAYER_TABLES:
                    target = self.where / f"{b.batch}.{t}{SPOOL_SUFFIX}"
                    os.replace(b.parts[t], target)
                    moved.append((t, target))
            except OSError:  # the batch is in; its rows are derived in SQL
                self.others |= set(mine)
                continue
            for t, target in moved:
                self.files[t].append(target)
                self.covers[target] = frozenset(mine)
            for m in mine:
                self.taken[m] = self.taken.get(m, 0) + 1
                self.others.discard(m)

    def usable(self) -> list[str]:
        """The matches whose set-aside rows are their current rows."""
        return [m for m, n in self.taken.items() if n == 1 and m not in self.others]

    def drop(self) -> None:
        shutil.rmtree(self.where, ignore_errors=True)
        self.files = {t: [] for t in PLAYER_TABLES}
        self.covers.clear()
        self.taken.clear()
        self.others.clear()


@contextlib.contextmanager
def _then_derive(
    conn: duckdb.DuckDBPyConnection, derive: bool = True, held: HeldRows | None = None
) -> Iterator[None]:
    """Derive the player rows after the block, also when it fails (what did
    load is derived all the same; the block's error is the one raised)."""
    try:
        yield
    except BaseException:
        if derive:
            with contextlib.suppress(Exception):
                derive_player_rows(conn, held=held)
        raise
    if derive:
        derive_player_rows(conn, held=held)


def _db_layout(conn: duckdb.DuckDBPyConnection) -> Layout:
    row = one(conn, "SELECT path FROM duckdb_databases() WHERE database_name = current_database()")
    if not row or not row[0]:
        raise ValueError("an in-memory database has no spool: pass spool_dir")
    return layout(row[0])


def _lit(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


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
def _registered(conn: duckdb.DuckDBPyConnection, name: str, table: Any) -> Iterator[str]:
    conn.register(name, table)
    try:
        yield name
    finally:
        conn.unregister(name)


#: Tables whose rows carry their match's number, ``mno`` (migration 006).
NUMBERED: Final = ("matches", "seats", "hands", "moves", "findings")


def _numbered(table: pa.Table, order: pa.Array, base: int) -> pa.Table:
    """``table`` with ``mno``: ``base`` + 1 + the place of each row's match in ``order``.

    >>> t = pa.table({"match": pa.array(["b", "a", "b"]).dictionary_encode()})
    >>> _numbered(t, pa.array(["a", "b"]), 10).column("mno").to_pylist()
    [12, 11, 12]
    """
    col = table.column("match").combine_chunks()
    if pa.types.is_dictionary(col.type):
        place = pc.take(pc.index_in(col.dictionary, value_set=order), col.indices)
    else:
        place = pc.index_in(col, value_set=order)
    return table.append_column("mno", pc.add(place.cast(pa.int64()), base + 1))


def _match_order(matches: pa.Table) -> pa.Array:
    col = matches.column("match").combine_chunks()
    return col.dictionary_decode() if pa.types.is_dictionary(col.type) else col


def _next_base(conn: duckdb.DuckDBPyConnection) -> int:
    row = one(conn, "SELECT coalesce(max(mno), 0) FROM matches")
    return int(row[0]) if row else 0


def _ids(values: Iterable[str]) -> pa.Table:
    return pa.table({"match": pa.array(sorted(values), pa.string())})


#: At most this many spool batches are loaded in one transaction. What a
#: load does once whatever its size (the commit, the players and shared-seed
#: refreshes, which look at the whole store) is then done once for all of
#: them: at 1M hands stored, a commit alone costs about 0.4 s. Each batch's
#: files are mapped only while it is loaded. More batches append more than
#: a row group of hands (122,880 rows), which DuckDB then writes straight to
#: the file at the commit, but leaves a partly filled row group at every
#: commit, which a later checkpoint merges again (its vacuum): 7 CPU-s more
#: at the end of a 1M-hand run than 8 batches through the WAL.
GROUP_BATCHES: Final = 8


def load_batch(conn: duckdb.DuckDBPyConnection, bdir: Path, data_dir: Path, *, derive: bool = True) -> bool:
    """Load one batch in one transaction; False if it was loaded before.

    Per match of the batch, with B its files in the batch and S its files
    already in the store: a new match is inserted; in ``add`` mode a match
    whose files the store already has (B within S) is left alone; one whose
    lines are all in the batch (S within B) is replaced by the batch's rows;
    otherwise it is validated again from all its kept files (B and S) and
    replaced. Then SEED_REUSED, verdicts and players are brought up to date
    for everything the batch touched, and (unless ``derive`` is false: see
    :func:`derive_player_rows`) the player tables. A batch that cannot be
    loaded is moved to ``spool/.failed`` and the error raised.
    """
    loaded = _load_group(conn, [bdir], data_dir, set_aside=True) == 1
    if derive:
        derive_player_rows(conn)
    return loaded


def load_batches(
    conn: duckdb.DuckDBPyConnection, bdirs: Iterable[Path], data_dir: Path, *, derive: bool = True,
    held: HeldRows | None = None, before_commit: Callable[[], None] | None = None,
) -> int:
    """Load batches in the given order in one transaction, as :func:`load_batch`
    would one after the other; the number loaded (not loaded before).

    ``bdirs`` may be a stream (the ingest's loader loads each batch as it
    arrives, and commits once the group is complete); ``before_commit`` is
    called before the commit (what it raises is raised, no batch is set
    aside for it). The derived rows (SEED_REUSED, verdicts, players, and the
    player tables unless ``derive`` is false) are brought up to date once,
    for everything the batches touched. If the group fails, each batch is
    loaded again on its own, so that the good ones land and only a bad one
    is set aside (and raises). With ``held``, the player rows the batches
    brought (replay.held) are set aside for :func:`derive_player_rows` (``held=``).
    """
    seen: list[Path] = []
    source = iter(bdirs)
    with _then_derive(conn, derive, held):
        try:
            loaded = _load_group(conn, source, data_dir, set_aside=False, held=held,
                                 before_commit=before_commit, seen=seen)  # fmt: skip
        except _Abort as exc:
            seen.extend(source)  # the rest of the group stays where it is
            raise exc.cause from None
        except Exception:
            seen.extend(source)
            if len(seen) == 1:
                _set_aside(seen)
                raise
            try:
                loaded = sum(
                    _load_group(conn, [b], data_dir, set_aside=True, held=held, before_commit=before_commit) == 1
                    for b in seen
                )
            except _Abort as exc:
                raise exc.cause from None
    return loaded


def _set_aside(bdirs: Sequence[Path]) -> None:
    """Move batches that failed to ``spool/.failed``, beside the pending ones
    (an owner's own batch is in spool/.tmp)."""
    if not bdirs:
        return
    home = bdirs[0].parent
    failed = (home.parent if home.name == ".tmp" else home) / ".failed"
    failed.mkdir(exist_ok=True)
    for bdir in bdirs:
        with contextlib.suppress(OSError):
            os.rename(bdir, failed / bdir.name)


class _Abort(Exception):
    """What a load's ``before_commit`` raised: not the batches' fault."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def _load_group(
    conn: duckdb.DuckDBPyConnection, bdirs: Iterable[Path], data_dir: Path, *, set_aside: bool,
    held: HeldRows | None = None, before_commit: Callable[[], None] | None = None,
    seen: list[Path] | None = None,
) -> int:
    """Load ``bdirs`` in one transaction (each is put in ``seen`` as it is
    taken); on failure they are set aside if ``set_aside``."""
    loaders: list[_BatchLoader] = []
    covered: dict[str, int] = {}
    taken: list[Path] = [] if seen is None else seen
    conn.execute("BEGIN TRANSACTION")
    try:
        for bdir in bdirs:
            taken.append(bdir)
            manifest = json.loads((bdir / "manifest.json").read_text())
            batch: str = manifest["batch"]
            if one(conn, "SELECT 1 FROM batches WHERE batch = ?", [batch]):
                continue  # loaded before (the folder outlived its commit)
            mode: str = manifest.get("mode", "add")
            parts = {name: _part_path(bdir, name) for name in manifest["tables"]}
            loader = _BatchLoader(conn, batch, mode, parts, manifest, data_dir, tag=str(len(loaders)))
            loaders.append(loader)
            touched, files = loader.load()
            loader.close()  # its rows are in: its mapped files go before the next batch's
            conn.execute(
                "INSERT INTO batches VALUES (?, now(), ?, ?, ?)", [batch, mode, touched, files]
            )
        if loaders:
            derived = _Derived(conn, loaders)
            derived.run()
            covered = derived.covered
        if before_commit is not None:
            try:
                before_commit()
            except BaseException as exc:
                raise _Abort(exc) from exc
        conn.execute("COMMIT")
    except BaseException as exc:
        with contextlib.suppress(duckdb.Error):
            conn.execute("ROLLBACK")
        if set_aside and not isinstance(exc, _Abort):
            _set_aside(taken)
        raise
    finally:
        for loader in loaders:
            loader.close()
    if held is not None:
        held.keep(loaders, covered)
    for bdir in taken:
        shutil.rmtree(bdir, ignore_errors=True)
    return len(loaders)


def derive_player_rows(
    conn: duckdb.DuckDBPyConnection, *, reports: bool = True, held: HeldRows | None = None
) -> int:
    """Bring the player tables (migrations 003 to 005) up to date with the
    matches loaded since they were last derived (``player_pending``), in one
    transaction; the number of matches.

    A load only marks its matches: deriving them once for a whole ingest
    run (or :func:`load_spool` call) is one sorted insert instead of one a
    batch plus a re-sort. Until then a player report lacks those matches;
    a crash leaves the marks, and the next load derives them. Then (unless
    ``reports`` is false) the kept reports of the players it touched are
    worked out again (:func:`keep_reports`).
    """
    if not one(conn, "SELECT 1 FROM player_pending LIMIT 1"):
        # nothing to derive (the batches brought their rows, replay.held): the
        # reports their matches made stale, or a store just migrated to 007 lacks
        if reports:
            with ratings_beside(conn):
                if one(conn, "SELECT 1 FROM player_held "
                             "WHERE of_player NOT IN (SELECT player FROM player_reports) LIMIT 1"):
                    keep_reports(conn)
        return 0
    conn.execute("BEGIN TRANSACTION")
    try:
        had = one(conn, "SELECT count(*) FROM player_held")
        conn.execute(
            "CREATE OR REPLACE TEMP TABLE _pm AS SELECT DISTINCT match FROM player_pending "
            "WHERE match IN (SELECT match FROM matches)"
        )
        row = one(conn, "SELECT count(*) FROM _pm")
        n = int(row[0]) if row else 0
        before = int(had[0]) if had else 0
        if held is not None and held.taken:
            before = _insert_held(conn, held, before)  # the rows the batches brought
        if one(conn, "SELECT 1 FROM _pm LIMIT 1"):  # the others, in SQL
            conn.execute(_PLAYER_ROWS.format(seats="seats", hands="hands", matches="matches"))
            conn.execute(_FORGET_REPORTS)
            after = one(conn, "SELECT count(*) FROM player_held")
            _note_run(conn, before, (int(after[0]) if after else 0) - before)
        conn.execute("DROP TABLE _pm")
        conn.execute("DELETE FROM player_pending")
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(duckdb.Error):
            conn.execute("ROLLBACK")
        raise
    if reports:
        with ratings_beside(conn):
            keep_reports(conn)
    return n


def _insert_held(conn: duckdb.DuckDBPyConnection, held: HeldRows, had: int) -> int:
    """Insert the set-aside rows of the pending matches (``_pm``) they cover,
    one sorted run per table, and take those matches out of ``_pm``; the
    number of player_held rows now."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(_registered(conn, "_usable", _ids(held.usable())))
        conn.execute(
            "CREATE OR REPLACE TEMP TABLE _fast AS SELECT match FROM _pm JOIN _usable USING (match)"
        )
        got = conn.sql("SELECT match FROM _fast")
        fast = got.to_arrow_table().column("match") if got is not None else pa.chunked_array([], pa.string())
        if len(fast):
            # A sorted run per HELD_RUN_FILES files, each of a row group or
            # more (_note_run). Arrow sorts a run in a thread while DuckDB
            # inserts the one before on all its threads: with the insertion
            # order not kept, each thread fills row groups of its own from
            # whole record batches, so every row group still holds one stretch
            # of the order (the groups' own order does not matter: a player's
            # rows are in one or two row groups of the run). On a spool of
            # 250,000 hands the player_held inserts took 1.2 s, not 2.3 s
            # (DuckDB's ORDER BY keeps the order and inserts on one thread).
            step = HELD_RUN_FILES
            runs = [(k, t) for k in range(0, len(held.files["player_held"]), step) for t in PLAYER_TABLES]
            sorter = stack.enter_context(ThreadPoolExecutor(1, thread_name_prefix="replay-sort"))

            def sort(i: int) -> Future[pa.Table] | None:
                if i == len(runs):
                    return None
                k, t = runs[i]
                files = held.files[t][k : k + step]
                return sorter.submit(_sorted_run, files, t, fast, [held.covers.get(f) for f in files])

            keep = one(conn, "SELECT current_setting('preserve_insertion_order')")
            conn.execute("SET preserve_insertion_order = false")
            stack.callback(conn.execute, f"SET preserve_insertion_order = {bool(keep and keep[0])}")
            ahead = sort(0)
            for i, (_, t) in enumerate(runs):
                this, ahead = ahead, sort(i + 1)
                assert this is not None
                with _registered(conn, f"_held_{t}", this.result()) as src:
                    conn.execute(f"INSERT INTO {t} BY NAME SELECT * FROM {src}")
                del this  # (ingest has Arrow on malloc: the run's memory goes back)
                if t == PLAYER_TABLES[-1]:
                    after = one(conn, "SELECT count(*) FROM player_held")
                    now = int(after[0]) if after else 0
                    _note_run(conn, had, now - had)
                    had = now
            conn.execute(_FORGET_REPORTS.replace("_pm", "_fast"))
            conn.execute("DELETE FROM _pm WHERE match IN (SELECT match FROM _fast)")
        conn.execute("DROP TABLE _fast")
    return had


def _sorted_run(
    files: Sequence[Path], table: str, fast: pa.ChunkedArray,
    covers: Sequence[frozenset[str] | None] | None = None,
) -> pa.Table:
    """The rows of ``files`` whose match is in ``fast`` (and, with ``covers``,
    among the matches each file gives rows of, where known), in ``table``'s
    order, in record batches of a row group each.

    >>> import tempfile
    >>> rows = pa.table({"of_player": ["q", "p", "p"], "match": ["m", "n", "m"], "hand": [1, 1, 2],
    ...                  "seat": [0, 0, 1]})
    >>> with tempfile.TemporaryDirectory() as d:
    ...     f = Path(d) / "a.arrow"
    ...     with pa.ipc.new_file(f, rows.schema) as w:
    ...         w.write_table(rows)
    ...     run = _sorted_run([f], "player_held", pa.chunked_array([["m"]]))
    >>> run.select(["of_player", "match", "hand"]).to_pylist()
    [{'of_player': 'p', 'match': 'm', 'hand': 2}, {'of_player': 'q', 'match': 'm', 'hand': 1}]
    """
    wanted = fast.combine_chunks()

    def rows(f: Path, covered: frozenset[str] | None) -> pa.Table:
        t = _read([f])
        if covered is not None:
            t = _only(t, pa.array(sorted(covered), pa.string()))
        return _only(t, wanted)

    if covers is None:
        t = _only(_read(files), wanted)
    else:
        t = pa.concat_tables([rows(f, c) for f, c in zip(files, covers, strict=True)])
    keys = [(k.strip(), "ascending") for k in _PLAYER_ORDER[table].split(",")]
    t = t.take(pc.sort_indices(t, sort_keys=keys))
    return pa.Table.from_batches(t.to_batches(max_chunksize=RUN_ROWS), schema=t.schema)


def _only(t: pa.Table, matches: pa.Array) -> pa.Table:
    """The rows of ``t`` whose match is one of ``matches``."""
    keep = pc.is_in(t["match"], value_set=matches)
    return t if pc.all(keep).as_py() else t.filter(keep)  # (a copy only when there is something to drop)


def _read(files: Sequence[Path]) -> pa.Table:
    """Arrow IPC files read into one table (read, not mapped: the memory goes
    with the table; a table, not a stream, so that DuckDB scans it on every
    thread)."""
    tables = []
    for f in files:
        with pa.OSFile(str(f)) as src:
            tables.append(pa.ipc.open_file(src).read_all())
    return pa.concat_tables(tables)


def keep_reports(conn: duckdb.DuckDBPyConnection) -> int:
    """Work out the kept player reports (migration 007) that are missing:
    those the last derivation forgot, or a crash left undone."""
    # the figures are the reports package's; the store only keeps them current
    from reports.player import store_reports

    return store_reports(conn)


def keep_ratings(conn: duckdb.DuckDBPyConnection) -> int:
    """Bring the ratings (migration 013, reports.ratings) and the player
    insights (migration 014, reports.skill) up to date with the matches
    stored: only what changed is rated or summed; nothing changed is a few
    queries. The two run side by side, the insights in a thread on a cursor
    (and so a transaction) of their own: the ratings are Python on the GIL,
    the insights DuckDB off it. The number of matches rated."""
    from reports.ratings import refresh_ratings
    from reports.skill import refresh_insights

    with conn.cursor() as cur, ThreadPoolExecutor(1, thread_name_prefix="replay-insights") as pool:
        summed = pool.submit(refresh_insights, cur)
        try:
            rated = refresh_ratings(conn)
        finally:
            summed.result()
    return rated


@contextlib.contextmanager
def ratings_beside(conn: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """:func:`keep_ratings` in a thread, on a cursor (and so a transaction) of
    its own, while the block runs; waited for (and its error raised) at the
    end. The ratings read only what a load committed (matches, seats, hands)
    and are Python on the GIL, the player tables and reports mostly DuckDB
    and polars off it: side by side they take the time of the longer."""
    with conn.cursor() as cur, ThreadPoolExecutor(1, thread_name_prefix="replay-ratings") as pool:
        rated = pool.submit(keep_ratings, cur)
        yield
        rated.result()


def _note_run(conn: duckdb.DuckDBPyConnection, had: int, added: int) -> None:
    """Book ``added`` player rows just appended in player order (to ``had``
    rows), and rewrite the tables in order when that is due (migration 010).

    Rows derived into empty tables are one sorted run. A run of at least
    :data:`RUN_ROWS` after rows all in order is in order too. The tables are
    sorted again once the rows of small runs are a quarter of them, or once
    more than :data:`MAX_RUNS` runs and as many rows as the last sort had came
    after it (a geometric schedule either way).
    """
    row = one(conn, "SELECT count(*) FROM player_held")
    rows = int(row[0]) if row else 0
    # by position: a store still being migrated may lack 010's columns
    width = len(conn.execute("SELECT * FROM player_order LIMIT 0").description or ())
    got = tuple(one(conn, "SELECT * FROM player_order") or ()) + (None, None, None)
    done = int(got[0] or 0)
    base = int(got[1]) if got[1] is not None else done
    runs = int(got[2] or 0)
    if had == 0:
        done = base = rows
        runs = 0
    elif added >= RUN_ROWS and done >= had:
        done = rows
        runs += 1
    done = min(done, rows)
    if rows >= RESORT_MIN_ROWS and ((rows - done) * 4 > rows or (runs > MAX_RUNS and rows > 2 * base)):
        for t, order in _PLAYER_ORDER.items():
            conn.execute(f"CREATE OR REPLACE TEMP TABLE _sorted AS SELECT * FROM {t} ORDER BY {order}")
            conn.execute(f"DELETE FROM {t}")
            conn.execute(f"INSERT INTO {t} SELECT * FROM _sorted")
            conn.execute("DROP TABLE _sorted")
        done = base = rows
        runs = 0
    conn.execute("DELETE FROM player_order")
    conn.execute(f"INSERT INTO player_order VALUES ({', '.join('?' * width)})", [done, base, runs][:width])


#: hands.passes counted from `moves` and the dealt_* summaries (as migration
#: 002 does) for the matches of the registered table ``_take`` lacking them.
_FILL_PASSES: Final = """
UPDATE hands SET passes = b.passes
FROM (
    WITH c AS (
        SELECT match, hand, list({'seat': seat, 'n': n}) AS per, max(seat) + 1 AS top
        FROM (SELECT match, hand, seat, count(*) AS n FROM moves
              WHERE kind = 'pass' AND match IN (SELECT match FROM _take) GROUP BY ALL)
        GROUP BY ALL
    )
    SELECT h.match, h.hand,
           list_transform(
               range(greatest(coalesce(m.players, 0), coalesce(c.top, 0))),
               lambda s: coalesce(list_sum(list_transform(
                   list_filter(c.per, lambda e: e.seat = s), lambda e: e.n)), 0)
           )::SMALLINT[] AS passes
    FROM hands h
    LEFT JOIN matches m ON m.match = h.match
    LEFT JOIN c ON c.match = h.match AND c.hand = h.hand
    WHERE h.passes IS NULL AND h.match IN (SELECT match FROM _take)
) b
WHERE hands.match = b.match AND hands.hand = b.hand;

UPDATE hands SET
    dealt_pips = list_transform(dealt, lambda d: coalesce(list_sum(list_transform(d, lambda t:
        [0, 1, 2, 3, 4, 5, 6, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7, 8, 6, 7, 8, 9, 8, 9, 10, 10, 11, 12][t + 1])), 0)
    )::SMALLINT[],
    dealt_doubles = list_transform(dealt, lambda d: len(list_filter(d, lambda t: t IN (0, 7, 13, 18, 22, 25, 27))))::TINYINT[],
    dealt_tiles = list_transform(dealt, lambda d: len(d))::TINYINT[]
WHERE dealt_tiles IS NULL AND match IN (SELECT match FROM _take)
"""


#: The tables keyed by player (migrations 003 to 005), derived from seats, hands and matches.
PLAYER_TABLES: Final = ("player_seats", "player_held")

#: Their sort order; a table once its rows grew by a quarter (and past this
#: many) since it was last rewritten in that order.
_PLAYER_ORDER: Final = {
    "player_seats": "of_player, match, seq, seat",
    "player_held": "of_player, match, hand, seat",
}
RESORT_MIN_ROWS: Final = 50_000
#: A run of this many rows in player order (a DuckDB row group) needs no sort.
RUN_ROWS: Final = 122_880
#: Runs after the last sort before the next one (see _note_run).
MAX_RUNS: Final = 16
#: The set-aside player files (one a batch, about 40,000 player_held rows at
#: 10,000 hands a batch) sorted and inserted as one run (_insert_held).
HELD_RUN_FILES: Final = 8

#: A kept report (migration 007) is the report of the player tables as they
#: stand: whatever changes the player rows of the matches of ``_pm`` drops the
#: reports of the players seated in them, in the same transaction.
_FORGET_REPORTS: Final = """DELETE FROM player_reports WHERE player IN
    (SELECT DISTINCT of_player FROM player_seats WHERE match IN (SELECT match FROM _pm))"""

#: Their rows for the matches of the table ``_pm`` (as migrations 003 to 005),
#: read from {seats}, {hands} and {matches}. A held hand is a seat row joined
#: to the hands of its range: no row per player and hand of the match first
#: (what player_hands was).
_PLAYER_ROWS: Final = """
CREATE OR REPLACE TEMP TABLE _pm_seats AS
SELECT match, seat, player, name, bot, from_hand,
       coalesce(lead(from_hand) OVER (PARTITION BY match, seat ORDER BY from_hand, seq),
                2147483647) AS to_hand, seq
FROM {seats} WHERE match IN (SELECT match FROM _pm);

INSERT INTO player_seats
SELECT p.player, s.match, s.seat, s.player, s.name, s.bot, s.from_hand, s.to_hand, s.seq, m.batch
FROM (SELECT DISTINCT match, player FROM _pm_seats) p
JOIN _pm_seats s ON s.match = p.match
JOIN (SELECT match, batch FROM {matches} WHERE match IN (SELECT match FROM _pm)) m ON m.match = p.match
ORDER BY p.player, s.match, s.seq, s.seat;

INSERT INTO player_held
WITH m AS (
    -- the rules' JSON read once a match, not once a player and hand
    SELECT match, profile, rules->>'teams' AS teams, rules->>'stock' AS stock,
           rules->>'block_end' AS block_end, result AS match_result, winner AS match_winner,
           notes AS match_notes
    FROM {matches} WHERE match IN (SELECT match FROM _pm)
), held AS (
    SELECT s.player AS of_player, s.seat, s.bot, h.match, h.hand, h.result, h.winner, h.points,
           h.notes, h.passes, h.dealt_pips, h.dealt_doubles, h.dealt_tiles, h.started,
           m.profile, m.teams, m.stock, m.block_end, m.match_result, m.match_winner, m.match_notes
    FROM _pm_seats s
    JOIN (SELECT match, hand, result, winner, points, notes, passes, dealt_pips, dealt_doubles,
                 dealt_tiles, started
          FROM {hands} WHERE match IN (SELECT match FROM _pm)) h
      ON h.match = s.match AND h.hand >= s.from_hand AND h.hand < s.to_hand
    JOIN m ON m.match = s.match
), partner AS (
    SELECT x.of_player, x.match, x.hand, ps.player, ps.name, ps.bot
    FROM held x
    JOIN _pm_seats ps ON ps.match = x.match
     AND ps.seat = (x.seat + 2) % 4 AND x.hand >= ps.from_hand AND x.hand < ps.to_hand
    WHERE x.teams = 'pairs'
)
SELECT x.of_player, x.match, x.hand, x.seat, x.bot, p.player, p.name, p.bot,
       x.result, x.winner,
       x.points[(CASE WHEN x.teams = 'pairs' THEN x.seat % 2 ELSE x.seat END) + 1],
       list_sum(x.points), CASE WHEN x.result = 'domino' AND x.winner = x.seat THEN x.notes END,
       x.passes[x.seat + 1], x.dealt_pips[x.seat + 1], x.dealt_doubles[x.seat + 1], x.dealt_tiles[x.seat + 1],
       timezone('UTC', x.started), x.profile, x.teams, x.stock, x.block_end, x.match_result, x.match_winner,
       list_has_any(x.match_notes, ['shutout', 'chiva', 'zapato'])
FROM held x
LEFT JOIN partner p ON p.of_player = x.of_player AND p.match = x.match AND p.hand = x.hand
ORDER BY x.of_player, x.match, x.hand, x.seat;

DROP TABLE _pm_seats
"""


class _BatchLoader:
    """The work of one batch, inside the caller's transaction."""

    def __init__(
        self,
        conn: duckdb.DuckDBPyConnection,
        batch: str,
        mode: str,
        parts: Mapping[str, Path],
        manifest: Mapping[str, Any],
        data_dir: Path,
        *,
        tag: str = "",
    ) -> None:
        self.conn = conn
        self.batch = batch
        self.mode = mode
        self.parts = parts
        self.manifest = manifest
        self.data_dir = data_dir
        # each part as a SQL source: a registered Arrow table mapped from its
        # IPC file, or read_parquet() of an older batch
        self.src: dict[str, str] = {}
        self.arrow: dict[str, pa.Table] = {}
        for name, path in parts.items():
            if path.suffix == SPOOL_SUFFIX:
                with pa.memory_map(str(path)) as f:
                    table = pa.ipc.open_file(f).read_all()
                self.arrow[name] = table
                self.src[name] = f"_part{tag}_{name}"  # one name a batch of a group
                conn.register(self.src[name], table)
            else:
                self.src[name] = f"read_parquet({_lit(path)})"
        self.new: set[str] = set()  # matches (re)written by this batch
        self.old_seeds: list[str] = []
        self.old_players: list[str] = []
        self.gone: set[str] = set()  # matches deleted by this batch (most written again)
        # matches whose player rows are the batch's own (replay.held), and
        # those written otherwise (derived in SQL)
        self.with_players: set[str] = set()
        self.without_players: set[str] = set()

    def close(self) -> None:
        for name in self.arrow:
            self.conn.unregister(self.src[name])
        self.arrow.clear()

    def _columns(self, name: str, columns: list[str]) -> pa.Table:
        table = self.arrow.get(name)
        return table.select(columns) if table is not None else pq.read_table(self.parts[name], columns=columns)

    def _names(self, name: str) -> list[str]:
        table = self.arrow.get(name)
        return table.schema.names if table is not None else pq.read_schema(self.parts[name]).names

    def load(self) -> tuple[int, int]:
        """The batch's own rows (the derived ones are :class:`_Derived`'s):
        matches written, files recorded."""
        if self.mode == "analysis":  # replay analyze's rows, made while this process held the store
            return self._analysis(), 0
        files = self._files() if "log_files" in self.parts else 0
        if "match_files" in self.parts:
            self._matches()
        if self.new:
            self._rematches()
        return len(self.new), files

    # -- matches

    def _matches(self) -> None:
        conn = self.conn
        mf = self._columns("match_files", ["match", "sha256"]).to_pylist()
        batch_files: dict[str, set[str]] = {}
        for row in mf:
            batch_files.setdefault(row["match"], set()).add(row["sha256"])
        with _registered(conn, "_batch_ids", _ids(batch_files.keys())):
            stored: dict[str, set[str]] = {
                m: set(shas)
                for m, shas in conn.execute(
                    "SELECT f.match, list(DISTINCT f.sha256) FROM match_files f "
                    "JOIN _batch_ids USING (match) GROUP BY f.match"
                ).fetchall()
            }
            existing = {
                m for (m,) in conn.execute("SELECT match FROM matches JOIN _batch_ids USING (match)").fetchall()
            }
        take: set[str] = set()
        redo: dict[str, set[str]] = {}
        for m, b in batch_files.items():
            s = stored.get(m, set())
            if m not in existing:
                take.add(m)
            elif self.mode == "add" and b <= s:
                continue  # nothing new: the same lines are stored already
            elif s <= b:
                take.add(m)
            else:
                redo[m] = b | s
        self._delete((take | set(redo)) & existing)
        everything = len(take) == len(batch_files)
        self._insert_parts(take, everything=everything)
        self.new |= take
        if redo:
            self._revalidate(redo)

    def _delete(self, ids: set[str]) -> None:
        if not ids:
            return
        conn = self.conn
        self.gone |= ids
        with _registered(conn, "_gone", _ids(ids)):
            self.old_seeds += [
                s for (s,) in conn.execute(
                    "SELECT DISTINCT seed FROM seeds JOIN _gone USING (match)"
                ).fetchall()
            ]  # fmt: skip
            self.old_players += [
                p for (p,) in conn.execute(
                    "SELECT DISTINCT player FROM seats JOIN _gone USING (match)"
                ).fetchall()
            ]  # fmt: skip
            for t in TABLES:
                conn.execute(f"DELETE FROM {t} WHERE match IN (SELECT match FROM _gone)")

    def _insert_parts(self, ids: set[str], *, everything: bool) -> None:
        if not ids:
            return
        conn = self.conn
        # numbered in the batch's own order (the rows' order in its files)
        numbered = {}
        if "matches" in self.arrow:
            order, base = _match_order(self.arrow["matches"]), _next_base(conn)
            numbered = {t: _numbered(self.arrow[t], order, base) for t in NUMBERED if t in self.arrow}
        with contextlib.ExitStack() as stack:
            stack.enter_context(_registered(conn, "_take", _ids(ids)))
            where = "" if everything else " WHERE match IN (SELECT match FROM _take)"
            for t in TABLES:
                if t in self.parts:
                    src = self.src[t]
                    if t in numbered:  # an older Parquet batch goes in unnumbered
                        src = stack.enter_context(_registered(conn, f"{src}_n", numbered[t]))
                    conn.execute(f"INSERT INTO {t} BY NAME SELECT * FROM {src}{where}")
            if "hands" in self.parts and "passes" not in self._names("hands"):
                # a batch spooled by code older than migration 002
                conn.execute(_FILL_PASSES)
        if all(t in self.parts for t in PLAYER_TABLES):
            self.with_players |= ids
        else:  # a batch spooled before replay.held: derived from the tables
            self.without_players |= ids

    def insert_tables(self, tables: Mapping[str, pa.Table]) -> None:
        """Insert Arrow tables of whole matches (already deleted), numbered."""
        if "matches" in tables:
            order, base = _match_order(tables["matches"]), _next_base(self.conn)
            tables = {t: _numbered(v, order, base) if t in NUMBERED else v for t, v in tables.items()}
        for t in TABLES:
            table = tables.get(t)
            if table is not None and table.num_rows:
                with _registered(self.conn, "_frame", table):
                    self.conn.execute(f"INSERT INTO {t} BY NAME SELECT * FROM _frame")

    def _revalidate(self, wanted: Mapping[str, set[str]]) -> None:
        """Validate matches again from all their kept files and replace them."""
        from replay.ingest import revalidate  # ingest imports this module

        tables = revalidate(self.conn, self.data_dir, wanted, self.batch, self.manifest)
        self._delete(set(wanted) - self.new)  # replaced matches of earlier batches
        self.insert_tables(tables)
        self.new |= set(wanted)
        self.without_players |= set(wanted)

    def _rematches(self) -> None:
        """Rematches stored as REMATCH_UNKNOWN whose earlier match is now in the
        store (either side may be new): validated again with its first leader."""
        conn = self.conn
        with _registered(conn, "_new", _ids(self.new)):
            rows = conn.execute(
                "SELECT c.match, list(DISTINCT mf.sha256) FROM matches c "
                "JOIN matches p ON p.match = c.rematch_of "
                "JOIN match_files mf ON mf.match = c.match "
                "WHERE p.first_leader IS NOT NULL "
                "AND (c.match IN (SELECT match FROM _new) OR p.match IN (SELECT match FROM _new)) "
                "AND EXISTS (SELECT 1 FROM findings f WHERE f.match = c.match "
                "AND f.code = 'REMATCH_UNKNOWN') GROUP BY c.match"
            ).fetchall()
        if rows:
            self._redo({m: set(shas) for m, shas in rows})

    def _redo(self, wanted: Mapping[str, set[str]]) -> None:
        """Validate stored matches again from their kept files and replace them."""
        from replay.ingest import revalidate

        tables = revalidate(self.conn, self.data_dir, wanted, self.batch, self.manifest)
        self._delete(set(wanted))
        self.insert_tables(tables)
        self.new |= set(wanted)
        self.without_players |= set(wanted)

    def remove(self, ids: set[str]) -> None:
        """Delete matches, and validate their rematches again without them
        (as if they had never been stored: REMATCH_UNKNOWN)."""
        conn = self.conn
        self._delete(ids)
        with _registered(conn, "_gone", _ids(ids)):
            conn.execute("DELETE FROM peek_analysis WHERE match IN (SELECT match FROM _gone)")
            rows = conn.execute(
                "SELECT c.match, list(DISTINCT mf.sha256) FROM matches c "
                "JOIN match_files mf ON mf.match = c.match "
                "WHERE c.rematch_of IN (SELECT match FROM _gone) GROUP BY c.match"
            ).fetchall()
        if rows:
            self._redo({m: set(shas) for m, shas in rows})

    def _analysis(self) -> int:
        """Put a batch's analysis rows in place of the same hands' rows, for the
        hands stored as they were analysed (the same number of plies); the
        rest are dropped (their match changed since). The hands put."""
        conn = self.conn
        if "hand_analysis" not in self.src:
            return 0
        ha, ma = self.src["hand_analysis"], self.src.get("move_analysis")
        conn.execute(
            "CREATE OR REPLACE TEMP TABLE _ah AS "
            f"SELECT a.match, a.hand FROM {ha} a JOIN hands h USING (match, hand) "
            + (f"WHERE a.skip IS NOT NULL OR h.plies = (SELECT count(*) FROM {ma} m "
               "WHERE m.match = a.match AND m.hand = a.hand)" if ma else "WHERE a.skip IS NOT NULL")
        )  # fmt: skip
        for t in ("move_analysis", "hand_analysis"):
            conn.execute(f"DELETE FROM {t} WHERE (match, hand) IN (SELECT match, hand FROM _ah)")
        conn.execute(f"INSERT INTO hand_analysis BY NAME SELECT * FROM {ha} JOIN _ah USING (match, hand)")
        if ma:
            conn.execute(f"INSERT INTO move_analysis BY NAME SELECT * FROM {ma} JOIN _ah USING (match, hand)")
        conn.execute("UPDATE matches SET analysis = ? WHERE match IN (SELECT DISTINCT match FROM _ah)", [self.batch])
        got = one(conn, "SELECT count(*) FROM _ah")
        conn.execute("DROP TABLE _ah")
        return int(got[0]) if got else 0

    # -- files of a run

    def _files(self) -> int:
        conn = self.conn
        lf = self.src["log_files"]
        shas = [r["sha256"] for r in self._columns("log_files", ["sha256"]).to_pylist()]
        with _registered(conn, "_shas", pa.table({"sha256": pa.array(shas, pa.string())})):
            known = {
                s for (s,) in conn.execute(
                    "SELECT sha256 FROM log_files JOIN _shas USING (sha256)"
                ).fetchall()
            }  # fmt: skip
        conn.execute(
            f"INSERT INTO log_files BY NAME SELECT * FROM {lf} "
            "WHERE sha256 NOT IN (SELECT sha256 FROM log_files)"
        )
        # A known file read again from other paths: remember them.
        conn.execute(
            "UPDATE log_files SET paths = list_concat(log_files.paths, "
            "  list_filter(b.paths, lambda p: NOT list_contains(log_files.paths, p))) "
            f"FROM {lf} b WHERE log_files.sha256 = b.sha256 "
            "AND len(list_filter(b.paths, lambda p: NOT list_contains(log_files.paths, p))) > 0"
        )
        ff = self.src.get("file_findings")
        if self.mode == "replace":
            # A re-read after a fix: the counts and unowned lines are the new truth.
            conn.execute(
                f"UPDATE log_files SET lines = b.lines, bad_lines = b.bad_lines "
                f"FROM {lf} b WHERE log_files.sha256 = b.sha256"
            )
            if known:
                with _registered(conn, "_known", pa.table({"sha256": sorted(known)})):
                    conn.execute(
                        "DELETE FROM findings WHERE match IS NULL "
                        "AND sha256 IN (SELECT sha256 FROM _known)"
                    )
            known = set()
        if ff is not None:
            with _registered(conn, "_known", pa.table({"sha256": pa.array(sorted(known), pa.string())})):
                conn.execute(
                    f"INSERT INTO findings BY NAME SELECT * FROM {ff} "
                    "WHERE sha256 NOT IN (SELECT sha256 FROM _known)"
                )
        return len(shas) - len(known)

class _Derived:
    """What a group of batches changes beyond its own rows, once for the group:
    SEED_REUSED with the verdicts, players, and the player tables (rows of
    deleted matches go; the new matches are marked in ``player_pending``,
    for :func:`derive_player_rows`)."""

    def __init__(self, conn: duckdb.DuckDBPyConnection, loaders: Sequence[_BatchLoader]) -> None:
        self.conn = conn
        self.loaders = loaders
        self.new: set[str] = set().union(*(b.new for b in loaders))
        self.gone: set[str] = set().union(*(b.gone for b in loaders))
        self.old_seeds = [x for b in loaders for x in b.old_seeds]
        self.old_players = [x for b in loaders for x in b.old_players]
        # the loader whose player rows a new match takes: the last to write it
        self.covered: dict[str, int] = {}
        for i, b in enumerate(loaders):
            for m in b.with_players:
                self.covered[m] = i
            for m in b.without_players:
                self.covered.pop(m, None)

    def run(self) -> None:
        conn = self.conn
        if self.gone:
            with _registered(conn, "_pm", _ids(self.gone)):
                conn.execute(_FORGET_REPORTS)
                for t in (*PLAYER_TABLES, "player_pending"):
                    conn.execute(f"DELETE FROM {t} WHERE match IN (SELECT match FROM _pm)")
        if self.new:
            with _registered(conn, "_pm", _ids(self.new)):
                conn.execute("INSERT INTO player_pending SELECT match FROM _pm")
        if self.new or self.old_seeds or self.old_players:
            self._refresh()

    def _refresh(self) -> None:
        """SEED_REUSED findings, verdicts and players of what the batch touched."""
        conn = self.conn
        with (
            _registered(conn, "_new", _ids(self.new)),
            _registered(conn, "_old_seeds", pa.table({"seed": pa.array(self.old_seeds, pa.string())})),
            _registered(conn, "_old_players", pa.table({"player": pa.array(self.old_players, pa.string())})),
        ):
            conn.execute(
                "CREATE OR REPLACE TEMP TABLE _aseeds AS "
                "SELECT seed FROM _old_seeds UNION SELECT seed FROM seeds JOIN _new USING (match)"
            )
            # Matches whose SEED_REUSED may change: those sharing an affected
            # seed now, and those that had the finding through one.
            conn.execute(
                "CREATE OR REPLACE TEMP TABLE _amatch AS "
                "WITH shared AS (SELECT seed FROM seeds JOIN _aseeds USING (seed) "
                "  GROUP BY seed HAVING count(DISTINCT match) > 1) "
                "SELECT DISTINCT match FROM seeds JOIN shared USING (seed) "
                "UNION SELECT DISTINCT f.match FROM findings f WHERE f.code = 'SEED_REUSED' "
                "  AND f.match IN (SELECT match FROM seeds JOIN _aseeds USING (seed))"
            )
            conn.execute(
                "DELETE FROM findings WHERE code = 'SEED_REUSED' "
                "AND match IN (SELECT match FROM _amatch)"
            )
            # One finding per match and seed, worded as validate.seed_reuse.
            # It names the line the seed was read from (the anchor: match_start).
            conn.execute(
                "INSERT INTO findings (match, hand, seq, code, severity, message, file, line, sha256, mno) "
                "SELECT a.match, nullif(min(a.hand), 0), NULL, 'SEED_REUSED', 'error', "
                "  'the ' || CASE WHEN min(a.hand) = 0 THEN 'anchor' "
                "    ELSE 'seed of hand ' || min(a.hand) END "
                "  || ' is also used by match ' || string_agg(DISTINCT b.match, ', ' ORDER BY b.match), "
                "  arg_min(a.file, a.hand), arg_min(a.line, a.hand), arg_min(a.sha256, a.hand), "
                "  (SELECT m.mno FROM matches m WHERE m.match = a.match) "
                "FROM seeds a JOIN seeds b ON a.seed = b.seed AND a.match <> b.match "
                "WHERE a.match IN (SELECT match FROM _amatch) "
                "GROUP BY a.match, a.seed"
            )
            conn.execute(
                "UPDATE matches SET errors = c.errors, warnings = c.warnings, verdict = CASE "
                "  WHEN matches.verdict = 'unreadable' THEN 'unreadable' "
                "  WHEN c.errors > 0 THEN 'invalid' ELSE 'valid' END "
                "FROM (SELECT a.match, count(f.code) FILTER (WHERE f.severity = 'error') AS errors, "
                "  count(f.code) FILTER (WHERE f.severity = 'warning') AS warnings "
                "  FROM _amatch a LEFT JOIN findings f ON f.match = a.match GROUP BY a.match) c "
                "WHERE matches.match = c.match"
            )
            conn.execute(
                "CREATE OR REPLACE TEMP TABLE _aplayers AS "
                "SELECT player FROM _old_players UNION SELECT player FROM seats JOIN _new USING (match)"
            )
            conn.execute("DELETE FROM players WHERE player IN (SELECT player FROM _aplayers)")
            conn.execute(
                "INSERT INTO players "
                "SELECT s.player, "
                "  arg_max(s.name, coalesce(m.started, TIMESTAMPTZ '1970-01-01') ) "
                "    FILTER (WHERE s.name IS NOT NULL), "
                "  bool_or(s.bot), count(DISTINCT s.match), min(m.started), "
                "  max(coalesce(m.ended, m.started)) "
                "FROM seats s JOIN matches m USING (match) "
                "WHERE s.player IN (SELECT player FROM _aplayers) GROUP BY s.player"
            )
            for t in ("_aseeds", "_amatch", "_aplayers"):
                conn.execute(f"DROP TABLE {t}")


def delete_match(conn: duckdb.DuckDBPyConnection, match: str, *, data_dir: Path | None = None) -> bool:
    """Delete a match as re-ingest replaces one (:class:`_BatchLoader`'s delete
    and :class:`_Derived`), in one transaction; False if it is not stored.

    The store is then as if the match had never been loaded: the other
    matches of its seeds lose the SEED_REUSED findings that named it (and
    their verdicts follow), its rematches are validated again without it,
    ``players`` and the player tables drop what was its, and the after-commit
    subscribers (player reports, ratings, insights) run as after a load.
    ``data_dir`` (where the kept logs are) defaults to the database's folder.
    """
    data = data_dir if data_dir is not None else _db_layout(conn).data
    with transaction(conn):
        found = one(conn, "SELECT batch FROM matches WHERE match = ?", [match])
        if found:
            loader = _BatchLoader(conn, str(found[0] or ""), "delete", {}, {}, data)
            loader.remove({match})
            _Derived(conn, [loader]).run()
    if found:
        derive_player_rows(conn)
    return found is not None


# -- thin reads for the API ------------------------------------------------------


def _dicts(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    cols = [d[0] for d in cur.description or ()]
    return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]


def table_counts(conn: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Rows of every store table."""
    out = {}
    for t in (*TABLES, "log_files", "players", "batches"):
        row = one(conn, f"SELECT count(*) FROM {t}")
        out[t] = int(row[0]) if row else 0
    return out


def get_match(conn: duckdb.DuckDBPyConnection, match: str) -> dict[str, Any] | None:
    rows = _dicts(conn.execute("SELECT * FROM matches WHERE match = ?", [match]))
    return rows[0] if rows else None


def get_hands(conn: duckdb.DuckDBPyConnection, match: str) -> list[dict[str, Any]]:
    return _dicts(conn.execute("SELECT * FROM hands WHERE match = ? ORDER BY hand", [match]))


def get_moves(conn: duckdb.DuckDBPyConnection, match: str, hand: int) -> list[dict[str, Any]]:
    return _dicts(
        conn.execute("SELECT * FROM moves WHERE match = ? AND hand = ? ORDER BY ply", [match, hand])
    )


def get_findings(conn: duckdb.DuckDBPyConnection, match: str | None) -> list[dict[str, Any]]:
    """A match's findings, or (``None``) the lines that belong to no match."""
    if match is None:
        return _dicts(conn.execute("SELECT * FROM findings WHERE match IS NULL ORDER BY file, line"))
    return _dicts(
        conn.execute(
            "SELECT * FROM findings WHERE match = ? ORDER BY hand NULLS FIRST, seq NULLS FIRST, code",
            [match],
        )
    )


def stored_files(conn: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """The kept log files, oldest read first."""
    return _dicts(conn.execute("SELECT * FROM log_files ORDER BY read_at, sha256"))


def check_schemas() -> None:
    """Raise if an Arrow schema of replay.frames does not name exactly the
    columns of its SQL table (the tests call it)."""
    conn = duckdb.connect(config={"python_enable_replacements": False})
    migrate(conn)
    for name, schema in SCHEMAS.items():
        table = "findings" if name == "file_findings" else name
        cols = [r[0] for r in conn.execute(f"DESCRIBE {table}").fetchall()]
        if table in NUMBERED:
            cols.remove("mno")  # the loader's
        if sorted(cols) != sorted(schema.names):
            raise AssertionError(f"{name}: SQL {cols} vs Arrow {schema.names}")
