"""The principal lines of a hand's decisions, kept once worked out (migration 020).

One row per hand: the lines and reasons the JSON twin serves (JSON bytes,
kept and given back as they are: what they say is :mod:`api.review`'s
business), zstd-compressed, and the stamp of what they were worked out
from (the caller's digest of everything the lines depend on). A row whose
stamp is not the current one is stale: the caller does not use it, and
:func:`put_lines` replaces it.

This module is the table's one writer.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any, Final

import pyarrow as pa

from replay.store.schema import one, transaction

__all__ = ["hand_key", "prune_lines", "put_lines", "stored_lines"]

_ZSTD: Final = pa.Codec("zstd", compression_level=1)


def hand_key(match: str, hand: int) -> int:
    """The row's lookup key: 64 bits of BLAKE2b of the match id and hand, signed.

    >>> hand_key("m-1", 2) == hand_key("m-1", 2) != hand_key("m-1", 3)
    True
    """
    digest = hashlib.blake2b(f"{hand}\0{match}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def stored_lines(cur: Any, match: str, hand: int) -> tuple[str, bytes] | None:
    """(stamp, lines as JSON bytes) of the hand's row, or None. The caller
    compares the stamp with the current one."""
    for m, h, stamp, size, body in cur.execute(
        "SELECT match, hand, stamp, size, lines FROM hand_lines WHERE hkey = ?", [hand_key(match, hand)]
    ).fetchall():  # fmt: skip
        if m == match and h == hand:
            return stamp, _ZSTD.decompress(body, decompressed_size=size).to_pybytes()
    return None


def put_lines(cur: Any, match: str, hand: int, stamp: str, lines: bytes, now: dt.datetime | None = None) -> None:
    """Keep a hand's lines (JSON bytes) under `stamp`, in place of its older
    row, in one transaction. The caller writes one hand at a time (rows have
    no key that would refuse a second row of a hand)."""
    key = hand_key(match, hand)
    body = _ZSTD.compress(lines, asbytes=True)
    with transaction(cur):
        cur.execute("DELETE FROM hand_lines WHERE hkey = ? AND match = ? AND hand = ?", [key, match, hand])
        cur.execute("INSERT INTO hand_lines VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [match, hand, key, stamp, len(lines), body, now or dt.datetime.now(dt.UTC)])


def prune_lines(cur: Any) -> int:
    """Drop the rows of matches no longer stored; how many went. (A row of a
    match stored or analysed again is replaced on its hand's next view.)"""
    got = one(cur, "DELETE FROM hand_lines l WHERE NOT EXISTS (SELECT 1 FROM matches m WHERE m.match = l.match)")
    return int(got[0]) if got else 0
