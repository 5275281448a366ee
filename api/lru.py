"""A small thread-safe LRU: rendered hands, player reports, audits, ratings.

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

__all__ = ["LRU"]


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
