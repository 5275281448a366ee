"""The spool: validated batches waiting for the store's writer.

A batch is a folder of Arrow IPC files (one a table) and a manifest.json,
written under ``spool/.tmp`` and renamed into ``spool/`` when whole (or, for
the process that loads it itself, kept in ``spool/.tmp``). Whoever holds the
database for writing loads it (:mod:`replay.store.load`).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

import pyarrow as pa

from replay.store.schema import Layout

__all__ = [
    "FILE_TABLES",
    "SPOOL_SUFFIX",
    "clean_spool_tmp",
    "clean_tmp",
    "encode_tables",
    "fsync_path",
    "part_path",
    "pending_batches",
    "write_batch",
    "write_encoded",
]


#: Tables of the final batch of a run: the files read and their unowned lines.
FILE_TABLES: Final = ("log_files", "file_findings")


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
    (:func:`clean_spool_tmp`), and since the run's files were not yet recorded in
    ``log_files`` the next run reads them again. The fsyncs cost the workers
    more than their CPU: each waited behind the writeback of the run's kept
    copies, and in the first 20 s of a 1M-hand run they left both cores
    idle (144.4 s with them, 123.5 s without, one run after the other).

    A batch of that name already pending in the spool is left as it is
    (a batch named by its content, :mod:`replay.ingest.batch_id`, made again).
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


def part_path(bdir: Path, name: str) -> Path:
    path = bdir / f"{name}{SPOOL_SUFFIX}"
    return path if path.exists() else bdir / f"{name}.parquet"


def pending_batches(spool: str | os.PathLike[str]) -> list[Path]:
    """Whole batches waiting in the spool, in the order they were made.

    A batch named by its run and number sorts by its name; one named by its
    content (:mod:`replay.ingest.batch_id`) carries the same key as ``order`` in its
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


def clean_spool_tmp(spool: Path) -> None:
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
    clean_spool_tmp(lay.spool)
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
