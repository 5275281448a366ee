"""The principal lines of a hand's decisions, kept once worked out (migration 020).

One row per hand: the lines and reasons the JSON twin serves (JSON bytes,
kept and given back as they are: what they say is :mod:`api.review`'s
business), zstd-compressed, and the stamp of what they were worked out
from. The stamp starts with the match's own (:func:`match_stamp`: the batch
that stored it and its analysis run, which change whenever the match or its
analysis is stored again); the caller appends what else the lines depend on
(the analysis version, its sampled deals, the line code's version). A row
whose stamp is not the current one is stale: the caller does not use it,
and :func:`put_lines` replaces it and drops the match's other stale rows.

This module is the table's one writer.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any, Final

import pyarrow as pa

from replay.store.schema import one, transaction

__all__ = ["hand_key", "match_stamp", "prune_lines", "put_lines", "stored_lines"]

#: The match's part of a stamp, as SQL over `matches` (alias m): the replay's
#: cache version too (api.queries.match_version).
_MATCH_STAMP: Final = "m.batch || '|' || coalesce(m.analysis, '')"

_ZSTD: Final = pa.Codec("zstd", compression_level=1)


def hand_key(match: str, hand: int) -> int:
    """The row's lookup key: 64 bits of BLAKE2b of the match id and hand, signed.

    >>> hand_key("m-1", 2) == hand_key("m-1", 2) != hand_key("m-1", 3)
    True
    """
    digest = hashlib.blake2b(f"{hand}\0{match}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def match_stamp(cur: Any, match: str) -> str | None:
    """The match's part of a stamp (None if the match is not stored)."""
    row = one(cur, f"SELECT {_MATCH_STAMP} FROM matches m WHERE m.match = ?", [match])
    return None if row is None else str(row[0])


def stored_lines(cur: Any, match: str, hand: int) -> tuple[str, bytes] | None:
    """(stamp, lines as JSON bytes) of the hand's row, or None. The caller
    compares the stamp with the current one."""
    for m, h, stamp, size, body in cur.execute(
        "SELECT match, hand, stamp, size, lines FROM hand_lines WHERE hkey = ?", [hand_key(match, hand)]
    ).fetchall():  # fmt: skip
        if m == match and h == hand:
            return stamp, _ZSTD.decompress(body, decompressed_size=size).to_pybytes()
    return None


def put_lines(cur: Any, match: str, hand: int, mstamp: str, tail: str, lines: bytes,
              now: dt.datetime | None = None) -> None:  # fmt: skip
    """Keep a hand's lines (JSON bytes) under the stamp `mstamp|tail`
    (`mstamp`: :func:`match_stamp`'s, read before the lines were worked
    out), in place of the hand's older row, in one transaction; the match's
    rows of another match stamp (an older store or analysis of it) go too.
    The caller writes one hand at a time (rows have no key that would
    refuse a second row of a hand)."""
    key = hand_key(match, hand)
    body = _ZSTD.compress(lines, asbytes=True)
    with transaction(cur):
        cur.execute("DELETE FROM hand_lines WHERE hkey = ? AND match = ? AND hand = ?", [key, match, hand])
        cur.execute("DELETE FROM hand_lines WHERE match = ? AND NOT starts_with(stamp, ?)", [match, mstamp + "|"])
        cur.execute("INSERT INTO hand_lines VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [match, hand, key, f"{mstamp}|{tail}", len(lines), body, now or dt.datetime.now(dt.UTC)])


def prune_lines(cur: Any) -> int:
    """Drop the rows no view can use any more: their match is gone, or was
    stored or analysed again since. How many went."""
    got = one(cur, f"""DELETE FROM hand_lines l WHERE NOT EXISTS (
                          SELECT 1 FROM matches m WHERE m.match = l.match
                          AND starts_with(l.stamp, {_MATCH_STAMP} || '|'))""")
    return int(got[0]) if got else 0
