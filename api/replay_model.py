"""The replay page's data: a hand as the store holds it, and each ply as the page shows it.

`HandData` (with its `MoveRow`s, `SeatLabel`s and `FindingRow`s) is what
`api.queries.hand_of` reads from the store and what the render workers
receive (`api.pool`); `Ply` and `Note` are one position of the hand and
what the page says about it (`api.hand_page.build_plies` makes them from
`replay.hand_walk`'s positions; `api.board` draws them).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import lru_cache
from html import escape
from typing import Any

from api.names import shown
from replay.analysis.grades import HandInput
from replay.hand_walk import FINISHED, HAND_SIZE, Placed
from replay.tiles import HIGH, LOW, tile_name

__all__ = ["FINISHED", "HAND_SIZE", "FindingRow", "HandData", "MoveRow", "Note", "Placed", "Ply", "SeatLabel",
           "esc", "esc_once", "label", "tile_or_none"]


def label(t: int) -> str:
    """A tile as the pages name it, high half first.

    >>> label(26), label(0)
    ('[6|5]', '[0|0]')
    """
    return _LABEL[t]


_LABEL: tuple[str, ...] = tuple(f"[{HIGH[t]}|{LOW[t]}]" for t in range(28))


def esc(text: object) -> str:
    """Escape for SVG/HTML text and attribute values, invisible and direction
    characters spelled out (api.names.shown: names come from logs)."""
    return _esc_kept(text if type(text) is str else str(text))


def esc_once(text: str) -> str:
    """:func:`esc` for a text met once (a graph point's title), past the
    cache that keeps the texts a page meets again and again."""
    return escape(shown(text), quote=True)


# a hand's page escapes the same titles, notes, moves and names again and again
_esc_kept = lru_cache(maxsize=4096)(esc_once)


# --- input: what the store holds for one hand ---------------------------------


@dataclass(frozen=True, slots=True)
class MoveRow:
    ply: int
    seq: int
    seat: int
    kind: str  # play / pass / draw / yield
    tile: int | None
    end: str | None
    left: int
    right: int
    stock: int
    legal_moves: tuple[str, ...] = ()
    forced: bool = False
    error: str | None = None


@dataclass(frozen=True, slots=True)
class SeatLabel:
    seat: int
    player: str
    name: str | None = None
    bot: bool = False

    @property
    def label(self) -> str:
        return self.name or self.player


@dataclass(frozen=True, slots=True)
class FindingRow:
    code: str
    severity: str
    hand: int | None
    seq: int | None
    message: str


@dataclass(frozen=True, slots=True)
class HandData:
    match: str
    hand: int
    players: int
    teams: str  # "pairs" / "individual"
    result: str | None  # None: the hand never finished
    winner: int | None
    points: tuple[int, ...]
    score: tuple[int, ...]
    notes: tuple[str, ...]
    leader: int | None
    blocker: int | None
    dealt: tuple[tuple[int, ...], ...]  # per seat; () when withheld
    stock0: int  # tiles undealt after the deal
    seats: tuple[SeatLabel, ...]
    moves: tuple[MoveRow, ...]
    findings: tuple[FindingRow, ...] = ()
    deal_seq: int | None = None
    end_seq: int | None = None
    aside: int = 0  # tiles out of play from the start (the doubles under doubles_aside)
    analysis: dict[str, Any] | None = None  # api.analysis_view.hand_analysis, finished hands only
    review: HandInput | None = None  # the hand as the solver replays it (api.review's lines), finished hands only
    # its principal lines once looked up (api.review.LineBook); bytes: their JSON as
    # stored, decoded where the twin is drawn (a render worker), not in the server
    lines: dict[int, dict[str, Any]] | bytes | None = None
    scoring: str | None = None  # its rules' scoring, where `review` is left out (api.review.for_drawing)

    @property
    def finished(self) -> bool:
        return self.result in FINISHED

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # To the render pool as plain tuples: a slotted dataclass pickles
        # field by field through __getstate__, five times slower.
        fields = tuple(getattr(self, f) for f in _HAND_FIELDS)
        flat = tuple(
            tuple(tuple(getattr(x, f) for f in _ROW_FIELDS[type(x)]) for x in v) if f in _ROWS else v
            for f, v in zip(_HAND_FIELDS, fields, strict=True)
        )
        return _hand_data, flat


def _hand_data(*flat: Any) -> HandData:
    """HandData from HandData.__reduce__'s tuples."""
    values: list[Any] = [
        tuple(_ROWS[f](*x) for x in v) if f in _ROWS else v
        for f, v in zip(_HAND_FIELDS, flat, strict=True)
    ]
    return HandData(*values)


_ROWS: dict[str, type] = {"seats": SeatLabel, "moves": MoveRow, "findings": FindingRow}
_ROW_FIELDS: dict[type, tuple[str, ...]] = {t: tuple(f.name for f in fields(t)) for t in _ROWS.values()}
_HAND_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(HandData))


# --- output: one position per ply ------------------------------------------------


@dataclass(slots=True)
class Note:
    kind: str  # legal, forced, pass, draw, yield, puerta, ahorcado, tranque, out, finding, ...
    text: str
    seq: int | None = None
    severity: str | None = None


@dataclass(slots=True)
class Ply:
    n: int
    move: MoveRow | None
    title: str
    line: list[Placed]
    left: int
    right: int
    hands: list[tuple[int, ...] | None] | None  # None: withheld (hand not over); a seat's None: not its viewer's
    pips: list[int | None] | None
    stock: int
    notes: list[Note] = field(default_factory=list)
    voids: list[tuple[int, ...]] = field(default_factory=list)  # known numbers each seat lacks
    alternatives: list[tuple[str, bool]] = field(default_factory=list)  # (move, was it played)
    hanged: list[int] = field(default_factory=list)  # doubles that can no longer be played
    new_tile: int | None = None  # index in `line` of the tile just laid
    aside: int = 0
    counts: list[int] = field(default_factory=list)  # tiles each seat holds (public)
    tile_known: bool = False  # the move's tile may be shown (a play, or a draw its viewer saw)
    forced: bool | None = None  # the move was forced, where the viewer may know it
    viewer: int | None = None  # the seat whose knowledge this is (None: everything the hand allows)

    def to_json(self) -> dict[str, Any]:
        mv = self.move
        return {
            "ply": self.n,
            "seq": mv.seq if mv else None,
            "seat": mv.seat if mv else None,
            "kind": mv.kind if mv else "deal",
            "tile": tile_or_none(mv.tile) if mv and self.tile_known else None,
            "end": mv.end if mv else None,
            "title": self.title,
            "line": [_PAIR[p.a][p.b] for p in self.line],  # as laid, read left to right
            "ends": [self.left, self.right] if self.left >= 0 else None,
            "hands": [None if h is None else [_NAME[t] for t in h] for h in self.hands]
            if self.hands is not None else None,
            "counts": self.counts,
            "pips": self.pips,
            "stock": self.stock,
            "alternatives": [{"move": m, "played": p} for m, p in self.alternatives],
            "forced": self.forced,
            "voids": self.voids,
            "hanged": [tile_name(t) for t in self.hanged],
            "notes": [
                {"kind": n.kind, "text": n.text, "seq": n.seq, "severity": n.severity}
                for n in self.notes
            ],
        }


#: A tile on the line as the twin writes it ("63": its left half, then its right), and each tile's name.
_PAIR: tuple[tuple[str, ...], ...] = tuple(tuple(f"{a}{b}" for b in range(7)) for a in range(7))
_NAME: tuple[str, ...] = tuple(tile_name(t) for t in range(28))


def tile_or_none(t: int | None) -> str | None:
    return None if t is None else tile_name(t)
