"""The replay's board drawn as a table: the seats around the felt, partners
opposite, and the line of tiles as a snake that turns at the felt's edges.

`table_svg(plies, seats, players)` draws a whole hand once: every tile,
badge and label is one element, shown over the plies it holds by the
classes `on{k}`/`off{k}` (`tile_svg.ply_style` picks a ply). The line is laid out as it ends, from the tile that opened it
outwards, so a tile keeps its place from the ply it is laid on:

- the right arm runs right from the opening tile; at the felt's edge a tile
  turns down (drawn upright), and the arm comes back leftwards on the next
  row, turns down at the other edge, and so on; the left arm is the same
  turned half round (left, then up). A double lies across the line, and
  after a turn across the tile above it. 28 tiles fit on any table.
- seat 0 sits at the bottom, and play goes round counter-clockwise: at a
  table of four seat 1 is on the right, seat 2 (seat 0's partner) at the
  top, seat 3 on the left; at three the third seat is on the left, at two
  they face each other. A seat's view (`hand_page.build_plies(viewer=s)`) puts
  that seat at the bottom.
- a hand shown face up is the seat's tiles and pips; a hand not shown is as
  many tile backs as it holds (nothing else of it reaches the SVG).

Every tile carries its name as a tooltip, `[5|4]`. Every string from a log
is escaped (`replay_model.esc`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from api.names import shown
from api.replay_model import Placed, Ply, SeatLabel, esc, label
from api.tile_svg import clip, runs, shown_over, span, tile_defs
from replay.tiles import HIGH, IS_DOUBLE, LOW, parse_tile

__all__ = ["Layout", "LineLayer", "Slot", "layout", "line_ghosts", "places", "snake", "table_svg"]

U = 22  # half a tile, in px
G = 3  # the gap between tiles on the line
PITCH = 2 * U + G  # from one row of the snake to the next
WIDTH = 900
SIDE_W = 150  # the panel of a seat on the left or the right
BAND_H = 78  # the band of a seat at the top or the bottom
PAD = 14  # inside the felt, around the line
SMALL_W, SMALL_H = int(U * 0.8), int(U * 1.6)  # a tile in a hand
SMALL_STEP = SMALL_W + 3
SIDE_COLS = 6  # tiles per row in a side panel

#: Where each seat sits, in order of play from the seat at the bottom.
_AROUND = {2: ("bottom", "top"), 3: ("bottom", "right", "left"), 4: ("bottom", "right", "top", "left")}


def places(players: int, bottom: int = 0) -> dict[int, str]:
    """Where each seat sits when seat `bottom` sits at the bottom.

    >>> places(4)
    {0: 'bottom', 1: 'right', 2: 'top', 3: 'left'}
    >>> places(4, bottom=2)[0], places(3)[2], places(2)[1]
    ('top', 'left', 'top')
    """
    around = _AROUND.get(players, _AROUND[4])
    return {(bottom + i) % players: around[i % len(around)] for i in range(players)}


# --- the snake --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Slot:
    """Where a tile of the line lies: its box and the symbol drawn there
    (`hAB`: A on the left, B on the right; `vAB`: A on top, B below)."""

    x: float
    y: float
    w: int
    h: int
    sym: str


def _arm(tiles: list[tuple[int, int]], x: float, y: float, lo: float, hi: float
         ) -> tuple[list[Slot], list[tuple[float, float]]]:
    """One arm of the line, going right from `x` on the row through `y` and
    turning down at `hi` and at `lo`. `tiles` are (the half that touches the
    line so far, the other half). Returns each tile's slot and where the
    arm's open end is after 0, 1, ... of its tiles (for the end's badge).

    `x` is where the next tile goes: its left edge going right, its right
    edge going left. A tile goes on the row only if a double and a turn still
    fit after it, so a turn always has room and a double never turns.

    An arm only grows at its open end, so each arm's layout extends its
    prefix's (kept, :func:`_arm_of`): the principal lines of a hand, laid
    from every ply, each cost only their own tiles.

    >>> slots, ends = _arm([(6, 3), (3, 3)], 100.0, 0.0, 0.0, 400.0)
    >>> [(s.sym, s.x) for s in slots], len(ends)
    ([('h63', 100.0), ('v33', 147.0)], 3)
    """
    slots, ends, _ = _arm_of(bytes(n * 7 + f for n, f in tiles), x, y, lo, hi)
    return list(slots), list(ends)


#: The state an arm leaves for its next tile: x, y, the way it goes, the column of a turn just made.
_ArmState = tuple[float, float, int, "float | None"]


@lru_cache(maxsize=1 << 15)
def _arm_of(tiles: bytes, x0: float, y0: float, lo: float, hi: float
            ) -> tuple[tuple[Slot, ...], tuple[tuple[float, float], ...], _ArmState]:
    """:func:`_arm` of the tiles coded `near * 7 + far`, with the state after them."""
    if not tiles:
        return (), ((x0 + 11, y0),), (x0, y0, 1, None)
    slots, ends, state = _arm_of(tiles[:-1], x0, y0, lo, hi)
    near, far = divmod(tiles[-1], 7)
    box, (x, y, way, turned) = _lay_tile(near, far, state, lo, hi)
    end = (turned + U / 2, y + 1.5 * U + 11) if turned is not None else (x + 11 * way, y)
    return (*slots, Slot(*box)), (*ends, end), (x, y, way, turned)


#: A tile's box on the line: x, y, width, height, symbol (a :class:`Slot`'s fields).
_Box = tuple[float, float, int, int, str]


def _lay_tile(near: int, far: int, state: _ArmState, lo: float, hi: float) -> tuple[_Box, _ArmState]:
    """The tile (`near`, `far`) laid on an arm in `state` (:func:`_arm`): its
    box, and the arm's state after it. A principal line lays its own tiles
    with it, on its board's arms, keeping nothing (:class:`LineLayer`)."""
    x, y, way, turned = state
    double = near == far
    if turned is not None:  # under (or over) the turn, back the other way
        y += PITCH
        if double:
            box: _Box = (turned + U / 2 - U, y - U / 2, 2 * U, U, f"h{near}{near}")
        elif way < 0:
            box = (turned - U, y - U / 2, 2 * U, U, f"h{far}{near}")
        else:
            box = (turned, y - U / 2, 2 * U, U, f"h{near}{far}")
        return box, (box[0] - G if way < 0 else box[0] + box[2] + G, y, way, None)
    room = hi - x if way > 0 else x - lo
    w = U if double else 2 * U
    if double or room >= 2 * U + G + U + G + U:
        h = 2 * U if double else U
        sym = f"v{near}{near}" if double else (f"h{near}{far}" if way > 0 else f"h{far}{near}")
        return (x if way > 0 else x - w, y - h / 2, w, h, sym), (x + way * (w + G), y, way, None)
    # the turn: upright, the touching half on top
    left = x if way > 0 else x - U
    return (left, y - U / 2, U, 2 * U, f"v{near}{far}"), (x, y, -way, left)


def _turned(s: Slot, cx: float, cy: float) -> Slot:
    """`s` turned half round about (cx, cy): the box moves, the halves swap."""
    return Slot(2 * cx - s.x - s.w, 2 * cy - s.y - s.h, s.w, s.h, s.sym[0] + s.sym[2] + s.sym[1])


def snake(line: list[Placed], opener: int, lo: float, hi: float, cy: float
          ) -> tuple[list[Slot], list[tuple[float, float]], list[tuple[float, float]]]:
    """Slots for `line` (as laid, left to right) whose tile `opener` opened
    it, centred between `lo` and `hi` on the row through `cy`; and where the
    left and the right end's badges go with 0, 1, ... tiles on that side.

    >>> slots, _, right = snake([Placed(24, 6, 3), Placed(27, 3, 3)], 0, 0, 400, 100)
    >>> [(s.sym, s.x, s.y) for s in slots]
    [('h63', 178.0, 89.0), ('v33', 225.0, 78.0)]
    """
    cx = (lo + hi) / 2
    first = line[opener]
    if IS_DOUBLE[first.tile]:
        start = Slot(cx - U / 2, cy - U, U, 2 * U, f"v{first.a}{first.b}")
    else:
        start = Slot(cx - U, cy - U / 2, 2 * U, U, f"h{first.a}{first.b}")
    out = cx + start.w / 2 + G
    right, right_ends, _ = _arm_of(bytes(p.a * 7 + p.b for p in line[opener + 1:]), out, cy, lo, hi)
    left, left_ends = _left_arm(bytes(p.b * 7 + p.a for p in reversed(line[:opener])), out, cy, lo, hi, cx)
    return [*left, start, *right], list(left_ends), list(right_ends)


@lru_cache(maxsize=1 << 14)
def _left_arm(tiles: bytes, out: float, cy: float, lo: float, hi: float, cx: float
              ) -> tuple[tuple[Slot, ...], tuple[tuple[float, float], ...]]:
    """The left arm of :func:`snake`: laid as a right one, turned half round
    about (cx, cy), left to right; and its ends' badges."""
    slots, ends, _ = _arm_of(tiles, out, cy, lo, hi)
    return (tuple(_turned(s, cx, cy) for s in reversed(slots)),
            tuple((2 * cx - x, 2 * cy - y) for x, y in ends))


# --- the table ----------------------------------------------------------------------


@lru_cache(maxsize=16384)
def _line_tile(sym: str, x: float, y: float, w: int, h: int, new: bool) -> str:
    """One tile of the line, or (`new`) the mark around it on the ply it is laid."""
    if new:
        return f'<rect x="{x - 2:g}" y="{y - 2:g}" width="{w + 4}" height="{h + 4}" rx="4" class="hl"/>'
    a, b = int(sym[1]), int(sym[2])
    name = f"[{max(a, b)}|{min(a, b)}]"
    return (f'<use href="#{sym}" x="{x:g}" y="{y:g}" width="{w}" height="{h}">'
            f"<title>{name}</title></use>")


@lru_cache(maxsize=512)  # a hand's lines repeat a few dozen moves
def _parse_move(mv: str) -> tuple[int | None, str]:
    """The tile and end of a move as the analysis writes it ("62 left").

    >>> from replay.tiles import tile_name
    >>> t, end = _parse_move("62 left"); tile_name(t), end
    ('62', 'left')
    >>> _parse_move("pass")
    (None, '')
    """
    if len(mv) > 3 and mv[2] == " " and mv[:2].isdigit():
        return parse_tile(mv[:2]), mv[3:]
    return None, ""


def _other_half(tile: int, num: int) -> int:
    """The half of `tile` that is not `num`."""
    return LOW[tile] if HIGH[tile] == num else HIGH[tile]


def _badge(x: float, y: float, num: int, side: str) -> str:
    return (f'<g class="end end{side}"><circle cx="{x:g}" cy="{y:g}" r="10"/>'
            f'<text x="{x:g}" y="{y + 4:g}" text-anchor="middle">{num}</text></g>')


@lru_cache(maxsize=16384)
def _hand(tiles: tuple[int, ...] | None, count: int, x: float, y: float, cols: int) -> tuple[str, frozenset[str]]:
    """A seat's hand at (x, y): its tiles face up, or `count` backs; `cols` to a row."""
    out, used = [], set()
    for i in range(len(tiles) if tiles is not None else count):
        tx, ty = x + (i % cols) * SMALL_STEP, y + (i // cols) * (SMALL_H + 4)
        if tiles is not None:
            t = tiles[i]
            sym = f"v{HIGH[t]}{LOW[t]}"
            used.add(sym)
            out.append(f'<use href="#{sym}" x="{tx:g}" y="{ty:g}" width="{SMALL_W}" height="{SMALL_H}">'
                       f"<title>{label(t)}</title></use>")
        else:
            out.append(f'<use href="#back" x="{tx:g}" y="{ty:g}" width="{SMALL_W}" height="{SMALL_H}"/>')
    return "".join(out), frozenset(used)


_BACK = ('<symbol id="back" viewBox="0 0 20 40"><rect x=".5" y=".5" width="19" height="39" rx="3" '
         'fill="#2b3a55" stroke="#d8d2c0"/><rect x="4" y="4" width="12" height="32" rx="2" fill="none" '
         'stroke="#7d8fb3"/></symbol>')


@dataclass(frozen=True, slots=True)
class Layout:
    """Where a hand's table puts things: the felt, the line's slots as it
    ends (laid from the tile that opened it), each seat's place."""

    where: dict[int, str]
    lo: float
    hi: float
    top: float
    felt_h: float
    height: float
    cy: float
    final: list[Placed]
    laid_at: dict[int, int]
    opener: int
    slots: list[Slot]
    left_ends: list[tuple[float, float]]
    right_ends: list[tuple[float, float]]


def layout(plies: list[Ply], players: int) -> Layout:
    """The table's geometry for `plies` (as `table_svg` draws them)."""
    viewer = plies[0].viewer if plies else None
    where = places(players, viewer or 0)
    sides = set(where.values())
    lo = (SIDE_W if sides & {"left", "right"} else 0) + PAD
    hi = WIDTH - lo
    final = plies[-1].line if plies else []
    laid_at: dict[int, int] = {}  # tile -> the ply it was laid on
    for p in plies:
        if p.new_tile is not None:
            laid_at.setdefault(p.line[p.new_tile].tile, p.n)
    opener = min(range(len(final)), key=lambda i: laid_at.get(final[i].tile, 0)) if final else 0
    slots, left_ends, right_ends = snake(final, opener, lo, hi, 0.0) if final else ([], [], [])
    # the felt: tall enough for the line and for the hands at the sides
    reach = max([abs(s.y) for s in slots] + [abs(s.y + s.h) for s in slots]
                + [abs(y) + 11 for y in (e[1] for e in left_ends + right_ends)] + [PITCH + U])
    most = max((c for p in plies for c in p.counts), default=7)
    side_h = 10 + 40 + -(-max(most, 7) // SIDE_COLS) * (SMALL_H + 4) + 12 + 30
    felt_h = max(2 * reach + 2 * PAD + 24, side_h if sides & {"left", "right"} else 0)
    top = BAND_H if "top" in sides else 8
    cy = top + felt_h / 2
    height = top + felt_h + (BAND_H if "bottom" in sides else 8)
    return Layout(where, lo, hi, top, felt_h, height, cy, final, laid_at, opener, slots, left_ends, right_ends)


@lru_cache(maxsize=256)
def _hand_at(at: str, i: int) -> tuple[float, float]:
    """Where the `i`th tile of a hand lies in its seat's place (`_seat`'s group)."""
    cols = 28 if at in ("top", "bottom") else SIDE_COLS
    return (i % cols) * SMALL_STEP, (22 if at in ("top", "bottom") else 40) + (i // cols) * (SMALL_H + 4)


def line_ghosts(plies: list[Ply], players: int, ply: int, moves: list[str], movers: list[int],
                lay: Layout | None = None) -> list[list[object] | None]:
    """A principal line from ply `ply` on (its first move is the one made or
    proposed there; `movers` the seat making each move), as the page lays it
    on the board shown at ply `ply - 1`: for each move that lays a tile, its
    slot on the line (the symbol as `hAB`/`vAB`, x, y, width, height) and
    where that tile sits in its seat's hand (the seat, x and y in the seat's
    place; None for a tile not in the hand at `ply - 1`); None for a pass or
    a draw.

    The line's tiles continue the snake the hand's own line follows, so a
    tile already on the line keeps its slot. The slots may reach past the
    felt (the page grows the felt to fit). It speaks of every seat's tiles:
    only for the whole view of a hand that is over. A hand's many lines:
    :class:`LineLayer`, which does the per-hand work once.
    """
    return LineLayer(plies, players, lay).ghosts(ply, moves, movers)


@dataclass(frozen=True, slots=True)
class _Before:
    """The board a line is laid on (a ply's): its ends, whether the layer lays
    on it (the snake's pivot on its line, each hand's seat placed), the state
    of each arm (`_lay_tile`), its tiles, and where each tile lies in the
    hand of each seat (x, y in the seat's place)."""

    left: int
    right: int
    fast: bool
    lstate: _ArmState
    rstate: _ArmState
    tiles: frozenset[int]
    held: list[dict[int, tuple[float, float]]]


#: A tile laid on a line: symbol, x, y, width, height (on the table), the new end, the arm's state after it.
_Laid = tuple[str, float, float, int, int, int, _ArmState]


class LineLayer:
    """:func:`line_ghosts` for every line of one hand: each ply's board is
    read once (its arms' states, its hands indexed), each move parsed once,
    and a line lays only its own tiles, from its board's arms on (whose
    layouts `_arm_of` keeps by prefix: the table's own line laid them). A
    hand's lines share most of their tiles' places (the line from ply k + 1
    is mostly the one from ply k's): each tile is laid once in each state of
    its arm."""

    __slots__ = ("_before", "_layout", "_left", "_plies", "_right")

    def __init__(self, plies: list[Ply], players: int, lay: Layout | None = None) -> None:
        self._plies = plies
        self._layout = lay or layout(plies, players)
        self._before: dict[int, _Before] = {}
        self._left: dict[tuple[int, int, _ArmState], _Laid] = {}
        self._right: dict[tuple[int, int, _ArmState], _Laid] = {}

    def _board(self, k: int) -> _Before:
        got = self._before.get(k)
        if got is not None:
            return got
        p, lay = self._plies[k], self._layout
        line, where = p.line, lay.where
        hands = p.hands or []
        fast = all(h is None or s in where for s, h in enumerate(hands))
        held = [{} if h is None or s not in where else {t: _hand_at(where[s], i) for i, t in reversed(list(enumerate(h)))}
                for s, h in enumerate(hands)]
        o = None
        if line and lay.final:
            pivot = lay.final[lay.opener].tile
            o = next((i for i, t in enumerate(line) if t.tile == pivot), None)
        tiles = frozenset(t.tile for t in line)
        if o is None:
            empty: _ArmState = (0.0, 0.0, 1, None)
            got = _Before(p.left, p.right, fast and not line, empty, empty, tiles, held)
        else:
            w = U if IS_DOUBLE[line[o].tile] else 2 * U
            out = (lay.lo + lay.hi) / 2 + w / 2 + G  # as `snake` starts its arms
            lcodes = bytes(t.b * 7 + t.a for t in reversed(line[:o]))
            rcodes = bytes(t.a * 7 + t.b for t in line[o + 1:])
            got = _Before(p.left, p.right, fast, _arm_of(lcodes, out, 0.0, lay.lo, lay.hi)[2],
                          _arm_of(rcodes, out, 0.0, lay.lo, lay.hi)[2], tiles, held)
        self._before[k] = got
        return got

    def _lay(self, tile: int, near: int, state: _ArmState, left: bool) -> _Laid:
        """`tile` laid on the end showing `near` of an arm in `state`: the
        left arm is laid as a right one, turned half round about (cx, 0) (`_turned`)."""
        lay = self._layout
        far = _other_half(tile, near)
        (x, y, w, h, sym), after = _lay_tile(near, far, state, lay.lo, lay.hi)
        if left:
            x, y, sym = 2 * ((lay.lo + lay.hi) / 2) - x - w, 2 * 0.0 - y - h, sym[0] + sym[2] + sym[1]
        return sym, x, y + lay.cy, w, h, far, after

    def ghosts(self, ply: int, moves: list[str], movers: list[int]) -> list[list[object] | None]:
        """The line `moves` from ply `ply` on, laid (:func:`line_ghosts`)."""
        b, lay = self._board(ply - 1), self._layout
        if not b.fast:  # an odd board (its pivot not on its line): laid whole, as the plain way does
            return _relaid(self._plies, ply, moves, movers, lay)
        on, held, lmemo, rmemo = b.tiles, b.held, self._left, self._right
        left, right, lstate, rstate = b.left, b.right, b.lstate, b.rstate
        laid: set[int] = set()
        res: list[list[object] | None] = []
        got: _Laid | None
        for mv, who in zip(moves, movers, strict=True):
            tile, end = _parse_move(mv)
            if tile is None:
                res.append(None)
                continue
            if tile in on or tile in laid:  # a tile laid twice: as the plain way does
                return _relaid(self._plies, ply, moves, movers, lay)
            if not on and not laid:  # the opening: the snake's pivot, the high half on the left
                left, right, lstate, got = self._opening(tile)
                rstate = lstate
            elif end == "left":
                got = lmemo.get((tile, left, lstate))
                if got is None:
                    got = lmemo[tile, left, lstate] = self._lay(tile, left, lstate, True)
                left, lstate = got[5], got[6]
            else:
                got = rmemo.get((tile, right, rstate))
                if got is None:
                    got = rmemo[tile, right, rstate] = self._lay(tile, right, rstate, False)
                right, rstate = got[5], got[6]
            laid.add(tile)
            at = held[who].get(tile) if who < len(held) else None
            res.append([got[0], got[1], got[2], got[3], got[4], None if at is None else [who, *at]])
        return res

    def _opening(self, tile: int) -> tuple[int, int, _ArmState, _Laid]:
        """The ends, the arms' state and the tile's place when `tile` opens the line."""
        lay = self._layout
        cx, a, b = (lay.lo + lay.hi) / 2, HIGH[tile], LOW[tile]
        if IS_DOUBLE[tile]:
            x, y, w, h, sym = cx - U / 2, 0.0 - U, U, 2 * U, f"v{a}{b}"
        else:
            x, y, w, h, sym = cx - U, 0.0 - U / 2, 2 * U, U, f"h{a}{b}"
        state: _ArmState = (cx + w / 2 + G, 0.0, 1, None)
        return a, b, state, (sym, x, y + lay.cy, w, h, b, state)


def _relaid(plies: list[Ply], ply: int, moves: list[str], movers: list[int], lay: Layout
            ) -> list[list[object] | None]:
    """:func:`line_ghosts` the plain way: the whole line laid anew (for the
    odd line, a tile laid twice or a board whose pivot is not on it)."""
    before = plies[ply - 1]
    line = list(before.line)
    left, right = before.left, before.right
    hands = before.hands or []
    placed: list[tuple[int, Placed] | None] = []
    for mv, who in zip(moves, movers, strict=True):
        tile, end = _parse_move(mv)
        if tile is None:
            placed.append(None)
            continue
        if not line:  # the opening: the high half on the left, as the hand's own line lays it
            put = Placed(tile, HIGH[tile], LOW[tile])
            left, right = put.a, put.b
            line = [put]
        elif end == "left":
            put = Placed(tile, _other_half(tile, left), left)
            left = put.a
            line.insert(0, put)
        else:
            put = Placed(tile, right, _other_half(tile, right))
            right = put.b
            line.append(put)
        placed.append((who, put))
    if not line:
        return [None for _ in moves]
    # the tile that opened the hand's line stays the snake's pivot (else the line's own first tile)
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


def table_svg(plies: list[Ply], seats: tuple[SeatLabel, ...], players: int, teams: str = "pairs",
              best: dict[int, tuple[str, str]] | None = None, flagged: frozenset[str] = frozenset()) -> str:
    """The whole hand on one table (see the module's docstring).

    `best`: for a graded ply, (its best move, the move played), as the
    analysis writes them ("62 left"). At that ply, where the best move is
    another, its tile is ringed in the mover's hand and drawn as a ghost at
    the end it would have gone to, beside the tile played (ringed as every
    new tile is). `flagged`: the players the cheat signals flag, marked
    beside their names.
    """
    last = len(plies) - 1
    viewer = plies[0].viewer if plies else None
    lay = layout(plies, players)
    where, lo, hi, top, felt_h, cy = lay.where, lay.lo, lay.hi, lay.top, lay.felt_h, lay.cy
    final, laid_at, opener = lay.final, lay.laid_at, lay.opener
    slots, left_ends, right_ends = lay.slots, lay.left_ends, lay.right_ends
    index = {t.tile: i for i, t in enumerate(final)}
    dy = cy  # the snake was laid on the row through 0
    parts: list[str] = [
        f'<rect x="{lo - PAD + 4}" y="{top}" width="{hi - lo + 2 * PAD - 8}" height="{felt_h:g}" rx="18" class="felt"/>'
    ]
    symbols: set[str] = set()
    on = [laid_at.get(t.tile, 0) for t in final]
    for s, k in zip(slots, on, strict=True):
        symbols.add(s.sym)
        parts.append(shown_over(_line_tile(s.sym, s.x, s.y + dy, s.w, s.h, False), span(k, last + 1, last)))
        if k:
            parts.append(shown_over(_line_tile(s.sym, s.x, s.y + dy, s.w, s.h, True), span(k, k + 1, last)))
    # the open ends: a badge beyond each end tile with the number there
    ends = [(index[p.line[0].tile], index[p.line[-1].tile], p.left, p.right) if p.line else None for p in plies]
    for a, b, end in runs([(opener - e[0], e[2]) if e else None for e in ends]):
        if end is not None:
            x, y = left_ends[end[0]]
            parts.append(shown_over(_badge(x, y + dy, end[1], "L"), span(a, b, last)))
        else:
            parts.append(shown_over(f'<text x="{(lo + hi) / 2:g}" y="{cy + 5:g}" class="muted" text-anchor="middle">'
                             "the line is empty</text>", span(a, b, last)))
    for a, b, end in runs([(e[1] - opener, e[3]) if e else None for e in ends]):
        if end is not None:
            x, y = right_ends[end[0]]
            parts.append(shown_over(_badge(x, y + dy, end[1], "R"), span(a, b, last)))
    aside = f" · {plies[0].aside} doubles set aside" if plies and plies[0].aside else ""
    for a, b, stock in runs([p.stock for p in plies]):
        parts.append(shown_over(f'<text x="{lo + 4}" y="{top + 18}" class="muted">boneyard: {stock} tile'
                         f'{"s" if stock != 1 else ""}{aside}</text>', span(a, b, last)))
    if plies and plies[0].hands is None:
        parts.append(f'<text x="{(lo + hi) / 2:g}" y="{top + felt_h - 10:g}" class="muted" text-anchor="middle">'
                     "the hands stay hidden until the hand is over</text>")
    rings = _ghosts(best or {}, ends, left_ends, right_ends, opener, dy, last, parts, symbols, (lo + hi) / 2)
    for seat in range(players):
        seat_parts, used = _seat(plies, seat, seats[seat] if seat < len(seats) else SeatLabel(seat, "?"), where[seat],
                                 viewer, teams, last, lo, hi, top, felt_h, rings, flagged)
        parts.append(seat_parts)
        symbols |= used
    return (
        f'<svg class="board table" viewBox="0 0 {WIDTH} {lay.height:g}" width="{WIDTH}" height="{lay.height:g}" '
        f'role="img" aria-label="the table at the ply shown">'
        + tile_defs(symbols).replace("</defs>", _BACK + "</defs>") + "".join(parts) + "</svg>"
    )


def _ghosts(best: dict[int, tuple[str, str]], ends: list[tuple[int, int, int, int] | None],
            left_ends: list[tuple[float, float]], right_ends: list[tuple[float, float]], opener: int, dy: float,
            last: int, parts: list[str], symbols: set[str], cx: float) -> dict[int, int]:
    """Each graded ply's best move, where another was played, as a ghost tile
    at the end it would have gone to (appended to `parts`); the best tile of
    each such ply, to ring in the mover's hand."""
    rings: dict[int, int] = {}  # ply -> the best tile, ringed in the mover's hand
    for k, (mv, played) in sorted(best.items()):
        tile, end = _parse_move(mv)
        if tile is None or mv == played or not 0 < k <= last:
            continue
        rings[k] = tile
        e = ends[k - 1]
        if e is None:  # the opening: the line's first tile, drawn above the one played
            x, y = cx, -U - 2.0
            sym, end = f"h{HIGH[tile]}{LOW[tile]}", "opening"
        elif end == "left":
            x, y = left_ends[opener - e[0]]
            sym = f"h{_other_half(tile, e[2])}{e[2]}"
        else:
            x, y = right_ends[e[1] - opener]
            sym = f"h{e[3]}{_other_half(tile, e[3])}"
        symbols.add(sym)
        parts.append(shown_over(
            f'<g class="ghost"><use href="#{sym}" x="{x - U:g}" y="{y + dy - U / 2 - 14:g}" width="{2 * U}" height="{U}"/>'
            f'<text x="{x:g}" y="{y + dy - U / 2 - 18:g}" text-anchor="middle" class="ghostlab">best {label(tile)}</text>'
            f"<title>the best move: {label(tile)} {'to open the line' if end == 'opening' else f'on the {end} end'}</title></g>",
            span(k, k + 1, last)))
    return rings


def _seat(plies: list[Ply], s: int, lab: SeatLabel, at: str, viewer: int | None, teams: str, last: int,
          lo: float, hi: float, top: float, felt_h: float, rings: dict[int, int] | None = None,
          flagged: frozenset[str] = frozenset()) -> tuple[str, set[str]]:
    """A seat's label, hand, pips (or tile count) and known voids, where it
    sits; a player the cheat signals flag is marked beside the name."""
    held = [(None if p.hands is None or s >= len(p.hands) else p.hands[s],
             p.counts[s] if s < len(p.counts) else 0,
             None if p.pips is None or s >= len(p.pips) else p.pips[s]) for p in plies]
    across = at in ("top", "bottom")
    if across:
        x, y = lo, (6 if at == "top" else top + felt_h + 8)
        cols, most = 28, 26
        note_at, void_at = (hi - lo, 14, "end"), (hi - lo - 80, 14, "end")
    else:
        x, y = (6 if at == "left" else WIDTH - SIDE_W + 6), top + 10
        cols, most = SIDE_COLS, 17
        rows = -(-max([max(c, len(t or ())) for t, c, _ in held] + [1]) // cols)
        below = 40 + rows * (SMALL_H + 4) + 12
        note_at, void_at = (0, below, "start"), (0, below + 18, "start")
    side = f" side{s % 2}" if teams == "pairs" else ""
    you = " · this view" if viewer == s else ""
    tag = " [bot]" if lab.bot else ""
    flag = ' <tspan class="flagtext">⚑ flagged</tspan>' if lab.player in flagged else ""
    # across the top or the bottom the name follows the seat; at a side, the line below it
    nx, ny = (50, 14) if across else (0, 32)
    row = [f'<text x="0" y="14" class="seat{side}">seat {s}{"" if across else you}</text>',
           f'<text x="{nx}" y="{ny}" class="name">{esc(clip(shown(lab.label), most - 8 if flag else most))}{esc(tag)}'
           f'{flag}{"<tspan class=you>" + you + "</tspan>" if you and across else ""}</text>']
    for a, b, acting in runs([p.move is not None and p.move.seat == s for p in plies]):
        if acting:
            row.append(shown_over(f'<text x="0" y="14" class="seat act">seat {s}</text>', span(a, b, last)))
    used: set[str] = set()
    for a, b, (tiles, count, pips) in runs(held):
        drawn, syms = _hand(tiles, count, 0, 22 if across else 40, cols)
        used |= syms
        note = (f"{pips} pip{'' if pips == 1 else 's'}" if pips is not None
                else f"{count} tile{'' if count == 1 else 's'}")
        drawn += f'<text x="{note_at[0]:g}" y="{note_at[1]:g}" class="pips" text-anchor="{note_at[2]}">{note}</text>'
        row.append(shown_over(drawn, span(a, b, last)))
    for k, t in sorted((rings or {}).items()):
        mv = plies[k].move
        tiles = held[k][0]
        if mv is None or mv.seat != s or tiles is None or t not in tiles:
            continue
        i = tiles.index(t)
        tx, ty = (i % cols) * SMALL_STEP, (22 if across else 40) + (i // cols) * (SMALL_H + 4)
        row.append(shown_over(f'<rect x="{tx - 2:g}" y="{ty - 2:g}" width="{SMALL_W + 4}" height="{SMALL_H + 4}" '
                              f'rx="3" class="bestring"><title>the best move: {label(t)}</title></rect>',
                              span(k, k + 1, last)))
    for a, b, void in runs([tuple(p.voids[s]) if s < len(p.voids) else () for p in plies]):
        if void:
            row.append(shown_over(f'<text x="{void_at[0]:g}" y="{void_at[1]:g}" class="void" text-anchor="{void_at[2]}">'
                           f'no {",".join(map(str, void))}</text>', span(a, b, last)))
    # one group more: a hand's tiles are never children of the board's top groups, as the line's are
    return f'<g class="place {at}" data-seat="{s}" transform="translate({x:g} {y:g})"><g>{"".join(row)}</g></g>', used
