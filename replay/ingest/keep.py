"""Kept files: every log read is copied into ``data/logs/<sha256>.jsonl[.gz]``.

A name under ``logs/`` only ever holds a durable copy: :func:`keep_file`
hashes and copies in one pass, and :class:`Durable` syncs the run's new
copies and links each under its name while the run goes on, so the store
refers to a kept file only once it is durable.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import threading
from collections.abc import Collection, Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from replay.store import Layout, fsync_path

__all__ = ["Durable", "KeptFile", "keep_file", "links_work"]

_GZIP: Final = b"\x1f\x8b"


@dataclass(frozen=True, slots=True)
class KeptFile:
    """A log file as read: its label (the path given), hash and kept copy.

    ``kept`` is where its bytes are read from: the copy under its name, or
    (``temp``) a copy not yet durable, which `Durable` syncs and links under
    its name while the run goes on.
    """

    path: str
    sha256: str
    size: int
    stored: str  # relative to the data directory
    kept: Path
    temp: bool = False


def keep_file(
    path: str | os.PathLike[str], lay: Layout, *, sync: bool = True, label: str | None = None
) -> KeptFile:
    """Copy a file into data/logs/<sha256>.jsonl[.gz], hashing in the same pass
    (so the copy is exactly the bytes hashed, even if the file grows).
    ``label``: the name findings give the file (default: the path given).

    A name under logs/ only ever holds a durable copy. With ``sync=False`` a
    new copy is left in its temporary file (``temp``), for `Durable`.
    """
    lay.logs.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=lay.logs, prefix=f".{os.getpid()}.", suffix=".tmp")
    tmp = Path(name)
    h = hashlib.sha256()
    size = 0
    head = b""
    with open(path, "rb") as src, os.fdopen(fd, "wb") as dst:
        while block := src.read(1 << 20):
            if not size:
                head = block[:2]
            h.update(block)
            dst.write(block)
            size += len(block)
        dst.flush()
        if sync:
            os.fsync(dst.fileno())
    sha = h.hexdigest()
    stored = f"logs/{sha}" + (".jsonl.gz" if head == _GZIP else ".jsonl")
    target = lay.data / stored
    name = label or os.fspath(path)
    if target.exists():
        tmp.unlink()
    elif not sync:
        return KeptFile(name, sha, size, stored, tmp, temp=True)
    else:
        os.replace(tmp, target)
        fsync_path(lay.logs)
    return KeptFile(name, sha, size, stored, target)


def links_work(where: Path) -> bool:
    """Whether `where` (the logs folder) takes hard links: `Durable` needs them."""
    where.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=where, prefix=f".{os.getpid()}.", suffix=".tmp")
    os.close(fd)
    probe = Path(name)
    other = probe.with_name(probe.name + ".link.tmp")
    try:
        os.link(probe, other)
    except OSError:
        return False
    else:
        other.unlink()
        return True
    finally:
        probe.unlink(missing_ok=True)


class Durable(threading.Thread):
    """Syncs the run's new kept copies and links each under its name, off the
    critical path (a 450 MB file: write 0.3 s, fsync 0.8 s; at 1M hands the
    fsyncs were 10 s of the run's start, every worker idle).

    ``files`` are kept files, or futures of files still being kept (taken in
    order, as they come). The run reads the temporary copies meanwhile.
    `wait` is the barrier: the store refers to a kept file only after it
    is durable under its name (a batch's commit waits for the files of that
    batch, not for all of them). `drop` removes the temporary names at the
    end; a run killed first leaves them to `clean_tmp`.
    """

    def __init__(self, files: Iterable[KeptFile | Future[KeptFile]], lay: Layout) -> None:
        super().__init__(name="replay-durable", daemon=True)
        self.source = list(files)
        self.files: list[KeptFile] = []  # the temporary copies seen
        self.lay = lay
        self.error: BaseException | None = None
        self.ready: set[str] = set()  # the sha256 of every file durable under its name
        self.over = False
        self.cond = threading.Condition()

    def run(self) -> None:
        try:
            for item in self.source:
                f = item.result() if isinstance(item, Future) else item
                if f.temp:
                    self.files.append(f)
                    fsync_path(f.kept)
                    with contextlib.suppress(FileExistsError):  # the same bytes twice in the run
                        os.link(f.kept, self.lay.data / f.stored)
                    fsync_path(self.lay.logs)  # the new name is durable too
                with self.cond:
                    self.ready.add(f.sha256)
                    self.cond.notify_all()
        except BaseException as exc:  # raised by wait(), in the run's thread
            self.error = exc
        finally:
            with self.cond:
                self.over = True
                self.cond.notify_all()

    def wait(self, shas: Collection[str] | None = None) -> None:
        """Return once the kept copies of ``shas`` (of every file when None)
        are durable under their names, or raise why not.

        A sha256 the run does not keep was durable before it: it is waited
        for as every file is.
        """
        if self.ident is None:  # never started: nothing to wait for
            return
        with self.cond:
            self.cond.wait_for(lambda: self.over or (shas is not None and self.ready.issuperset(shas)))
            if shas is not None and self.ready.issuperset(shas):
                return
        if self.error is not None:
            raise self.error

    def drop(self) -> None:
        for item in self.source:
            if isinstance(item, Future):
                if not item.done() or item.cancelled() or item.exception() is not None:
                    continue
                item = item.result()
            if item.temp:
                item.kept.unlink(missing_ok=True)
