"""Bot players for the simulator: three styles whose statistics differ.

A bot picks one of the legal moves of `replay.engine` (it never sees a
move list the engine did not make, so every bot works under every
profile). Bots look only at their own tiles and at what the table has
shown (`Memo`): the numbers each seat put on the ends and the numbers a
seat passed or drew on (`replay.knowledge.lacked`, what a pass reveals).

- `RandomBot` ("random"): any legal move, uniformly; sometimes lays its
  opening tile low half left, sometimes hands the lead over.
- `HeavyBot` ("heavy"): sheds the heaviest tile first.
- `PartnerBot` ("partner"): keeps its strongest number on the ends, plays
  to the numbers its partner showed and away from its opponents' ones,
  and hands a weak lead to its partner where the rules allow it.
- `SignalBot` ("signal"): the signalling half of an honest pair, a legal
  convention its partner may read (:func:`signal_choice`): lead the
  heaviest tile of your longest number, keep that number alive, never
  cover a number your partner showed and still holds. Its reading half is
  `replay.searchbots.ReaderBot`.

>>> from replay.rules import resolve
>>> from replay.engine import new_hand, legal_moves
>>> from replay.tiles import parse_tile as t
>>> hands = [[t(x) for x in h.split()] for h in (
...     "66 65 64 63 62 61 60", "55 54 53 52 51 50 44",
...     "43 42 41 40 33 32 31", "30 22 21 20 11 10 00")]
>>> s = new_hand(resolve("international"), hands, leader=0)
>>> BOTS["heavy"].choose(s, legal_moves(s), Memo.fresh(4), random.Random(0))
Play(tile='66', end='left')
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Final

from replay.engine import LEFT, YIELD, HandState, Move, Play
from replay.knowledge import lacked
from replay.tiles import DOUBLES, HIGH, IS_DOUBLE, LOW, OTHER, PIPS, SUIT_MASK

__all__ = ["BOTS", "STYLES", "Bot", "HeavyBot", "Memo", "PartnerBot", "RandomBot", "SignalBot", "signal_choice"]


@dataclass(slots=True)
class Memo:
    """What the table has shown in this hand, by seat (number bitmasks).

    `shown[s]`: numbers seat s laid open on an end; `lacks[s]`: every
    number a pass or a draw of seat s showed it lacked (`knowledge.lacked`),
    kept for the whole hand: a rule of thumb, which forgets that a drawn
    tile may carry one (`knowledge.Tracker` keeps the exact record).
    """

    shown: list[int]
    lacks: list[int]

    @classmethod
    def fresh(cls, players: int) -> Memo:
        return cls([0] * players, [0] * players)

    def saw_play(self, seat: int, tile: int, exposed: int) -> None:
        """Seat played `tile`, leaving `exposed` open (-1: it opened the line)."""
        # the number a tile leaves open is the one it was played to show
        self.shown[seat] |= (1 << LOW[tile] | 1 << HIGH[tile]) if exposed < 0 else 1 << exposed

    def saw_pass(self, seat: int, left: int, right: int) -> None:
        """Seat passed or drew on ends `left` and `right`."""
        self.lacks[seat] |= lacked(left, right)


class Bot(ABC):
    """A playing style. Subclasses implement `choose`; the hand-level calls have defaults."""

    style: ClassVar[str] = ""

    @abstractmethod
    def choose(
        self, state: HandState, moves: Sequence[Move], memo: Memo, rng: random.Random
    ) -> Move:
        """One of `moves` (the engine's legal moves for `state.turn`; never empty)."""

    def flip_opening(self, tile: int, rng: random.Random) -> bool:
        """Whether to lay the opening tile low half left ("36" instead of "63")."""
        return False

    def claims_redeal(self, hand: int, rng: random.Random) -> bool:
        """Whether to show 5+ doubles and throw the deal in (five_doubles_claim)."""
        return False


class RandomBot(Bot):
    """Any legal move, uniformly at random."""

    style = "random"

    def choose(
        self, state: HandState, moves: Sequence[Move], memo: Memo, rng: random.Random
    ) -> Move:
        return moves[int(rng.random() * len(moves))]  # randrange is 5x slower

    def flip_opening(self, tile: int, rng: random.Random) -> bool:
        return not IS_DOUBLE[tile] and rng.random() < 0.3

    def claims_redeal(self, hand: int, rng: random.Random) -> bool:
        return rng.random() < 0.5


class HeavyBot(Bot):
    """The heaviest tile first (pips, then the higher half); never yields."""

    style = "heavy"

    def choose(
        self, state: HandState, moves: Sequence[Move], memo: Memo, rng: random.Random
    ) -> Move:
        best: Move = moves[0]
        key = -1
        for mv in moves:
            # moves come tile by tile in canonical order, so on equal keys
            # the first (left) end wins: deterministic without the rng
            if type(mv) is Play:
                k = PIPS[mv.tile] * 8 + HIGH[mv.tile]
                if k > key:
                    best, key = mv, k
        return best

    def claims_redeal(self, hand: int, rng: random.Random) -> bool:
        return (hand & DOUBLES).bit_count() >= 6


def _strength(hand: int) -> list[int]:
    """Tiles carrying each number, doubles counting one extra (they block a number)."""
    out = [0] * 7
    for n in range(7):
        m = hand & SUIT_MASK[n]
        if m:
            out[n] = m.bit_count() + (1 if m & DOUBLES & SUIT_MASK[n] else 0)
    return out


class PartnerBot(Bot):
    """Partnership play: strong number on the ends, partner's numbers kept open."""

    style = "partner"

    def choose(
        self, state: HandState, moves: Sequence[Move], memo: Memo, rng: random.Random
    ) -> Move:
        if len(moves) == 1:
            return moves[0]
        seat = state.turn
        hand = state.hands[seat]
        n = len(state.hands)
        pairs = state.rules.teams == "pairs"
        strength = _strength(hand)
        if state.left < 0:
            if YIELD in moves and max(strength) <= 3:
                return YIELD  # a weak hand: let the partner pick the game
            # open with the heaviest tile of the strongest number
            best_key, best = -1, moves[0]
            for mv in moves:
                if type(mv) is Play:
                    t = mv.tile
                    k = max(strength[LOW[t]], strength[HIGH[t]]) * 64 + PIPS[t] * 2 + IS_DOUBLE[t]
                    if k > best_key:
                        best_key, best = k, mv
            return best
        partner = (seat + 2) % n if pairs else -1
        friend = memo.shown[partner] if partner >= 0 else 0
        foes = 0
        for s in range(n):
            if s != seat and s != partner:
                foes |= memo.shown[s]
        nxt = (seat + 1) % n
        nxt_lacks = memo.lacks[nxt]
        left, right = state.left, state.right
        best_score, best = -(1 << 30), moves[0]
        for mv in moves:
            if type(mv) is not Play:
                continue
            t = mv.tile
            if mv.end == LEFT:
                a, b = OTHER[t][left], right
            else:
                a, b = left, OTHER[t][right]
            rest = _strength(hand & ~(1 << t))
            score = 4 * (rest[a] + rest[b])
            ends = 1 << a | 1 << b
            if ends & friend:
                score += 6
            if ends & foes & ~friend:
                score -= 4
            if ends & nxt_lacks:
                score += 5
            score += PIPS[t] + 3 * IS_DOUBLE[t]  # shed weight and doubles early
            if score > best_score:
                best_score, best = score, mv
        return best

    def claims_redeal(self, hand: int, rng: random.Random) -> bool:
        return True  # five doubles leave few numbers to play: always throw in


def longest_number(hand: int) -> int:
    """The number the most tiles of `hand` carry (the higher on a tie).

    >>> from replay.tiles import mask_of, parse_tile as t
    >>> longest_number(mask_of([t("52"), t("51"), t("66"), t("50")]))
    5
    """
    counts = [(hand & SUIT_MASK[n]).bit_count() for n in range(7)]
    return max(range(7), key=lambda n: (counts[n], n))


def signal_choice(state: HandState, moves: Sequence[Move], shown: Sequence[int], lacks: Sequence[int]) -> Move:
    """The signalling convention's move for the seat to move in `state`,
    from its own tiles and what the table showed (`shown`, `lacks`: number
    bitmasks by seat, as :class:`Memo` keeps them); deterministic.

    - the lead: the heaviest tile of the longest number (the partner reads
      the number from it); never hands the lead over;
    - later: keep the longest number on an end, never cover a number the
      partner showed and has not shown it lacks, play to it when possible;
      on a tie the heavier tile, then the earlier move.

    >>> from replay.rules import resolve
    >>> from replay.engine import new_hand, legal_moves
    >>> from replay.tiles import parse_tile as t
    >>> hands = [[t(x) for x in h.split()] for h in (
    ...     "66 52 51 50 43 21 10", "55 54 53 65 44 64 11",
    ...     "42 41 40 33 32 31 63", "30 22 20 62 61 60 00")]
    >>> s = new_hand(resolve("international"), hands, leader=0)
    >>> signal_choice(s, legal_moves(s), (0,) * 4, (0,) * 4)     # 5 is its longest number
    Play(tile='52', end='left')
    """
    seat = state.turn
    hand = state.hands[seat]
    best: Move = moves[0]
    if len(moves) == 1:
        return best
    mine = longest_number(hand)
    if state.left < 0:
        key = -1
        for mv in moves:
            if type(mv) is Play:
                t = mv.tile
                k = (1 << 8 if SUIT_MASK[mine] & (1 << t) else 0) + PIPS[t] * 2 + IS_DOUBLE[t]
                if k > key:
                    best, key = mv, k
        return best
    n = len(state.hands)
    partner = (seat + 2) % n if state.rules.teams == "pairs" and n == 4 else -1
    friend = shown[partner] & ~lacks[partner] if partner >= 0 else 0
    left, right = state.left, state.right
    before = 1 << left | 1 << right
    score_best = -(1 << 30)
    for mv in moves:
        if type(mv) is not Play:
            continue
        t = mv.tile
        a, b = (OTHER[t][left], right) if mv.end == LEFT else (left, OTHER[t][right])
        ends = 1 << a | 1 << b
        rest = hand & ~(1 << t)
        score = 0
        if ends & 1 << mine and rest & SUIT_MASK[mine]:
            score += 40  # keep the number alive
        if before & friend & ~ends:
            score -= 80  # covered the partner's number
        elif ends & friend:
            score += 20
        score += PIPS[t] * 2 + IS_DOUBLE[t]
        if score > score_best:
            best, score_best = mv, score
    return best


class SignalBot(Bot):
    """An honest signaller: plays :func:`signal_choice`, a convention its partner may read."""

    style = "signal"

    def choose(
        self, state: HandState, moves: Sequence[Move], memo: Memo, rng: random.Random
    ) -> Move:
        return signal_choice(state, moves, memo.shown, memo.lacks)


#: One instance of each style; bots keep no state of their own.
BOTS: Final[dict[str, Bot]] = {b.style: b for b in (RandomBot(), HeavyBot(), PartnerBot(), SignalBot())}
#: The styles of a default mix (the signaller plays its convention best beside its reader).
STYLES: Final[tuple[str, ...]] = ("random", "heavy", "partner")
