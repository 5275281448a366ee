"""The move code: one small int per move, and the only names of moves.

A play is ``2 * tile + end`` (end 0 = left, 1 = right; for the hand's
first tile, the end says where its high half goes, as in
:mod:`replay.engine`); a pass, a draw and the lead yield are negative.
The store's ``legal_moves`` column, the solvers (Python and C) and the C
hand replayer all use this code.

Two spellings of a move exist, each written here only:

- its *name*, as the log's reports and the store's JSON carry it:
  ``"63:left"``, ``"PASS"``, ``"DRAW"``, ``"YIELD"`` (:func:`name`,
  :func:`code`);
- its *label*, as the analysis shows it to a reader: ``"63 left"``,
  ``"pass"`` (:func:`label`).

>>> from replay.tiles import parse_tile
>>> c = play(parse_tile("63"), RIGHT)
>>> c, name(c), label(c), code("63:right"), code("36:right")
(43, '63:right', '63 right', 43, 43)
>>> name(PASS), label(DRAW), code("YIELD")
('PASS', 'draw', -3)
>>> to_engine(c), to_engine(PASS)
(Play(tile='63', end='right'), PASS)
>>> from_engine(to_engine(c)) == c and from_engine(engine.YIELD) == YIELD
True

``replay/_rules.h`` gives the C files these codes, written from this
module by ``scripts/gen_rules_header.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from replay import engine
from replay.engine import LEFT, RIGHT, Move
from replay.tiles import N_TILES, tile_name

#: A move code: ``2 * tile + end`` for a play, else one of the negatives below.
MoveCode = int

PASS: Final = -1
DRAW: Final = -2
YIELD: Final = -3

#: Every code, plays first (tile by tile, left before right), then PASS, DRAW, YIELD.
CODES: Final[tuple[MoveCode, ...]] = (*range(2 * N_TILES), PASS, DRAW, YIELD)

_END_NAMES: Final = ("left", "right")
_SPECIAL: Final = {PASS: "PASS", DRAW: "DRAW", YIELD: "YIELD"}
_NAME: Final[dict[MoveCode, str]] = {
    **{2 * t + e: f"{tile_name(t)}:{_END_NAMES[e]}" for t in range(N_TILES) for e in (LEFT, RIGHT)},
    **_SPECIAL,
}
_LABEL: Final[dict[MoveCode, str]] = {
    **{2 * t + e: f"{tile_name(t)} {_END_NAMES[e]}" for t in range(N_TILES) for e in (LEFT, RIGHT)},
    **{c: n.lower() for c, n in _SPECIAL.items()},
}
# a name read back takes either half first ("36:left" is "63:left")
_CODE: Final[dict[str, MoveCode]] = {
    **{f"{tile_name(t)[::-1]}:{_END_NAMES[e]}": 2 * t + e for t in range(N_TILES) for e in (LEFT, RIGHT)},
    **{n: c for c, n in _NAME.items()},
}
_ENGINE: Final[dict[MoveCode, Move]] = {
    **{2 * t + e: engine.PLAYS[t][e] for t in range(N_TILES) for e in (LEFT, RIGHT)},
    PASS: engine.PASS,
    DRAW: engine.DRAW,
    YIELD: engine.YIELD,
}
_FROM_ENGINE: Final[dict[Move, MoveCode]] = {m: c for c, m in _ENGINE.items()}


def play(tile: int, end: int) -> MoveCode:
    """The code of laying `tile` on `end` (``LEFT`` or ``RIGHT``)."""
    return 2 * tile + end


def tile_of(code: MoveCode) -> int:
    """The tile a play lays (-1 for a pass, draw or yield).

    >>> tile_of(43), tile_of(PASS)
    (21, -1)
    """
    return code >> 1 if code >= 0 else -1


def end_of(code: MoveCode) -> int:
    """The end a play goes on: ``LEFT`` (0) or ``RIGHT`` (1)."""
    return code & 1


#: name(code): the stored name of a move, ``"63:left"`` (high half first), ``"PASS"``.
#: (A dict lookup, not a def: the store maps it over every legal move.)
name: Final[Callable[[MoveCode], str]] = _NAME.__getitem__

#: code(name): the code of a stored name (either half first: ``"36:left"`` too).
code: Final[Callable[[str], MoveCode]] = _CODE.__getitem__


def label(code: MoveCode | Move) -> str:
    """A move as the analysis writes it: ``"63 left"``, ``"pass"``.

    Takes a code or the engine's move.

    >>> label(engine.PLAYS[23][1]), label(PASS), label(DRAW), label(YIELD)
    ('54 right', 'pass', 'draw', 'yield')
    """
    return _LABEL[code if isinstance(code, int) else _FROM_ENGINE[code]]


def to_engine(code: MoveCode) -> Move:
    """The engine's (interned) move for a code."""
    return _ENGINE[code]


def from_engine(move: Move) -> MoveCode:
    """The code of an engine move."""
    return _FROM_ENGINE[move]


__all__ = [
    "CODES",
    "DRAW",
    "LEFT",
    "PASS",
    "RIGHT",
    "YIELD",
    "MoveCode",
    "code",
    "end_of",
    "from_engine",
    "label",
    "name",
    "play",
    "tile_of",
    "to_engine",
]

