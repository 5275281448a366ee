"""The weighted belief: the deals a seat could face, each as likely as the
other seats' observed choices make it.

The sampled grade (docs/analysis.md) draws the deals that agree with the
public history uniformly (:meth:`replay.knowledge.Hidden.sample`, or lists
them all, :meth:`~replay.knowledge.Hidden.enumerate`): play choices tell
nothing there. Here each such deal ``d`` is weighted by

    w(d) = product over the other seats' past plays j of P(move_j | hand_j(d), public_j)

with ``P`` a :class:`replay.belief.model.Policy` (a fitted play model, or a
convention a partner knows) and ``hand_j(d)`` what that seat held at ply j
in deal ``d``: its tiles in ``d`` and those it played from ply j on (the
policy-based inference of Rebstock, Solinas, Buro and Sturtevant, 2019;
bridge programs filter their deals the same way). A deal in which the
partner's lead would have been absurd weighs little.

A play is evidence only where that hand is known in every deal: a seat's
plays before a draw it kept are left out (which of its tiles the draw
brought is hidden). Passes, draws and forced plays weigh every deal alike
(the sampler already keeps only the deals where they were forced).

The effective sample size ``(sum w)^2 / sum w^2`` says how many equally
weighted deals the weights are worth; below `floor` more deals are drawn
(up to `max_deals`). When at most `exact_limit` deals agree, all of them
are weighed (exact weights). Everything is a function of the generator
passed in: deterministic given the seed.

>>> import random
>>> from replay.rules import resolve
>>> from replay.engine import new_hand, apply, legal_moves
>>> from replay.belief.history import Recorder
>>> from replay.tiles import parse_tile as t
>>> hands = [[t(x) for x in h.split()] for h in (
...     "66 65 64 63 62 61 60", "55 54 53 52 51 50 44",
...     "43 42 41 40 33 32 31", "30 22 21 20 11 10 00")]
>>> s = new_hand(resolve("international"), hands, leader=0)
>>> rec = Recorder(s)
>>> mv = legal_moves(s)[-1]; rec.see(s, mv); s = apply(s, mv)     # seat 0 leads 66
>>> b = weighted_belief(s, rec, HEAVY_LEADS, deals=40, rng=random.Random(0))
>>> b.drawn >= 40, 0 < b.ess <= b.drawn, abs(sum(b.weights) - 1) < 1e-9
(True, True, True)
>>> b == weighted_belief(s, rec, HEAVY_LEADS, deals=40, rng=random.Random(0))
True
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Final

import numpy as np

from replay.accel import native
from replay.belief.features import FEATURES, ply_context
from replay.belief.history import Ply, Public, Recorder
from replay.belief.model import PlayModel, Policy, Seated
from replay.engine import DRAW, YIELD, HandState, Move, Play, can_yield, legal_moves
from replay.knowledge import Hidden, World
from replay.tiles import BIT, FULL_SET, N_TILES, iter_tiles

__all__ = ["HEAVY_LEADS", "Belief", "Evidence", "Scorer", "evidence", "exact_draws", "move_deals", "place_of",
           "weighted_belief"]

#: z of a two-sided 95% interval.
_Z95: Final = 1.959964

#: A toy policy for examples: leads heavy tiles (a :class:`PlayModel` on weight alone).
HEAVY_LEADS: Final = PlayModel("example", tuple(4.0 if f == "pips" else 0.0 for f in FEATURES))


@dataclass(frozen=True, slots=True)
class Belief:
    """The deals one seat could face and their weights (summing to 1).

    `exact`: every agreeing deal is here (weights then include how many
    deals each listed one stands for); `drawn`: deals drawn or listed;
    `ess`: their effective sample size; `unknown`: the tiles whose place
    the observer does not know; `prior`: each deal's weight before the
    choices were weighed (how many deals a listed one stands for; 1 for a
    drawn one): the uniform belief on the same deals.
    """

    observer: int
    unknown: int
    worlds: tuple[World, ...]
    weights: tuple[float, ...]
    exact: bool
    drawn: int
    ess: float
    prior: tuple[float, ...] = ()

    def places(self) -> int:
        """Places a tile may be: each seat, the boneyard (index `players`), out of play (`players` + 1)."""
        return len(self.worlds[0][0]) + 2

    def marginals(self) -> np.ndarray:
        """P(tile t is at place p) as a (28, places) array (a known tile: 1 where it is)."""
        n = len(self.worlds[0][0])
        out = np.zeros((N_TILES, n + 2))
        for (hands, stock), w in zip(self.worlds, self.weights, strict=True):
            where = place_of(hands, stock)
            out[np.arange(N_TILES), where] += w
        return out

    def mean_ci(self, values: Sequence[float]) -> tuple[float, tuple[float, float]]:
        """The weighted mean of one value per deal and its 95% interval (the
        mean itself when every deal was weighed), the spread taken over the
        effective sample size."""
        v = np.asarray(values, dtype=float)
        w = np.asarray(self.weights)
        mean = float(w @ v)
        if self.exact or len(v) < 2 or self.ess <= 1:
            return mean, (mean, mean)
        var = float(w @ (v - mean) ** 2) * self.ess / (self.ess - 1)
        half = _Z95 * math.sqrt(var / self.ess)
        return mean, (mean - half, mean + half)

    def resample(self, k: int, rng: random.Random) -> list[World]:
        """`k` deals drawn by weight (systematic resampling): equally weighted
        deals to score when scoring every drawn one costs too much."""
        cum = np.cumsum(self.weights)
        u = rng.random() / k
        picks = np.searchsorted(cum, u + np.arange(k) / k, side="right")
        return [self.worlds[min(int(i), len(self.worlds) - 1)] for i in picks]


def place_of(hands: Sequence[int], stock: Sequence[int]) -> np.ndarray:
    """Each tile's place in one world: a seat, the boneyard (players), or out of play / on the line (players + 1)."""
    n = len(hands)
    where = np.full(N_TILES, n + 1)
    for s, h in enumerate(hands):
        for t in range(N_TILES):
            if h & BIT[t]:
                where[t] = s
    for t in stock:
        if t >= 0:
            where[t] = n
    return where


@dataclass(frozen=True, slots=True)
class Evidence:
    """One past play that weighs the deals: the ply, its place in the hand,
    its seat, and the tiles that seat played from it on (added back to its
    tiles in a deal)."""

    ply: Ply
    index: int
    seat: int
    later: int


def evidence(plies: Sequence[Ply], observer: int, seen: Sequence[int] = ()) -> list[Evidence]:
    """The plays of `plies` that weigh the deals `observer` could face (the
    others' choices: plays and lead yields, none before a draw its seat
    kept); `seen`: seats whose tiles the observer sees (their plays tell it nothing)."""
    out: list[Evidence] = []
    later = [0] * len(plies[0].view.hands) if plies else []
    drew_since = [False] * len(later)
    for i in range(len(plies) - 1, -1, -1):
        ply = plies[i]
        s, mv = ply.seat, ply.move
        if ply.view.result is not None:
            continue
        if type(mv) is Play:
            later[s] |= BIT[mv.tile]
        elif mv is not YIELD:
            # a draw: which tile it brought is hidden; an immediately played one is named by the next ply
            drew_since[s] = drew_since[s] or mv is DRAW
            continue
        if s == observer or s in seen or drew_since[s]:
            continue
        out.append(Evidence(ply, i, s, later[s]))
    out.reverse()
    return out


def weighted_belief(
    state: HandState, recorder: Recorder, policy: Policy | None, *, deals: int = 20, rng: random.Random,
    floor: float | None = None, max_deals: int | None = None, exact_limit: int | None = None,
    observer: int | None = None, peek: Sequence[int] = (), memo: dict[tuple[int, int], float] | None = None,
    sweeps: int = 0, temper: float = 1.0, first: Sequence[World] = (),
) -> Belief:  # fmt: skip
    """The belief of `observer` (default: the seat to move in `state`) at
    `state`, the position the `recorder` has seen every move up to.

    `policy`: how the other seats choose (None: choices tell nothing, the
    uniform belief); `deals`: deals drawn at first; `floor`: the effective
    sample size below which more are drawn (default `deals` / 2), `deals`
    at a time, up to `max_deals` (default 8 x `deals`); `exact_limit`: list
    and weigh every agreeing deal when there are at most that many (default
    `max_deals`); `peek`: seats whose tiles the observer sees too; `memo`:
    the log-probabilities of past plays already worked out, by (ply, hand)
    (pass one dict to every decision of a hand, with one policy, observer
    and `temper`, so that a play is scored once per hand it could have come from);
    `sweeps`: move the weighted deals towards the belief by Metropolis swaps
    (:func:`_moved`, games without a boneyard): the deals come back equally
    weighted, as many as were drawn; `ess` stays that of the weights before;
    `temper`: the likelihood raised to this power (below 1: a model trusted
    less than its own word, against the overconfidence of one model for
    many players); `first`: deals already drawn uniformly among those that
    agree (a seat's deals carried from its previous decision,
    :mod:`replay.analysis.carry`), taken as the first of the first draw.
    """
    seat = state.turn if observer is None else observer
    floor = deals / 2 if floor is None else floor
    max_deals = 8 * deals if max_deals is None else max_deals
    exact_limit = max_deals if exact_limit is None else exact_limit
    hidden = recorder.hidden(state, seat, peek)
    ev = [] if policy is None else evidence(recorder.plies, seat, peek)
    score = Scorer(policy, ev, {} if memo is None else memo, temper)
    listed = hidden.enumerate(exact_limit)
    if listed is not None:
        worlds = [w for w, _ in listed]
        base = np.array([float(c) for _, c in listed])
        logw = np.log(base) + np.array([score(w) for w in worlds])
        return _belief(seat, hidden.unknown, worlds, logw, True, tuple(float(c) for _, c in listed))
    worlds = []
    logs: list[float] = []
    while True:
        got = list(first[:deals]) + hidden.sample(deals - min(len(first), deals), rng)
        first = ()
        worlds.extend(got)
        logs.extend(score(w) for w in got)
        b = _belief(seat, hidden.unknown, worlds, np.array(logs), False)
        if b.ess >= floor or len(worlds) + deals > max_deals or policy is None:
            break
    if sweeps and policy is not None and b.ess < len(worlds):
        return _moved(hidden, b, score, sweeps, rng) or b
    return b


def _belief(seat: int, unknown: int, worlds: list[World], logw: np.ndarray, exact: bool,
            prior: tuple[float, ...] | None = None) -> Belief:  # fmt: skip
    w = np.exp(logw - logw.max())
    w /= w.sum()
    # deals that all weigh the same (no play seen tells them apart: a hand's
    # lead) are an effective sample of all of them, exactly; 1 / (w @ w) gives
    # 19.999999999999993 for 20, which is below a floor of 20, and a read
    # then drew and moved a second set of deals for nothing
    ess = float(len(worlds)) if len(worlds) and logw.min() == logw.max() else 1.0 / float(w @ w)
    got = (1.0,) * len(worlds) if prior is None else prior
    return Belief(seat, unknown, tuple(worlds), tuple(float(x) for x in w), exact, len(worlds), ess, got)


class Scorer:
    """log P(the observed plays | a world), remembered by (ply, hand)."""

    def __init__(self, policy: Policy | None, ev: Sequence[Evidence], memo: dict[tuple[int, int], float],
                 temper: float = 1.0) -> None:  # fmt: skip
        self.policy = policy
        self.memo = memo
        self.temper = temper
        self.by_seat: dict[int, list[Evidence]] = {}
        for e in ev:
            self.by_seat.setdefault(e.seat, []).append(e)
        # the plies whose moves the C twin makes from the hand: (coef, context, move code, may yield)
        self.fast: dict[int, tuple[tuple[float, ...], tuple[int, ...], int, bool]] = {}
        if native is not None and type(policy) in _LINEAR:
            for e in ev:
                v, mv = e.ply.view, e.ply.move
                code = mv.tile * 2 + mv.end if type(mv) is Play else -1 if mv is YIELD else None
                if code is not None and v.must_play < 0 and v.result is None and v.opening < 0:
                    coef = policy.coef_at(e.seat)  # type: ignore[union-attr]
                    self.fast[e.index] = (coef, ply_context(v, e.ply.public), code, can_yield(v))

    def seat(self, seat: int, hand: int) -> float:
        """The log-probability of `seat`'s observed plays if it holds `hand` now."""
        total = 0.0
        memo = self.memo
        for e in self.by_seat.get(seat, ()):
            h = (hand | e.later) & FULL_SET
            key = (e.index, h)
            got = memo.get(key)
            if got is None:
                fast = self.fast.get(e.index)
                if fast is not None:
                    lp = native.play_logp(fast[0], fast[1], h, None, fast[2], fast[3])  # type: ignore[union-attr]
                else:
                    lp = _log_prob(self.policy, e.ply.view, e.seat, h, e.ply.move, e.ply.public)
                got = memo[key] = self.temper * lp
            total += got
        return total

    def __call__(self, world: World) -> float:
        if self.policy is None:
            return 0.0
        hands = world[0]
        return sum(self.seat(s, hands[s]) for s in self.by_seat)


def _moved(hidden: Hidden, belief: Belief, score: Scorer, sweeps: int, rng: random.Random) -> Belief | None:
    """The belief's deals resampled by weight, then moved by :func:`_sweep`
    (None where deals cannot be moved)."""
    got = _sweep(hidden, belief.resample(len(belief.worlds), rng), score, sweeps, rng)
    if got is None:
        return None
    k = len(got)
    return Belief(belief.observer, belief.unknown, tuple(got), (1.0 / k,) * k, False, belief.drawn, belief.ess,
                  (1.0,) * k)  # fmt: skip


def move_deals(state: HandState, recorder: Recorder, policy: Policy, worlds: Sequence[World], *, sweeps: int,
               rng: random.Random, observer: int | None = None, peek: Sequence[int] = (),
               memo: dict[tuple[int, int], float] | None = None, temper: float = 1.0) -> list[World] | None:  # fmt: skip
    """`worlds` (deals drawn by weight from a belief of the same arguments,
    :func:`weighted_belief`) moved by `sweeps` Metropolis sweeps towards the
    weighted belief (:func:`_sweep`): equally weighted deals of it, fewer
    repeated than a resample's. None where deals cannot be moved (a
    boneyard, more than one way the history may lie)."""
    seat = state.turn if observer is None else observer
    hidden = recorder.hidden(state, seat, peek)
    score = Scorer(policy, evidence(recorder.plies, seat, peek), {} if memo is None else memo, temper)
    return _sweep(hidden, worlds, score, sweeps, rng)


def exact_draws(state: HandState, recorder: Recorder, policy: Policy, k: int, rng: random.Random, *,
                limit: int, peek: Sequence[int] = (), memo: dict[tuple[int, int], float] | None = None,
                ) -> tuple[list[World], float] | None:  # fmt: skip
    """`k` deals drawn from the exactly weighed belief of the seat to move
    (every agreeing deal weighed by the others' plays; systematic
    resampling) and the weights' effective sample size; None where the
    agreeing deals are more than `limit`, or are not a filling of at most
    three places (one way the history may lie, no boneyard order, no
    five-doubles rule: :meth:`replay.knowledge.Hidden.enumerate` then).

    A deal's weight is a product, one factor a place (its seat's plays
    given the tiles the deal puts there), so each place's possible hands
    are scored once, and the deals are the disjoint triples of them: a
    few hundred model calls and one array pass, where listing and scoring
    every deal would make each one in Python.

    >>> import random
    >>> from replay.rules import resolve
    >>> from replay.engine import new_hand, apply, legal_moves
    >>> from replay.tiles import parse_tile as t
    >>> hands = [[t(x) for x in h.split()] for h in (
    ...     "66 65 64 63 62 61 60", "55 54 53 52 51 50 44",
    ...     "43 42 41 40 33 32 31", "30 22 21 20 11 10 00")]
    >>> s = new_hand(resolve("international"), hands, leader=0, opening=t("66"))
    >>> rec = Recorder(s, fixed_by="double_six")
    >>> for _ in range(8):
    ...     mv = legal_moves(s)[0]; rec.see(s, mv); s = apply(s, mv)
    >>> exact_draws(s, rec, HEAVY_LEADS, 5, random.Random(1), limit=10) is None   # 4 x 10^5 deals agree
    True
    >>> deals, ess = exact_draws(s, rec, HEAVY_LEADS, 5, random.Random(1), limit=10**6)
    >>> len(deals), all(d[0][s.turn] == s.hands[s.turn] for d in deals), ess > 5
    (5, True, True)
    """
    seat = state.turn
    hidden = recorder.hidden(state, seat, peek)
    if len(hidden.options) != 1 or hidden.max_doubles < 7 or hidden.count() > limit:
        return None
    groups = [g for g in hidden.options[0] if g.count]
    if any(g.weight != 1 or g.seat == -1 for g in groups) or not 1 <= len(groups) <= 3:
        return None
    score = Scorer(policy, evidence(recorder.plies, seat, peek), {} if memo is None else memo)
    everything = hidden.unknown
    sets: list[tuple[np.ndarray, np.ndarray]] = []  # each place: its possible tiles (masks) and their log-weight
    for g in groups:
        masks = [sum(c) for c in combinations([BIT[t] for t in iter_tiles(everything & ~g.forbid)], g.count)]
        logs = [score.seat(g.seat, hidden.known[g.seat] | m) if g.seat >= 0 else 0.0 for m in masks]
        order = np.argsort(np.array(masks, dtype=np.int64), kind="stable")
        sets.append((np.array(masks, dtype=np.int64)[order], np.array(logs)[order]))
    last_masks, last_logs = sets[-1]
    if not len(last_masks) or any(not len(m) for m, _ in sets):
        return None
    # the deals as (first, middle, last) place indices; one or two places: a first (and middle) of nothing
    none = (np.zeros(1, dtype=np.int64), np.zeros(1))
    first = sets[0] if len(sets) == 3 else none
    mid = sets[-2] if len(sets) >= 2 else none
    picks_a, picks_b, picks_c, logw = [], [], [], []
    step = max(1, (1 << 20) // len(mid[0]))  # first-place hands a chunk: about a million pairs
    for lo in range(0, len(first[0]), step):
        a = first[0][lo : lo + step]
        ia, ib = np.nonzero((a[:, None] & mid[0][None, :]) == 0)  # disjoint pairs, in the first's order
        rest = everything & ~a[ia] & ~mid[0][ib]  # the last place's tiles, if it may hold them
        at = np.minimum(np.searchsorted(last_masks, rest), len(last_masks) - 1)
        ok = last_masks[at] == rest
        picks_a.append(ia[ok] + lo)
        picks_b.append(ib[ok])
        picks_c.append(at[ok])
        logw.append(first[1][ia[ok] + lo] + mid[1][ib[ok]] + last_logs[at[ok]])
    lw = np.concatenate(logw)
    if not len(lw):
        return None
    cols = [np.concatenate(picks_a), np.concatenate(picks_b), np.concatenate(picks_c)]
    w = np.exp(lw - lw.max())
    w /= w.sum()
    ess = float(1.0 / (w @ w))
    places = [(-3, none[0])] * (3 - len(sets)) + [(g.seat, m) for g, (m, _) in zip(groups, sets, strict=True)]
    out: list[World] = []
    cum = np.cumsum(w)
    u = rng.random() / k
    for i in np.searchsorted(cum, u + np.arange(k) / k, side="right"):
        j = min(int(i), len(lw) - 1)
        hands = list(hidden.known)
        for (seat_, masks), col in zip(places, cols, strict=True):
            if seat_ >= 0:
                hands[seat_] |= int(masks[col[j]])
        out.append((tuple(hands), ()))
    return out, ess


def _sweep(hidden: Hidden, worlds: Sequence[World], score: Scorer, sweeps: int, rng: random.Random) -> list[World] | None:
    """Each deal of `worlds` moved by Metropolis swaps of two hidden tiles
    between two places (each swap kept with probability min(1, likelihood
    ratio)): `sweeps` x the hidden tiles' count swaps a deal. Swaps keep
    every place's count and what each place may not hold, and the deals
    agreeing with the history are equally likely, so deals drawn from the
    weighted belief stay drawn from it and spread out. Only where a deal
    is a filling of places (one way the history may lie, no boneyard order,
    no five-doubles rule): None elsewhere."""
    if len(hidden.options) != 1 or hidden.max_doubles < 7 or any(stock for _, stock in worlds):
        return None
    groups = hidden.options[0]
    if any(g.weight != 1 or (g.seat == -1 and g.count) for g in groups):
        return None
    group_of_seat = {g.seat: i for i, g in enumerate(groups) if g.seat >= 0}
    out_group = next((i for i, g in enumerate(groups) if g.seat == -2), -1)
    tiles = hidden.tiles()
    if len(tiles) < 2:
        return None
    moved: list[World] = []
    n = len(tiles)
    bits = [BIT[t] for t in tiles]
    forbid = [g.forbid for g in groups]
    seat_of = [g.seat for g in groups]
    # the loop below runs sweeps x tiles times a deal, tens of thousands of times a hand:
    # its look-ups are bound to locals, and each seat's log-likelihood as its hand is
    # now is kept as swaps are taken (the same numbers: Scorer remembers them)
    pick, uniform, lik = rng.randrange, rng.random, score.seat
    for hands0, _ in worlds:
        hands = list(hands0)
        place = []
        for t in tiles:
            g = next((group_of_seat[s] for s in group_of_seat if hands[s] & BIT[t]), out_group)
            place.append(g)
        now = {s: lik(s, hands[s]) for s in group_of_seat}
        for _ in range(sweeps * n):
            i, j = pick(n), pick(n)
            gi, gj = place[i], place[j]
            if gi == gj or forbid[gj] & bits[i] or forbid[gi] & bits[j]:
                continue
            si, sj = seat_of[gi], seat_of[gj]
            swap = bits[i] ^ bits[j]
            if si >= 0:
                hi = hands[si] ^ swap
                li = lik(si, hi)
                delta = li - now[si]
            else:
                delta = 0.0
            if sj >= 0:
                hj = hands[sj] ^ swap
                lj = lik(sj, hj)
                delta += lj - now[sj]
            if delta >= 0 or uniform() < math.exp(delta):
                if si >= 0:
                    hands[si], now[si] = hi, li
                if sj >= 0:
                    hands[sj], now[sj] = hj, lj
                place[i], place[j] = gj, gi
        moved.append((tuple(hands), ()))
    return moved


#: The policies whose probabilities are a conditional logit over FEATURES (``coef_at``).
_LINEAR: Final = (PlayModel, Seated)


def _log_prob(policy: Policy | None, view: HandState, seat: int, hand: int, move: Move, public: Public) -> float:
    if policy is None:
        return 0.0
    hands = list(view.hands)
    hands[seat] = hand
    state = view._replace(hands=tuple(hands))
    moves = legal_moves(state)
    if len(moves) < 2 or move not in moves:
        return 0.0
    if native is not None and type(policy) in _LINEAR:  # the C twin: the same double, many times faster
        codes = tuple(m.tile * 2 + m.end if type(m) is Play else -1 if m is YIELD else -2 for m in moves)
        coef = policy.coef_at(seat)  # type: ignore[attr-defined]
        return float(native.play_logp(coef, ply_context(state, public), hand, codes, moves.index(move)))
    p = policy.probs(state, moves, public)
    if p is None:
        return 0.0
    return math.log(max(p[moves.index(move)], 1e-12))
