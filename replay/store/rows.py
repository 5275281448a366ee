"""Validation reports as Arrow tables, one per store table (see replay/sql).

`Frames` collects the rows of many `MatchReport`s column by column (no
row objects) and hands out `pyarrow.Table`s whose columns carry the names
and types of the SQL tables, so that `INSERT INTO t BY NAME SELECT * FROM
frame` is the whole load. Tiles and seats are small ints; a legal move is
a small int too (:mod:`replay.moves`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from itertools import accumulate, chain
from typing import Any, Final

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from replay import moves
from replay.accel import native
from replay.events import ts_to_ms
from replay.findings import CODES, Finding, MatchReport, MoveRecord
from replay.store.player_rows import player_rows
from replay.store.replay_blob import move_codes, pack_replays
from replay.tiles import IS_DOUBLE, PIPS
from replay.validate.fast_path import MoveColumns

__all__ = [
    "SCHEMAS",
    "TABLES",
    "Frames",
    "file_table",
    "findings_table",
    "first_leader",
    "pass_counts",
    "timestamps",
]

# -- schemas -----------------------------------------------------------------

#: The digest of no line: a hand whose lines were not found.
_NO_LINES: Final = (hashlib.sha256(b"").hexdigest(), 0)

_I8, _I16, _I32, _I64 = pa.int8(), pa.int16(), pa.int32(), pa.int64()
_STR, _BOOL = pa.string(), pa.bool_()
_TS: Final = pa.timestamp("ms", tz="UTC")
_INTS, _STRS = pa.list_(_I32), pa.list_(_STR)

#: Column names and Arrow types of each table a batch carries.
SCHEMAS: Final[dict[str, pa.Schema]] = {
    "matches": pa.schema([
        ("match", _STR), ("table_id", _STR), ("profile", _STR), ("rules", _STR),
        ("players", _I8), ("verdict", _STR), ("result", _STR), ("winner", _I8),
        ("score", _INTS), ("notes", _STRS), ("claimed_result", _STR), ("claimed_winner", _I8),
        ("claimed_score", _INTS), ("claimed_notes", _STRS), ("started", _TS), ("ended", _TS),
        ("hands", _I32), ("events", _I32), ("errors", _I32), ("warnings", _I32),
        ("anchor", _STR), ("beacon", _STR), ("rematch_of", _STR), ("first_leader", _I8),
        ("lead_draw", pa.list_(pa.struct([("seat", _I8), ("tile", _I8)]))),
        ("estimates", _STRS), ("batch", _STR), ("replay", pa.binary()), ("analysis", _STR),
        ("log_digest", _STR), ("log_lines", _I32),  # migration 018: the lines of no hand
    ]),
    "seats": pa.schema([
        ("match", _STR), ("seat", _I8), ("player", _STR), ("name", _STR), ("bot", _BOOL),
        ("from_hand", _I32), ("seq", _I32),
    ]),
    "hands": pa.schema([
        ("match", _STR), ("hand", _I32), ("result", _STR), ("winner", _I8), ("points", _INTS),
        ("score", _INTS), ("notes", _STRS), ("claimed_result", _STR), ("claimed_winner", _I8),
        ("claimed_points", _INTS), ("claimed_score", _INTS), ("claimed_notes", _STRS),
        ("leader", _I8), ("opener", _I8), ("blocker", _I8), ("dealt", pa.list_(pa.list_(_I8))),
        ("stock", pa.list_(_I8)), ("pips", pa.list_(_I16)), ("client_seeds", _STRS),
        ("server_seed", _STR), ("seed_ok", _BOOL), ("deal_ok", _BOOL), ("play_ok", _BOOL),
        ("plies", _I16), ("started", _TS), ("ended", _TS), ("passes", pa.list_(_I16)),
        ("dealt_pips", pa.list_(_I16)), ("dealt_doubles", pa.list_(_I8)), ("dealt_tiles", pa.list_(_I8)),
        ("log_digest", _STR), ("log_lines", _I32),  # migration 018 (replay.store.line_digests)
    ]),
    "moves": pa.schema([
        ("match", pa.dictionary(_I32, _STR)), ("hand", _I32), ("ply", _I16), ("seq", _I32),
        ("seat", _I8), ("kind", _STR), ("tile", _I8), ("on_end", _STR), ("left_end", _I8),
        ("right_end", _I8), ("pips", pa.list_(_I16)), ("stock", _I8), ("legal", _I8),
        ("forced", _BOOL), ("legal_moves", pa.list_(_I16)), ("error", _STR), ("ts", _TS),
    ]),
    "findings": pa.schema([
        ("match", _STR), ("hand", _I32), ("seq", _I32), ("code", _STR), ("severity", _STR),
        ("message", _STR), ("file", _STR), ("line", _I64), ("sha256", _STR),
    ]),
    "seeds": pa.schema(
        [("seed", _STR), ("match", _STR), ("hand", _I32), ("file", _STR), ("line", pa.int64()), ("sha256", _STR)]
    ),
    "match_files": pa.schema([("match", _STR), ("sha256", _STR), ("lines", _I32)]),
    "move_analysis": pa.schema([
        ("match", _STR), ("hand", _I32), ("ply", _I16), ("seat", _I8), ("version", _I32),
        ("played", _STR), ("forced", _BOOL),
        ("alternatives", pa.list_(pa.struct([
            ("move", _STR), ("dd", _I32), ("pimc", pa.float64()), ("pimc_lo", pa.float64()),
            ("pimc_hi", pa.float64()),
        ]))),
        ("dd", _I32), ("dd_best", _I32), ("dd_loss", _I32), ("pimc", pa.float64()),
        ("pimc_best", pa.float64()), ("pimc_loss", pa.float64()), ("class", _STR),
        ("samples", _I16), ("exact", _BOOL), ("on_line", _I8), ("stake", pa.float64()),
        ("stake_dd", _I32), ("pimc_best_played", _BOOL), ("differs", _BOOL),
        ("hindsight", pa.float64()),  # migration 014 (reports.cheats)
        ("reads", pa.list_(pa.struct([  # migration 019: the read grade
            ("read", pa.float64()), ("read_lo", pa.float64()), ("read_hi", pa.float64()),
        ]))),
        ("read", pa.float64()), ("read_best", pa.float64()), ("read_loss", pa.float64()),
        ("read_ess", pa.float64()), ("class_uniform", _STR), ("too_close", _BOOL),
    ]),
    "hand_analysis": pa.schema([
        ("match", _STR), ("hand", _I32), ("version", _I32), ("samples", _I16), ("seed", _I64),
        ("skip", _STR), ("first_seat", _I8), ("par", _INTS), ("result", _INTS),
        ("lost", pa.list_(pa.float64())), ("stake", pa.list_(pa.float64())),
        ("lost_dd", pa.list_(pa.float64())), ("stake_dd", pa.list_(pa.float64())),
        ("accuracy", pa.list_(pa.float64())), ("accuracy_dd", pa.list_(pa.float64())),
        ("lost_uniform", pa.list_(pa.float64())), ("stake_uniform", pa.list_(pa.float64())),  # migration 019
        ("accuracy_uniform", pa.list_(pa.float64())), ("read_model", _STR),
    ]),
    "log_files": pa.schema([
        ("sha256", _STR), ("path", _STR), ("paths", _STRS), ("size", _I64), ("read_at", _TS),
        ("lines", _I64), ("bad_lines", _I64), ("stored", _STR),
    ]),
}  # fmt: skip

#: The per-match tables, in the order a batch is loaded (the analysis's only
#: when the batch has them: replay.analysis).
TABLES: Final = (
    "matches", "seats", "hands", "moves", "findings", "seeds", "match_files", "move_analysis", "hand_analysis",
)


def timestamps(values: Sequence[str | None]) -> pa.Array:
    """RFC 3339 strings (validated by the reader) as UTC milliseconds; "" is NULL.

    Arrow's cast does the common case in C++; what it refuses (leap seconds,
    sub-millisecond digits, lower-case t/z) goes through `ts_to_ms`.

    >>> ts = timestamps(["2026-11-02T18:04:05.120Z", "", "2026-12-31T23:59:60Z"])
    >>> [None if t is None else t.isoformat() for t in ts.to_pylist()]
    ['2026-11-02T18:04:05.120000+00:00', None, '2027-01-01T00:00:00+00:00']
    """
    try:
        return pc.cast(pa.array(values, _STR), _TS)
    except pa.ArrowInvalid:  # also for "" (a missing time)
        return pa.array([ts_to_ms(v) if v else None for v in values], _I64).cast(_TS)


def _lists(rows: Sequence[Sequence[Any] | None], value_type: pa.DataType) -> pa.Array:
    """A list column; a row may be None (a NULL list). pyarrow's converter:
    a third of the time of flat values and offsets built in Python.

    >>> _lists([(1, 2), None, ()], _I32).to_pylist()
    [[1, 2], None, []]
    """
    return pa.array(rows, pa.list_(value_type))


def _codes(rows: Sequence[Sequence[str]]) -> pa.Array:
    """Legal-move names as lists of move codes (one flat pass, no inner lists)."""
    offsets = pa.array(list(accumulate(map(len, rows), initial=0)), _I32)
    flat = list(map(moves.code, chain.from_iterable(rows)))
    return pa.ListArray.from_arrays(offsets, pa.array(flat, _I16))


#: Pips and doubles by tile id, for numpy's fancy indexing.
_PIPS_NP: Final = np.array(PIPS, np.int64)
_DOUBLE_NP: Final = np.array(IS_DOUBLE, np.int64)


def _flat_deals(deals: Sequence[Sequence[Sequence[int]]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every tile of the deals (int64), the tiles of each seat, the seats of
    each hand: in C where it is built (native.deals), else in Python."""
    if native is not None:
        tiles, per_seat, per_hand = native.deals(deals)
        return (np.frombuffer(tiles, np.int8).astype(np.int64), np.frombuffer(per_seat, np.int32),
                np.frombuffer(per_hand, np.int32))  # fmt: skip
    seats = list(chain.from_iterable(deals))
    n_tiles = np.fromiter(map(len, seats), np.int64, len(seats))
    flat = np.fromiter(chain.from_iterable(seats), np.int64, int(n_tiles.sum()))
    return flat, n_tiles, np.fromiter(map(len, deals), np.int64, len(deals))


def deal_columns(deals: Sequence[Sequence[Sequence[int]]]) -> tuple[pa.Array, ...]:
    """The hands columns of the deals (per hand, the tiles of each seat):
    ``dealt``, ``dealt_pips``, ``dealt_doubles`` and ``dealt_tiles``, from one
    flat array of every tile (no per-seat Python sums).

    >>> [c.to_pylist() for c in deal_columns([((27, 0), (7,)), ((), (1, 2, 3))])]
    [[[[27, 0], [7]], [[], [1, 2, 3]]], [[12, 2], [0, 6]], [[2, 1], [0, 0]], [[2, 1], [0, 3]]]
    """
    tiles, n_tiles, n_seats = _flat_deals(deals)
    inner = np.zeros(len(n_tiles) + 1, np.int32)
    np.cumsum(n_tiles, out=inner[1:])
    outer = np.zeros(len(n_seats) + 1, np.int32)
    np.cumsum(n_seats, out=outer[1:])
    outer_offsets = pa.array(outer)

    def per_seat(weights: np.ndarray, value_type: pa.DataType) -> pa.Array:
        total = np.zeros(len(tiles) + 1, np.int64)
        np.cumsum(weights[tiles], out=total[1:])
        sums = total[inner[1:]] - total[inner[:-1]]
        return pa.ListArray.from_arrays(outer_offsets, pa.array(sums).cast(value_type))

    by_seat = pa.ListArray.from_arrays(pa.array(inner), pa.array(tiles).cast(_I8))
    return (
        pa.ListArray.from_arrays(outer_offsets, by_seat),
        per_seat(_PIPS_NP, _I16),
        per_seat(_DOUBLE_NP, _I8),
        pa.ListArray.from_arrays(outer_offsets, pa.array(n_tiles).cast(_I8)),
    )


def pass_counts(moves: Iterable[MoveRecord], seats: int | None) -> list[int]:
    """Passes per seat in a hand (``hands.passes``): one entry per seat of the
    match, more if a pass came from a higher seat (as migration 002 counts).

    >>> pass_counts([], 4)
    [0, 0, 0, 0]
    """
    counts = [0] * (seats or 0)
    for m in moves:
        if m.kind == "pass":
            if m.seat >= len(counts):
                counts.extend([0] * (m.seat + 1 - len(counts)))
            counts[m.seat] += 1
    return counts


def first_leader(report: MatchReport) -> int | None:
    """The seat a rematch of this match counts from (as `validate_grouped`):
    the logged leader of its first hand that was not cancelled."""
    for h in report.hands:
        if h.result != "cancelled":
            return h.leader
    return report.hands[0].leader if report.hands else None


class Frames:
    """Rows of the store's per-match tables for a batch of reports.

    ``where`` maps the file labels of the records (``Finding.file``) to
    the sha256 of the kept file.
    """

    def __init__(self, batch: str, where: Mapping[str, str]) -> None:
        self.batch = batch
        self.where = where
        self.reports: list[MatchReport] = []
        self.file_lines: list[tuple[str, str, int]] = []
        #: the moves of the matches validated hand by hand (replay.validate.fast_path)
        self.columns = MoveColumns()
        self._codes: tuple[np.ndarray, np.ndarray] | None = None  # of the moves, by _moves
        #: (match, hand) -> (digest, lines) of the hands' log lines (replay.store.line_digests)
        self.digests: dict[tuple[str, int], tuple[str, int]] = {}

    def add(self, report: MatchReport, lines_per_file: Mapping[str, int]) -> None:
        """One match; ``lines_per_file``: its lines in each kept file (by sha256)."""
        self.reports.append(report)
        self.file_lines.extend((report.match, sha, n) for sha, n in lines_per_file.items())

    def __len__(self) -> int:
        return len(self.reports)

    def add_digests(self, table: pa.Table) -> None:
        """The digests of the matches' log lines (``replay.store.line_digests``): stored with
        their hands; a hand of the batch with no line found gets the digest of no line."""
        cols = (table.column(c).to_pylist() for c in ("match", "hand", "digest", "lines"))
        self.digests.update({(m, h): (d, n) for m, h, d, n in zip(*cols, strict=True)})

    def _digest_columns(self, keys: Sequence[tuple[str, int]]) -> dict[str, list[Any]]:
        if not self.digests:  # none computed (validation only): NULL, hashed when a certificate needs them
            return {"log_digest": [None] * len(keys), "log_lines": [None] * len(keys)}
        got = [self.digests.get(k, _NO_LINES) for k in keys]
        return {"log_digest": [d for d, _ in got], "log_lines": [n for _, n in got]}

    def tables(self) -> dict[str, pa.Table]:
        """Every per-match table of the batch (empty ones included)."""
        out = {
            "matches": self._matches(),
            "seats": self._seats(),
            "hands": self._hands(),
            "moves": self._moves(),
        }
        # the replay page's one read of a match: its rows packed in its row
        out["matches"] = out["matches"].set_column(
            SCHEMAS["matches"].get_field_index("replay"), "replay", pack_replays(out, self._codes)
        )
        return {
            **out,
            # the player tables' rows of these matches (the loader inserts them)
            **player_rows(out["matches"], out["seats"], out["hands"]),
            "findings": findings_table(
                ((r.match, f) for r in self.reports for f in r.findings), self.where
            ),
            "seeds": self._seeds(),
            "match_files": pa.table(
                [list(c) for c in zip(*self.file_lines, strict=True)] if self.file_lines else [[], [], []],
                schema=SCHEMAS["match_files"],
            ),
        }

    def _matches(self) -> pa.Table:
        rs = self.reports
        errors = [sum(1 for f in r.findings if CODES[f.code] == "error") for r in rs]
        return pa.table(
            {
                "match": [r.match for r in rs],
                "table_id": [r.table for r in rs],
                "profile": [r.profile for r in rs],
                "rules": [None if r.rules is None else orjson.dumps(r.rules).decode() for r in rs],
                "players": [r.players for r in rs],
                "verdict": [r.verdict for r in rs],
                "result": [r.result for r in rs],
                "winner": [r.winner for r in rs],
                "score": _lists([r.score for r in rs], _I32),
                "notes": _lists([r.notes for r in rs], _STR),
                "claimed_result": [r.claimed_result for r in rs],
                "claimed_winner": [r.claimed_winner for r in rs],
                "claimed_score": _lists([r.claimed_score for r in rs], _I32),
                "claimed_notes": _lists([r.claimed_notes for r in rs], _STR),
                "started": timestamps([r.started for r in rs]),
                "ended": timestamps([r.ended for r in rs]),
                "hands": [len(r.hands) for r in rs],
                "events": [r.events for r in rs],
                "errors": errors,
                "warnings": [len(r.findings) - e for r, e in zip(rs, errors, strict=True)],
                "anchor": [r.anchor for r in rs],
                "beacon": [r.beacon for r in rs],
                "rematch_of": [r.rematch_of for r in rs],
                "first_leader": [first_leader(r) for r in rs],
                "lead_draw": [[{"seat": s, "tile": t} for s, t in r.lead_draw] for r in rs],
                "estimates": _lists([r.estimates for r in rs], _STR),
                "batch": [self.batch] * len(rs),
                "replay": pa.nulls(len(rs), pa.binary()),  # packed in tables()
                "analysis": pa.nulls(len(rs), _STR),  # the batch, once analysed (replay.analysis)
                **self._digest_columns([(r.match, 0) for r in rs]),
            },
            schema=SCHEMAS["matches"],
        )

    def _seats(self) -> pa.Table:
        rows = [(r.match, s) for r in self.reports for s in r.seats]
        return pa.table(
            {
                "match": [m for m, _ in rows],
                "seat": [s.seat for _, s in rows],
                "player": [s.player for _, s in rows],
                "name": [s.name for _, s in rows],
                "bot": [s.bot for _, s in rows],
                "from_hand": [s.from_hand for _, s in rows],
                "seq": [s.seq for _, s in rows],
            },
            schema=SCHEMAS["seats"],
        )

    def _hands(self) -> pa.Table:
        ms = [r.match for r in self.reports for _ in r.hands]
        hs = [h for r in self.reports for h in r.hands]
        fast = self.columns.hands
        plies: list[int] = []
        passes: list[Sequence[int]] = []
        for r in self.reports:
            for h in r.hands:
                got = fast.get((r.match, h.hand))
                if got is None:
                    plies.append(len(h.moves))
                    passes.append(pass_counts(h.moves, r.players))
                else:
                    plies.append(got[0])
                    passes.append(got[1])
        dealt, dealt_pips, dealt_doubles, dealt_tiles = deal_columns([h.hands for h in hs])
        return pa.table(
            {
                "match": ms,
                "hand": [h.hand for h in hs],
                "result": [h.result for h in hs],
                "winner": [h.winner for h in hs],
                "points": _lists([h.points for h in hs], _I32),
                "score": _lists([h.score for h in hs], _I32),
                "notes": _lists([h.notes for h in hs], _STR),
                "claimed_result": [h.claimed_result for h in hs],
                "claimed_winner": [h.claimed_winner for h in hs],
                "claimed_points": _lists([h.claimed_points for h in hs], _I32),
                "claimed_score": _lists([h.claimed_score for h in hs], _I32),
                "claimed_notes": _lists([h.claimed_notes for h in hs], _STR),
                "leader": [h.leader for h in hs],
                "opener": [h.opener for h in hs],
                "blocker": [h.blocker for h in hs],
                "dealt": dealt,
                "stock": _lists([h.stock for h in hs], _I8),
                "pips": _lists([h.pips for h in hs], _I16),
                "client_seeds": _lists([h.client_seeds for h in hs], _STR),
                "server_seed": [h.server_seed for h in hs],
                "seed_ok": [h.seed_ok for h in hs],
                "deal_ok": [h.deal_ok for h in hs],
                "play_ok": [h.play_ok for h in hs],
                "plies": plies,
                "started": timestamps([h.started for h in hs]),
                "ended": timestamps([h.ended for h in hs]),
                "passes": _lists(passes, _I16),
                "dealt_pips": dealt_pips,
                "dealt_doubles": dealt_doubles,
                "dealt_tiles": dealt_tiles,
                **self._digest_columns([(m, h.hand) for m, h in zip(ms, hs, strict=True)]),
            },
            schema=SCHEMAS["hands"],
        )

    def _moves(self) -> pa.Table:
        # The match column is dictionary-encoded: one string per match, an
        # int per move (the biggest table stays small in memory and Parquet).
        index: list[int] = []
        mv: list[MoveRecord] = []
        for i, r in enumerate(self.reports):
            for h in r.hands:
                mv.extend(h.moves)
                index.extend([i] * len(h.moves))
        match = pa.DictionaryArray.from_arrays(
            pa.array(index, _I32), pa.array([r.match for r in self.reports], _STR)
        )
        slow = pa.table(
            {
                "match": match,
                "hand": [m.hand for m in mv],
                "ply": [m.ply for m in mv],
                "seq": [m.seq for m in mv],
                "seat": [m.seat for m in mv],
                "kind": [m.kind for m in mv],
                "tile": [m.tile for m in mv],
                "on_end": [m.end for m in mv],
                "left_end": [m.left for m in mv],
                "right_end": [m.right for m in mv],
                "pips": _lists([m.pips for m in mv], _I16),
                "stock": [m.stock for m in mv],
                "legal": [m.legal for m in mv],
                "forced": [m.forced for m in mv],
                "legal_moves": _codes([m.legal_moves for m in mv]),
                "error": [m.error for m in mv],
                "ts": timestamps([m.ts for m in mv]),
            },
            schema=SCHEMAS["moves"],
        )
        kinds, ends = move_codes(slow)
        if not self.columns.matches:
            self._codes = (kinds, ends)
            return slow
        # the rows made in C have the codes pack_replays wants: KINDS and
        # ENDS in order, -1 for no end (NULL: -128)
        cols = self.columns.cols
        fast_kinds = np.frombuffer(cols[_AT["kind"]], np.int8)
        fast_ends = np.frombuffer(cols[_AT["on_end"]], np.int8).copy()
        fast_ends[fast_ends < 0] = -128
        self._codes = (np.concatenate((kinds, fast_kinds)), np.concatenate((ends, fast_ends)))
        return pa.concat_tables([slow, _column_moves(self.columns)])

    def _seeds(self) -> pa.Table:
        # Lower case: SEED_REUSED compares seeds as validate.seed_reuse does.
        # with the line each seed was read from (a SEED_REUSED finding names it)
        rows: list[tuple[str, str, int, str | None, int | None, str | None]] = []
        where = self.where
        for r in self.reports:
            at = {h: (f, n) for h, f, n in r.seed_lines}
            seeds = [(r.anchor, 0)] if r.anchor else []
            seeds += [(h.server_seed, h.hand) for h in r.hands if h.server_seed]
            for seed, hand in seeds:
                file, line = at.get(hand, (None, None))
                rows.append((seed.lower(), r.match, hand, file, line, where.get(file) if file else None))
        cols = [list(c) for c in zip(*rows, strict=True)] if rows else [[] for _ in SCHEMAS["seeds"]]
        return pa.table(cols, schema=SCHEMAS["seeds"])


_KINDS: Final = pa.array(["play", "pass", "draw"], _STR)
_AT: Final = {name: i for i, (name, _) in enumerate(MoveColumns.COLUMNS)}
_ENDS: Final = pa.array(["left", "right"], _STR)


def _column_moves(mc: MoveColumns) -> pa.Table:
    """The moves table of the rows made in C: the same columns, values and
    types as a report's MoveRecords give (tests/test_ingest.py compares)."""
    c = {name: np.frombuffer(buf, dtype) for (name, dtype), buf in zip(mc.COLUMNS, mc.cols, strict=True)}
    per_match = np.array([rows for _, _, rows in mc.matches], np.int64)
    seats = np.repeat(np.array([n for _, n, _ in mc.matches], np.int32), per_match)
    match = pa.DictionaryArray.from_arrays(
        pa.array(np.repeat(np.arange(len(mc.matches), dtype=np.int32), per_match)),
        pa.array([m for m, _, _ in mc.matches], _STR),
    )
    tile, on_end, legal = c["tile"], c["on_end"], c["legal"]
    return pa.table(
        {
            "match": match,
            "hand": c["hand"],
            "ply": c["ply"],
            "seq": c["seq"],
            "seat": c["seat"],
            "kind": _KINDS.take(pa.array(c["kind"])),
            "tile": pa.array(tile, _I8, mask=tile < 0),
            "on_end": _ENDS.take(pa.array(on_end, _I8, mask=on_end < 0)),
            "left_end": c["left"],
            "right_end": c["right"],
            "pips": _offsets_list(seats, c["pips"]),
            "stock": c["stock"],
            "legal": legal,
            "forced": legal == 1,
            "legal_moves": _offsets_list(c["n_alts"], c["alts"]),
            "error": pa.nulls(len(legal), _STR),
            "ts": pa.array(c["ts"], _I64).cast(_TS),
        },
        schema=SCHEMAS["moves"],
    )


def _offsets_list(lengths: np.ndarray, values: np.ndarray) -> pa.Array:
    offsets = np.zeros(len(lengths) + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values))


def findings_table(
    rows: Iterable[tuple[str | None, Finding]], where: Mapping[str, str]
) -> pa.Table:
    """(match, finding) pairs as rows (match None: a line of no match);
    ``where`` maps a finding's file label to the sha256 of the kept file."""
    pairs = list(rows)
    fs = [f for _, f in pairs]
    return pa.table(
        {
            "match": [m for m, _ in pairs],
            "hand": [f.hand for f in fs],
            "seq": [f.seq for f in fs],
            "code": [f.code for f in fs],
            "severity": [CODES[f.code] for f in fs],
            "message": [f.message for f in fs],
            "file": [f.file for f in fs],
            "line": [f.line for f in fs],
            "sha256": [None if f.file is None else where.get(f.file) for f in fs],
        },
        schema=SCHEMAS["findings"],
    )


def file_table(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """``log_files`` rows (dicts with the column names; ``read_at`` a datetime)."""
    rs = list(rows)
    cols: dict[str, list[Any]] = {name: [r[name] for r in rs] for name in SCHEMAS["log_files"].names}
    cols["read_at"] = [r["read_at"] or datetime.now(UTC) for r in rs]
    return pa.table(cols, schema=SCHEMAS["log_files"])
