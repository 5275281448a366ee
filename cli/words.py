"""Counts as a person reads them: "1 match", "2 matches" (never "match(es)").

Light on purpose: `replay validate` imports it and must start without DuckDB.
"""

from __future__ import annotations

__all__ = ["count"]


def count(k: int, one: str, many: str | None = None) -> str:
    """`k` and the word for `k` of them, with thousands separated.

    >>> count(1, "match", "matches"), count(2, "match", "matches"), count(1200, "line")
    ('1 match', '2 matches', '1,200 lines')
    >>> count(0, "hand")
    '0 hands'
    """
    return f"{k:,} {one if k == 1 else many or one + 's'}"
