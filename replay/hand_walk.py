"""A stored hand walked move by move: the position after every ply, as a seat may see it.

`walk(hand, viewer)` folds a hand's stored moves (the rows of the store's
`moves` table, legal or not) over its deal and returns one `Position` per
ply: ply 0 is the deal, ply k the position after the k-th move. Each holds
the line of tiles as laid, both ends, the tiles each seat holds and its
pips (only once the hand is over, and with `viewer` only that seat's), how
many tiles each seat holds, the boneyard, the numbers each seat is known to
lack, the doubles that can no longer be played, and what the move showed:

- a pass or a draw shows the numbers its seat lacked (`knowledge.lacked`,
  the one definition); a draw forgets what was known before it, since the
  drawn tile may carry any other number; the closing passes of a blocked
  line show nothing;
- *puerta*: a play that puts the last tile of a number on the line;
- *ahorcado*: a double whose number is all on the line but off both ends,
  so it can no longer be played;
- the hand's last play, which goes out or blocks the line (*tranque*).

A stored move may be illegal (the validator keeps it and says why): the
walk lays a tile only where it physically goes, as the table would have
it, and keeps on. The words, notes and drawings of the replay page are
the web layer's; nothing here knows a page.

>>> from replay.tiles import parse_tile as t
>>> m = [Stored(1, 0, "play", t("66"), None, 6, 6), Stored(2, 1, "pass"),
...      Stored(3, 2, "play", t("65"), "right", 6, 5)]
>>> dealt = ((t("66"), t("01")), (t("02"),), (t("65"), t("03")), (t("04"),))
>>> p = walk(Hand(4, "domino", dealt, 0, m))
>>> [(x.left, x.right) for x in p]
[(-1, -1), (6, 6), (6, 6), (6, 5)]
>>> p[2].voids[1], p[2].lacks
((6,), (6,))
>>> p[3].hands[2], p[3].counts
((3,), [1, 1, 1, 1])
>>> walk(Hand(4, "domino", dealt, 0, m), viewer=1)[3].hands
[None, (2,), None, None]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from replay.knowledge import lacked, numbers
from replay.tiles import BIT, DOUBLE_OF, HIGH, LOW, PIPS, SUIT_MASK

__all__ = ["FINISHED", "HAND_SIZE", "Hand", "Hanged", "Placed", "Position", "Stored", "StoredHand",
           "StoredMove", "hand_rank", "shows_hands", "walk"]

FINISHED = ("domino", "block", "cancelled")
HAND_SIZE = 7  # tiles dealt to each seat (deal-v1, every profile)


class StoredMove(Protocol):
    """A move as the store keeps it (`api.queries` reads it into `MoveRow`)."""

    @property
    def ply(self) -> int: ...
    @property
    def seat(self) -> int: ...
    @property
    def kind(self) -> str: ...  # play / pass / draw / yield
    @property
    def tile(self) -> int | None: ...
    @property
    def end(self) -> str | None: ...  # "left" / "right"; None for the opening tile
    @property
    def left(self) -> int: ...  # the opening tile's halves as logged: left ...
    @property
    def right(self) -> int: ...  # ... and right
    @property
    def stock(self) -> int: ...  # tiles left in the boneyard after the move (-1: not known)
    @property
    def forced(self) -> bool: ...
    @property
    def error(self) -> str | None: ...  # why the move was not legal


class StoredHand(Protocol):
    """A hand as the store keeps it (`api.queries` reads it into `HandData`)."""

    @property
    def players(self) -> int: ...
    @property
    def result(self) -> str | None: ...  # None: the hand never finished
    @property
    def dealt(self) -> Sequence[Sequence[int]]: ...  # per seat; () when withheld
    @property
    def stock0(self) -> int: ...  # tiles undealt after the deal
    @property
    def moves(self) -> Sequence[StoredMove]: ...


class Stored(NamedTuple):
    """A stored move for examples and tests (the store's rows carry more)."""

    ply: int
    seat: int
    kind: str
    tile: int | None = None
    end: str | None = None
    left: int = -1
    right: int = -1
    stock: int = -1
    forced: bool = False
    error: str | None = None


class Hand(NamedTuple):
    """A stored hand for examples and tests."""

    players: int
    result: str | None
    dealt: Sequence[Sequence[int]]
    stock0: int
    moves: Sequence[StoredMove]


@dataclass(frozen=True, slots=True)
class Placed:
    """A tile on the line, oriented: `a` faces left, `b` faces right."""

    tile: int
    a: int
    b: int


class Hanged(NamedTuple):
    """A double that can no longer be played, and the seat holding it where
    the viewer may know it (None: in no hand, or not to be told)."""

    double: int
    holder: int | None


@dataclass(slots=True)
class Position:
    """The hand after ply `n` (`move`: the stored move that made it; None at the deal)."""

    n: int
    move: StoredMove | None
    line: list[Placed]
    left: int
    right: int
    hands: list[tuple[int, ...] | None] | None  # each seat's tiles, highest first; None: not to be seen
    pips: list[int | None] | None
    stock: int
    counts: list[int]  # tiles each seat holds (public)
    voids: list[tuple[int, ...]]  # numbers each seat is known to lack
    hanged: list[int]  # doubles that can no longer be played, in the order they hanged
    new_tile: int | None = None  # index in `line` of the tile just laid
    before: tuple[int, int] = (-1, -1)  # the ends before the move
    tile_known: bool = False  # the move's tile may be shown (a play, or a draw its viewer saw)
    forced: bool | None = None  # the move was forced, where the viewer may know it
    seen: bool = False  # the viewer may know the seat's own side of the move (its options)
    puerta: tuple[int, ...] = ()  # numbers this play put the last tile of on the line
    ahorcado: tuple[Hanged, ...] = ()  # doubles this play hanged
    last_play: bool = False  # the hand's last play (it went out, or blocked the line)
    closing: bool = False  # a pass or draw after the line was blocked
    lacks: tuple[int, ...] = ()  # numbers a pass or a draw showed its seat lacked
    again: bool = False  # a draw right after a draw of the same seat (one run of draws)


def shows_hands(hand: StoredHand) -> bool:
    """Whether the hand's tiles may be shown at all: only once it is over."""
    return hand.result in FINISHED and bool(hand.dealt)


def walk(hand: StoredHand, viewer: int | None = None) -> list[Position]:
    """Every position of `hand`, from the deal (ply 0) to the last move.

    With `viewer`, only what that seat knew at each ply: its own tiles, the
    line, how many tiles the others hold and what their passes showed;
    never their tiles, their draws nor their options. A hand still on shows
    no seat's tiles, whoever views it.
    """
    n = hand.players
    show = shows_hands(hand)

    def knows(seat: int) -> bool:
        return show and (viewer is None or seat == viewer)

    held = [set(h) for h in hand.dealt] if show else [set() for _ in range(n)]
    counts = [len(h) for h in hand.dealt] if hand.dealt else [HAND_SIZE] * n
    counts += [HAND_SIZE] * (n - len(counts))
    line: list[Placed] = []
    on_line = 0  # mask of tiles on the line
    left = right = -1
    voids = [0] * n  # per seat, a bitmask of the numbers it is known to lack
    hanged: list[int] = []
    last_play = max((m.ply for m in hand.moves if m.kind == "play"), default=0)
    stock = hand.stock0
    # each seat's sorted hand, pips and voids as of the last position: a move
    # changes one seat (`changed`), so the others are not sorted again
    hand_view: list[tuple[int, ...]] = [()] * len(held)
    pip_view = [0] * len(held)
    void_view: list[tuple[int, ...]] = [()] * n
    changed = set(range(max(len(held), n)))

    def position(k: int, mv: StoredMove | None, new: int | None) -> Position:
        for c in changed:
            if c < len(held):
                hand_view[c] = tuple(sorted(held[c], key=_HAND_RANK.__getitem__))
                pip_view[c] = sum(map(PIPS.__getitem__, held[c]))
            if c < n:
                void_view[c] = numbers(voids[c])
        changed.clear()
        return Position(
            n=k,
            move=mv,
            line=list(line),
            left=left,
            right=right,
            hands=[h if knows(s) else None for s, h in enumerate(hand_view)] if show else None,
            pips=[p if knows(s) else None for s, p in enumerate(pip_view)] if show else None,
            stock=stock,
            counts=list(counts),
            voids=list(void_view),
            hanged=list(hanged),
            new_tile=new,
            tile_known=mv is not None and mv.tile is not None and (mv.kind == "play" or knows(mv.seat)),
            forced=mv.forced if mv is not None and knows(mv.seat) else None,
            seen=mv is not None and knows(mv.seat),
        )

    out = [position(0, None, None)]
    prev: StoredMove | None = None
    for mv in hand.moves:
        new: int | None = None
        before = (left, right)
        s = mv.seat
        seat_ok = 0 <= s < n
        puerta: list[int] = []
        ahorcado: list[Hanged] = []
        shown: tuple[int, ...] = ()
        again = closing = False
        if mv.kind == "play" and mv.tile is not None:
            t = mv.tile
            fits = left < 0 or (mv.end == "left" and _carries(t, left)) or (
                mv.end == "right" and _carries(t, right)
            ) or (mv.end is None and left == right and _carries(t, left))
            physically = fits and (not show or (seat_ok and t in held[s]))
            if physically and not (on_line & BIT[t]):
                if left < 0:
                    a, b = _opening(t, mv.left, mv.right)
                    line.append(Placed(t, a, b))
                    left, right = a, b
                    new = 0
                elif (mv.end or "left") == "left":
                    outer = _other(t, left)
                    line.insert(0, Placed(t, outer, left))
                    left = outer
                    new = 0
                else:
                    outer = _other(t, right)
                    line.append(Placed(t, right, outer))
                    right = outer
                    new = len(line) - 1
                on_line |= BIT[t]
                if seat_ok:
                    counts[s] -= 1
                if show and seat_ok:
                    held[s].discard(t)
                    changed.add(s)
            puerta = [num for num in sorted({LOW[t], HIGH[t]}) if on_line & SUIT_MASK[num] == SUIT_MASK[num]]
            # ahorcado can only newly hold for this tile's numbers and the end it covered
            for num in sorted({LOW[t], HIGH[t], *before} - {-1}):
                d = DOUBLE_OF[num]
                if d in hanged or on_line & BIT[d]:
                    continue
                if (on_line & SUIT_MASK[num]) == SUIT_MASK[num] & ~BIT[d] and num not in (left, right):
                    hanged.append(d)
                    holder = next((k for k in range(n) if d in held[k]), None) if show else None
                    if viewer is not None and not (holder == viewer and knows(viewer)):
                        holder = None  # where it is is known only to the seat that holds it
                    ahorcado.append(Hanged(d, holder))
        elif mv.kind == "pass":
            closing = hand.result == "block" and mv.ply > last_play
            if not closing and left >= 0 and seat_ok and mv.error is None:
                voids[s] |= lacked(left, right)
                changed.add(s)
                shown = numbers(lacked(left, right))
        elif mv.kind == "draw":
            if seat_ok:
                counts[s] += 1
            if show and seat_ok and mv.tile is not None:
                held[s].add(mv.tile)
                changed.add(s)
            closing = hand.result == "block" and mv.ply > last_play
            if left >= 0 and seat_ok and not closing and mv.error is None:
                # what was drawn before may carry any other number: only these stay known
                voids[s] = lacked(left, right)
                changed.add(s)
                shown = numbers(voids[s])
                again = prev is not None and prev.kind == "draw" and prev.seat == s
        stock = mv.stock if mv.stock >= 0 else stock
        p = position(mv.ply, mv, new)
        p.before = before
        p.puerta = tuple(puerta)
        p.ahorcado = tuple(ahorcado)
        p.last_play = mv.kind == "play" and mv.tile is not None and mv.ply == last_play
        p.closing = closing
        p.lacks = shown
        p.again = again
        out.append(p)
        prev = mv
    return out


def hand_rank(t: int) -> int:
    """A tile's place in a hand as shown, highest first (a sort key).

    >>> from replay.tiles import parse_tile as t
    >>> sorted([t("10"), t("66"), t("65")], key=hand_rank) == [t("66"), t("65"), t("10")]
    True
    """
    return _HAND_RANK[t]


def _carries(t: int, num: int) -> bool:
    return LOW[t] == num or HIGH[t] == num


def _other(t: int, num: int) -> int:
    return HIGH[t] if LOW[t] == num else LOW[t]


def _opening(t: int, left: int, right: int) -> tuple[int, int]:
    if {left, right} == {LOW[t], HIGH[t]} and left >= 0:
        return left, right
    return HIGH[t], LOW[t]


#: Each tile's place in a hand as shown (highest first), for sorting by lookup.
_HAND_RANK: tuple[int, ...] = tuple(sorted(range(28), key=lambda t: (-HIGH[t], -LOW[t])).index(t) for t in range(28))
