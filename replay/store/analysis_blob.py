"""A match's analysis as the replay shows it, packed into one value:
``matches.analysis_body`` (migration 022).

The replay's first view of a match read its analysis from ``hand_analysis``
and ``move_analysis``: two scans of some 30 columns, whose blocks a point
read loads whole, 8 to 10 ms at 1M hands (bench/api.py), while the match's
own row is read anyway. So whoever writes a match's analysis rows packs its
hands as the pages show them (`shown_analysis`: values rounded as they are
shown) into the match's row (`repack`), and the replay reads that value.

A body is its `FORMAT` (a byte) and length (a little-endian u32), then zstd
(level 1) of: the number of hands (u32), each hand's number (i32) and the
length of its JSON (u32), then those JSON texts in hand order. A reader
decodes the hand it shows only.

A match whose body is NULL (stored before 022, or by a writer that does not
pack) is read from the tables, as before; `unpack_analysis` gives the same
values (tests/test_analysis_blob.py compares the two on every match of a
test store).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from typing import Any, Final

import duckdb
import orjson
import pyarrow as pa

from replay.store.schema import registered

__all__ = ["FORMAT", "HAND_COLS", "PLY_JSON", "pack_analysis", "repack", "shown_analysis", "unpack_analysis"]

#: The columns of a ``hand_analysis`` row the replay shows, in order.
HAND_COLS: Final = ("version", "samples", "seed", "skip", "first_seat", "par", "result", "accuracy", "accuracy_dd",
                    "accuracy_uniform", "read_model")  # fmt: skip

#: A ``move_analysis`` row as the replay reads it: its JSON, made by DuckDB
#: (in C++; orjson reads it: Python objects made by the driver, a dict a row
#: and one a move's alternative, cost most of such a read).
PLY_JSON: Final = """to_json({'ply': ply, 'seat': seat, 'played': played, 'forced': forced,
                              'alternatives': alternatives, 'dd': dd, 'dd_best': dd_best,
                              'dd_loss': dd_loss, 'pimc': pimc, 'pimc_loss': pimc_loss, 'class': class,
                              'samples': samples, 'exact': exact, 'reads': reads, 'read_loss': read_loss,
                              'read_ess': read_ess, 'class_uniform': class_uniform,
                              'too_close': too_close})::VARCHAR"""

FORMAT: Final = 1
_SIZE = struct.Struct("<BI")
_COUNT = struct.Struct("<I")
_ENTRY = struct.Struct("<iI")
_ZSTD: Final = pa.Codec("zstd", compression_level=1)
#: Matches packed a query at a time by `repack` (a store's worth would not fit in memory).
CHUNK: Final = 2000


def shown_analysis(hand_row: dict[str, Any], ply_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A hand's analysis as the pages and the JSON twin show it, from its
    ``hand_analysis`` row (`HAND_COLS`) and its ``move_analysis`` rows.

    >>> row = dict.fromkeys(HAND_COLS) | {"accuracy": [97.25], "accuracy_dd": [100.0]}
    >>> ply = {"ply": 2, "seat": 1, "played": "54 left", "forced": False, "samples": 20, "exact": False,
    ...        "alternatives": [{"move": "54 left", "dd": 3, "pimc": 1.005, "pimc_lo": None, "pimc_hi": None}],
    ...        "dd": 3, "dd_best": 3, "dd_loss": 0, "pimc": 1.005, "pimc_loss": 0.0, "class": None}
    >>> a = shown_analysis(row, [ply])
    >>> a["accuracy"], a["plies"][0]["pimc"], a["plies"][0]["alternatives"][0]["pimc_ci"]
    ([97.2], 1.0, None)
    """
    plies = []
    for r in sorted(ply_rows, key=lambda r: r["ply"]):
        reads = r.get("reads") or [None] * len(r["alternatives"])
        plies.append({
            "ply": r["ply"], "seat": r["seat"], "played": r["played"], "forced": r["forced"],
            "alternatives": [
                {"move": a["move"], "dd": a["dd"], "pimc": _round(a["pimc"]),
                 "pimc_ci": None if a["pimc_lo"] is None else [_round(a["pimc_lo"]), _round(a["pimc_hi"])],
                 "read": None if x is None else _round(x["read"]),
                 "read_ci": None if x is None or x["read_lo"] is None else [_round(x["read_lo"]), _round(x["read_hi"])]}
                for a, x in zip(r["alternatives"], reads, strict=True)
            ],
            "dd": r["dd"], "dd_best": r["dd_best"], "dd_loss": r["dd_loss"],
            "pimc": _round(r["pimc"]), "pimc_loss": _round(r["pimc_loss"]),
            "read_loss": _round(r.get("read_loss")), "read_ess": _round(r.get("read_ess"), 1),
            "class": r["class"], "class_uniform": r.get("class_uniform", r["class"]),
            "too_close": bool(r.get("too_close")), "samples": r["samples"], "exact": r["exact"],
        })  # fmt: skip
    return {
        "version": hand_row["version"],
        "samples": hand_row["samples"],
        "seed": hand_row["seed"],
        "skipped": hand_row["skip"],
        "first_seat": hand_row["first_seat"],
        "par": hand_row["par"],
        "result": hand_row["result"],
        "accuracy": [_round(a, 1) for a in hand_row["accuracy"] or []],
        "accuracy_dd": [_round(a, 1) for a in hand_row["accuracy_dd"] or []],
        "accuracy_uniform": [_round(a, 1) for a in hand_row.get("accuracy_uniform") or []],
        "read_model": hand_row.get("read_model"),
        "plies": plies,
    }


def _round(x: float | None, nd: int = 2) -> float | None:
    return None if x is None else round(float(x), nd)


def pack_analysis(hands: dict[int, bytes]) -> bytes:
    """A match's body from each analysed hand's JSON (`shown_analysis`, by orjson).

    >>> body = pack_analysis({2: b'{"b":1}', 1: b'{"a":1}'})
    >>> {h: bytes(j) for h, j in unpack_analysis(body).items()}
    {1: b'{"a":1}', 2: b'{"b":1}'}
    """
    order = sorted(hands)
    raw = b"".join([_COUNT.pack(len(order)), *(_ENTRY.pack(h, len(hands[h])) for h in order), *(hands[h] for h in order)])
    body: bytes = _ZSTD.compress(raw, asbytes=True)
    return _SIZE.pack(FORMAT, len(raw)) + body


def unpack_analysis(body: bytes) -> dict[int, memoryview] | None:
    """Each hand's JSON of a match's body, by hand; None for a body of
    another format (a newer writer's: the tables are read instead)."""
    fmt, size = _SIZE.unpack_from(body)
    if fmt != FORMAT:
        return None
    raw = memoryview(_ZSTD.decompress(memoryview(body)[_SIZE.size:], decompressed_size=size, asbytes=True))
    (n,) = _COUNT.unpack_from(raw)
    at = _COUNT.size + n * _ENTRY.size
    out = {}
    for hand, length in _ENTRY.iter_unpack(raw[_COUNT.size:at]):
        out[hand] = raw[at:at + length]
        at += length
    return out


def _chunks(xs: Sequence[int], k: int) -> Iterator[Sequence[int]]:
    for i in range(0, len(xs), k):
        yield xs[i:i + k]


def repack(conn: duckdb.DuckDBPyConnection, source: str) -> int:
    """Pack again the analysis of every match named in `source` (a table or
    view with a ``match`` column) from its stored rows into its row's
    ``analysis_body``: the writers of the analysis rows call it, in their
    transaction, once their rows are in. The matches packed."""
    nos = [r[0] for r in conn.execute(
        f"SELECT DISTINCT mno FROM matches WHERE match IN (SELECT match FROM {source}) AND mno IS NOT NULL "
        "ORDER BY mno").fetchall()]  # fmt: skip
    for part in _chunks(nos, CHUNK):
        # the range lets a scan skip the row groups of other matches (their numbers' min and max)
        par = {"lo": part[0], "hi": part[-1], "in": list(part)}
        rows: dict[int, dict[int, dict[str, Any]]] = {}
        for mno, hand, *vals in conn.execute(
            f"SELECT mno, hand, {', '.join(HAND_COLS)} FROM hand_analysis "
            "WHERE mno BETWEEN $lo AND $hi AND list_contains($in, mno)", par,
        ).fetchall():  # fmt: skip
            rows.setdefault(mno, {})[hand] = dict(zip(HAND_COLS, vals, strict=True))
        plies: dict[tuple[int, int], list[str]] = {}
        for mno, hand, ply in conn.execute(
            f"SELECT mno, hand, {PLY_JSON} FROM move_analysis WHERE mno BETWEEN $lo AND $hi AND list_contains($in, mno)",
            par,
        ).fetchall():  # fmt: skip
            plies.setdefault((mno, hand), []).append(ply)
        # a match left with no analysed hand gets a body of none
        bodies = pa.table({
            "mno": pa.array(part, pa.int64()),
            "body": pa.array([_body(mno, rows.get(mno, {}), plies) for mno in part], pa.binary()),
        })  # fmt: skip
        with registered(conn, "_analysis_bodies", bodies):
            conn.execute(
                "UPDATE matches SET analysis_body = b.body FROM _analysis_bodies b "
                "WHERE matches.mno = b.mno AND matches.mno BETWEEN $lo AND $hi", {"lo": part[0], "hi": part[-1]},
            )  # fmt: skip
    return len(nos)


def _body(mno: int, hands: dict[int, dict[str, Any]], plies: dict[tuple[int, int], list[str]]) -> bytes:
    shown = {}
    for hand, row in hands.items():
        got = plies.get((mno, hand))
        shown[hand] = orjson.dumps(shown_analysis(row, orjson.loads("[" + ",".join(got) + "]") if got else []))
    return pack_analysis(shown)
