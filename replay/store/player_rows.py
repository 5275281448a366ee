"""The player tables' rows of a batch (migrations 003 to 005), made from its
Arrow tables in the worker that made them.

`player_rows` is the one definition of these rows: the workers make them
from a batch's tables, and the store (replay.store.derive) from the stored
``seats``, ``hands`` and ``matches`` rows of matches that came otherwise (a
match validated again in the loader, an older batch, a migrated store):
``player_seats`` (every seat row of a match, once for each player
seated in it) and ``player_held`` (a row per hand and seat, the occupant at
that hand, the partner in pairs, and the seat's own figures taken out of the
per-seat lists). The loader sets them aside at each commit and the
derivation inserts them sorted (replay.store.HeldRows): at 1M hands 11 s
against 22 s for the joins in SQL the store used to run, for about 4 CPU-s
of the workers (40 ms a batch). tests/test_held.py keeps that SQL as a
reference and checks the rows are its rows, on every sample log and on
simulated matches of every profile.

One difference by design: where a log seats the same player twice in one
hand of a pairs match, the reference SQL joins each seat's row to both
partners; here each seat gets its own partner.

>>> import pyarrow as pa
>>> from replay.store.rows import SCHEMAS
>>> m = pa.table({"match": ["m"], "profile": ["x"], "rules": ['{"teams": "none"}'],
...               "result": [None], "winner": [None], "notes": [[]], "batch": ["b"]})
>>> s = pa.table({"match": ["m", "m"], "seat": [0, 1], "player": ["p", "q"], "name": [None, None],
...               "bot": [False, True], "from_hand": [1, 1], "seq": [1, 1]})
>>> h = pa.table({"match": ["m"], "hand": [1], "result": ["domino"], "winner": [1],
...               "points": [[0, 12]], "notes": [[]], "passes": [[0, 0]], "dealt_pips": [[40, 30]],
...               "dealt_doubles": [[1, 2]], "dealt_tiles": [[7, 7]],
...               "started": pa.array([None], pa.timestamp("ms", tz="UTC"))})
>>> rows = player_rows(m, s, h)
>>> rows["player_held"].select(["of_player", "seat", "side_points", "all_points", "out_notes"]).to_pylist()
[{'of_player': 'p', 'seat': 0, 'side_points': 0, 'all_points': 12, 'out_notes': None}, \
{'of_player': 'q', 'seat': 1, 'side_points': 12, 'all_points': 12, 'out_notes': []}]
>>> rows["player_seats"].num_rows  # two players, two seat rows each
4
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from replay.rules import PROFILES

__all__ = ["HELD_SCHEMA", "PLAYER_SEATS_SCHEMA", "SHUTOUTS", "player_rows"]

_I8, _I16, _I32, _I64 = pa.int8(), pa.int16(), pa.int32(), pa.int64()
_STR, _BOOL = pa.string(), pa.bool_()

#: The columns of the tables as stored (names and Arrow types of their SQL types).
PLAYER_SEATS_SCHEMA: Final = pa.schema([
    ("of_player", _STR), ("match", _STR), ("seat", _I8), ("player", _STR), ("name", _STR),
    ("bot", _BOOL), ("from_hand", _I32), ("to_hand", _I32), ("seq", _I32), ("batch", _STR),
])  # fmt: skip
HELD_SCHEMA: Final = pa.schema([
    ("of_player", _STR), ("match", _STR), ("hand", _I32), ("seat", _I8), ("bot", _BOOL),
    ("partner", _STR), ("partner_name", _STR), ("partner_bot", _BOOL), ("result", _STR),
    ("winner", _I8), ("side_points", _I32), ("all_points", _I64), ("out_notes", pa.list_(_STR)),
    ("passes", _I16), ("dealt_pips", _I16), ("dealt_doubles", _I8), ("dealt_tiles", _I8),
    ("started", pa.timestamp("ms")), ("profile", _STR), ("teams", _STR), ("stock", _STR),
    ("block_end", _STR), ("match_result", _STR), ("match_winner", _I8), ("match_shutout", _BOOL),
])  # fmt: skip

#: A seat row with no later one for its seat (SQL's coalesce(lead(...), 2^31 - 1)).
NO_END: Final = 2**31 - 1
#: The match notes that name a shutout: each profile's word for it.
SHUTOUTS: Final = frozenset(p.shutout_note for p in PROFILES.values())


def _json_text(value: Any) -> str | None:
    """What DuckDB's ``json->>'key'`` gives for a value of the rules' JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode()


def _col(table: pa.Table, name: str) -> pa.Array:
    return table.column(name).combine_chunks()


def _ints(table: pa.Table, name: str) -> np.ndarray:
    return np.asarray(_col(table, name).fill_null(0).to_numpy(zero_copy_only=False), np.int64)


def _take(values: pa.Array, idx: np.ndarray) -> pa.Array:
    """values[idx], null where idx < 0."""
    return values.take(pa.array(idx, pa.int64(), mask=idx < 0))


def _element(lists: pa.Array, rows: np.ndarray, k: np.ndarray, dtype: pa.DataType) -> pa.Array:
    """lists[rows][k], as DuckDB's 1-based ``list[k + 1]``: null for a null list
    or an index past its end."""
    offsets = np.asarray(lists.offsets)
    start = offsets[rows]
    ok = (k >= 0) & (k < offsets[rows + 1] - start)
    if lists.null_count:
        ok &= np.asarray(lists.is_valid())[rows]
    at = np.where(ok, start + k, -1)
    return _take(lists.values, at).cast(dtype)


def _sums(lists: pa.Array) -> pa.Array:
    """list_sum of each list (int64): null for a null or empty list."""
    offsets = np.asarray(lists.offsets, np.int64)
    vals = lists.values
    nums = np.asarray(vals.fill_null(0).to_numpy(zero_copy_only=False), np.int64)
    seen = np.asarray(vals.is_valid(), np.int64) if vals.null_count else np.ones(len(nums), np.int64)
    total = np.concatenate(([0], np.cumsum(nums)))
    count = np.concatenate(([0], np.cumsum(seen)))
    sums = total[offsets[1:]] - total[offsets[:-1]]
    mask = (count[offsets[1:]] - count[offsets[:-1]]) == 0
    if lists.null_count:
        mask |= ~np.asarray(lists.is_valid())
    return pa.array(sums, _I64, mask=mask)


def player_rows(matches: pa.Table, seats: pa.Table, hands: pa.Table) -> dict[str, pa.Table]:
    """``player_seats`` and ``player_held`` of a batch's matches (unordered)."""
    mids = _col(matches, "match")

    def at(col: pa.Array) -> np.ndarray:  # each row's match, as its place in the batch
        found = pc.index_in(col, value_set=mids)
        if found.null_count:
            raise ValueError("player_rows: a seat or hand row of a match not in the batch")
        return np.asarray(found.to_numpy(zero_copy_only=False), np.int64)

    # the rules' JSON read once a match (and once per distinct text)
    parsed: dict[str | None, tuple[str | None, str | None, str | None]] = {}
    teams, stock, block_end = [], [], []
    for text in _col(matches, "rules").to_pylist():
        got = parsed.get(text)
        if got is None:
            r = orjson.loads(text) if text is not None else None
            if isinstance(r, dict):
                got = (_json_text(r.get("teams")), _json_text(r.get("stock")), _json_text(r.get("block_end")))
            else:
                got = (None, None, None)
            parsed[text] = got
        teams.append(got[0])
        stock.append(got[1])
        block_end.append(got[2])
    pairs = np.array([t == "pairs" for t in teams], bool)
    shutout = pa.array(
        [None if ns is None else not SHUTOUTS.isdisjoint(ns) for ns in _col(matches, "notes").to_pylist()], _BOOL
    )

    # seat rows: each one's range of hands, [from_hand, to_hand)
    s_match = at(_col(seats, "match"))
    s_seat = _ints(seats, "seat")
    s_from = _ints(seats, "from_hand")
    s_seq = _ints(seats, "seq")
    order = np.lexsort((s_seq, s_from, s_seat, s_match))
    to = np.full(len(order), NO_END, np.int64)
    if len(order) > 1:
        same = (s_match[order[1:]] == s_match[order[:-1]]) & (s_seat[order[1:]] == s_seat[order[:-1]])
        to[order[:-1][same]] = s_from[order[1:]][same]

    # hands sorted by (match, hand): a seat row's hands are one slice of them
    h_match = at(_col(hands, "match"))
    h_hand = _ints(hands, "hand")
    h_order = np.lexsort((h_hand, h_match))
    keys = (h_match << 32) + h_hand
    sorted_keys = keys[h_order]
    lo = np.searchsorted(sorted_keys, (s_match << 32) + s_from, "left")
    hi = np.searchsorted(sorted_keys, (s_match << 32) + np.maximum(to, s_from), "left")
    counts = hi - lo
    row_seat = np.repeat(np.arange(len(s_match)), counts)  # the seat row of each held row
    firsts = np.repeat(lo - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
    row_hand = h_order[np.arange(len(row_seat)) + firsts]  # its hand row
    seat = s_seat[row_seat]

    # the occupant of every seat at every hand, for the partner
    width = int(s_seat.max()) + 1 if len(s_seat) else 1
    occupant = np.full((len(h_hand), max(width, 4)), -1, np.int64)
    occupant[row_hand, seat] = row_seat
    match = h_match[row_hand]
    partner = np.where(pairs[match], occupant[row_hand, (seat + 2) % 4], -1)

    players = _col(seats, "player")
    names = _col(seats, "name")
    bots = _col(seats, "bot")
    results = _col(hands, "result")
    winners = _ints(hands, "winner")
    won = np.asarray(pc.equal(results, "domino").fill_null(False))[row_hand] & (
        np.asarray(_col(hands, "winner").is_valid())[row_hand] & (winners[row_hand] == seat)
    )
    side = np.where(pairs[match], seat % 2, seat)
    held = pa.table(
        {
            "of_player": players.take(row_seat),
            "match": _col(hands, "match").take(row_hand),
            "hand": _col(hands, "hand").take(row_hand),
            "seat": pa.array(seat, _I8),
            "bot": bots.take(row_seat),
            "partner": _take(players, partner),
            "partner_name": _take(names, partner),
            "partner_bot": _take(bots, partner),
            "result": results.take(row_hand),
            "winner": _col(hands, "winner").take(row_hand),
            "side_points": _element(_col(hands, "points"), row_hand, side, _I32),
            "all_points": _sums(_col(hands, "points")).take(row_hand),
            "out_notes": _take(_col(hands, "notes"), np.where(won, row_hand, -1)),
            "passes": _element(_col(hands, "passes"), row_hand, seat, _I16),
            "dealt_pips": _element(_col(hands, "dealt_pips"), row_hand, seat, _I16),
            "dealt_doubles": _element(_col(hands, "dealt_doubles"), row_hand, seat, _I8),
            "dealt_tiles": _element(_col(hands, "dealt_tiles"), row_hand, seat, _I8),
            "started": _col(hands, "started").take(row_hand).cast(pa.timestamp("ms")),
            "profile": _col(matches, "profile").take(match),
            "teams": pa.array(teams, _STR).take(match),
            "stock": pa.array(stock, _STR).take(match),
            "block_end": pa.array(block_end, _STR).take(match),
            "match_result": _col(matches, "result").take(match),
            "match_winner": _col(matches, "winner").take(match),
            "match_shutout": shutout.take(match),
        },
        schema=HELD_SCHEMA,
    )

    # player_seats: every seat row of a match once for each player seated in it
    of_row: list[int] = []  # the seat row whose player the row is for
    its_row: list[int] = []
    by_match: dict[int, list[int]] = {}
    for j, mi in enumerate(s_match.tolist()):
        by_match.setdefault(mi, []).append(j)
    plist = players.to_pylist()
    for rows in by_match.values():
        firsts_of: dict[str, int] = {}
        for j in rows:
            firsts_of.setdefault(plist[j], j)
        for j0 in firsts_of.values():
            of_row.extend([j0] * len(rows))
            its_row.extend(rows)
    of_idx, its = np.array(of_row, np.int64), np.array(its_row, np.int64)
    pseats = pa.table(
        {
            "of_player": players.take(of_idx),
            "match": _col(seats, "match").take(its),
            "seat": _col(seats, "seat").take(its),
            "player": players.take(its),
            "name": names.take(its),
            "bot": bots.take(its),
            "from_hand": _col(seats, "from_hand").take(its),
            "to_hand": pa.array(to[its], _I32),
            "seq": _col(seats, "seq").take(its),
            "batch": _col(matches, "batch").take(s_match[its]),
        },
        schema=PLAYER_SEATS_SCHEMA,
    )
    return {"player_seats": pseats, "player_held": held}
