"""The spool: validated batches waiting for the store's writer.

A batch is a folder of Arrow IPC files (one a table) and a manifest.json,
written under ``spool/.tmp`` and renamed into ``spool/`` when whole (or, for
the process that loads it itself, kept in ``spool/.tmp``). Whoever holds the
database for writing loads it (:mod:`replay.store.load`).

A batch in the spool proves itself whole before anything of it is loaded
(:func:`check_batch`): its manifest carries the identity of the store it
was written for, the size and sha256 of each of its files and a checksum of
itself, and each file is read into memory, compared with it, and its Arrow
validated in full. A batch that fails is refused: set aside in
``spool/.failed`` with a ``refused.json`` saying why (:func:`refusals`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import pyarrow as pa

from replay.store.schema import Layout, store_identity

__all__ = [
    "FILE_TABLES",
    "SPOOL_SUFFIX",
    "BatchRefused",
    "Refusal",
    "check_batch",
    "check_manifest",
    "clean_spool_tmp",
    "clean_tmp",
    "encode_tables",
    "fsync_path",
    "part_path",
    "pending_batches",
    "read_part",
    "refusals",
    "refuse",
    "write_batch",
    "write_encoded",
    "writer_alive",
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
        # run's critical path) inserts from it with no decoding: half the time
        # of reading the same rows from Parquet
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
    sums: dict[str, dict[str, Any]] = {}
    for name, value in parts.items():
        path = tmp / f"{name}{SPOOL_SUFFIX}"
        write(path, value)
        if sync:
            # read back from the page cache: what the loader compares is what is on disk
            sums[path.name] = {"bytes": path.stat().st_size, "sha256": _sha256(path.read_bytes())}
            fsync_path(path)
    body: dict[str, Any] = {**manifest, "batch": batch, "tables": list(parts)}
    if sync:  # for another process: it proves itself whole (check_batch)
        body["store"] = store_identity(spool.parent)
        body["parts"] = sums
        body.setdefault("host", socket.gethostname())
        body["check"] = _sha256(_canonical(body))
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


def _sha256(data: bytes | memoryview) -> str:
    return hashlib.sha256(data).hexdigest()


def _canonical(body: Mapping[str, Any]) -> bytes:
    """The manifest as its checksum covers it: every field but ``check``."""
    return json.dumps({k: v for k, v in body.items() if k != "check"}, sort_keys=True).encode()


class BatchRefused(Exception):
    """A spool batch that is not whole, or not for this store: never loaded."""


def check_manifest(bdir: Path, identity: str | None) -> dict[str, Any]:
    """The manifest of a batch in the spool, checked: it parses, its
    checksum holds, it lists every file, and it was written for the store
    whose identity is ``identity``. Raises :class:`BatchRefused`."""
    try:
        body = json.loads((bdir / "manifest.json").read_bytes())
    except (OSError, ValueError) as exc:
        raise BatchRefused(f"manifest.json unreadable: {exc}") from None
    if not isinstance(body, dict):
        raise BatchRefused("manifest.json is not an object")
    if body.get("check") != _sha256(_canonical(body)):
        raise BatchRefused("manifest.json does not match its checksum (damaged, or written by older code)")
    if body.get("store") != identity:
        raise BatchRefused(f"written for another store (store-id {body.get('store')!r}, this one {identity!r})")
    tables, sums = body.get("tables"), body.get("parts")
    if not isinstance(tables, list) or not isinstance(sums, dict) or \
            sorted(sums) != sorted(f"{t}{SPOOL_SUFFIX}" for t in tables):  # fmt: skip
        raise BatchRefused("manifest.json does not list a checksum for each of its tables")
    return body


def read_part(path: Path, expect: Mapping[str, Any] | None, *, full: bool = True) -> pa.Table:
    """A batch's Arrow file, read into memory (never mapped: a file cut short
    under a mapping kills the process), compared with ``expect`` (its size and
    sha256 in the manifest) and, if ``full``, validated in full (offsets,
    lengths, UTF-8: damaged memory handed to DuckDB can crash it).
    Raises :class:`BatchRefused`."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BatchRefused(f"{path.name}: {exc.strerror or exc}") from None
    if expect is not None:
        if len(data) != expect.get("bytes"):
            raise BatchRefused(f"{path.name}: {len(data)} bytes, the manifest says {expect.get('bytes')}")
        if _sha256(data) != expect.get("sha256"):
            raise BatchRefused(f"{path.name}: its sha256 is not the manifest's (damaged)")
    try:
        table = pa.ipc.open_file(pa.py_buffer(data)).read_all()
        if full:
            table.validate(full=True)
    except (pa.ArrowException, ValueError, OSError) as exc:
        raise BatchRefused(f"{path.name}: not valid Arrow: {exc}") from None
    return table


def check_batch(bdir: Path, identity: str | None) -> dict[str, Any]:
    """Check a pending batch whole (:func:`check_manifest`, then every file
    through :func:`read_part`); its manifest. Raises :class:`BatchRefused`."""
    body = check_manifest(bdir, identity)
    for t in body["tables"]:
        name = f"{t}{SPOOL_SUFFIX}"
        read_part(bdir / name, body["parts"][name])
    return body


@dataclass(frozen=True, slots=True)
class Refusal:
    """A batch the loader refused: where it was set aside, why, and the kept
    files its run read (not recorded as stored: ingesting them again repairs it)."""

    batch: str
    reason: str
    at: str
    files: dict[str, str]  # sha256 -> the path it was read from
    folder: str

    def line(self) -> str:
        paths = sorted(set(self.files.values()))
        named = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
        return (f"spool batch {self.batch} refused: {self.reason}; set aside in {self.folder}"
                + (f"; ingest again: {named}" if named else ""))  # fmt: skip


def refuse(bdirs: list[Path], reason: str, files: Mapping[str, str] | None = None) -> list[Refusal]:
    """Set batches aside in ``spool/.failed`` (beside the pending ones; an
    owner's own batch is in spool/.tmp), each with a ``refused.json``."""
    out: list[Refusal] = []
    if not bdirs:
        return out
    home = bdirs[0].parent
    failed = (home.parent if home.name == ".tmp" else home) / ".failed"
    failed.mkdir(exist_ok=True)
    at = datetime.now(UTC).isoformat(timespec="seconds")
    for bdir in bdirs:
        target = failed / bdir.name
        if target.exists():  # refused before (the same content made again)
            shutil.rmtree(target, ignore_errors=True)
        try:
            os.rename(bdir, target)
        except OSError:
            target = bdir
        got = Refusal(bdir.name, reason, at, dict(files or {}), str(target))
        with contextlib.suppress(OSError):
            (target / "refused.json").write_text(json.dumps(
                {"batch": got.batch, "reason": reason, "at": at, "files": got.files}, sort_keys=True))
        out.append(got)
    return out


def refusals(spool: Path) -> list[Refusal]:
    """The batches set aside in ``spool/.failed``, newest first."""
    root = spool / ".failed"
    if not root.is_dir():
        return []
    out = []
    for p in root.iterdir():
        try:
            body = json.loads((p / "refused.json").read_text())
            out.append(Refusal(str(body["batch"]), str(body["reason"]), str(body["at"]),
                               {str(k): str(v) for k, v in dict(body.get("files") or {}).items()}, str(p)))
        except (OSError, ValueError, KeyError, TypeError):
            out.append(Refusal(p.name, "set aside (no reason recorded)", "", {}, str(p)))
    return sorted(out, key=lambda r: r.at, reverse=True)


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


def writer_alive(manifest: Mapping[str, Any]) -> bool:
    """Whether the run that wrote a batch may still be writing its other
    batches (its process lives, or it ran on another host: no telling)."""
    run = manifest.get("run")
    if not isinstance(run, str):
        return False
    if manifest.get("host", socket.gethostname()) != socket.gethostname():
        return True
    pid = run.rsplit("-", 1)[-1]
    return pid.isdigit() and _alive(int(pid))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
