"""Content addresses: the code that validates, and the batches it makes.

A batch of ``replay ingest`` is a pure function of its shard (the lines of
some whole matches, the first leaders of the matches they are rematches
of) and of the code. Its lines are named exactly by the sha256 of the kept
file they are in and their line numbers there (a kept file is immutable
and named by its hash). So a batch can be named by what it is made of:
the same shard made again, by another worker, by a re-run after a crash,
gets the same name, which the spool and the loader already know (a pending
batch is not written twice; a batch recorded in ``batches`` is not loaded
twice).

>>> a, b = Shard("add"), Shard("add")
>>> for s in (a, b):
...     s.file("a.jsonl", "ab" * 32)
...     s.match(b"m1", [(0, 0)], b"\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00")
>>> a.name() == b.name() and a.name().startswith("s")
True
>>> b.leader("m0", 2)
>>> a.name() == b.name()
False
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterator, Sequence
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Final

import replay

__all__ = ["CodeMismatch", "Shard", "check_code", "code_version"]

#: Length of the hex digest in a batch name (160 bits).
NAME_HEX: Final = 40


@functools.cache
def code_version() -> str:
    """The sha256 of the package's Python sources (its subpackages' too) and
    migrations (hex).

    Two processes with the same digest validate alike: the digest goes into
    every batch name, and a worker of a cluster refuses a task from a
    process whose digest differs (:func:`check_code`). The compiled
    accelerator is left out: it gives the same results as the Python it
    speeds up (tests/test_ingest.py), and a wheel need not ship its source.
    """
    h = hashlib.sha256(f"domino-replay {replay.__version__}\n".encode())
    root = resources.files("replay")
    names = sorted(
        [*_sources(root, "", ".py"), *_sources(root.joinpath("sql"), "sql/", ".sql")]
    )
    for name, p in names:
        data = p.read_bytes()
        h.update(f"{name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def _sources(folder: Traversable, prefix: str, suffix: str) -> Iterator[tuple[str, Traversable]]:
    """(path under the package, file) of the ``suffix`` files in ``folder``
    and its subpackages (``ingest/route.py``)."""
    for p in folder.iterdir():
        if p.is_dir():
            if p.joinpath("__init__.py").is_file():
                yield from _sources(p, f"{prefix}{p.name}/", suffix)
        elif p.name.endswith(suffix):
            yield f"{prefix}{p.name}", p


class CodeMismatch(RuntimeError):
    """A worker runs other code than the process that sent it the task."""


def check_code(wanted: str, where: str = "this worker") -> None:
    """Raise :class:`CodeMismatch` unless this process's code is ``wanted``."""
    mine = code_version()
    if wanted and wanted != mine:
        raise CodeMismatch(
            f"{where} runs other replay code (sources {mine[:12]}) than the ingest that sent "
            f"the task ({wanted[:12]}): install the same version everywhere"
        )


class Shard:
    """The name of a batch, made from its inputs as they are added.

    Every part is length-prefixed, so no two different shards hash alike
    by running into each other.
    """

    __slots__ = ("_h",)

    def __init__(self, mode: str, kind: str = "matches") -> None:
        self._h = hashlib.sha256()
        self._put(code_version().encode(), kind.encode(), mode.encode())

    def _put(self, *parts: bytes) -> None:
        for p in parts:
            self._h.update(len(p).to_bytes(8, "little"))
            self._h.update(p)

    def file(self, label: str, sha256: str) -> None:
        """A file the shard reads, by index of addition (its label is in the rows)."""
        self._put(b"F", label.encode("utf-8", "surrogatepass"), sha256.encode())

    def match(self, key: bytes, segments: Sequence[tuple[int, int]], lines: bytes, parent: bytes | None = None) -> None:
        """A match: its routing key, segments (file index, first line index)
        and the numbers of its lines (bytes of an ``array('q')``)."""
        self._put(b"M", key, repr(list(segments)).encode(), lines, parent or b"")

    def leader(self, match: str, leader: int | None) -> None:
        """A first leader the shard is given (of a match it has rematches of)."""
        self._put(b"L", match.encode("utf-8", "surrogatepass"), repr(leader).encode())

    def extra(self, *parts: str) -> None:
        """Anything else the batch is made from."""
        self._put(b"X", *(p.encode("utf-8", "surrogatepass") for p in parts))

    def name(self) -> str:
        return "s" + self._h.copy().hexdigest()[:NAME_HEX]
