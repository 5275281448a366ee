"""A tight replay of one hand for bulk verification: ints in, ints out.

`replay.engine` builds an immutable `HandState` per move, which is what a
validator wants for messages but costs a few microseconds a move. Here a
hand's moves come as small ints (`encode`), the position lives in local
variables (hand masks, one ends index, a stock cursor) and every rule check
is a table lookup, so a 4-player hand replays in a few microseconds. The
checks are the engine's: same legality, same block and domino detection,
same closing passes; `tests/test_properties.py` cross-checks the two on
random hands of every profile. On the first illegal move it raises
`FastIllegal` with the move's index; callers re-run that hand through the
engine for a full message.

>>> from replay.rules import resolve
>>> from replay.tiles import parse_tile as t
>>> hands = [[t(x) for x in h.split()] for h in (
...     "66 65 64 63 62 61 60", "55 54 53 52 51 50 44",
...     "43 42 41 40 33 32 31", "30 22 21 20 11 10 00")]
>>> masks = [sum(1 << x for x in h) for h in hands]
>>> r = replay_hand(resolve("international"), masks, 0, [encode_play(t("66"), 0)])
>>> r.over, r.result, r.left, r.right
(False, None, 6, 6)
>>> replay_hand(resolve("international"), masks, 0, [encode_play(t("66"), 0)] + [PASS_CODE] * 4)
Traceback (most recent call last):
...
replay.fastplay.FastIllegal: move 4 (56) by seat 0: a pass while a tile can be played or drawn
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple

from replay.engine import DRAW, PASS, YIELD, Move, Play
from replay.rules import Rules
from replay.tiles import BIT, HIGH, LOW, OTHER, SUIT_MASK

#: Move codes: 2 * tile + end for a play, then the three tokens.
PASS_CODE: Final = 56
DRAW_CODE: Final = 57
YIELD_CODE: Final = 58

#: Ends are one index, 7 * left + right; EMPTY before the first tile.
EMPTY: Final = 49

#: FITS[ends]: tiles that can be laid on the line (none on an empty line
#: matter: the opener always holds a tile).
FITS: Final[tuple[int, ...]] = tuple(SUIT_MASK[e // 7] | SUIT_MASK[e % 7] for e in range(49)) + (0,)


def _next_ends(code: int, ends: int) -> int:
    tile, end = code >> 1, code & 1
    if ends == EMPTY:  # `end` says where the high half goes
        hi, lo = HIGH[tile], LOW[tile]
        return hi * 7 + lo if end == 0 else lo * 7 + hi
    left, right = divmod(ends, 7)
    if end == 0:
        other = OTHER[tile][left]
        return -1 if other < 0 else other * 7 + right
    other = OTHER[tile][right]
    return -1 if other < 0 else left * 7 + other


#: AFTER[code * 50 + ends]: the ends after play `code`, or -1 if it does not fit.
AFTER: Final[tuple[int, ...]] = tuple(_next_ends(c, e) for c in range(56) for e in range(50))


class FastIllegal(ValueError):
    """An illegal move: `index` into the move list, the seat, and why."""

    def __init__(self, index: int, code: int, seat: int, reason: str) -> None:
        super().__init__(f"move {index} ({code}) by seat {seat}: {reason}")
        self.index = index
        self.code = code
        self.seat = seat
        self.reason = reason


class FastHand(NamedTuple):
    """Where a replayed hand stands after its moves (the engine's fields)."""

    over: bool
    result: str | None  # "domino", "block" or None
    blocker: int  # -1 unless blocked
    hands: tuple[int, ...]
    left: int  # -1 while the line is empty
    right: int
    last: tuple[int, int, int] | None  # (tile, left, right before it)
    passes: tuple[int, ...]  # seats that passed while the hand was played
    stock: tuple[int, ...]  # boneyard not drawn
    turn: int
    plays: int


def encode_play(tile: int, end: int) -> int:
    return 2 * tile + end


def encode(move: Move) -> int:
    """The code of an engine move."""
    if isinstance(move, Play):
        return 2 * move.tile + move.end
    if move is PASS:
        return PASS_CODE
    if move is DRAW:
        return DRAW_CODE
    if move is YIELD:
        return YIELD_CODE
    raise ValueError(f"not a move: {move!r}")


def replay_hand(
    rules: Rules,
    hands: Sequence[int],
    leader: int,
    moves: Sequence[int],
    stock: Sequence[int] = (),
    opening: int = -1,
) -> FastHand:
    """Replay encoded `moves` from the deal; raise `FastIllegal` at the first bad one.

    `hands` are tile masks, `stock` the boneyard in drawing order (used only
    under `stock = draw`), `opening` the tile the hand must open with or -1.
    """
    n = len(hands)
    succ = tuple((s + 1) % n for s in range(n))
    h = list(hands)
    st = tuple(stock) if rules.stock == "draw" else ()
    ns = len(st)
    sp = 0
    inplay = 0  # tiles in hands or boneyard: a block is "none of these fits"
    for m in h:
        inplay |= m
    for x in st:
        inplay |= BIT[x]
    fits = FITS
    after = AFTER
    turn = leader
    ends = EMPTY
    must = -1
    passes: list[int] = []
    last: tuple[int, int, int] | None = None
    result: str | None = None
    blocker = -1
    plays = 0
    i = -1
    nm = len(moves)
    may_yield = rules.lead_to_partner and rules.teams == "pairs" and opening < 0

    # the opening: an optional yield, then the first tile
    if nm:
        c = moves[0]
        if c == YIELD_CODE:
            if not may_yield:
                raise FastIllegal(0, c, turn, "the lead cannot be handed over here")
            turn = (turn + 2) % n
            i = 0
        if i + 1 < nm:
            i += 1
            c = moves[i]
            if c >= 56:
                raise FastIllegal(i, c, turn, "the hand opens with a tile")
            t = c >> 1
            if opening >= 0 and t != opening:
                raise FastIllegal(i, c, turn, "the hand must open with its fixed tile")
            b = 1 << t
            if not h[turn] & b:
                raise FastIllegal(i, c, turn, "the seat does not hold the tile")
            h[turn] ^= b
            inplay ^= b
            ends = after[c * 50 + EMPTY]
            last = (t, -1, -1)
            plays = 1
            turn = succ[turn]

    # the play: the hot loop
    while result is None and i + 1 < nm:
        i += 1
        c = moves[i]
        if c < 56:
            t = c >> 1
            b = 1 << t
            hand = h[turn]
            if not hand & b:
                raise FastIllegal(i, c, turn, "the seat does not hold the tile")
            e2 = after[c * 50 + ends]
            if e2 < 0:
                raise FastIllegal(i, c, turn, "the tile does not fit that end")
            if must >= 0 and t != must:
                raise FastIllegal(i, c, turn, "the drawn tile must be played at once")
            hand ^= b
            h[turn] = hand
            inplay ^= b
            last = (t, ends // 7, ends % 7)
            ends = e2
            must = -1
            plays += 1
            if not hand:
                result = "domino"
            elif not inplay & fits[e2]:
                result = "block"
                blocker = turn
            turn = succ[turn]
        elif c == PASS_CODE:
            if h[turn] & fits[ends] or sp < ns:
                raise FastIllegal(i, c, turn, "a pass while a tile can be played or drawn")
            passes.append(turn)
            turn = succ[turn]
        elif c == DRAW_CODE:
            if sp >= ns or h[turn] & fits[ends]:
                raise FastIllegal(
                    i, c, turn, "a draw while a tile can be played, or with no boneyard left"
                )
            t = st[sp]
            sp += 1
            h[turn] |= 1 << t
            if (1 << t) & fits[ends]:
                must = t
        else:
            raise FastIllegal(i, c, turn, "not a move here")

    # after a block under all_pass: the seat after the blocker draws the
    # boneyard, then every seat passes once, the blocker last
    owed = n if result == "block" and rules.block_end == "all_pass" else 0
    while i + 1 < nm:
        i += 1
        c = moves[i]
        if not owed:
            raise FastIllegal(i, c, turn, "the hand is over")
        if sp < ns:
            if c != DRAW_CODE:
                raise FastIllegal(i, c, turn, "the boneyard must be drawn first")
            h[turn] |= 1 << st[sp]
            sp += 1
        elif c == PASS_CODE:
            owed -= 1
            turn = succ[turn]
        else:
            raise FastIllegal(i, c, turn, "only passes remain")

    left, right = (-1, -1) if ends == EMPTY else divmod(ends, 7)
    return FastHand(
        over=result is not None and owed == 0,
        result=result,
        blocker=blocker,
        hands=tuple(h),
        left=left,
        right=right,
        last=last,
        passes=tuple(passes),
        stock=st[sp:],
        turn=turn,
        plays=plays,
    )


def decode(code: int) -> Move:
    """The engine move of a code."""
    if code < 56:
        return Play(code >> 1, code & 1)
    return (PASS, DRAW, YIELD)[code - 56]


__all__ = [
    "AFTER",
    "DRAW_CODE",
    "EMPTY",
    "FITS",
    "PASS_CODE",
    "YIELD_CODE",
    "FastHand",
    "FastIllegal",
    "decode",
    "encode",
    "encode_play",
    "replay_hand",
]
