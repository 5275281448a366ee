"""The store's one writer: loading spool batches, and deleting matches.

Whoever holds the database for writing (``replay ingest``, or the API
server while it runs) loads the spool with :func:`load_spool`: one
transaction per group of batches, each batch id recorded in ``batches`` in
the same transaction, the folders deleted after the commit. A batch is
therefore loaded exactly once, and a crash anywhere leaves either the old
state or the new one. :func:`delete_match` takes a match out through the
same path a reloaded match is replaced by. What is derived from the rows
(:mod:`replay.store.derive`) follows in the same transaction, and the
subscribers (:mod:`replay.store.hooks`) after it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from replay.store import hooks
from replay.store.analysis_blob import repack
from replay.store.derive import FILL_PASSES, PLAYER_TABLES, Derived, HeldRows, derive_player_rows
from replay.store.rows import TABLES
from replay.store.schema import (
    NUMBERED,
    db_layout,
    match_ids,
    numbered_rows,
    one,
    registered,
    store_identity,
    transaction,
)
from replay.store.spool import (
    SPOOL_SUFFIX,
    BatchRefused,
    Refusal,
    check_batch,
    check_manifest,
    clean_spool_tmp,
    part_path,
    pending_batches,
    read_part,
    refuse,
    writer_alive,
)

__all__ = [
    "BatchLoader",
    "GROUP_BATCHES",
    "arrow_on_malloc",
    "delete_match",
    "load_batch",
    "load_batches",
    "load_spool",
]

log = logging.getLogger("replay.store")


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
    refused: list[Refusal] | None = None,
) -> int:
    """Load the pending batches (or ``only`` those); the number loaded.

    The batches of one ingest run are one unit: the run's last batch (its
    ``log_files``, which mark its files stored) names all the others, and
    they are loaded together, in one transaction, once the last one is
    there, or not at all; a batch of a run still being written waits for
    it (a batch of a run that died first is loaded on its own: its files
    are not marked stored, so ingesting them again completes it). Every
    batch of a unit is checked whole (``replay.store.spool.check_batch``:
    the store it was written for, checksums, Arrow validated in full) before
    anything of the unit is loaded. A unit that fails the check, or whose
    load fails, is refused: set aside in ``spool/.failed`` with its reason,
    logged, and appended to ``refused``; the rest of the spool goes on.
    ``spool_dir`` defaults to the spool beside the connected database. The
    kept logs are looked up beside the spool (for matches that must be
    validated again from all their files).
    """
    spool = Path(spool_dir) if spool_dir is not None else db_layout(conn).spool
    clean_spool_tmp(spool)
    todo = list(only) if only is not None else pending_batches(spool)
    out: list[Refusal] = refused if refused is not None else []
    identity = store_identity(spool.parent)
    loaded = 0
    with HeldRows(spool) as held, _then_derive(conn, held=held):  # also what a crash left marked
        for unit, files in _units(conn, todo, identity, out):
            loaded += _load_unit(conn, unit, files, spool.parent, identity, held, out)
    return loaded


def _refused(bdirs: list[Path], reason: str, files: Mapping[str, str], out: list[Refusal]) -> None:
    for r in refuse(bdirs, reason, files):
        log.error("%s", r.line())
        out.append(r)


def _read_files(manifest: Mapping[str, Any]) -> dict[str, str]:
    """The kept files a batch's run read (sha256 -> path), as far as its manifest says."""
    got: dict[str, str] = {}
    for sha, v in dict(manifest.get("files") or {}).items():
        if isinstance(v, dict) and isinstance(v.get("path"), str):
            got[str(sha)] = v["path"]
    for sha, v in dict(manifest.get("read") or {}).items():
        got[str(sha)] = str(v)
    return got


def _units(
    conn: duckdb.DuckDBPyConnection, todo: Sequence[Path], identity: str | None, out: list[Refusal],
) -> Iterator[tuple[list[Path], dict[str, str]]]:
    """The pending batches as units loaded together: a run's batches with its
    last one, or a batch on its own; each with the files its run read."""
    manifests: dict[Path, dict[str, Any]] = {}
    for b in todo:
        try:
            manifests[b] = check_manifest(b, identity)
        except BatchRefused as exc:
            _refused([b], str(exc), {}, out)
    listed = {n for m in manifests.values() for n in m.get("run_batches") or ()}
    claimed: set[Path] = set()
    for b, m in manifests.items():
        names = m.get("run_batches")
        if isinstance(names, list):
            members: list[Path] = []
            missing: list[str] = []
            for n in names:
                p = b.parent / str(n)
                if p in manifests:
                    members.append(p)
                elif not one(conn, "SELECT 1 FROM batches WHERE batch = ?", [str(n)]):
                    missing.append(str(n))
            files = _read_files(m)
            for p in members:
                files.update(_read_files(manifests[p]))
            if any(p in claimed for p in members):
                continue  # another run's unit loads it first; this one the next time
            if missing:
                shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
                _refused([*members, b], f"{len(missing)} batch(es) of its run missing ({shown})", files, out)
                continue
            claimed.update(members)
            yield [*members, b], files
        elif b.name in listed:
            continue  # loaded with its run's last batch
        elif m.get("run") is not None and writer_alive(m):
            continue  # its run is still writing: it comes with the run's last batch
        else:
            yield [b], _read_files(m)


def _load_unit(
    conn: duckdb.DuckDBPyConnection, unit: list[Path], files: Mapping[str, str], data_dir: Path,
    identity: str | None, held: HeldRows, out: list[Refusal],
) -> int:
    """Check every batch of a unit whole, then load them in one transaction;
    refuse the unit if either fails. The number loaded."""
    try:
        for b in unit:
            check_batch(b, identity)
    except BatchRefused as exc:
        _refused(unit, str(exc), files, out)
        return 0
    try:
        return _load_group(conn, unit, data_dir, set_aside=False, held=held, checked=True)
    except Exception as exc:  # noqa: BLE001 - the load failed (a full disk...): the unit is refused, loudly
        left = [b for b in unit if b.is_dir()]
        _refused(left, f"its load failed: {type(exc).__name__}: {exc}", files, out)
        return 0


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


def _lit(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


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
    brought (replay.store.player_rows) are set aside for :func:`derive_player_rows` (``held=``).
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
        except Exception as exc:
            seen.extend(source)
            if len(seen) == 1:
                _set_aside(seen, exc)
                raise
            try:
                loaded = sum(
                    _load_group(conn, [b], data_dir, set_aside=True, held=held, before_commit=before_commit) == 1
                    for b in seen
                )
            except _Abort as exc:
                raise exc.cause from None
    return loaded


def _set_aside(bdirs: Sequence[Path], why: BaseException | None = None) -> None:
    """Move batches that failed to ``spool/.failed``, beside the pending ones
    (an owner's own batch is in spool/.tmp), saying why, and log it."""
    reason = f"{type(why).__name__}: {why}" if why is not None else "its load failed"
    for r in refuse(list(bdirs), reason):
        log.error("%s", r.line())


class _Abort(Exception):
    """What a load's ``before_commit`` raised: not the batches' fault."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def _load_group(
    conn: duckdb.DuckDBPyConnection, bdirs: Iterable[Path], data_dir: Path, *, set_aside: bool,
    held: HeldRows | None = None, before_commit: Callable[[], None] | None = None,
    seen: list[Path] | None = None, checked: bool = False,
) -> int:
    """Load ``bdirs`` in one transaction (each is put in ``seen`` as it is
    taken); on failure they are set aside if ``set_aside``. ``checked``: each
    batch was checked whole just before (its files are still compared with
    their checksums as they are read, not validated again)."""
    loaders: list[BatchLoader] = []
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
            parts = {name: part_path(bdir, name) for name in manifest["tables"]}
            loader = BatchLoader(conn, batch, mode, parts, manifest, data_dir, tag=str(len(loaders)),
                                 full=not checked)  # fmt: skip
            loaders.append(loader)
            touched, files = loader.load()
            loader.close()  # its rows are in: its mapped files go before the next batch's
            conn.execute(
                "INSERT INTO batches VALUES (?, now(), ?, ?, ?)", [batch, mode, touched, files]
            )
        if loaders:
            derived = Derived(conn, loaders)
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
            _set_aside(taken, exc)
        raise
    finally:
        for loader in loaders:
            loader.close()
    if held is not None:
        held.keep(loaders, covered)
    for bdir in taken:
        shutil.rmtree(bdir, ignore_errors=True)
    return len(loaders)


class BatchLoader:
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
        full: bool = True,
    ) -> None:
        self.conn = conn
        self.batch = batch
        self.mode = mode
        self.parts = parts
        self.manifest = manifest
        self.data_dir = data_dir
        # each part as a SQL source: a registered Arrow table read from its IPC
        # file into memory (compared with the manifest's checksum if it has
        # one, validated in full unless checked just before: never a mapped
        # file, which a truncation turns into a crash), or read_parquet() of
        # an older batch
        self.src: dict[str, str] = {}
        self.arrow: dict[str, pa.Table] = {}
        sums = manifest.get("parts")
        for name, path in parts.items():
            if path.suffix == SPOOL_SUFFIX:
                expect = sums.get(path.name) if isinstance(sums, dict) else None
                table = read_part(path, expect, full=full or expect is None)
                self.arrow[name] = table
                self.src[name] = f"_part{tag}_{name}"  # one name a batch of a group
                conn.register(self.src[name], table)
            else:
                self.src[name] = f"read_parquet({_lit(path)})"
        self.new: set[str] = set()  # matches (re)written by this batch
        self.old_seeds: list[str] = []
        self.old_players: list[str] = []
        self.gone: set[str] = set()  # matches deleted by this batch (most written again)
        # matches whose player rows are the batch's own (replay.store.player_rows), and
        # those written otherwise (made from the stored rows)
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
        names: list[str] = table.schema.names if table is not None else pq.read_schema(self.parts[name]).names
        return names

    def load(self) -> tuple[int, int]:
        """The batch's own rows (the derived ones are :class:`Derived`'s):
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
        with registered(conn, "_batch_ids", match_ids(batch_files.keys())):
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
        with registered(conn, "_gone", match_ids(ids)):
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
            stack.enter_context(registered(conn, "_take", match_ids(ids)))
            where = "" if everything else " WHERE match IN (SELECT match FROM _take)"
            for t in TABLES:
                if t in self.parts:
                    src = self.src[t]
                    if t in numbered:  # an older Parquet batch goes in unnumbered
                        src = stack.enter_context(registered(conn, f"{src}_n", numbered[t]))
                    conn.execute(f"INSERT INTO {t} BY NAME SELECT * FROM {src}{where}")
            if "hands" in self.parts and "passes" not in self._names("hands"):
                # a batch spooled by code older than migration 002
                conn.execute(FILL_PASSES)
            if "hand_analysis" in self.parts:
                repack(conn, "_take")  # the replay's copy of the analysis (migration 022)
        if all(t in self.parts for t in PLAYER_TABLES):
            self.with_players |= ids
        else:  # a batch spooled before replay.store.player_rows: derived from the tables
            self.without_players |= ids

    def insert_tables(self, tables: Mapping[str, pa.Table]) -> None:
        """Insert Arrow tables of whole matches (already deleted), numbered."""
        if "matches" in tables:
            order, base = _match_order(tables["matches"]), _next_base(self.conn)
            tables = {t: _numbered(v, order, base) if t in NUMBERED else v for t, v in tables.items()}
        for t in TABLES:
            table = tables.get(t)
            if table is not None and table.num_rows:
                with registered(self.conn, "_frame", table):
                    self.conn.execute(f"INSERT INTO {t} BY NAME SELECT * FROM _frame")
        analysed = tables.get("hand_analysis")
        if analysed is not None and analysed.num_rows:
            with registered(self.conn, "_frame", analysed):
                repack(self.conn, "_frame")  # the replay's copy of the analysis (migration 022)

    def _revalidate(self, wanted: Mapping[str, set[str]]) -> None:
        """Validate matches again from all their kept files and replace them."""
        tables = hooks.revalidate(self.conn, self.data_dir, wanted, self.batch, self.manifest)
        self._delete(set(wanted) - self.new)  # replaced matches of earlier batches
        self.insert_tables(tables)
        self.new |= set(wanted)
        self.without_players |= set(wanted)

    def _rematches(self) -> None:
        """Rematches stored as REMATCH_UNKNOWN whose earlier match is now in the
        store (either side may be new): validated again with its first leader."""
        conn = self.conn
        with registered(conn, "_new", match_ids(self.new)):
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
        tables = hooks.revalidate(self.conn, self.data_dir, wanted, self.batch, self.manifest)
        self._delete(set(wanted))
        self.insert_tables(tables)
        self.new |= set(wanted)
        self.without_players |= set(wanted)

    def remove(self, ids: set[str]) -> None:
        """Delete matches, and validate their rematches again without them
        (as if they had never been stored: REMATCH_UNKNOWN)."""
        conn = self.conn
        self._delete(ids)
        with registered(conn, "_gone", match_ids(ids)):
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
        conn.execute(f"INSERT INTO hand_analysis BY NAME {numbered_rows(ha, '_ah')}")
        if ma:
            conn.execute(f"INSERT INTO move_analysis BY NAME {numbered_rows(ma, '_ah', ply=True)}")
        conn.execute("UPDATE matches SET analysis = ? WHERE match IN (SELECT DISTINCT match FROM _ah)", [self.batch])
        repack(conn, "_ah")  # the replay's copy (migration 022)
        got = one(conn, "SELECT count(*) FROM _ah")
        conn.execute("DROP TABLE _ah")
        return int(got[0]) if got else 0

    # -- files of a run

    def _files(self) -> int:
        conn = self.conn
        lf = self.src["log_files"]
        shas = [r["sha256"] for r in self._columns("log_files", ["sha256"]).to_pylist()]
        with registered(conn, "_shas", pa.table({"sha256": pa.array(shas, pa.string())})):
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
                with registered(conn, "_known", pa.table({"sha256": sorted(known)})):
                    conn.execute(
                        "DELETE FROM findings WHERE match IS NULL "
                        "AND sha256 IN (SELECT sha256 FROM _known)"
                    )
            known = set()
        if ff is not None:
            with registered(conn, "_known", pa.table({"sha256": pa.array(sorted(known), pa.string())})):
                conn.execute(
                    f"INSERT INTO findings BY NAME SELECT * FROM {ff} "
                    "WHERE sha256 NOT IN (SELECT sha256 FROM _known)"
                )
        return len(shas) - len(known)


def delete_match(conn: duckdb.DuckDBPyConnection, match: str, *, data_dir: Path | None = None) -> bool:
    """Delete a match as re-ingest replaces one (:class:`BatchLoader`'s delete
    and :class:`Derived`), in one transaction; False if it is not stored.

    The store is then as if the match had never been loaded: the other
    matches of its seeds lose the SEED_REUSED findings that named it (and
    their verdicts follow), its rematches are validated again without it,
    ``players`` and the player tables drop what was its, and the after-commit
    subscribers (player reports, ratings, insights) run as after a load.
    ``data_dir`` (where the kept logs are) defaults to the database's folder.
    """
    data = data_dir if data_dir is not None else db_layout(conn).data
    with transaction(conn):
        found = one(conn, "SELECT batch FROM matches WHERE match = ?", [match])
        if found:
            loader = BatchLoader(conn, str(found[0] or ""), "delete", {}, {}, data)
            loader.remove({match})
            Derived(conn, [loader]).run()
    if found:
        derive_player_rows(conn)
    return found is not None
