"""The hand engine: one immutable state, legal moves, and the next state.

A hand is a `HandState`; `legal_moves(state)` lists what the seat to move
may do and `apply(state, move)` returns the state after it (raising
`IllegalMoveError` for a move the rules forbid; `can_apply` says so without
raising). Moves are interned frozen values: `Play(tile, end)`, `PASS`,
`DRAW`, `YIELD`, so generating them allocates nothing.

`end` is `LEFT` (0) or `RIGHT` (1). For the hand's first tile, which opens
both ends, `end` says where the tile's high half goes: `LEFT` lays "63" as
6 on the left, 3 on the right; `RIGHT` lays it as "36".

>>> from replay.rules import resolve
>>> from replay.tiles import parse_tile as t
>>> hands = [[t(x) for x in h.split()] for h in (
...     "66 65 64 63 62 61 60", "55 54 53 52 51 50 44",
...     "43 42 41 40 33 32 31", "30 22 21 20 11 10 00")]
>>> s = new_hand(resolve("international"), hands, leader=0, opening=t("66"))
>>> legal_moves(s)
(Play(tile='66', end='left'),)
>>> s = apply(s, legal_moves(s)[0])
>>> s.turn, s.ends
(1, (6, 6))
>>> legal_moves(s)
(PASS,)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple

from replay.rules import Rules
from replay.tiles import (
    BIT,
    DOUBLE_ZERO,
    HIGH,
    IS_DOUBLE,
    LOW,
    OTHER,
    SUIT_MASK,
    iter_tiles,
    mask_of,
    pips_each,
    tile_name,
)

LEFT: Final = 0
RIGHT: Final = 1
END_NAMES: Final = ("left", "right")

#: FIT[l * 7 + r]: the tiles that can be played on a line with ends l and r.
FIT: Final[tuple[int, ...]] = tuple(SUIT_MASK[a] | SUIT_MASK[b] for a in range(7) for b in range(7))


class Play(NamedTuple):
    """Lay `tile` on `end` (see the module doc for the first tile)."""

    tile: int
    end: int

    def __repr__(self) -> str:
        return f"Play(tile={tile_name(self.tile)!r}, end={END_NAMES[self.end]!r})"


class _Token(NamedTuple):
    name: str

    def __repr__(self) -> str:
        return self.name


Move = Play | _Token

#: PLAYS[tile][end]: the interned play moves.
PLAYS: Final[tuple[tuple[Play, Play], ...]] = tuple((Play(t, LEFT), Play(t, RIGHT)) for t in range(28))
PASS: Final = _Token("PASS")
DRAW: Final = _Token("DRAW")
YIELD: Final = _Token("YIELD")


class IllegalMoveError(ValueError):
    """A move the rules forbid in this position; carries what and where."""

    def __init__(self, state: HandState, move: Move, reason: str) -> None:
        super().__init__(
            f"illegal {move!r} by seat {state.turn} at ends {state.ends}: {reason}"
        )
        self.state = state
        self.move = move
        self.reason = reason


class HandState(NamedTuple):
    """One position of a hand. Never mutated: every move makes a new one."""

    rules: Rules
    hands: tuple[int, ...]  # tile mask per seat
    stock: tuple[int, ...]  # boneyard tiles still to draw, in order
    left: int  # number on the left end; -1 while the line is empty
    right: int
    turn: int  # seat to move
    leader: int  # seat entitled to open
    opening: int  # tile the opener must lead with, -1 for any
    yielded: bool  # the leader handed the lead to its partner
    must_play: int  # a tile just drawn that fits: it must be played now; -1
    passes: tuple[int, ...]  # seats that passed while the hand was being played
    closing: int  # passes still owed after a block under all_pass
    blocker: int  # seat that played the blocking tile; -1
    result: str | None  # None while on, then "domino" or "block"
    last: tuple[int, int, int] | None  # (tile, left, right before it) of the last play
    plays: int  # tiles on the line

    @property
    def ends(self) -> tuple[int, int] | None:
        """Both open ends, or None before the first tile."""
        return None if self.left < 0 else (self.left, self.right)

    @property
    def over(self) -> bool:
        """True once nothing more may be played, passed or drawn."""
        return self.result is not None and self.closing == 0

    @property
    def blocked(self) -> bool:
        """True once the line is blocked (closing passes may still be owed)."""
        return self.result == "block"

    @property
    def players(self) -> int:
        return len(self.hands)

    def pips(self) -> tuple[int, ...]:
        """Pips left in each seat's hand."""
        return pips_each(self.hands)


def new_hand(
    rules: Rules,
    hands: Sequence[Sequence[int]],
    *,
    leader: int,
    opening: int = -1,
    stock: Sequence[int] = (),
) -> HandState:
    """The position after the deal: `leader` to open, with `opening` if fixed."""
    return HandState(
        rules=rules,
        hands=tuple(mask_of(h) for h in hands),
        stock=tuple(stock) if rules.stock == "draw" else (),
        left=-1,
        right=-1,
        turn=leader,
        leader=leader,
        opening=opening,
        yielded=False,
        must_play=-1,
        passes=(),
        closing=0,
        blocker=-1,
        result=None,
        last=None,
        plays=0,
    )


def _stock_mask(state: HandState) -> int:
    m = 0
    for t in state.stock:
        m |= BIT[t]
    return m


def can_yield(state: HandState) -> bool:
    """Whether the leader may hand the lead to its partner now."""
    r = state.rules
    return (
        r.lead_to_partner
        and r.teams == "pairs"
        and state.left < 0
        and not state.yielded
        and state.opening < 0
        and state.result is None
    )


def legal_moves(state: HandState) -> tuple[Move, ...]:
    """Every distinct legal move of the seat to move.

    The first tile is listed once (high half left); on equal ends a tile is
    listed on the left only, since left and right are the same move there.
    """
    if state.result is not None:
        if state.closing == 0:
            return ()
        return (DRAW,) if state.stock and state.turn == _drawer(state) else (PASS,)
    hand = state.hands[state.turn]
    if state.left < 0:
        if state.opening >= 0:
            return (PLAYS[state.opening][LEFT],) if hand & BIT[state.opening] else ()
        moves: list[Move] = [PLAYS[t][LEFT] for t in iter_tiles(hand)]
        if can_yield(state):
            moves.append(YIELD)
        return tuple(moves)
    left, right = state.left, state.right
    if state.must_play >= 0:
        return _plays_of(BIT[state.must_play], left, right)
    moves_ = _plays_of(hand & FIT[left * 7 + right], left, right)
    if moves_:
        return moves_
    return (DRAW,) if state.stock else (PASS,)


def _plays_of(fits: int, left: int, right: int) -> tuple[Play, ...]:
    out = []
    left_mask, right_mask = SUIT_MASK[left], SUIT_MASK[right]
    for t in iter_tiles(fits):
        b = BIT[t]
        if b & left_mask:
            out.append(PLAYS[t][LEFT])
        if b & right_mask and left != right:
            out.append(PLAYS[t][RIGHT])
    return tuple(out)


def _drawer(state: HandState) -> int:
    """Who draws the rest of the boneyard after a block (the seat after the blocker)."""
    return (state.blocker + 1) % len(state.hands)


def why_illegal(state: HandState, move: Move) -> str | None:
    """None if `move` is legal for the seat to move, else the reason."""
    if state.over:
        return "the hand is over"
    if isinstance(move, Play):
        tile, end = move
        if state.result is not None:
            return "the line is blocked: only passes remain"
        if not state.hands[state.turn] & BIT[tile]:
            return f"seat {state.turn} does not hold {tile_name(tile)}"
        if state.left < 0:
            if state.opening >= 0 and tile != state.opening:
                return f"the hand must open with {tile_name(state.opening)}"
            return None
        if state.must_play >= 0 and tile != state.must_play:
            return f"the drawn {tile_name(state.must_play)} must be played at once"
        number = state.left if end == LEFT else state.right
        if OTHER[tile][number] < 0:
            return f"{tile_name(tile)} does not carry the {number} on the {END_NAMES[end]} end"
        return None
    legal = legal_moves(state)
    if move in legal:
        return None
    if move is YIELD:
        return "the lead cannot be handed over here"
    if move is PASS:
        return "a pass while a tile can be played or drawn"
    return "a draw while a tile can be played, or with no boneyard left"


def can_apply(state: HandState, move: Move) -> bool:
    """Whether `move` is legal now."""
    return why_illegal(state, move) is None


def verify_apply(state: HandState, move: Move) -> None:
    """Raise `IllegalMoveError` unless `move` is legal now."""
    reason = why_illegal(state, move)
    if reason is not None:
        raise IllegalMoveError(state, move, reason)


def apply(state: HandState, move: Move) -> HandState:
    """The state after the seat to move makes `move` (checked)."""
    verify_apply(state, move)
    return act(state, state.turn, move)


def act(state: HandState, seat: int, move: Move, *, drawn: int = -1) -> HandState:
    """Apply a physically possible move by `seat`, legal or not.

    The validator uses this to go on after a bad event: turn order then
    goes on from the seat that acted. A play must be physically possible
    (the seat holds the tile and it carries the number on the end); a draw
    takes `drawn` out of the boneyard if given (else the next tile).
    """
    n = len(state.hands)
    if isinstance(move, Play):
        return _play(state, seat, move.tile, move.end)
    if move is YIELD:
        return state._replace(turn=(seat + 2) % n, yielded=True)
    if move is DRAW:
        stock = state.stock
        tile = stock[0] if drawn < 0 else drawn
        i = stock.index(tile)
        rest = stock[:i] + stock[i + 1 :]
        hands = list(state.hands)
        hands[seat] |= BIT[tile]
        must = -1
        if state.result is None and state.left >= 0 and BIT[tile] & FIT[state.left * 7 + state.right]:
            must = tile
        return state._replace(hands=tuple(hands), stock=rest, turn=seat, must_play=must)
    # PASS
    if state.result is not None:
        closing = max(state.closing - 1, 0)
        return state._replace(turn=(seat + 1) % n, closing=closing)
    return state._replace(turn=(seat + 1) % n, passes=state.passes + (seat,), must_play=-1)


def _play(state: HandState, seat: int, tile: int, end: int) -> HandState:
    n = len(state.hands)
    hands = list(state.hands)
    hands[seat] &= ~BIT[tile]
    left, right = state.left, state.right
    if left < 0:
        hi, lo = HIGH[tile], LOW[tile]
        new_left, new_right = (hi, lo) if end == LEFT else (lo, hi)
    elif end == LEFT:
        new_left, new_right = OTHER[tile][left], right
    else:
        new_left, new_right = left, OTHER[tile][right]
    result: str | None = None
    closing = 0
    blocker = -1
    if not hands[seat]:
        result = "domino"
    else:
        fit = FIT[new_left * 7 + new_right]
        anywhere = _stock_mask(state) if state.stock else 0
        for h in hands:
            anywhere |= h
        if not anywhere & fit:
            result = "block"
            blocker = seat
            if state.rules.block_end == "all_pass":
                closing = n
    return state._replace(
        hands=tuple(hands),
        left=new_left,
        right=new_right,
        turn=(seat + 1) % n,
        must_play=-1,
        result=result,
        closing=closing,
        blocker=blocker,
        last=(tile, left, right),
        plays=state.plays + 1,
    )


# --- what a finished hand shows -------------------------------------------


def going_out_note(state: HandState) -> str | None:
    """The word for a domino's last tile: capicua, chuchazo, dominao or None.

    `chuchazo_when_both_ends` decides 0-0 going out on two ends showing 0.
    """
    if state.result != "domino" or state.last is None:
        return None
    tile, left, right = state.last
    return going_out(tile, left, right, state.rules.chuchazo_when_both_ends == "dominao")


def going_out(tile: int, left: int, right: int, dominao_both: bool) -> str | None:
    """The word for going out with `tile` on ends (`left`, `right`) (-1: the
    line was empty); `dominao_both`: 0-0 on two ends showing 0 is a dominao.

    >>> going_out(21, 3, 6, False), going_out(0, 0, 0, True), going_out(27, 6, 2, False)
    ('capicua', 'dominao', None)
    """
    both = left >= 0 and {left, right} == {LOW[tile], HIGH[tile]}
    if tile == DOUBLE_ZERO:
        return "dominao" if both and dominao_both else "chuchazo"
    if IS_DOUBLE[tile]:
        return "dominao" if both else None
    return "capicua" if both and left != right else None
