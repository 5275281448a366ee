"""The principal lines laid on the board (api.board.LineLayer, the JSON
twin's `ghosts_played`/`ghosts_best`) against the plain way: each line laid
whole on a copy of its ply's line (`snake`), as the twin did before the
layer read each ply's board once. Random hands of 2 to 4 seats, random lines
from random plies (legal or not, with passes and draws, tiles laid twice),
many lines through one layer (its caches shared), one by one through
`line_ghosts`: the same lists, to the bit."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from api.board import SIDE_COLS, SMALL_H, SMALL_STEP, Layout, LineLayer, layout, line_ghosts, snake
from api.replay_model import Placed, Ply
from replay.tiles import HIGH, LOW, parse_tile, tile_name


def _parse_move(mv: str) -> tuple[int | None, str]:
    if len(mv) > 3 and mv[2] == " " and mv[:2].isdigit():
        return parse_tile(mv[:2]), mv[3:]
    return None, ""


def _other_half(tile: int, num: int) -> int:
    return LOW[tile] if HIGH[tile] == num else HIGH[tile]


def _hand_at(at: str, i: int) -> tuple[float, float]:
    cols = 28 if at in ("top", "bottom") else SIDE_COLS
    return (i % cols) * SMALL_STEP, (22 if at in ("top", "bottom") else 40) + (i // cols) * (SMALL_H + 4)


def reference(plies: list[Ply], ply: int, moves: list[str], movers: list[int], lay: Layout
              ) -> list[list[object] | None]:
    """A line laid the plain way: played on a copy of the line, the whole snake laid anew."""
    before = plies[ply - 1]
    line = list(before.line)
    left, right = before.left, before.right
    hands = before.hands or []
    placed: list[tuple[int, Placed] | None] = []
    for mv, who in zip(moves, movers, strict=True):
        tile, end = _parse_move(mv)
        if tile is None:
            placed.append(None)
        elif not line:
            put = Placed(tile, HIGH[tile], LOW[tile])
            left, right, line = put.a, put.b, [put]
            placed.append((who, put))
        elif end == "left":
            put = Placed(tile, _other_half(tile, left), left)
            left = put.a
            line.insert(0, put)
            placed.append((who, put))
        else:
            put = Placed(tile, right, _other_half(tile, right))
            right = put.b
            line.append(put)
            placed.append((who, put))
    if not line:
        return [None for _ in moves]
    pivot = (lay.final[lay.opener] if before.line and lay.final else next(g for g in placed if g is not None)[1]).tile
    opener = next(i for i, t in enumerate(line) if t.tile == pivot)
    slots, _, _ = snake(line, opener, lay.lo, lay.hi, 0.0)
    slot_of = {t.tile: s for t, s in zip(line, slots, strict=True)}
    out: list[list[object] | None] = []
    for got in placed:
        if got is None:
            out.append(None)
            continue
        who, put = got
        s = slot_of[put.tile]
        held = hands[who] if who < len(hands) else None
        at = [who, *_hand_at(lay.where[who], held.index(put.tile))] if held is not None and put.tile in held else None
        out.append([s.sym, s.x, s.y + lay.cy, s.w, s.h, at])
    return out


def _fits(tile: int, num: int) -> bool:
    return num in (HIGH[tile], LOW[tile])


def random_hand(rnd: random.Random, players: int) -> list[Ply]:
    """A hand played at random (passes where stuck, no drawing), as plies."""
    tiles = list(range(28))
    rnd.shuffle(tiles)
    hands = [tiles[7 * i:7 * i + 7] for i in range(players)]
    stock = 28 - 7 * players
    line: list[Placed] = []
    left = right = -1
    plies = [Ply(0, None, "", [], -1, -1, [tuple(h) for h in hands], None, stock, counts=[7] * players)]
    seat, stuck = rnd.randrange(players), 0
    while stuck < players and all(hands):
        options = [(t, e) for t in hands[seat] for e in ("left", "right") if not line or _fits(t, left if e == "left" else right)]
        new = None
        if options:
            stuck = 0
            t, e = rnd.choice(options)
            hands[seat].remove(t)
            if not line:
                line, left, right, new = [Placed(t, HIGH[t], LOW[t])], HIGH[t], LOW[t], 0
            elif e == "left":
                left = _other_half(t, left)
                line, new = [Placed(t, left, line[0].a), *line], 0
            else:
                right = _other_half(t, right)
                line, new = [*line, Placed(t, line[-1].b, right)], len(line)
        else:
            stuck += 1
        plies.append(Ply(len(plies), None, "", list(line), left, right, [tuple(h) for h in hands], None, stock,
                         new_tile=new, counts=[len(h) for h in hands]))
        seat = (seat + 1) % players
    return plies


def random_line(rnd: random.Random, plies: list[Ply], k: int, players: int) -> tuple[list[str], list[int]]:
    """Moves from ply `k` on: mostly legal plays from the movers' hands, some
    passes and draws, some tiles from anywhere (laid twice, or off the ends)."""
    before = plies[k - 1]
    hands = [list(h or ()) for h in before.hands or []]
    left, right, empty = before.left, before.right, not before.line
    moves, movers = [], []
    seat = rnd.randrange(players)
    for _ in range(rnd.randint(1, 20)):
        r = rnd.random()
        legal = [(t, e) for t in hands[seat] for e in ("left", "right") if empty or _fits(t, left if e == "left" else right)]
        if r < 0.1:
            moves.append(rnd.choice(["pass", "draw"]))
        elif r < 0.2 or not legal:
            moves.append(f"{tile_name(rnd.randrange(28))} {rnd.choice(['left', 'right'])}")
        else:
            t, e = rnd.choice(legal)
            hands[seat].remove(t)
            moves.append(f"{tile_name(t)} {e}")
            if empty:
                left, right, empty = HIGH[t], LOW[t], False
            elif e == "left":
                left = _other_half(t, left)
            else:
                right = _other_half(t, right)
        movers.append(seat if rnd.random() < 0.9 else rnd.randrange(players))
        seat = (seat + 1) % players
    return moves, movers


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 4))
def test_a_hands_lines_lie_as_laid_the_plain_way(seed: int, players: int) -> None:
    rnd = random.Random(seed)
    plies = random_hand(rnd, players)
    lay = layout(plies, players)
    layer = LineLayer(plies, players)
    for _ in range(12):
        k = rnd.randrange(1, len(plies))
        moves, movers = random_line(rnd, plies, k, players)
        want = reference(plies, k, moves, movers, lay)
        assert layer.ghosts(k, moves, movers) == want, (k, moves, movers)
        assert line_ghosts(plies, players, k, moves, movers) == want


def test_a_line_of_all_the_tiles_turns_where_the_plain_way_turns() -> None:
    """From the deal, lines that lay every tile (the arms turn twice or more)."""
    rnd = random.Random(7)
    for players in (2, 3, 4):
        for _ in range(20):
            plies = random_hand(rnd, players)
            lay = layout(plies, players)
            tiles = list(range(28))
            rnd.shuffle(tiles)
            moves, left, right = [], -1, -1
            while tiles:  # lay any tile that fits, at either end
                t = next((t for t in tiles if left < 0 or _fits(t, left) or _fits(t, right)), None)
                if t is None:
                    break
                tiles.remove(t)
                if left < 0:
                    left, right, e = HIGH[t], LOW[t], "left"
                elif _fits(t, left) and (not _fits(t, right) or rnd.random() < 0.5):
                    left, e = _other_half(t, left), "left"
                else:
                    right, e = _other_half(t, right), "right"
                moves.append(f"{tile_name(t)} {e}")
            movers = [i % players for i in range(len(moves))]
            for k in (1, len(plies) // 2 or 1):
                if k < len(plies):
                    assert LineLayer(plies, players, lay).ghosts(k, moves, movers) == reference(plies, k, moves, movers, lay)
