"""Handing a chunk's bytes to a pool worker through shared memory.

A chunk of 10,000 hands is about 36 MB of log lines. Sent as task
arguments, those bytes are pickled, written through a pipe 64 KB at a
time and unpickled: about 140 ms of CPU a chunk on both sides together,
some 14 CPU-seconds at 1M hands. Here the parent copies them once into a
shared memory segment and the worker copies them once out of it (about
40 ms together); only the offsets go through the pipe.

The parent owns every segment (:class:`Segments`): it creates them through
:mod:`multiprocessing.shared_memory`, whose resource tracker removes them
if the process is killed, reuses them from chunk to chunk (their pages stay
mapped: no page faults after the first chunks) and unlinks them at the end.
A worker only maps a segment by its path and reads it (:func:`receive`),
so it registers nothing with a tracker of its own.

>>> segs = Segments()
>>> held = segs.put([b"ab", b"", b"cde"])
>>> held is not None and receive(held.name, held.spans)
[b'ab', b'', b'cde']
>>> segs.release(held); segs.close()
"""

from __future__ import annotations

import contextlib
import mmap
import os
import sys
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing import shared_memory
from typing import Final

#: Where POSIX shared memory lives on Linux; elsewhere the bytes go by pipe.
SHM_DIR: Final = "/dev/shm"

#: Free segments kept for reuse (the chunks in flight, plus one filling).
KEEP: Final = 4


@dataclass(slots=True)
class Held:
    """One chunk's bytes in a segment: its name and each blob's (start, end)."""

    name: str
    spans: array[int]


def available() -> bool:
    """Whether segments can be handed over by path (Linux, /dev/shm writable)."""
    return sys.platform.startswith("linux") and os.access(SHM_DIR, os.W_OK | os.X_OK)


class Segments:
    """The parent's shared memory segments, reused from chunk to chunk."""

    def __init__(self) -> None:
        self.free: list[shared_memory.SharedMemory] = []
        self.busy: dict[str, shared_memory.SharedMemory] = {}

    def put(self, blobs: Sequence[bytes]) -> Held | None:
        """Copy ``blobs`` into a free segment (or a new one); None if none can be made."""
        size = sum(len(b) for b in blobs)
        seg = self._take(max(size, 1))
        if seg is None:
            return None
        spans = array("q")
        buf = seg.buf
        assert buf is not None
        off = 0
        for b in blobs:
            end = off + len(b)
            buf[off:end] = b
            spans.append(off)
            spans.append(end)
            off = end
        del buf
        self.busy[seg.name] = seg
        return Held(seg.name, spans)

    def _take(self, size: int) -> shared_memory.SharedMemory | None:
        for k, seg in enumerate(self.free):
            if seg.size >= size:
                return self.free.pop(k)
        try:
            # a quarter more than asked: the next chunks are about the same size
            seg = shared_memory.SharedMemory(create=True, size=size + size // 4)
        except OSError:
            return None
        try:
            _reserve(seg)
        except OSError:
            _drop(seg)
            return None
        return seg

    def release(self, held: Held) -> None:
        """The worker is done with ``held``'s segment: keep it for the next chunk."""
        seg = self.busy.pop(held.name, None)
        if seg is None:
            return
        self.free.append(seg)
        self.free.sort(key=lambda s: s.size)
        while len(self.free) > KEEP:
            _drop(self.free.pop(0))

    def close(self) -> None:
        """Unlink every segment (a worker still reading one keeps its mapping)."""
        for seg in [*self.free, *self.busy.values()]:
            _drop(seg)
        self.free.clear()
        self.busy.clear()


def _path(name: str) -> str:
    return os.path.join(SHM_DIR, name.lstrip("/"))


def _reserve(seg: shared_memory.SharedMemory) -> None:
    """Allocate the segment's pages now: /dev/shm is a tmpfs, often small in a
    container (64 MB by default in Docker), and a write past its end through
    a mapping is a SIGBUS, where this is an OSError (and the pipe is used)."""
    fd = os.open(_path(seg.name), os.O_RDWR)
    try:
        os.posix_fallocate(fd, 0, seg.size)
    finally:
        os.close(fd)


def _drop(seg: shared_memory.SharedMemory) -> None:
    seg.close()
    with contextlib.suppress(FileNotFoundError):
        seg.unlink()


def receive(name: str, spans: Sequence[int]) -> list[bytes]:
    """The blobs of a segment, copied out (in a worker: mapped by path, read only)."""
    fd = os.open(_path(name), os.O_RDONLY)
    try:
        with mmap.mmap(fd, os.fstat(fd).st_size, prot=mmap.PROT_READ) as mm:
            return [mm[spans[k] : spans[k + 1]] for k in range(0, len(spans), 2)]
    finally:
        os.close(fd)
