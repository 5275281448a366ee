"""Tiles of the double-six set as small ints, tile sets as 28-bit masks.

Tile ids follow the canonical order of deal-v1: 0 = 0-0, 1 = 0-1, ...,
6 = 0-6, 7 = 1-1, ..., 27 = 6-6 (pairs a <= b in lexicographic order).
Names are written high half first ("63"), and parsed in either order.

>>> parse_tile("36") == parse_tile("63") == 21
True
>>> tile_name(21)
'63'
>>> [tile_name(t) for t in iter_tiles(SUIT_MASK[6] & DOUBLES)]
['66']
>>> pips_of(FULL_SET)
168
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Final

Tile = int
TileSet = int

N_TILES: Final = 28
N_SUITS: Final = 7

#: (low, high) halves of every tile id.
HALVES: Final[tuple[tuple[int, int], ...]] = tuple(
    (a, b) for a in range(N_SUITS) for b in range(a, N_SUITS)
)
LOW: Final[tuple[int, ...]] = tuple(a for a, _ in HALVES)
HIGH: Final[tuple[int, ...]] = tuple(b for _, b in HALVES)
PIPS: Final[tuple[int, ...]] = tuple(a + b for a, b in HALVES)
IS_DOUBLE: Final[tuple[bool, ...]] = tuple(a == b for a, b in HALVES)

BIT: Final[tuple[int, ...]] = tuple(1 << t for t in range(N_TILES))
FULL_SET: Final[TileSet] = (1 << N_TILES) - 1

#: SUIT_MASK[n]: the tiles that carry the number n (7 tiles each).
SUIT_MASK: Final[tuple[TileSet, ...]] = tuple(
    sum(BIT[t] for t in range(N_TILES) if n in HALVES[t]) for n in range(N_SUITS)
)
#: The seven doubles.
DOUBLES: Final[TileSet] = sum(BIT[t] for t in range(N_TILES) if IS_DOUBLE[t])
#: DOUBLE_OF[n]: the tile id of the double n-n.
DOUBLE_OF: Final[tuple[Tile, ...]] = tuple(HALVES.index((n, n)) for n in range(N_SUITS))
DOUBLE_SIX: Final[Tile] = 27
DOUBLE_ZERO: Final[Tile] = 0

#: TILE_OF[a][b]: the tile id with halves a and b, in either order.
TILE_OF: Final[tuple[tuple[Tile, ...], ...]] = tuple(
    tuple(HALVES.index((min(a, b), max(a, b))) for b in range(N_SUITS)) for a in range(N_SUITS)
)

#: OTHER[t][n]: the other half of tile t when half n covers an end (-1 if t lacks n).
OTHER: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple((b if n == a else a) if n in (a, b) else -1 for n in range(N_SUITS))
    for a, b in HALVES
)

_NAME: Final[tuple[str, ...]] = tuple(f"{b}{a}" for a, b in HALVES)
_BY_NAME: Final[dict[str, Tile]] = {}
for _t, (_a, _b) in enumerate(HALVES):
    _BY_NAME[f"{_a}{_b}"] = _t
    _BY_NAME[f"{_b}{_a}"] = _t

# Pip totals and tile lists of every 7-bit chunk of a mask, so that the
# hot path never loops over 28 bits one by one.
_CHUNK = 7
_CHUNK_PIPS: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(sum(PIPS[k * _CHUNK + i] for i in range(_CHUNK) if m >> i & 1) for m in range(128))
    for k in range(4)
)


class TileError(ValueError):
    """A tile name that is not two digits 0-6."""

    def __init__(self, text: object) -> None:
        super().__init__(f"not a tile: {text!r} (expected two digits 0-6, e.g. '63')")
        self.text = text


def parse_tile(text: str) -> Tile:
    """Return the id of a tile named like ``"63"`` or ``"36"``.

    >>> parse_tile("00"), parse_tile("01"), parse_tile("66")
    (0, 1, 27)
    >>> parse_tile("7x")
    Traceback (most recent call last):
    ...
    replay.tiles.TileError: not a tile: '7x' (expected two digits 0-6, e.g. '63')
    """
    try:
        return _BY_NAME[text]
    except (KeyError, TypeError):
        raise TileError(text) from None


def tile_name(tile: Tile) -> str:
    """The tile's name, high half first.

    >>> tile_name(1), tile_name(7)
    ('10', '11')
    """
    return _NAME[tile]


def mask_of(tiles: Iterable[Tile]) -> TileSet:
    """The set of the given tile ids as a mask.

    >>> mask_of([0, 27]) == BIT[0] | BIT[27]
    True
    """
    m = 0
    for t in tiles:
        m |= BIT[t]
    return m


def iter_tiles(mask: TileSet) -> Iterator[Tile]:
    """Tile ids of a mask in canonical order.

    >>> list(iter_tiles(0b1011))
    [0, 1, 3]
    """
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def count(mask: TileSet) -> int:
    """Number of tiles in a mask."""
    return mask.bit_count()


def pips_of(mask: TileSet) -> int:
    """Sum of the pips of the tiles in a mask.

    >>> pips_of(mask_of([parse_tile("63"), parse_tile("00")]))
    9
    """
    c = _CHUNK_PIPS
    return (
        c[0][mask & 127]
        + c[1][(mask >> 7) & 127]
        + c[2][(mask >> 14) & 127]
        + c[3][(mask >> 21) & 127]
    )


def pips_each(masks: Iterable[TileSet]) -> tuple[int, ...]:
    """``tuple(pips_of(m) for m in masks)``, without a call per mask (hot path).

    >>> pips_each([mask_of([parse_tile("63")]), 0])
    (9, 0)
    """
    c0, c1, c2, c3 = _CHUNK_PIPS
    return tuple([c0[m & 127] + c1[(m >> 7) & 127] + c2[(m >> 14) & 127] + c3[(m >> 21) & 127] for m in masks])


def doubles_in(mask: TileSet) -> int:
    """Number of doubles in a mask."""
    return (mask & DOUBLES).bit_count()


def weight_key(tile: Tile) -> tuple[int, int]:
    """Order of "heaviest tile": total pips, then the higher half.

    >>> max([parse_tile("61"), parse_tile("52"), parse_tile("43")], key=weight_key) == parse_tile("61")
    True
    """
    return (PIPS[tile], HIGH[tile])
