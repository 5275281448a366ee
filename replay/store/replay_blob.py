"""A match's replay rows packed into one value: ``matches.replay``
(migration 008).

The replay page reads a whole match at once: its seats, hands and moves.
Read from their three tables that is three scans, and at 1M hands each
costs 1.5 to 4 ms whatever it returns (planning, and a row group of the
match number scanned), while the match's own row is read anyway. The body
is made from the batch's own Arrow tables when the batch is written
(`pack_replays`), so it holds exactly the rows stored beside it, and it
lives in the match's row: replaced and deleted with it.

A body is its `FORMAT` (a byte) and length (a little-endian u32), then
zstd (level 1) of:

- three little-endian u32: the length of the JSON head, the number of
  moves, and the number of seats dealt to over the match's hands;
- the JSON head, ``{"seats": [...], "hands": [...], "odd": {...}}``: seat
  rows (`SEAT_FIELDS`) in seat history order, hand rows (`HAND_FIELDS` but
  the deal; ``started`` in ms since 1970, UTC), and by move row the strings
  of few rows: errors, and kinds or ends outside `KINDS` and `ENDS`. A body
  depends on its match's rows alone, not on the batch around it;
- the moves in hand and ply order, column by column: each field of
  `MOVE` for every move, then the next field (FORMAT 2; FORMAT 1, which
  stores still hold, has them as `MOVE` records, row by row), then their
  legal moves (int16 codes, ``nalts`` each);
- the deals, int8: the seats dealt to in each hand (-1: none stored), the
  tiles of each seat, the tiles.

`unpack_replay` gives the rows back as the SQL reads of api.queries give
them (tests/test_api.py compares the two on every match of the test store).
"""

from __future__ import annotations

import datetime as dt
import struct
from typing import Any, Final

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["ENDS", "FORMAT", "HAND_FIELDS", "KINDS", "MOVE", "SEAT_FIELDS", "TS", "move_codes", "pack_replays", "unpack_replay"]

#: Hand start times as the replay shows them (UTC).
TS: Final = "%Y-%m-%d %H:%M"

#: The fields of a hand row, in order.
HAND_FIELDS: Final = (
    "hand", "result", "winner", "points", "score", "notes", "leader", "blocker", "dealt",
    "boneyard", "started", "deal_ok", "seed_ok", "play_ok",
)  # fmt: skip

#: The kinds of move and ends of the line a move's int8 codes stand for.
KINDS: Final = ("play", "pass", "draw", "yield")
ENDS: Final = ("left", "right")

#: The fields of a seat row, in order.
SEAT_FIELDS: Final = ("seat", "player", "name", "bot", "from_hand")
# a hand's fields in the JSON head (its deal is packed as int8)
_HAND_JSON: Final = tuple(f for f in HAND_FIELDS if f != "dealt")

#: One move. NULL is the type's least value (-128 for the int8 fields); a
#: NULL list of legal moves has ``nalts`` -1.
MOVE: Final = np.dtype([
    ("hand", "<i4"), ("ply", "<i2"), ("seq", "<i4"), ("seat", "i1"), ("kind", "i1"), ("tile", "i1"),
    ("end", "i1"), ("left", "i1"), ("right", "i1"), ("stock", "i1"), ("forced", "i1"), ("nalts", "<i2"),
])  # fmt: skip

_FIELDS: Final[tuple[str, ...]] = MOVE.names or ()
_HEAD = struct.Struct("<III")
_SIZE = struct.Struct("<BI")
#: The body's layout; `unpack_replay` also reads FORMAT 1 (the moves row by
#: row) and gives None for any other. By columns, zstd takes three quarters
#: of the time for a body 15% smaller (a match's plies, seqs and ends are
#: runs).
FORMAT: Final = 2
_FORMATS: Final = (1, 2)
_EPOCH: Final = dt.datetime(1970, 1, 1)
# zstd through pyarrow: at level 1 a sixth of zlib's time for a smaller body
_ZSTD: Final = pa.Codec("zstd", compression_level=1)


def _ints(col: pa.ChunkedArray | pa.Array, dtype: str) -> np.ndarray:
    """An integer (or bool) column as numpy, NULL as the type's least value."""
    info = np.iinfo(dtype)
    arr = col.cast(pa.int64()) if pa.types.is_boolean(col.type) else col
    return np.asarray(pc.fill_null(arr, info.min).to_numpy(zero_copy_only=False), dtype=dtype)


def _codes(col: pa.ChunkedArray | pa.Array, names: tuple[str, ...]) -> np.ndarray:
    """A string column as int8 codes into `names`: -128 NULL, -1 another value
    (kept beside, in the head's "odd")."""
    valid = pc.is_valid(col).to_numpy(zero_copy_only=False)
    found = pc.index_in(col, value_set=pa.array(names, pa.string()))
    codes: np.ndarray = pc.fill_null(found, -1).to_numpy(zero_copy_only=False).astype("i1")
    codes[~valid] = -128
    return codes


def move_codes(moves: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """The kinds and ends of a moves table as `pack_replays` codes them."""
    return _codes(moves.column("kind"), KINDS), _codes(moves.column("on_end"), ENDS)


def _positions(col: pa.ChunkedArray | pa.Array, order: pa.Array) -> np.ndarray:
    """Each row's place in the batch's match order."""
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    if not pa.types.is_dictionary(col.type):
        places: np.ndarray = pc.index_in(col, value_set=order).to_numpy(zero_copy_only=False).astype(np.int64)
        return places
    # a dictionary chunk (the moves' match): its few values looked up, then
    # indexed (a quarter of the time of the strings looked up row by row)
    parts = [np.zeros(0, np.int64)]
    for ch in chunks:
        # (-1: a value no row uses, as a filtered table's dictionary keeps)
        at = pc.fill_null(pc.index_in(ch.dictionary, value_set=order), -1).to_numpy(zero_copy_only=False)
        at = at.astype(np.int64)
        parts.append(at[ch.indices.to_numpy(zero_copy_only=False)])
    return np.concatenate(parts)


def _rows(cols: list[list[Any]]) -> list[tuple[Any, ...]]:
    return list(zip(*cols, strict=True))


# a match's "odd" when none of its moves has an uncoded string (most of them)
_NO_ODD: Final = orjson.dumps({"error": {}, "kind": {}, "end": {}})


def pack_replays(
    tables: dict[str, pa.Table], codes: tuple[np.ndarray, np.ndarray] | None = None
) -> pa.Array:
    """The bodies of a batch's matches (``matches.replay``), from its matches,
    seats, hands and moves tables, in the order of its matches.

    ``codes``: the moves' kinds and ends as int8 codes (`KINDS`, `ENDS`; -1
    another value, -128 NULL) where the caller has them (replay.store.rows: the
    rows made in C carry them); else they are read from the strings.
    """
    order = tables["matches"].column("match").combine_chunks()
    n = len(order)
    seats, hands, moves = tables["seats"], tables["hands"], tables["moves"]
    # seats and hands go in the JSON head, as arrays, in match order (pyarrow
    # and orjson only: a worker is a forked process, where polars' thread
    # pool would wait for ever)
    s_at = _positions(seats.column("match"), order)
    s_by = pa.array(np.lexsort((_ints(seats.column("seat"), "i1"), _ints(seats.column("seq"), "<i4"), s_at)))
    seat_rows = _rows([seats.column(c).take(s_by).to_pylist() for c in SEAT_FIELDS])
    s_bounds = np.searchsorted(s_at[s_by.to_numpy()], np.arange(n + 1))
    h_at = _positions(hands.column("match"), order)
    h_np = np.argsort(h_at, kind="stable")
    # only the columns the body holds, and no take when they lie in order
    hs = hands.select([*(c for c in _HAND_JSON if c != "boneyard"), "stock", "dealt"])
    if len(h_np) > 1 and bool(np.any(h_np[1:] < h_np[:-1])):
        hs = hs.take(pa.array(h_np))
    started = hs.column("started")
    hand_cols = {
        "notes": hs.column("notes").to_pylist(),
        "boneyard": pc.list_value_length(hs.column("stock")).to_pylist(),
        "started": (started.cast(pa.int64()) if started.type != pa.int64() else started).to_pylist(),
    }
    hand_rows = _rows([
        hand_cols[c] if c in hand_cols else hs.column(c).combine_chunks().to_pylist() for c in _HAND_JSON
    ])
    h_bounds = np.searchsorted(h_at[h_np], np.arange(n + 1))
    # the deals as int8: seats a hand (-1: NULL), tiles a seat, the tiles
    dealt = hs.column("dealt").combine_chunks()
    d_seats = pc.fill_null(pc.list_value_length(dealt), -1).to_numpy(zero_copy_only=False).astype("i1")
    inner = dealt.flatten()
    d_tiles = pc.list_value_length(inner).to_numpy(zero_copy_only=False).astype("i1")
    d_values = _ints(inner.flatten(), "i1")
    d_seat_end = np.concatenate(([0], np.cumsum(d_seats.clip(0).astype(np.int64))))
    d_tile_end = np.concatenate(([0], np.cumsum(d_tiles.astype(np.int64))))
    # the moves as records, in match, hand and ply order (as written: no sort then)
    m_at = _positions(moves.column("match"), order)
    hand, ply = _ints(moves.column("hand"), "<i4"), _ints(moves.column("ply"), "<i2")
    key = (m_at << 40) | (hand.astype(np.int64) << 16) | ply.astype(np.int64).clip(0)
    by = None if len(key) < 2 or bool(np.all(key[1:] >= key[:-1])) else np.lexsort((ply, hand, m_at))

    def ordered(x: np.ndarray) -> np.ndarray:
        return x if by is None else x[by]

    kinds, ends = codes or move_codes(moves)
    legal = moves.column("legal_moves").combine_chunks()
    rec = np.empty(len(key), MOVE)
    rec["hand"], rec["ply"] = ordered(hand), ordered(ply)
    rec["seq"] = ordered(_ints(moves.column("seq"), "<i4"))
    for field, col in (("seat", "seat"), ("tile", "tile"), ("left", "left_end"), ("right", "right_end"),
                       ("stock", "stock"), ("forced", "forced")):
        rec[field] = ordered(_ints(moves.column(col), "i1"))
    rec["kind"], rec["end"] = ordered(kinds), ordered(ends)
    lens = pc.fill_null(pc.list_value_length(legal), -1).to_numpy(zero_copy_only=False).astype("<i2")
    rec["nalts"] = ordered(lens)
    offsets = legal.offsets.to_numpy().astype(np.int64)
    values = legal.values.to_numpy(zero_copy_only=False).astype("<i2")
    sizes = rec["nalts"].clip(0).astype(np.int64)
    if by is None:  # the lists lie in order already
        alts = values[offsets[0] : offsets[-1]]
    else:
        first = offsets[:-1][by]
        alts = values[np.repeat(first - np.concatenate(([0], np.cumsum(sizes)[:-1])), sizes) + np.arange(sizes.sum())]
    alt_end = np.concatenate(([0], np.cumsum(sizes)))
    bounds = np.searchsorted(m_at if by is None else m_at[by], np.arange(n + 1))
    # the strings of few rows, by row: errors, and kinds or ends not coded
    sparse = []
    for name, col, keep in (
        ("error", "error", pc.is_valid(moves.column("error")).to_numpy(zero_copy_only=False)),
        ("kind", "kind", kinds == -1), ("end", "on_end", ends == -1),
    ):
        rows = np.flatnonzero(ordered(keep))
        texts = moves.column(col).take(pa.array(ordered(np.arange(len(key)))[rows])).to_pylist() if len(rows) else []
        sparse.append((name, rows, texts, np.searchsorted(rows, bounds)))
    # the per-match loop slices bytes and Python ints (numpy scalars and
    # tobytes calls, per match, were a fifth of the time)
    odd_at = np.zeros(n, bool)
    for _, _, _, at in sparse:
        odd_at |= at[1:] > at[:-1]
    has_odd = odd_at.tolist()
    mb, hb, sb = bounds.tolist(), h_bounds.tolist(), s_bounds.tolist()
    # where each match's slice of each part starts (the parts' ends taken at
    # the matches' bounds only)
    qb = d_seat_end[h_bounds]
    ab, qs, vb = alt_end[bounds].tolist(), qb.tolist(), d_tile_end[qb].tolist()
    fields = [(memoryview(rec[f].tobytes()), rec.dtype[f].itemsize) for f in _FIELDS]
    alts_b = memoryview(alts.astype("<i2", copy=False).tobytes())
    seats_b, tiles_b, values_b = (memoryview(x.tobytes()) for x in (d_seats, d_tiles, d_values))
    bodies = []
    for i in range(n):
        a, b = mb[i], mb[i + 1]
        odd = _NO_ODD
        if has_odd[i]:
            odd = orjson.dumps({
                name: {str(int(rows[k]) - a): texts[k] for k in range(int(at[i]), int(at[i + 1]))}
                for name, rows, texts, at in sparse
            })
        h0, h1 = hb[i], hb[i + 1]
        # one dumps a match: the rows as JSON arrays, as the head has them
        head = b"".join((
            b'{"seats":', orjson.dumps(seat_rows[sb[i] : sb[i + 1]]),
            b',"hands":', orjson.dumps(hand_rows[h0:h1]),
            b',"odd":', odd, b"}",
        ))
        q0, q1 = qs[i], qs[i + 1]
        raw = b"".join((
            _HEAD.pack(len(head), b - a, q1 - q0), head,
            *(col[a * size : b * size] for col, size in fields),
            alts_b[2 * ab[i] : 2 * ab[i + 1]], seats_b[h0:h1], tiles_b[q0:q1], values_b[vb[i] : vb[i + 1]],
        ))
        bodies.append(_SIZE.pack(FORMAT, len(raw)) + _ZSTD.compress(raw, asbytes=True))
    return pa.array(bodies, pa.binary())


def _shown(ms: int | None) -> str | None:
    """A start time in ms, as the replay shows it (UTC, `TS`)."""
    return None if ms is None else (_EPOCH + dt.timedelta(milliseconds=ms)).strftime(TS)


def unpack_replay(
    body: bytes,
) -> tuple[list[dict[str, Any]], dict[int, dict[str, Any]], dict[int, list[tuple[Any, ...]]]] | None:
    """The seats (dicts, in seat history order), hands (dicts by hand) and moves
    (rows by hand: ply, seq, seat, kind, tile, on_end, left_end, right_end,
    stock, legal_moves, forced, error) of a body made by `pack_replays`; None
    if it has another `FORMAT`."""
    version, whole = _SIZE.unpack_from(body)
    if version not in _FORMATS:  # written by other code: the caller reads the tables
        return None
    raw = _ZSTD.decompress(memoryview(body)[_SIZE.size :], whole, asbytes=True)
    size, count, dealt_seats = _HEAD.unpack_from(raw)
    start = _HEAD.size + size
    head = orjson.loads(raw[_HEAD.size : start])
    seats = [dict(zip(SEAT_FIELDS, r, strict=True)) for r in head["seats"]]
    rec: Any = np.frombuffer(raw, MOVE, count, start)  # FORMAT 1: records
    if version == 2:  # a column a field (rec[f] reads the same either way)
        rec, at = {}, start
        for f in _FIELDS:
            rec[f] = np.frombuffer(raw, MOVE[f], count, at)
            at += count * MOVE[f].itemsize
    at_alts = start + count * MOVE.itemsize
    n_alts = int(rec["nalts"].clip(0).sum())
    alts = np.frombuffer(raw, "<i2", n_alts, at_alts).tolist()
    # the deals: seats a hand, tiles a seat, the tiles
    at_deals = at_alts + 2 * n_alts
    rows = head["hands"]
    per_hand = np.frombuffer(raw, "i1", len(rows), at_deals).tolist()
    per_seat = np.frombuffer(raw, "i1", dealt_seats, at_deals + len(rows)).tolist()
    tiles = np.frombuffer(raw, "i1", offset=at_deals + len(rows) + dealt_seats).tolist()
    hands: dict[int, dict[str, Any]] = {}
    q = t = 0
    for row, k in zip(rows, per_hand, strict=True):
        deal = None
        if k >= 0:
            deal = []
            for m in per_seat[q : q + k]:
                deal.append(tiles[t : t + m])
                t += m
            q += k
        h = dict(zip(_HAND_JSON, row, strict=True))
        h["dealt"], h["started"] = deal, _shown(h["started"])
        hands[h["hand"]] = h
    odd = head["odd"]

    def named(f: str, names: tuple[str, ...]) -> list[str | None]:
        other = odd[f]
        return [None if k == -128 else other[str(r)] if k < 0 else names[k] for r, k in enumerate(rec[f].tolist())]


    def col(f: str) -> list[Any]:
        x = rec[f]
        least = np.iinfo(x.dtype).min  # NULL
        return x.tolist() if not (x == least).any() else [None if v == least else v for v in x.tolist()]

    nalts = rec["nalts"].tolist()
    at = np.concatenate(([0], np.cumsum(rec["nalts"].clip(0)))).tolist()
    legal = [alts[at[k] : at[k + 1]] if nalt >= 0 else None for k, nalt in enumerate(nalts)]
    error: list[str | None] = [None] * count
    for k, text in odd["error"].items():
        error[int(k)] = text
    rows = list(zip(
        col("ply"), col("seq"), col("seat"), named("kind", KINDS),
        col("tile"), named("end", ENDS), col("left"), col("right"),
        col("stock"), legal, [None if f == -128 else bool(f) for f in rec["forced"].tolist()], error,
        strict=True,
    ))
    # the rows are in hand order: a run a hand
    hand = rec["hand"]
    cuts = [0, *(np.flatnonzero(hand[1:] != hand[:-1]) + 1).tolist(), count]
    moves = {int(hand[a]): rows[a:b] for a, b in zip(cuts, cuts[1:], strict=False) if b > a}
    return seats, hands, moves
