"""Hands played by bots in memory, with their public history recorded.

What the calibration measures (bench/belief.py) and the tests replay: no
log, no match, only a deal, the bots of the simulator
(:mod:`replay.bots`, :mod:`replay.searchbots`) and every position.

>>> import random
>>> from replay.rules import resolve
>>> h = play_hand(resolve("international"), ["heavy"] * 4, random.Random(1))
>>> h.final.result in ("domino", "block"), len(h.states) == len(h.recorder.plies)
(True, True)
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from replay.belief.history import Recorder
from replay.bots import Memo
from replay.engine import HandState, act, legal_moves, new_hand
from replay.rules import Rules
from replay.searchbots import SearchBot
from replay.simulate.match import bot_for
from replay.solver import HandContext

__all__ = ["PlayedHand", "deal", "play_hand"]


@dataclass(frozen=True, slots=True)
class PlayedHand:
    """A hand played out: `states[i]` is the position before ply i."""

    start: HandState
    recorder: Recorder
    states: tuple[HandState, ...]
    final: HandState


def deal(rules: Rules, rng: random.Random) -> tuple[list[list[int]], list[int]]:
    """Seven tiles a seat from a shuffled set, and the boneyard (empty unless the game draws)."""
    tiles = list(range(28))
    rng.shuffle(tiles)
    n = rules.players
    hands = [tiles[7 * s : 7 * s + 7] for s in range(n)]
    return hands, tiles[7 * n :] if rules.stock == "draw" else []


def play_hand(rules: Rules, styles: Sequence[str], rng: random.Random, *, samples: int = 8,
              hands: Sequence[Sequence[int]] | None = None, stock: Sequence[int] = (),
              leader: int | None = None) -> PlayedHand:  # fmt: skip
    """One hand of `styles` (a bot style per seat; search bots score `samples`
    deals a decision), from a random deal unless `hands` is given; free lead."""
    if hands is None:
        hands, stock = deal(rules, rng)
    if leader is None:
        leader = rng.randrange(rules.players)
    state = new_hand(rules, hands, leader=leader, stock=stock)
    bots = [bot_for(s, samples) for s in styles]
    rec = Recorder(state)
    ctx = HandContext()
    states = []
    while not state.over:
        moves = legal_moves(state)
        bot = bots[state.turn]
        pub = rec.public()
        if len(moves) == 1:
            mv = moves[0]
        elif isinstance(bot, SearchBot) and state.result is None:
            mv = bot.think(state, moves, rec, ctx, rng)
        else:
            mv = bot.choose(state, moves, Memo(list(pub.shown), list(pub.lacks)), rng)
        states.append(state)
        rec.see(state, mv)
        state = act(state, state.turn, mv)
    return PlayedHand(states[0] if states else state, rec, tuple(states), state)
