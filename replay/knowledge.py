"""What a seat could know at a decision, and the deals that agree with it.

A seat sees its own tiles (dealt and drawn), the line, how many tiles
every seat holds, how many are left in the boneyard, and every public
event: a pass, or a draw, shows that the seat had no tile for either end
then; a tile played right after a draw is the tile drawn; the opening
tile under ``highest_double`` shows that no higher double (or, if it is
not a double, no double and no heavier tile) was dealt; under
``five_doubles_auto`` a hand that is played shows that nobody was dealt
five doubles. Play choices are taken as telling nothing (the usual
assumption of sampling-based analysis: docs/analysis.md).

A deal here is the hidden part of the hand as it stands at the decision:
the other seats' tiles and the boneyard's order. Every initial deal that
agrees with the public history is equally likely (the shuffle is
uniform), so :class:`Hidden` samples those uniformly (or lists them all
when few remain):

- the unknown tiles fill *groups*: per other seat, the tiles it was dealt
  and still holds (they avoid every number the seat showed it lacked),
  and one group per kept draw (it avoids what the seat lacked from that
  draw on); the boneyard; the tiles out of play;
- a tile a seat played that was not just drawn came from its dealt tiles
  or from one of its earlier kept draws: each way of assigning those
  origins is a separate *option*, weighed by how many deals it allows;
- a count of the ways to fill the groups (a table over the groups' room
  left, tile by tile) draws each tile's group with its exact probability.

>>> from replay.rules import resolve
>>> from replay.engine import new_hand, apply, legal_moves, PASS
>>> from replay.tiles import parse_tile as t, SUIT_MASK
>>> hands = [[t(x) for x in h.split()] for h in (
...     "66 65 64 63 62 61 60", "55 54 53 52 51 50 44",
...     "43 42 41 40 33 32 31", "30 22 21 20 11 10 00")]
>>> s = new_hand(resolve("international"), hands, leader=0, opening=t("66"))
>>> tr = Tracker(s, fixed_by="double_six")
>>> tr.see(s, legal_moves(s)[0]); s = apply(s, legal_moves(s)[0])
>>> tr.see(s, PASS); s = apply(s, PASS)     # seat 1 has no 6
>>> h = tr.hidden(s, 2)                     # what seat 2 knows now
>>> worlds = h.sample(50, __import__("random").Random(1))
>>> any(hands[1] & SUIT_MASK[6] for hands, _ in worlds)    # seat 1 never holds a 6
False
>>> all(hands[2] == s.hands[2] for hands, _ in worlds)     # seat 2's own tiles as they are
True
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import permutations, product

from replay.engine import DRAW, PASS, HandState, Move, Play
from replay.tiles import BIT, DOUBLES, FULL_SET, IS_DOUBLE, N_TILES, SUIT_MASK, weight_key

__all__ = ["Group", "Hidden", "Tracker", "World", "lacked", "numbers"]

#: A world: the hands of every seat (the observer's as they are) and the boneyard in order.
World = tuple[tuple[int, ...], tuple[int, ...]]


@dataclass(frozen=True, slots=True)
class Group:
    """`count` unknown tiles in one place: a seat's hand (`seat`), the
    boneyard (`seat` = -1) or out of play (-2); none of them in `forbid`.
    `weight`: the deals per filling (k! for k kept draws merged into one)."""

    seat: int
    count: int
    forbid: int = 0
    weight: int = 1


@dataclass(frozen=True, slots=True)
class Hidden:
    """The deals a seat could face at a decision.

    `known`: every seat's tiles the observer knows for sure (its own hand,
    and nothing of the others'); `options`: the ways the unknown tiles may
    lie, each a tuple of groups; per option, `dealt_known`: the tiles known
    to have been dealt to each seat, and `dealt_groups`: which groups hold
    the rest of what each seat was dealt (both only for the five-doubles rule);
    `mults`: per option, how many histories (which played tile came from
    the deal and which from which draw) lead to it (all 1 if empty).
    """

    observer: int
    players: int
    known: tuple[int, ...]
    unknown: int  # mask of the tiles whose place the observer does not know
    options: tuple[tuple[Group, ...], ...]
    dealt_known: tuple[tuple[int, ...], ...] = ()
    dealt_groups: tuple[tuple[int, ...], ...] = ()
    max_doubles: int = 7  # most doubles any seat may have been dealt (4 under five_doubles_auto)
    mults: tuple[int, ...] = ()
    _ways: list[_Ways] = field(default_factory=list, compare=False, repr=False)

    def tiles(self) -> list[int]:
        return [t for t in range(N_TILES) if self.unknown & BIT[t]]

    def ways(self) -> list[_Ways]:
        """Each option's table of ways (made once: counting, drawing and listing share it)."""
        if not self._ways:
            tiles = self.tiles()
            self._ways.extend(_Ways(tiles, groups) for groups in self.options)
        return self._ways

    def _mult(self, k: int) -> int:
        return self.mults[k] if self.mults else 1

    def _weights(self) -> list[int]:
        return [w.total() * math.prod(g.weight for g in w.groups) * self._mult(k) for k, w in enumerate(self.ways())]

    def count(self) -> int:
        """How many distinct hidden states (fillings, with the boneyard's
        orders) agree with what the observer knows, before the five-doubles check."""
        return sum(
            w.total() * math.factorial(sum(g.count for g in w.groups if g.seat == -1)) * self._mult(k)
            for k, w in enumerate(self.ways())
        )

    def sample(self, n: int, rng: random.Random) -> list[World]:
        """`n` worlds drawn uniformly from the deals that agree."""
        weights = self._weights()
        if not any(weights):
            raise ValueError("no deal agrees with the history")
        ways = self.ways()
        out: list[World] = []
        tries = 0
        while len(out) < n:
            tries += 1
            if tries > 1000 * n + 1000:
                raise ValueError("no deal with fewer than five doubles a seat agrees with the history")
            k = _pick(weights, rng)
            fill = ways[k].draw(rng)
            world = self._world(k, fill, rng)
            if world is not None:
                out.append(world)
        return out

    def enumerate(self, limit: int) -> list[tuple[World, int]] | None:
        """Every world with its weight (the deals it stands for), or None if
        there are more than `limit` fillings and boneyard orders."""
        if self.count() > limit:
            return None
        tiles = self.tiles()
        out: list[tuple[World, int]] = []
        for k, (groups, table) in enumerate(zip(self.options, self.ways(), strict=True)):
            w = math.prod(g.weight for g in groups) * self._mult(k)
            for fill in table.all():
                stock_tiles = [t for t, g in zip(tiles, fill, strict=True) if groups[g].seat == -1]
                for order in permutations(stock_tiles):
                    world = self._world(k, fill, None, tuple(order))
                    if world is not None:
                        out.append((world, w))
        return out

    def _world(self, k: int, fill: Sequence[int], rng: random.Random | None, order: tuple[int, ...] | None = None) -> World | None:
        groups = self.options[k]
        hands = list(self.known)
        stock: list[int] = []
        dealt = list(self.dealt_known[k]) if self.max_doubles < 7 else []
        dg = set(self.dealt_groups[k]) if self.max_doubles < 7 else set()
        for t, gi in zip(self.tiles(), fill, strict=True):
            g = groups[gi]
            if g.seat >= 0:
                hands[g.seat] |= BIT[t]
                if gi in dg:
                    dealt[g.seat] |= BIT[t]
            elif g.seat == -1:
                stock.append(t)
        if self.max_doubles < 7 and any((m & DOUBLES).bit_count() > self.max_doubles for m in dealt):
            return None
        if order is None:
            assert rng is not None
            rng.shuffle(stock)
            order = tuple(stock)
        return tuple(hands), order


def _pick(weights: Sequence[int], rng: random.Random) -> int:
    x = rng.randrange(sum(weights))
    for i, w in enumerate(weights):
        if x < w:
            return i
        x -= w
    raise AssertionError("unreachable")


class _Ways:
    """Ways to put `tiles` into `groups` (each exactly full, none in its forbid)."""

    def __init__(self, tiles: Sequence[int], groups: Sequence[Group]) -> None:
        self.tiles = list(tiles)
        self.groups = list(groups)
        self.memo: dict[tuple[int, tuple[int, ...]], int] = {}
        # a tile may go to group g unless g forbids it
        self.allowed = [[g for g, grp in enumerate(self.groups) if not grp.forbid & BIT[t]] for t in self.tiles]

    def total(self) -> int:
        room = tuple(g.count for g in self.groups)
        if sum(room) != len(self.tiles) or min(room, default=0) < 0:
            return 0
        return self._f(0, room)

    def _f(self, i: int, room: tuple[int, ...]) -> int:
        if i == len(self.tiles):
            return 1
        key = (i, room)
        got = self.memo.get(key)
        if got is not None:
            return got
        n = 0
        for g in self.allowed[i]:
            if room[g]:
                n += self._f(i + 1, room[:g] + (room[g] - 1,) + room[g + 1 :])
        self.memo[key] = n
        return n

    def draw(self, rng: random.Random) -> list[int]:
        room = tuple(g.count for g in self.groups)
        out = []
        for i in range(len(self.tiles)):
            total = self._f(i, room)
            x = rng.randrange(total)
            for g in self.allowed[i]:
                if not room[g]:
                    continue
                nxt = room[:g] + (room[g] - 1,) + room[g + 1 :]
                w = self._f(i + 1, nxt)
                if x < w:
                    out.append(g)
                    room = nxt
                    break
                x -= w
        return out

    def all(self) -> Iterator[list[int]]:
        room = tuple(g.count for g in self.groups)
        if self.total() == 0:
            return

        def rec(i: int, room: tuple[int, ...], acc: list[int]) -> Iterator[list[int]]:
            if i == len(self.tiles):
                yield list(acc)
                return
            for g in self.allowed[i]:
                if room[g]:
                    nxt = room[:g] + (room[g] - 1,) + room[g + 1 :]
                    if self._f(i + 1, nxt):
                        acc.append(g)
                        yield from rec(i + 1, nxt, acc)
                        acc.pop()

        yield from rec(0, room, [])


# -- the public history ------------------------------------------------------------


def lacked(left: int, right: int) -> int:
    """What a pass or a draw on ends `left` and `right` shows: the numbers its
    seat held no tile of, as a bitmask (bit n: number n). Those are the
    numbers on the open ends; before the line opens nothing is shown.

    The one definition of what a pass reveals: :class:`Tracker`, the bots'
    memory (`replay.bots.Memo`) and the replay page's walk
    (`replay.hand_walk`) all ask it.

    >>> lacked(3, 5) == 1 << 3 | 1 << 5, lacked(4, 4) == 1 << 4, lacked(-1, -1)
    (True, True, 0)
    """
    return 1 << left | 1 << right if left >= 0 else 0


def numbers(mask: int) -> tuple[int, ...]:
    """The numbers of a bitmask of numbers, lowest first.

    >>> numbers(lacked(5, 2))
    (2, 5)
    """
    return _NUMBERS[mask]


_NUMBERS: tuple[tuple[int, ...], ...] = tuple(tuple(n for n in range(7) if m >> n & 1) for m in range(128))
#: _SUITS[m]: the tiles that carry any number of the bitmask m.
_SUITS: tuple[int, ...] = tuple(sum(BIT[t] for t in range(N_TILES) if any(SUIT_MASK[n] & BIT[t] for n in _NUMBERS[m]))
                                for m in range(128))


@dataclass
class _Seat:
    dealt: int  # tiles dealt
    voids: list[tuple[int, int]] = field(default_factory=list)  # (time, numbers' tiles it lacked)
    draws: list[tuple[int, int, int]] = field(default_factory=list)  # kept draws: (time, void then, tile)
    plays: list[tuple[int, int]] = field(default_factory=list)  # (time, tile) not just drawn


class Tracker:
    """Records a hand's public events as it is replayed (:meth:`see` before
    each move is applied) and answers :meth:`hidden` for any seat."""

    def __init__(self, start: HandState, *, fixed_by: str = "") -> None:
        r = start.rules
        self.rules = r
        self.n = len(start.hands)
        self.seats = [_Seat(h.bit_count()) for h in start.hands]
        self.dealt = start.hands
        self.time = 0
        self.line = 0
        self.aside = FULL_SET & ~self._in_play(start)
        self.out = 0 if r.stock == "draw" else N_TILES - sum(h.bit_count() for h in start.hands) - self.aside.bit_count()
        self.not_dealt = 0  # tiles the opening shows nobody was dealt
        self.fixed_by = fixed_by
        self.opening = start.opening
        self.max_doubles = 4 if r.redeal == "five_doubles_auto" else 7

    @staticmethod
    def _in_play(start: HandState) -> int:
        if start.rules.stock == "doubles_aside":
            return FULL_SET & ~DOUBLES
        return FULL_SET

    def see(self, state: HandState, move: Move, drawn: int = -1) -> None:
        """Note `move` by the seat to move in `state` (before it is applied);
        `drawn`: the tile a draw takes (the boneyard's next by default)."""
        self.time += 1
        seat = self.seats[state.turn]
        if state.result is not None:  # the closing passes and draw of a block tell nothing
            return
        if isinstance(move, Play):
            if state.left < 0 and self.fixed_by == "highest_double" and move.tile == self.opening:
                self.not_dealt = _heavier_than(move.tile)
            self.line |= BIT[move.tile]
            if state.must_play >= 0:
                seat.draws.pop()  # the tile just drawn: now known and on the line
            else:
                seat.plays.append((self.time, move.tile))
            return
        if move is PASS or move is DRAW:
            lacks = _SUITS[lacked(state.left, state.right)]  # every tile that fits an end
            seat.voids.append((self.time, lacks))
            if move is DRAW:
                tile = state.stock[0] if drawn < 0 else drawn
                seat.draws.append((self.time, lacks, tile))

    def hidden(self, state: HandState, observer: int, peek: Collection[int] = ()) -> Hidden:
        """What `observer` could know in `state` (the state of the decision).

        `peek`: seats whose tiles the observer sees as well (a cheat the
        player insights look for: a player who sees its partner's hand).
        """
        shown = {observer, *peek}
        known = tuple(state.hands[s] if s in shown else 0 for s in range(self.n))
        unknown = FULL_SET & ~self.line & ~self.aside
        for s in shown:
            unknown &= ~state.hands[s]
        per_seat: list[list[tuple[list[Group], int, int, int]]] = []
        for s, info in enumerate(self.seats):
            if s in shown:
                per_seat.append([([], self.dealt[s], -1, 1)])
                continue
            opts = self._seat_options(s, info, state.hands[s].bit_count())
            if not opts:
                raise ValueError(f"seat {s}'s public history admits no deal")
            per_seat.append(opts)
        tail = [Group(-1, len(state.stock))]
        if self.out:
            tail.append(Group(-2, self.out))
        options, dealt_groups, dealt_known, mults = [], [], [], []
        for combo in product(*per_seat):
            groups: list[Group] = []
            dg = []
            for gs, _, dealt_index, _ in combo:
                if dealt_index >= 0:
                    dg.append(len(groups) + dealt_index)
                groups.extend(gs)
            options.append(tuple(groups + tail))
            dealt_groups.append(tuple(dg))
            dealt_known.append(tuple(m for _, m, _, _ in combo))
            mults.append(math.prod(c[3] for c in combo))
        return Hidden(
            observer=observer,
            players=self.n,
            known=known,
            unknown=unknown,
            options=tuple(options),
            dealt_known=tuple(dealt_known),
            dealt_groups=tuple(dealt_groups),
            max_doubles=self.max_doubles,
            mults=tuple(mults) if any(m != 1 for m in mults) else (),
        )

    def _seat_options(self, s: int, info: _Seat, holds: int) -> list[tuple[list[Group], int, int, int]]:
        """Each way seat `s`'s played tiles may have come from its dealt tiles
        or its kept draws: (groups of what it holds now, tiles given a dealt
        origin, index of its dealt group in the groups or -1, how many such
        ways). What the seat holds now depends only on which draws its plays
        used, so the ways that use the same draws are one option, counted
        (a seat that drew and played much has millions of ways and a few
        thousand such sets); under the five-doubles rule each way is its own
        option, as it needs the tiles dealt."""
        all_voids = 0
        for _, m in info.voids:
            all_voids |= m

        def voids_between(t0: int, t1: int) -> int:
            m = 0
            for t, v in info.voids:
                if t0 <= t < t1:
                    m |= v
            return m

        def voids_from(t0: int) -> int:
            m = 0
            for t, v in info.voids:
                if t >= t0:
                    m |= v
            return m

        n_draws = len(info.draws)
        # origins of each played tile: -1 dealt, or j for kept draw j
        choices: list[list[int]] = []
        for when, tile in info.plays:
            c = []
            if not (voids_between(0, when) | self.not_dealt) & BIT[tile]:
                c.append(-1)
            for j, (dt, _lacks, _t) in enumerate(info.draws):
                # a kept draw avoids what the seat lacked from the draw (its own void) until the play
                if dt < when and not voids_between(dt, when) & BIT[tile]:
                    c.append(j)
            choices.append(c)
        ways: list[tuple[int, int, int]] = []  # (draws used, as a mask; tiles given a dealt origin; how many ways)
        if self.max_doubles < 7:
            for assign in product(*choices) if choices else [()]:
                used = [a for a in assign if a >= 0]
                if len(used) != len(set(used)):
                    continue
                dealt_mask = 0
                for (_, tile), a in zip(info.plays, assign, strict=True):
                    if a < 0:
                        dealt_mask |= BIT[tile]
                ways.append((sum(1 << a for a in used), dealt_mask, 1))
        else:
            by_used: dict[int, int] = {0: 1}  # the ways so far, by the draws they used
            for c in choices:
                nxt: dict[int, int] = {}
                for mask, k in by_used.items():
                    for a in c:
                        if a < 0 or not mask >> a & 1:
                            m = mask if a < 0 else mask | 1 << a
                            nxt[m] = nxt.get(m, 0) + k
                by_used = nxt
            ways = [(mask, 0, k) for mask, k in sorted(by_used.items())]
        out: list[tuple[list[Group], int, int, int]] = []
        for used_mask, dealt_mask, mult in ways:
            used = [j for j in range(n_draws) if used_mask >> j & 1]
            from_dealt = len(info.plays) - len(used)
            dealt_left = info.dealt - from_dealt
            if dealt_left < 0:
                continue
            groups: list[Group] = []
            dealt_index = -1
            if dealt_left:
                dealt_index = 0
                groups.append(Group(s, dealt_left, all_voids | self.not_dealt))
            kept: dict[int, int] = {}
            for j in range(n_draws):
                if j not in used:
                    f = voids_from(info.draws[j][0])
                    kept[f] = kept.get(f, 0) + 1
            for f, k in kept.items():
                groups.append(Group(s, k, f, math.factorial(k)))
            if sum(g.count for g in groups) != holds:
                continue
            out.append((groups, dealt_mask, dealt_index, mult))
        return out


def _heavier_than(tile: int) -> int:
    """Tiles that a `highest_double` opening with `tile` shows nobody was dealt."""
    if IS_DOUBLE[tile]:
        return sum(BIT[t] for t in range(N_TILES) if IS_DOUBLE[t] and t > tile)
    return DOUBLES | sum(BIT[t] for t in range(N_TILES) if weight_key(t) > weight_key(tile))

