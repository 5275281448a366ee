"""A small thread-safe LRU (rendered hands, player reports, audits, ratings), and
one whose entries outlive a store generation while their data is unchanged (`Versioned`).

Keys carry the store generation where the value depends on the data, so a
load makes the old entries unreachable and they age out.

>>> cache = LRU(2)
>>> cache.get_or_make("a", lambda: 1), cache.get_or_make("b", lambda: 2)
(1, 2)
>>> cache.get_or_make("a", lambda: 9)  # kept: "a" is now the most recent
1
>>> cache.put("c", 3); cache.get("b") is None  # "b" was the least recent
True
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

__all__ = ["LRU", "Versioned"]


class LRU:
    """Values by key, the `size` most recently used kept; thread-safe."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.data: OrderedDict[Any, Any] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self.lock:
            if key in self.data:
                self.data.move_to_end(key)
                return self.data[key]
        return None

    def put(self, key: Any, value: Any) -> None:
        with self.lock:
            self.data[key] = value
            self.data.move_to_end(key)
            while len(self.data) > self.size:
                self.data.popitem(last=False)

    def get_or_make(self, key: Any, make: Callable[[], Any]) -> Any:
        """The value under `key`, made by `make()` (outside the lock: two
        threads may both make it; the last one is kept) when not kept."""
        with self.lock:
            if key in self.data:
                self.data.move_to_end(key)
                return self.data[key]
        value = make()
        self.put(key, value)
        return value


class Versioned(LRU):
    """An LRU whose entries stay valid across store generations while the data
    they were made from is unchanged.

    A spool load (every 2 s while an ingest runs) bumps the generation; an
    entry made at an older generation is checked with a cheap version query
    (the batch that stored the match, or a digest over a player's matches)
    before it is recomputed.
    """

    def fresh(self, key: Any, gen: int) -> Any:
        """The value kept under `key` for generation `gen`, else None."""
        got = self.get(key)
        return got[2] if got is not None and got[0] == gen else None

    def revalidate(self, key: Any, gen: int, version: Callable[[], Any]) -> Any:
        """The value of an entry from an older generation whose data's version
        is unchanged (stamped `gen` now), else None."""
        got = self.get(key)
        if got is None or got[0] == gen:
            return None if got is None else got[2]
        ver = version()
        if ver is not None and got[1] == ver:
            self.put(key, (gen, ver, got[2]))
            return got[2]
        return None

    def fetch(self, key: Any, gen: int, version: Callable[[], Any], make: Callable[[], Any]) -> Any:
        """The value under `key`, made by `make()` unless kept and still true.

        A first visit skips the version query; the entry is then checked
        (and its version learnt) at the first generation change.
        """
        got = self.get(key)
        if got is not None and got[0] == gen:
            return got[2]
        ver = version() if got is not None else None
        if got is not None:
            if ver is None:  # gone from the store
                return None
            if got[1] == ver:
                self.put(key, (gen, ver, got[2]))
                return got[2]
        value = make()
        if value is not None:
            self.put(key, (gen, ver, value))
        return value
