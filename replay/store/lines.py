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

__all__ = ["match_key", "prune_lines", "put_lines", "stored_lines"]

_ZSTD: Final = pa.Codec("zstd", compression_level=1)


def match_key(match: str) -> int:
    """The lookup key of a match's rows: 64 bits of BLAKE2b of its id, signed.

    >>> match_key("m-1") == match_key("m-1") != match_key("m-2")
    True
    """
    return int.from_bytes(hashlib.blake2b(match.encode(), digest_size=8).digest(), "big", signed=True)


def stored_lines(cur: Any, match: str) -> dict[int, tuple[str, bytes]]:
    """The stored rows of a match's hands: by hand, (stamp, lines as JSON
    bytes). The caller compares each stamp with the hand's current one."""
    rows = cur.execute("SELECT match, hand, stamp, size, lines FROM hand_lines WHERE mkey = ?",
                       [match_key(match)]).fetchall()  # fmt: skip
    return {h: (stamp, _ZSTD.decompress(body, decompressed_size=size).to_pybytes())
            for m, h, stamp, size, body in rows if m == match}


def put_lines(cur: Any, match: str, hand: int, stamp: str, lines: bytes, now: dt.datetime | None = None) -> None:
    """Keep a hand's lines (JSON bytes) under `stamp`, in place of its older
    row, in one transaction. The caller writes one hand at a time (rows have
    no key that would refuse a second row of a hand)."""
    key = match_key(match)
    body = _ZSTD.compress(lines, asbytes=True)
    with transaction(cur):
        cur.execute("DELETE FROM hand_lines WHERE mkey = ? AND match = ? AND hand = ?", [key, match, hand])
        cur.execute("INSERT INTO hand_lines VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [match, hand, key, stamp, len(lines), body, now or dt.datetime.now(dt.UTC)])


def prune_lines(cur: Any) -> int:
    """Drop the rows of matches no longer stored; how many went. (A row of a
    match stored or analysed again is replaced on its hand's next view.)"""
    got = one(cur, "DELETE FROM hand_lines l WHERE NOT EXISTS (SELECT 1 FROM matches m WHERE m.match = l.match)")
    return int(got[0]) if got else 0
