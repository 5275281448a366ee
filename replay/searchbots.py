"""Bots that search: an honest sampling player and two planted cheaters.

The simulator's plain bots (:mod:`replay.bots`) follow rules of thumb. These
search with the analysis' own tools, so that the player insights' cheat
signals (reports.insights, docs/insights.md) can be measured on players whose
honesty is known:

- :class:`SamplerBot` (``sampler``), honest: the move with the best mean
  value over deals it could face, given everything it could know
  (:meth:`replay.analysis.Analyzer.sampled`, what the analysis grades a
  player against);
- :class:`OmniscientBot` (``omniscient``), a cheater who sees every hand
  and the boneyard: a perfect-information best move
  (:func:`replay.solver.move_values`);
- :class:`PeekerBot` (``peeker``), a cheater who sees its partner's hand: the
  best mean over the deals it could face knowing its partner's tiles as well
  (in a game without partners there is nobody to peek at, and it plays as
  the sampler);
- :class:`ReaderBot` (``reader``), honest: the reading half of a signalling
  pair. It weighs the deals it could face by how likely its partner's plays
  were under the signalling convention (:func:`replay.bots.signal_choice`,
  which its partner, a ``signal`` bot, plays), using only its own tiles and
  the public history (:func:`replay.belief.weighted_belief`), and plays the
  best weighted mean. A re-deal of the hidden tiles that agrees with the
  public history never changes its move (tests/test_belief.py).

The search bots are never in the simulator's default mix: a run has them only when
asked (``SimConfig.cheaters``, ``replay simulate --cheater ID=STYLE``, or
``--bots sampler``). Their moves are legal moves of the engine, so a run
with them is a valid table log like any other.

A search bot needs what the table showed so far (a
:class:`replay.knowledge.Tracker` fed every move) and the hand's place in
its match (:class:`replay.solver.HandContext`): the simulator hands both to
:meth:`SearchBot.think`. Without them (a hand with a planted log error)
it plays as the partner bot.

>>> from replay.rules import resolve
>>> from replay.engine import new_hand, legal_moves, apply
>>> from replay.knowledge import Tracker
>>> from replay.solver import HandContext
>>> from replay.tiles import parse_tile as t
>>> hands = [[t(x) for x in h.split()] for h in (
...     "66 65 64 63 62 61 60", "55 54 53 52 51 50 44",
...     "43 42 41 40 33 32 31", "30 22 21 20 11 10 00")]
>>> s = new_hand(resolve("international"), hands, leader=0, opening=t("66"))
>>> tr = Tracker(s, fixed_by="double_six")
>>> tr.see(s, legal_moves(s)[0]); s = apply(s, legal_moves(s)[0])
>>> search_bot("omniscient").think(s, legal_moves(s), tr, HandContext(), random.Random(0))
PASS
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import ClassVar, Final

from replay.belief.history import Public, Recorder
from replay.belief.weights import weighted_belief
from replay.bots import BOTS, Bot, Memo, signal_choice
from replay.engine import HandState, Move
from replay.knowledge import Tracker
from replay.solver import HandContext, hand_args, move_values, position

__all__ = [
    "CHEATS", "SEARCH_SAMPLES", "SEARCH_STYLES", "Convention", "OmniscientBot", "PeekerBot", "ReaderBot",
    "SamplerBot", "SearchBot", "search_bot",
]

#: Deals a sampling bot scores per decision (the analysis grades on 10 by default).
SEARCH_SAMPLES: Final = 16


class SearchBot(Bot):
    """A bot that searches the hand: :meth:`think` with the table's view."""

    style: ClassVar[str] = ""

    def __init__(self, samples: int = SEARCH_SAMPLES) -> None:
        # here, not at the top: the simulator imports this module, and a run
        # without a searching bot loads neither pyarrow nor DuckDB
        from replay.analysis import Analyzer  # noqa: PLC0415

        self.analyzer = Analyzer(samples=samples, seed=0)

    def choose(self, state: HandState, moves: Sequence[Move], memo: Memo, rng: random.Random) -> Move:
        # no view of the table (a hand with a planted error): play as the partner bot
        return BOTS["partner"].choose(state, moves, memo, rng)

    def think(self, state: HandState, moves: Sequence[Move], tracker: Tracker, ctx: HandContext,
              rng: random.Random) -> Move:  # fmt: skip
        """One of `moves` (the engine's legal moves, in their order) for the seat to move."""
        means = self.analyzer.sampled(state, tracker, ctx, rng, self.peek(state))
        return _first_best(moves, [m for m, _ in means])

    def peek(self, state: HandState) -> tuple[int, ...]:
        """The seats whose tiles this bot sees besides its own."""
        return ()


class SamplerBot(SearchBot):
    """Honest: the best mean value over the deals it could face."""

    style = "sampler"


class PeekerBot(SearchBot):
    """Cheats: samples knowing its partner's tiles too."""

    style = "peeker"

    def peek(self, state: HandState) -> tuple[int, ...]:
        if state.rules.teams != "pairs":
            return ()
        return ((state.turn + 2) % state.players,)


class OmniscientBot(SearchBot):
    """Cheats: sees every hand and the boneyard, plays a perfect-information best move."""

    style = "omniscient"

    def think(self, state: HandState, moves: Sequence[Move], tracker: Tracker, ctx: HandContext,
              rng: random.Random) -> Move:  # fmt: skip
        _, solver = self.analyzer.solvers(state.rules)
        values = move_values(solver, state, ctx)
        return _first_best(moves, [v for _, v in values])


class Convention:
    """The signalling convention as a policy (:class:`replay.belief.Policy`)
    of one seat: its move under :func:`replay.bots.signal_choice` has
    probability 1 - `slip`, the others share `slip`; any other seat's choice
    tells nothing."""

    def __init__(self, seat: int, slip: float = 0.05) -> None:
        self.seat = seat
        self.slip = slip

    def probs(self, state: HandState, moves: Sequence[Move], public: Public) -> Sequence[float] | None:
        if state.turn != self.seat:
            return None
        if len(moves) == 1:
            return [1.0]
        pick = signal_choice(state, moves, public.shown, public.lacks)
        other = self.slip / (len(moves) - 1)
        return [1.0 - self.slip if m == pick else other for m in moves]


class ReaderBot(SearchBot):
    """Honest: the best mean over the deals it could face, each weighted by
    how likely its partner's plays were under the signalling convention."""

    style = "reader"

    def think(self, state: HandState, moves: Sequence[Move], tracker: Tracker, ctx: HandContext,
              rng: random.Random) -> Move:  # fmt: skip
        if not isinstance(tracker, Recorder) or state.rules.teams != "pairs" or state.players != 4:
            return super().think(state, moves, tracker, ctx, rng)  # nothing to read: the sampler
        seat = state.turn
        k = self.analyzer.samples
        belief = weighted_belief(state, tracker, Convention((seat + 2) % 4), deals=k, rng=rng, max_deals=4 * k)
        worlds = list(belief.worlds) if belief.exact else belief.resample(k, rng)
        weights = list(belief.weights) if belief.exact else [1.0 / k] * k
        _, solver = self.analyzer.solvers(state.rules)
        solver.set_hand(*hand_args(state, ctx))
        base = position(state)
        means = [0.0] * len(moves)
        for (hands, stock), w in zip(worlds, weights, strict=True):
            for i, (_, v) in enumerate(solver.values((hands, stock, *base[2:]), seat)):
                means[i] += w * v
        return _first_best(moves, means)


def _first_best(moves: Sequence[Move], values: Sequence[float]) -> Move:
    """The first move of the highest value (values in the moves' order).

    >>> from replay.engine import PASS, DRAW
    >>> _first_best([PASS, DRAW], [1.0, 1.0])
    PASS
    """
    best = max(values)
    return moves[next(i for i, v in enumerate(values) if v >= best - 1e-9)]


#: The search bots' classes by style; the cheaters among them.
SEARCH_STYLES: Final[dict[str, type[SearchBot]]] = {
    b.style: b for b in (SamplerBot, OmniscientBot, PeekerBot, ReaderBot)
}
CHEATS: Final = ("omniscient", "peeker")
_MADE: dict[tuple[str, int], SearchBot] = {}


def search_bot(style: str, samples: int = SEARCH_SAMPLES) -> SearchBot:
    """The bot of `style` scoring `samples` deals a decision (one per process:
    it keeps its solvers)."""
    got = _MADE.get((style, samples))
    if got is None:
        got = _MADE[style, samples] = SEARCH_STYLES[style](samples)
    return got
