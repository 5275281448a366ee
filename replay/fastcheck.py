"""A fast check of a hand's plays, passes and draws when they are all legal.

Most hands in a log are clean. `check_run` replays such a run with plain
ints and precomputed tables (no state objects per move) and returns the
final position, or None at the first irregular event; the validator then
replays that hand event by event through `replay.engine` to name every
finding. Tests cross-check both paths on random hands.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from replay.engine import FIT, LEFT, RIGHT, HandState, can_yield
from replay.report import MoveRecord
from replay.tiles import BIT, HIGH, LOW, OTHER, PIPS, SUIT_MASK, iter_tiles, pips_of, tile_name

#: NAMES[tile][end]: "63:left" / "63:right", for the move records.
NAMES: Final = tuple((f"{tile_name(t)}:left", f"{tile_name(t)}:right") for t in range(28))


def _alternatives(hand: int, left: int, right: int) -> tuple[str, ...]:
    """Names of the distinct legal plays of a hand on ends (left, right)."""
    out = []
    lm, rm = SUIT_MASK[left], SUIT_MASK[right]
    for t in iter_tiles(hand & (lm | rm)):
        if BIT[t] & lm:
            out.append(NAMES[t][LEFT])
        if BIT[t] & rm and left != right:
            out.append(NAMES[t][RIGHT])
    return tuple(out)


def check_run(
    state: HandState,
    events: Sequence[object],
    *,
    keep_moves: bool,
) -> tuple[HandState, list[MoveRecord]] | None:
    """Replay legal play/pass/draw events from the deal; None if any is irregular.

    `state` is the position after the deal (nobody has moved; no lead yield).
    The result is the final position (which must be over) and, if asked,
    one MoveRecord per event.
    """
    rules = state.rules
    hands = list(state.hands)
    n = len(hands)
    stock = list(state.stock)
    draw_mode = rules.stock == "draw"
    all_pass = rules.block_end == "all_pass"
    turn = state.turn
    opening = state.opening
    left = right = -1
    must = -1
    result: str | None = None
    closing = 0
    blocker = -1
    passes: list[int] = []
    last: tuple[int, int, int] | None = None
    plays = 0
    pips = [pips_of(h) for h in hands]
    moves: list[MoveRecord] = []
    for e in events:
        kind = e.type  # type: ignore[attr-defined]
        seat = e.seat  # type: ignore[attr-defined]
        if seat != turn or (result is not None and closing == 0):
            return None
        mine = hands[seat]
        if kind == "play":
            tile = e.tile  # type: ignore[attr-defined]
            b = BIT[tile]
            if not mine & b or result is not None:
                return None
            alts: tuple[str, ...] = ()
            if keep_moves:
                if left < 0:
                    if opening >= 0:
                        alts = (NAMES[opening][LEFT],)
                    else:
                        alts = tuple(NAMES[t][LEFT] for t in iter_tiles(mine))
                        if can_yield(state):
                            alts += ("YIELD",)
                elif must >= 0:
                    alts = _alternatives(b, left, right)
                else:
                    alts = _alternatives(mine, left, right)
            if left < 0:
                if opening >= 0 and tile != opening:
                    return None
                face = e.face  # type: ignore[attr-defined]
                hi, lo = HIGH[tile], LOW[tile]
                new_left, new_right = (lo, hi) if len(face) == 2 and face[0] < face[1] else (hi, lo)
                end_name = None
            else:
                if must >= 0 and tile != must:
                    return None
                end = e.end  # type: ignore[attr-defined]
                if end == "left":
                    o = OTHER[tile][left]
                    if o < 0:
                        return None
                    new_left, new_right = o, right
                elif end == "right":
                    o = OTHER[tile][right]
                    if o < 0:
                        return None
                    new_left, new_right = left, o
                elif left == right and OTHER[tile][left] >= 0:
                    new_left, new_right = OTHER[tile][left], right
                    end = "left"
                else:
                    return None
                end_name = end
            last = (tile, left, right)
            left, right = new_left, new_right
            mine &= ~b
            hands[seat] = mine
            pips[seat] -= PIPS[tile]
            must = -1
            plays += 1
            if not mine:
                result = "domino"
            else:
                fit = FIT[left * 7 + right]
                anywhere = 0
                for h in hands:
                    anywhere |= h
                for t in stock:
                    anywhere |= BIT[t]
                if not anywhere & fit:
                    result = "block"
                    blocker = seat
                    closing = n if all_pass else 0
            turn = (seat + 1) % n
            if keep_moves:
                moves.append(_move(e, len(moves) + 1, "play", tile, end_name, left, right, pips, len(stock), alts))
        elif kind == "pass":
            if result is None:
                if must >= 0 or (left < 0) or mine & FIT[left * 7 + right] or stock:
                    return None
                passes.append(seat)
            elif stock:  # after a block the next seat draws the boneyard first
                return None
            else:
                closing -= 1
            turn = (seat + 1) % n
            if keep_moves:
                moves.append(_move(e, len(moves) + 1, "pass", None, None, left, right, pips, 0, ("PASS",)))
        elif kind == "draw":
            if not draw_mode or not stock or must >= 0:
                return None
            if result is None and (left < 0 or mine & FIT[left * 7 + right]):
                return None
            tile = e.tile  # type: ignore[attr-defined]
            if stock[0] != tile:
                return None
            del stock[0]
            hands[seat] = mine | BIT[tile]
            pips[seat] += PIPS[tile]
            if result is None and BIT[tile] & FIT[left * 7 + right]:
                must = tile
            if keep_moves:
                moves.append(_move(e, len(moves) + 1, "draw", tile, None, left, right, pips, len(stock), ("DRAW",)))
        else:
            return None
    if result is None or closing:
        return None
    final = state._replace(
        hands=tuple(hands),
        stock=tuple(stock),
        left=left,
        right=right,
        turn=turn,
        must_play=-1,
        passes=tuple(passes),
        closing=0,
        blocker=blocker,
        result=result,
        last=last,
        plays=plays,
    )
    return final, moves


def _move(
    e: object,
    ply: int,
    kind: str,
    tile: int | None,
    end: str | None,
    left: int,
    right: int,
    pips: list[int],
    stock: int,
    alts: tuple[str, ...],
) -> MoveRecord:
    return MoveRecord(
        e.hand,  # type: ignore[attr-defined]
        ply,
        e.seq,  # type: ignore[attr-defined]
        e.seat,  # type: ignore[attr-defined]
        kind,  # type: ignore[arg-type]
        tile,
        end,
        left,
        right,
        tuple(pips),
        stock,
        len(alts),
        len(alts) == 1,
        alts,
        None,
        e.ts,  # type: ignore[attr-defined]
    )


__all__ = ["NAMES", "check_run"]
