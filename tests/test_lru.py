"""api.lru: the one LRU the pages, the audit and the ratings keep values in."""

from __future__ import annotations

import doctest
import threading

import api.lru
from api.lru import LRU


def test_doctests() -> None:
    got = doctest.testmod(api.lru)
    assert got.attempted > 0 and got.failed == 0


def test_the_least_recently_used_goes_first() -> None:
    cache = LRU(3)
    for k in "abc":
        cache.put(k, k.upper())
    assert cache.get("a") == "A"  # a is now the most recent
    cache.put("d", "D")
    assert cache.get("b") is None and [cache.get(k) for k in "acd"] == ["A", "C", "D"]
    made = []
    assert cache.get_or_make("e", lambda: made.append("e") or "E") == "E"
    assert cache.get_or_make("e", lambda: made.append("again") or "X") == "E" and made == ["e"]
    assert len(cache.data) == 3


def test_many_threads_keep_the_size() -> None:
    cache = LRU(16)

    def work(n: int) -> None:
        for i in range(500):
            key = (n, i % 40)
            assert cache.get_or_make(key, lambda key=key: key) == key

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cache.data) == 16
