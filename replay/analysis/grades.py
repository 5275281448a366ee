"""Hand analysis: the value of every move, exactly and as the player could know it.

For every decision of a finished, valid hand:

- ``dd``: the exact value of each legal alternative under perfect play by
  everyone, the deal (and boneyard order) known (:mod:`replay.solver`);
- ``pimc``: its mean value over deals that agree with everything the
  mover could know (:mod:`replay.knowledge`), every alternative scored
  on the same deals, with a 95% interval; all of them when there are few
  (then the interval is the mean itself): play choices tell nothing;
- ``read``, where the store holds a play model for the profile's family
  that beats "every legal move alike" on held-out hands: its mean over
  the same deals (and more, drawn while the weights leave too few)
  weighted by how likely the other seats' observed plays were in each
  (:mod:`replay.belief`): what a strong reader could know;
- the points the played move lost against the best alternative, each
  way, a class by the points lost on what the player could know (read
  where there is one, else pimc: inaccuracy ``?!``, mistake ``?``,
  blunder ``??``; "too close to call" where the loss's interval leaves
  the class open), and the player's accuracy over the hand:
  ``100 * (1 - lost / at stake)``, where a decision puts at stake the
  gap between its best and its worst alternative (docs/analysis.md works
  an example).

The hand's *par* is the value at its first decision, from the side of the
seat that makes it; its *result* is what the hand scored, from the same
side. All values are points from the mover's side as
:func:`replay.solver.points_value` defines them.

Everything is deterministic given the seed: each decision's deals are
drawn from a generator seeded by (seed, match, hand, ply).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from replay.analysis.carry import Carried, laid_move
from replay.belief.history import Recorder
from replay.belief.model import Policy, family, seated
from replay.belief.weights import Belief, exact_draws, move_deals, weighted_belief
from replay.engine import (
    LEFT,
    PLAYS,
    HandState,
    IllegalMoveError,
    Move,
    Play,
    apply,
    legal_moves,
    new_hand,
)
from replay.findings import MatchReport
from replay.knowledge import Tracker, World
from replay.match import HandScore, MatchState, first_hand_lead, new_match, next_lead
from replay.moves import label as move_label
from replay.rules import Rules, resolve
from replay.solver import (
    SOLVER_VERSION,
    HandContext,
    Solver,
    final_value,
    hand_args,
    make_solver,
    move_values,
    position,
)
from replay.store.replay_blob import unpack_replay
from replay.store.rows import SCHEMAS
from replay.tiles import HIGH

__all__ = [
    "ANALYSIS_VERSION",
    "CLASSES",
    "Alternative",
    "HandAnalysis",
    "HandInput",
    "Ply",
    "held_by",
    "ReadDeals",
    "read_moved",
    "Analyzer",
    "classify",
    "engine_move",
    "inputs_from_replay",
    "inputs_from_report",
]

#: The version stored with every analysis row: the solver's, and that of the
#: sampling and grading here. A store's rows of another version are redone.
#: 6 (2026-12-05): the histories of a seat's draws that leave it the same
#: groups are one option, counted (replay.knowledge), so the deals drawn
#: from the same distribution come out in another order in boneyard games.
ANALYSIS_VERSION: Final = SOLVER_VERSION * 100 + 6

#: Decisions whose agreeing deals (fillings and boneyard orders) are at most
#: this many are graded on every one of them, weighed, instead of a sample:
#: exact, with no sampling noise. About a fifth of the decisions of a
#: 4-seat hand, nearly all near its end, where a deal costs a few hundred
#: positions (docs/analysis.md measures the share and the cost).
EXACT_LIMIT: Final = 1000

#: A hand's analysis cost, against a pair game's, where four players each
#: play for himself: every other seat is searched as one coalition against
#: the mover, once per viewer (sample_logs/: 383 ms a hand of royal_rumble
#: against 10 ms of the 4-seat pair games, perfect information). Ingest
#: weighs its batches by it, so that these hands are spread over them.
PARANOID_WEIGHT: Final = 32


def analysis_weight(rules: Rules) -> int:
    """How many pair-game hands one hand under `rules` costs to analyse,
    roughly: :data:`PARANOID_WEIGHT` with four individual players, else 1
    (three players or two cost about what four in pairs do).

    >>> [analysis_weight(resolve(p)) for p in ("international", "pr_3p", "royal_rumble")]
    [1, 1, 32]
    """
    return PARANOID_WEIGHT if rules.players == 4 and rules.teams == "individual" else 1


#: Default number of sampled deals per decision.
SAMPLES: Final = 100

#: The read grade draws more deals (`samples` at a time, up to this many
#: times `samples`) while the weights leave an effective sample below
#: :data:`READ_FLOOR` times `samples`; below :data:`READ_MIN_ESS` the
#: decision is too close to call. The draws, weighted, set how much of the
#: belief lies where (a sharp model's belief has parts that two-tile swaps
#: rarely cross): with a floor of half the deals and 4 x at most, the moved
#: deals kept too much of the uniform belief's proportions (docs/belief.md,
#: "How far the deals are moved").
READ_MAX_FACTOR: Final = 8
READ_FLOOR: Final = 1.0
READ_MIN_ESS: Final = 10.0

#: The deals a read is scored on, drawn by weight, are then moved by this
#: many Metropolis sweeps towards the weighted belief
#: (:func:`replay.belief.weights.move_deals`): a sharp play model leaves
#: few deals with weight, and a resample repeats them; moved, they spread
#: over the belief (docs/belief.md, "Moved deals"). Two sweeps (with the
#: old floor) left the deals about 7% of the way back towards the uniform
#: belief on the partner's tiles (docs/belief.md, "How far the deals are
#: moved"): an honest reader then drifted on the cheat signals.
READ_SWEEPS: Final = 8

#: A read whose agreeing deals are at most this many (and more than
#: :data:`EXACT_LIMIT`, which are all scored) weighs every one of them and
#: draws the deals it scores from those exact weights. Near a hand's end
#: the play model leaves few deals with weight among thousands: drawn
#: uniformly, 80 deals had an effective sample of about 4, and the deals
#: picked and moved from them gave the partner's tiles' true places 0.013
#: less probability than the exact belief (0.523 against 0.537; about a
#: tenth of the model's gain over uniform there: docs/belief.md, "Late in
#: the hand"), which an honest reader kept as hindsight.
READ_ENUM_LIMIT: Final = 30_000

#: Points lost (on what the mover could know) from which a move is an
#: inaccuracy, a mistake, a blunder; by scoring (milo hands are worth 1 or 2).
THRESHOLDS: Final[Mapping[str, tuple[float, float, float]]] = {
    "pips": (5.0, 10.0, 20.0),
    "royal_rumble": (5.0, 10.0, 20.0),
    "milo": (0.1, 0.25, 0.5),
}
#: The classes, worst last, with their signs.
CLASSES: Final = (("inaccuracy", "?!"), ("mistake", "?"), ("blunder", "??"))

#: z for a two-sided 95% interval of a mean of many deals (normal approximation).
_Z95: Final = 1.959964


# -- what a hand needs -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HandInput:
    """One hand as the analysis reads it, from a validation report or the store.

    `moves`: (seat, kind, tile, end) per ply, kind ``play``/``pass``/
    ``draw``/``yield``, tile -1 where none, end ``left``/``right``/None.
    `skip`: why the hand cannot be analysed (None if it can). `players`:
    who held each seat (empty where not known): the read grade weighs a
    seat's plays by its player's own play model where it has one.
    """

    match: str
    hand: int
    rules: Rules
    dealt: tuple[tuple[int, ...], ...]
    stock: tuple[int, ...]
    leader: int
    opening: int
    fixed_by: str
    context: HandContext
    moves: tuple[tuple[int, str, int, str | None], ...]
    skip: str | None = None
    players: tuple[str | None, ...] = ()


@dataclass(frozen=True, slots=True)
class Alternative:
    """One legal move with its values from the mover's side."""

    move: str
    dd: int
    pimc: float | None = None
    pimc_ci: tuple[float, float] | None = None
    read: float | None = None
    read_ci: tuple[float, float] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "move": self.move,
            "dd": self.dd,
            "pimc": _r4(self.pimc),
            "pimc_ci": None if self.pimc_ci is None else [round(x, 4) for x in self.pimc_ci],
            "read": _r4(self.read),
            "read_ci": None if self.read_ci is None else [round(x, 4) for x in self.read_ci],
        }


def _r4(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


@dataclass(frozen=True, slots=True)
class Ply:
    """One decision (or forced move) of a hand, graded."""

    ply: int
    seat: int
    played: str
    forced: bool
    alternatives: tuple[Alternative, ...]
    dd_loss: int
    pimc_loss: float | None
    cls: str | None
    samples: int = 0  # deals scored (0: forced, or no sampling)
    exact: bool = False  # every agreeing deal was scored
    on_line: int = 0  # tiles on the line before the move
    read_loss: float | None = None
    read_ess: float | None = None  # the weighted deals' effective sample size
    cls_uniform: str | None = None  # the class on pimc alone (where the class follows read)
    close: bool = False  # too close to call: the loss reaches a class, its evidence does not

    @property
    def dd(self) -> int:
        """The played move's exact value."""
        return next(a.dd for a in self.alternatives if a.move == self.played)

    @property
    def dd_best(self) -> int:
        return max(a.dd for a in self.alternatives)

    @property
    def pimc(self) -> float | None:
        return next(a.pimc for a in self.alternatives if a.move == self.played)

    @property
    def read(self) -> float | None:
        return next(a.read for a in self.alternatives if a.move == self.played)

    @property
    def known_loss(self) -> float | None:
        """The points lost on what the mover could know: by read where there is one, else pimc."""
        return self.read_loss if self.read_loss is not None else self.pimc_loss

    def stakes(self, how: str) -> tuple[float, float]:
        """(points lost, points at stake) of this decision: ``dd``, ``pimc``,
        or ``known`` (read where there is one, else pimc)."""
        if self.forced:
            return 0.0, 0.0
        if how == "known":
            how = "read" if self.read_loss is not None else "pimc"
        vals = [a.dd if how == "dd" else a.read if how == "read" else a.pimc for a in self.alternatives]
        if any(v is None for v in vals):
            return 0.0, 0.0
        got = [float(v) for v in vals if v is not None]
        loss = {"dd": self.dd_loss, "pimc": self.pimc_loss, "read": self.read_loss}[how]
        return float(loss or 0.0), max(got) - min(got)

    def to_json(self) -> dict[str, Any]:
        return {
            "ply": self.ply,
            "seat": self.seat,
            "played": self.played,
            "forced": self.forced,
            "alternatives": [a.to_json() for a in self.alternatives],
            "dd_loss": self.dd_loss,
            "pimc_loss": None if self.pimc_loss is None else round(self.pimc_loss, 4),
            "read_loss": _r4(self.read_loss),
            "read_ess": None if self.read_ess is None else round(self.read_ess, 1),
            "class": self.cls,
            "class_uniform": self.cls_uniform,
            "too_close": self.close,
            "samples": self.samples,
            "exact": self.exact,
        }


@dataclass(frozen=True, slots=True)
class HandAnalysis:
    """A hand graded: par and result by seat, every ply, accuracy by seat."""

    match: str
    hand: int
    version: int = ANALYSIS_VERSION
    samples: int = 0
    seed: int = 0
    skip: str | None = None
    leader: int = 0  # the seat of the hand's first decision (par's side)
    par: tuple[int, ...] = ()  # by seat
    result: tuple[int, ...] = ()  # by seat
    plies: tuple[Ply, ...] = ()
    lost: tuple[float, ...] = ()  # by seat, on what each could know (read, else pimc; dd without sampling)
    stake: tuple[float, ...] = ()
    lost_dd: tuple[float, ...] = ()
    stake_dd: tuple[float, ...] = ()
    lost_uniform: tuple[float, ...] = ()  # by seat, on pimc alone (as lost where no read)
    stake_uniform: tuple[float, ...] = ()
    read_model: str | None = None  # the play model the read grade weighed by ("family:version")

    @property
    def accuracy(self) -> tuple[float | None, ...]:
        return tuple(accuracy(lo, st) for lo, st in zip(self.lost, self.stake, strict=True))

    @property
    def accuracy_dd(self) -> tuple[float | None, ...]:
        return tuple(accuracy(lo, st) for lo, st in zip(self.lost_dd, self.stake_dd, strict=True))

    @property
    def accuracy_uniform(self) -> tuple[float | None, ...]:
        return tuple(accuracy(lo, st) for lo, st in zip(self.lost_uniform, self.stake_uniform, strict=True))

    def to_json(self) -> dict[str, Any]:
        if self.skip is not None:
            return {"hand": self.hand, "par": None, "plies": [], "skipped": self.skip}
        return {
            "hand": self.hand,
            "par": self.par[self.leader],
            "result": self.result[self.leader],
            "first_seat": self.leader,
            "par_by_seat": list(self.par),
            "result_by_seat": list(self.result),
            "accuracy": [None if a is None else round(a, 2) for a in self.accuracy],
            "accuracy_dd": [None if a is None else round(a, 2) for a in self.accuracy_dd],
            "accuracy_uniform": [None if a is None else round(a, 2) for a in self.accuracy_uniform],
            "read_model": self.read_model,
            "plies": [p.to_json() for p in self.plies],
        }


def accuracy(lost: float, stake: float) -> float | None:
    """``100 * (1 - lost / stake)``; None when nothing was at stake.

    >>> accuracy(6.0, 40.0), accuracy(0.0, 0.0)
    (85.0, None)
    """
    if stake <= 1e-9:
        return None
    return max(0.0, 100.0 * (1.0 - lost / stake))


def classify(rules: Rules, loss: float | None) -> str | None:
    """The class of a move that lost `loss` points (None: a good move).

    >>> from replay.rules import resolve
    >>> classify(resolve("international"), 12), classify(resolve("milo"), 0.3)
    ('mistake', 'mistake')
    """
    if loss is None:
        return None
    got = None
    for (name, _), limit in zip(CLASSES, THRESHOLDS[rules.scoring], strict=True):
        if loss >= limit - 1e-9:
            got = name
    return got


def engine_move(state: HandState, kind: str, tile: int, end: str | None) -> tuple[Move, Move]:
    """The engine's move for a logged one: as the alternatives name it (the
    first tile, and any tile on equal ends, on the left), and as it is
    applied (on the side the log laid it, so that later ends match).
    """
    laid = laid_move(kind, tile, end)
    if type(laid) is not Play:
        return laid, laid
    if state.left < 0 or state.left == state.right:  # one move either way: named on the left
        return PLAYS[tile][LEFT], laid
    return laid, laid


def decision_rng(seed: int, match: str, hand: int, ply: int) -> random.Random:
    """The generator of one decision's sampled deals: a function of (seed, match, hand, ply)."""
    digest = hashlib.sha256(f"{seed}|{match}|{hand}|{ply}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


# -- the analysis -------------------------------------------------------------------


@dataclass
class Analyzer:
    """Grades hands of one rules value (or any: solvers are kept per rules).

    `samples`: deals per decision (0: the perfect-information grade only);
    `seed`: the sampling's seed; `exact_limit`: up to how many agreeing
    deals a decision is graded on all of them (never fewer than `samples`);
    `policies`: by family of profiles (:func:`replay.belief.family`), the
    play model the read grade weighs deals by, with its name (only models
    that beat uniform on held-out hands belong here); `carry`: a seat's
    sampled deals carried to its next decision where they still agree
    (:mod:`replay.analysis.carry`), fresh ones drawn for the rest.
    """

    samples: int = SAMPLES
    seed: int = 0
    exact_limit: int = EXACT_LIMIT
    pure: bool = False
    policies: Mapping[str, tuple[str, Policy]] = field(default_factory=dict)
    carry: bool = True
    carried: list[int] = field(default_factory=lambda: [0, 0])  # deals carried, deals tried (benches read it)
    _solvers: dict[Rules, tuple[Solver, Solver]] = field(default_factory=dict)

    def policy(self, rules: Rules) -> tuple[str, Policy] | None:
        """The named play model the read grade of a hand of `rules` uses (None: no read grade)."""
        if self.samples <= 0:
            return None
        return self.policies.get(family(rules))

    def solvers(self, rules: Rules) -> tuple[Solver, Solver]:
        got = self._solvers.get(rules)
        if got is None:
            got = self._solvers[rules] = (
                make_solver(rules, pure=self.pure),
                make_solver(rules, pure=self.pure),
            )
        return got

    def hand(self, inp: HandInput) -> HandAnalysis:
        """The analysis of one hand (or why there is none)."""
        base = HandAnalysis(inp.match, inp.hand, samples=self.samples, seed=self.seed)
        if inp.skip is not None:
            return _skipped(base, inp.skip)
        r = inp.rules
        n = r.players
        try:
            state = new_hand(r, [list(h) for h in inp.dealt], leader=inp.leader, opening=inp.opening, stock=inp.stock)
        except ValueError as exc:
            return _skipped(base, f"the deal cannot be replayed: {exc}")
        dd_solver, pi_solver = self.solvers(r)
        dd_solver.clear()
        ctx = inp.context
        named = self.policy(r)
        if named is not None:
            named = (named[0], seated(named[1], inp.players))
        tracker = Tracker(state, fixed_by=inp.fixed_by) if named is None else Recorder(state, fixed_by=inp.fixed_by)
        # the plays' log-probabilities by (ply, hand then): the same whoever looks, so one for the hand
        memo: dict[tuple[int, int], float] = {}
        carried = Carried(inp.moves, self.carried) if self.carry and self.samples > 0 else None
        first_seat = state.turn
        start = state
        plies: list[Ply] = []
        for k, (seat, kind, tile, end) in enumerate(inp.moves, 1):
            if state.over:
                return _skipped(base, f"ply {k}: a move after the hand was over")
            if seat != state.turn:
                return _skipped(base, f"ply {k}: seat {seat} moved out of turn")
            try:
                move, laid = engine_move(state, kind, tile, end)
            except (IndexError, TypeError):
                return _skipped(base, f"ply {k}: not a tile")
            legal = legal_moves(state)
            if move not in legal:
                return _skipped(base, f"ply {k}: {move_label(move)} is not legal")
            plies.append(self._grade(k, state, move, legal, tracker, ctx, dd_solver, pi_solver, inp,
                                     named, memo, carried))  # fmt: skip
            tracker.see(state, move)
            try:
                state = apply(state, laid)
            except IllegalMoveError as exc:  # pragma: no cover - legal_moves said it was legal
                return _skipped(base, f"ply {k}: {exc}")
        if state.result is None:
            return _skipped(base, "the hand's moves stop before it is over")
        firsts: dict[int, int] = {}  # each seat's best value at its first decision
        for p in plies:
            firsts.setdefault(p.seat, p.dd_best)
        par = _par(dd_solver, start, ctx, firsts)
        result = tuple(final_value(state, ctx, s) for s in range(n))
        sums = [[0.0] * n for _ in range(6)]
        for p in plies:
            for i, how in ((0, "known"), (2, "dd"), (4, "pimc")):
                lost, stake = p.stakes(how)
                sums[i][p.seat] += lost
                sums[i + 1][p.seat] += stake
        if self.samples <= 0:  # no sampling: what the player could know is graded as perfect information
            sums[0], sums[1] = sums[2], sums[3]
            sums[4], sums[5] = sums[2], sums[3]
        return HandAnalysis(
            inp.match, inp.hand, ANALYSIS_VERSION, self.samples, self.seed, None, first_seat,
            par, result, tuple(plies), tuple(sums[0]), tuple(sums[1]), tuple(sums[2]), tuple(sums[3]),
            tuple(sums[4]), tuple(sums[5]), None if named is None else named[0],
        )  # fmt: skip

    def _grade(self, k: int, state: HandState, move: Move, legal: tuple[Move, ...], tracker: Tracker,
               ctx: HandContext, dd_solver: Solver, pi_solver: Solver, inp: HandInput,
               named: tuple[str, Policy] | None = None, memo: dict[tuple[int, int], float] | None = None,
               carried: Carried | None = None) -> Ply:  # fmt: skip
        seat = state.turn
        forced = len(legal) == 1
        if state.result is not None:  # the closing passes or draw of a block: the value is decided
            v = final_value(state, ctx, seat)
            dd = [(legal[0], v)]
        else:
            dd = list(move_values(dd_solver, state, ctx))
        labels = [move_label(m) for m, _ in dd]
        played = move_label(move)
        best = max(v for _, v in dd)
        dd_played = next(v for m, v in dd if m == move)
        pimc: list[tuple[float, tuple[float, float]]] | None = None
        read: list[tuple[float, tuple[float, float]]] | None = None
        pimc_loss = read_loss = read_ess = None
        sure = sure_read = 0.0
        n_deals, exact = 0, False
        mine = labels.index(played)
        if not forced and self.samples > 0 and state.result is None:
            rng = decision_rng(self.seed, inp.match, inp.hand, k)
            weights: list[float]
            if named is None or not isinstance(tracker, Recorder):
                rows, counts, exact = self._pimc(state, tracker, ctx, pi_solver, rng, carried=carried, ply=k)
                weights = [float(c) for c in counts]
            else:
                rows, weights, exact, rrows, wread, ess = self._read(state, tracker, ctx, pi_solver, rng, named[1],
                                                                     memo, carried, k)  # fmt: skip
                read, read_loss, sure_read = _grade_by(rrows, mine, lambda v: _weighted_ci(v, wread, ess, exact))
                read_ess = ess
            n_deals = len(rows)
            pimc, pimc_loss, sure = _grade_by(rows, mine, lambda v: _mean_ci(v, weights, exact))
        alts = tuple(
            Alternative(lab, v, None if pimc is None else pimc[i][0], None if pimc is None else pimc[i][1],
                        None if read is None else read[i][0], None if read is None else read[i][1])
            for i, (lab, (_, v)) in enumerate(zip(labels, dd, strict=True))
        )  # fmt: skip
        dd_loss = best - dd_played
        r = state.rules
        cls_uniform = None if forced else classify(r, sure if pimc is not None else float(dd_loss))
        cls, close = cls_uniform, False
        if read_loss is not None and read_ess is not None:
            cls = classify(r, sure_read)
            # a class the mean loss reaches but its evidence does not, or too few effective deals
            close = (classify(r, read_loss) != cls) or (read_ess < READ_MIN_ESS and classify(r, read_loss) is not None)
            if read_ess < READ_MIN_ESS:
                cls = None
        elif pimc_loss is not None:
            close = classify(r, pimc_loss) != cls
        return Ply(k, seat, played, forced, alts, dd_loss, pimc_loss, cls, n_deals, exact, state.plays,
                   read_loss, read_ess, cls_uniform, close)  # fmt: skip

    def sampled(self, state: HandState, tracker: Tracker, ctx: HandContext, rng: random.Random,
                peek: Sequence[int] = (), players: Sequence[str | None] = (),
                memo: dict[tuple[int, int], float] | None = None,
                ) -> list[tuple[float, tuple[float, float]]]:  # fmt: skip
        """The mean value (and 95% interval) of each legal move of the seat to
        move, in :func:`replay.engine.legal_moves` order, over the deals it could
        face; with `peek`, seeing those seats' tiles too (the player insights'
        partner-peeking model). With a play model for the rules and a
        :class:`~replay.belief.history.Recorder` for `tracker`, the deals are
        weighted by the other (unseen) seats' choices, as the read grade's
        (each seat's by its player's model where `players` names them;
        `memo`: the plays' log-probabilities kept across a hand's decisions)."""
        _, solver = self.solvers(state.rules)
        named = self.policy(state.rules)
        if named is not None and isinstance(tracker, Recorder):  # weighted by the others' choices too
            policy = seated(named[1], players)
            b = weighted_belief(
                state, tracker, policy, deals=self.samples, rng=rng, max_deals=READ_MAX_FACTOR * self.samples,
                floor=READ_FLOOR * self.samples, exact_limit=max(self.samples, self.exact_limit), peek=peek, memo=memo,
            )  # fmt: skip
            worlds, wts, ess = list(b.worlds), list(b.weights), b.ess
            if not b.exact and len(worlds) > self.samples:  # as the read grade: drawn by weight, moved
                moved, moved_ess = read_moved(state, tracker, policy, b, self.samples, rng, peek=peek, memo=memo)
                if moved is not None:
                    worlds, wts, ess = moved, [1.0 / len(moved)] * len(moved), moved_ess
            solver.set_hand(*hand_args(state, ctx))
            base = position(state)
            vals = [[v for _, v in solver.values((h, st, *base[2:]), state.turn)] for h, st in worlds]
            return [_weighted_ci([r[i] for r in vals], wts, ess, b.exact) for i in range(len(vals[0]))]
        rows, weights, exact = self._pimc(state, tracker, ctx, solver, rng, peek)
        return [_mean_ci([r[i] for r in rows], weights, exact) for i in range(len(rows[0]))]

    def _pimc(self, state: HandState, tracker: Tracker, ctx: HandContext, solver: Solver,
              rng: random.Random, peek: Sequence[int] = (), carried: Carried | None = None, ply: int = 0,
              ) -> tuple[list[list[int]], list[int], bool]:  # fmt: skip
        """Every legal move's value in each deal the mover could face (all of
        them, weighed, when there are at most `exact_limit`; else `samples`:
        those `carried` from the seat's previous decision that still agree,
        then fresh draws)."""
        seat = state.turn
        hidden = tracker.hidden(state, seat, peek)
        listed = hidden.enumerate(max(self.samples, self.exact_limit))
        exact = listed is not None
        worlds: list[tuple[Any, int]]
        if listed is not None:
            worlds = listed
        else:
            first = [] if carried is None else carried.take(ply, state, self.samples)
            drawn = first + hidden.sample(self.samples - len(first), rng)
            if carried is not None:
                carried.keep(ply, state, drawn)
            worlds = [(w, 1) for w in drawn]
        solver.set_hand(*hand_args(state, ctx))
        base = position(state)
        rows = [[v for _, v in solver.values((hands, stock, *base[2:]), seat)] for (hands, stock), _ in worlds]
        return rows, [w for _, w in worlds], exact

    def _read(self, state: HandState, recorder: Recorder, ctx: HandContext, solver: Solver, rng: random.Random,
              policy: Policy, memo: dict[tuple[int, int], float] | None, carried: Carried | None = None,
              ply: int = 0) -> tuple[list[list[int]], list[float], bool, list[list[int]], list[float], float]:  # fmt: skip
        """The uniform grade's deals' values and weights (its first deals:
        the same :meth:`_pimc` draws from the same generator, so the uniform
        grade does not change with the model); whether every agreeing deal is
        there; the read's deals' values, their weights and effective sample size.

        When more deals were drawn than the uniform grade's, the read is
        scored on `samples` of them picked by weight (systematic
        resampling): the weighing is cheap, a solve is not, and the picks
        fall mostly on the deals already solved. Its interval then counts
        at most `samples` deals."""
        seat = state.turn
        first = [] if carried is None else carried.take(ply, state, self.samples)
        b = weighted_belief(
            state, recorder, policy, deals=self.samples, rng=rng, max_deals=READ_MAX_FACTOR * self.samples,
            floor=READ_FLOOR * self.samples, exact_limit=max(self.samples, self.exact_limit), memo=memo, first=first,
        )  # fmt: skip
        if carried is not None and not b.exact:  # the uniform grade's deals: carried on
            carried.keep(ply, state, b.worlds[: self.samples])
        solver.set_hand(*hand_args(state, ctx))
        base = position(state)
        solved: dict[int, list[int]] = {}

        def row(i: int) -> list[int]:
            got = solved.get(i)
            if got is None:
                hands, stock = b.worlds[i]
                got = solved[i] = [v for _, v in solver.values((hands, stock, *base[2:]), seat)]
            return got

        k = len(b.worlds) if b.exact else min(self.samples, len(b.worlds))
        uniform = [row(i) for i in range(k)]
        if k == len(b.worlds):
            return uniform, list(b.prior), b.exact, uniform, list(b.weights), b.ess
        picks: list[int] = []
        moved, ess = read_moved(state, recorder, policy, b, self.samples, rng, memo=memo, picked=picks)
        if moved is None:
            rows = [row(i) for i in picks]
        else:
            rows = [[v for _, v in solver.values((hands, stock, *base[2:]), seat)] for hands, stock in moved]
        return uniform, list(b.prior[:k]), False, rows, [1.0 / len(rows)] * len(rows), ess


class ReadDeals(NamedTuple):
    """The deals a read is scored on (None: the picks appended to `picked`,
    as they are) and the effective sample its interval counts."""

    worlds: list[World] | None
    ess: float


def read_moved(state: HandState, recorder: Recorder, policy: Policy, belief: Belief, samples: int,
               rng: random.Random, *, peek: Sequence[int] = (), memo: dict[tuple[int, int], float] | None = None,
               picked: list[int] | None = None) -> ReadDeals:  # fmt: skip
    """The deals a read is scored on when `belief` (weighted_belief of the
    same arguments) drew more than `samples`. With at most
    :data:`READ_ENUM_LIMIT` agreeing deals, every one is weighed and
    `samples` are drawn from those exact weights
    (:func:`replay.belief.weights.exact_draws`, where the deals are a
    filling of places).
    Otherwise `samples` of the belief's deals are picked by weight (their
    indices appended to `picked`), then moved by :data:`READ_SWEEPS`
    Metropolis sweeps towards the weighted belief (None where deals cannot
    be moved: the picks are then scored as they are). The read grade and
    the partner-peeking grade both draw their deals here, so that both
    sides of the peeking index stand equally near the belief
    (docs/belief.md, "How far the deals are moved", "Late in the hand")."""
    drawn = exact_draws(state, recorder, policy, samples, rng, limit=READ_ENUM_LIMIT, peek=peek, memo=memo)
    if drawn is not None:
        return ReadDeals(drawn[0], min(drawn[1], float(samples)))
    ess = min(belief.ess, float(samples))
    picks = _systematic(belief.weights, samples, rng)
    if picked is not None:
        picked.extend(picks)
    if not READ_SWEEPS:
        return ReadDeals(None, ess)
    moved = move_deals(state, recorder, policy, [belief.worlds[i] for i in picks], sweeps=READ_SWEEPS, rng=rng,
                       peek=peek, memo=memo)  # fmt: skip
    return ReadDeals(moved, ess)


def _systematic(weights: Sequence[float], k: int, rng: random.Random) -> list[int]:
    """`k` indices drawn by `weights` (summing to 1) by systematic resampling:
    index i about k x weights[i] times, at least its floor.

    >>> _systematic([0.5, 0.25, 0.25, 0.0], 4, random.Random(1))
    [0, 0, 1, 2]
    """
    out, acc, i = [], weights[0], 0
    u = rng.random() / k
    for j in range(k):
        at = u + j / k
        while at > acc and i < len(weights) - 1:
            i += 1
            acc += weights[i]
        out.append(i)
    return out


def _grade_by(rows: Sequence[Sequence[float]], mine: int,
              mean_ci: Callable[[Sequence[float]], tuple[float, tuple[float, float]]],
              ) -> tuple[list[tuple[float, tuple[float, float]]], float, float]:  # fmt: skip
    """Each move's mean (and interval) over the deals' `rows`, the played
    move's (`mine`) loss against the best, and the low end of that loss's
    interval paired over the same deals: the class asks for clear evidence
    (exactly the loss when every deal was scored)."""
    got = [mean_ci([r[i] for r in rows]) for i in range(len(rows[0]))]
    means = [m for m, _ in got]
    top = means.index(max(means))
    sure = mean_ci([r[top] - r[mine] for r in rows])[1][0]
    return got, means[top] - means[mine], sure


def _weighted_ci(values: Sequence[float], weights: Sequence[float], ess: float,
                 exact: bool) -> tuple[float, tuple[float, float]]:  # fmt: skip
    """The weighted mean of normalised `weights` and its 95% interval over
    the effective sample size `ess` (the mean itself when every deal was weighed).

    >>> _weighted_ci([10, 20, 30, 40], [0.25] * 4, 4.0, False)
    (25.0, (12.34..., 37.65...))
    """
    mean = sum(w * v for v, w in zip(values, weights, strict=True))
    if exact or len(values) < 2 or ess <= 1:
        return mean, (mean, mean)
    var = sum(w * (v - mean) ** 2 for v, w in zip(values, weights, strict=True)) * ess / (ess - 1)
    half = _Z95 * math.sqrt(var / ess)
    return mean, (mean - half, mean + half)


def _mean_ci(values: Sequence[float], weights: Sequence[float], exact: bool) -> tuple[float, tuple[float, float]]:
    """The (weighted) mean and its 95% interval (the mean itself when every deal was scored).

    >>> _mean_ci([10, 20, 30, 40], [1, 1, 1, 1], False)
    (25.0, (12.34..., 37.65...))
    """
    total = sum(weights)
    mean = sum(w * v for v, w in zip(values, weights, strict=True)) / total
    if exact or len(values) < 2:
        return mean, (mean, mean)
    var = sum(w * (v - mean) ** 2 for v, w in zip(values, weights, strict=True)) / (total - 1)
    half = _Z95 * math.sqrt(var / total)
    return mean, (mean - half, mean + half)


def _skipped(base: HandAnalysis, why: str) -> HandAnalysis:
    return HandAnalysis(base.match, base.hand, base.version, base.samples, base.seed, why)


def _par(solver: Solver, state: HandState, ctx: HandContext, firsts: Mapping[int, int]) -> tuple[int, ...]:
    """The value of the hand's start from every seat's side. `firsts`: each
    seat's best value at its first decision. The first mover's is the start's
    own value, so with two sides nothing is searched again; with individual
    players every other seat's start is searched, from its first decision's
    value as the guess its null-window searches start from (close to the
    answer: fewer of them)."""
    r = state.rules
    solver.set_hand(*hand_args(state, ctx))
    pos = position(state)
    mover = state.turn
    first = firsts.get(mover)
    if r.sides == 2:
        v0 = (first if r.side_of(mover) == 0 else -first) if first is not None else solver.value(pos, 0)
        return tuple(v0 if r.side_of(s) == 0 else -v0 for s in range(r.players))
    return tuple(
        first if s == mover and first is not None else solver.value(pos, s, firsts.get(s, 0))
        for s in range(r.players)
    )


# -- inputs ---------------------------------------------------------------------------


_PLAYED: Final = frozenset({"domino", "block"})
#: Why a hand still being played has no analysis (the store keeps no row for it).
NOT_OVER: Final = "the hand is not over"
_RULES: dict[str, Rules] = {}


def resolve_options(options: Mapping[str, Any]) -> Rules:
    """A `Rules` value from its resolved options (a report's or the store's ``rules``)."""
    key = json.dumps(options, sort_keys=True)
    got = _RULES.get(key)
    if got is None:
        got = _RULES[key] = resolve("international", dict(options))
    return got


def _lead(rules: Rules, m: MatchState, dealt: Sequence[int], leader: int, rematch: bool) -> tuple[int, str]:
    """The opening tile the rules fix for a hand (-1 for any) and the rule that fixes it."""
    if m.played == 0:
        if rematch:
            return -1, ""
        try:
            lead = first_hand_lead(rules, dealt, leader)
        except ValueError:
            return -1, ""
        return lead.tile, lead.fixed_by
    lead = next_lead(m, dealt)
    return lead.tile, lead.fixed_by


_HandRow = tuple[int, Any, Any, Sequence[int], Any, Any]  # no, result, winner, dealt masks, leader, blocker


def _walk(rules: Rules, hands: Iterable[_HandRow], rematch: bool) -> Iterable[tuple[int, HandContext, int, str]]:
    """For each hand (no, result, winner, dealt masks, leader, blocker):
    its context and the opening fixed for it, following the match."""
    m = new_match(rules)
    for no, result, winner, masks, leader, blocker in hands:
        ctx = HandContext(m.played, m.first_block_paid)
        tile, why = (-1, "")
        if masks and leader is not None:
            tile, why = _lead(rules, m, masks, leader, rematch)
        yield no, ctx, tile, why
        if result in _PLAYED:
            side = None if winner is None else rules.side_of(winner)
            took = result == "block" and side is not None and not m.first_block_paid and rules.scoring == "pips"
            prev = HandScore(result, winner, side, (0,) * rules.sides, (), (), blocker, took)
            m = MatchState(
                rules=rules, shutout_note=m.shutout_note, played=m.played + 1, score=m.score, wins=m.wins,
                first_block_paid=m.first_block_paid or took,
                first_leader=m.first_leader if m.first_leader is not None else leader,
                prev_leader=leader, prev=prev,
            )  # fmt: skip


def _why_not(result: str | None, play_ok: bool | None, deal_ok: bool | None, dealt: Any, stock_needed: bool,
             stock: Any) -> str | None:  # fmt: skip
    if result == "cancelled":
        return "the hand was cancelled"
    if result not in _PLAYED:
        return NOT_OVER
    if not play_ok:
        return "the hand has an illegal move"
    if deal_ok is False:
        return "the logged deal differs from its derivation"
    if not dealt:
        return "the deal is not known"
    if stock_needed and stock is None:
        return "the boneyard's order is not known (its seed is not revealed)"
    return None


def _end(kind: str, tile: int | None, end: str | None, left_after: int | None) -> str | None:
    """A play's end; for the first tile, the side its high half went to."""
    if kind != "play" or end is not None or tile is None:
        return end
    return "left" if left_after == HIGH[tile] else "right"


def held_by(rows: Sequence[tuple[int, int, str]], hand: int, players: int) -> tuple[str | None, ...]:
    """Who held each seat in hand `hand`: of a match's (seat, from_hand,
    player) rows in order, each seat's last that starts at or before it.

    >>> held_by([(0, 1, "ann"), (1, 1, "bob"), (0, 3, "cy")], 4, 2)
    ('cy', 'bob')
    >>> held_by([(0, 1, "ann"), (0, 3, "cy")], 2, 2)
    ('ann', None)
    """
    out: list[str | None] = [None] * players
    for seat, from_hand, player in rows:
        if from_hand <= hand and 0 <= seat < players:
            out[seat] = player
    return tuple(out)


def inputs_from_report(rep: MatchReport) -> list[HandInput]:
    """The hands of a validated match (validated with ``keep_moves``)."""
    if rep.rules is None or rep.verdict == "unreadable":
        return []
    rules = resolve_options(rep.rules)
    rows: list[_HandRow] = []
    for h in rep.hands:
        masks = [sum(1 << t for t in seat) for seat in h.hands] if h.hands else []
        rows.append((h.hand, h.result, h.winner, masks, h.leader, h.blocker))
    out = []
    for h, (no, ctx, tile, why) in zip(rep.hands, _walk(rules, rows, rep.rematch_of is not None), strict=True):
        stock_needed = rules.stock == "draw" and rules.players * 7 < 28
        skip = _why_not(h.result, h.play_ok, h.deal_ok, h.hands, stock_needed, h.stock if h.stock else None)
        moves = tuple((m.seat, m.kind, -1 if m.tile is None else m.tile, _end(m.kind, m.tile, m.end, m.left)) for m in h.moves)
        out.append(HandInput(
            rep.match, no, rules, tuple(tuple(s) for s in h.hands), tuple(h.stock) if rules.stock == "draw" else (),
            h.leader if h.leader is not None else 0, tile, why, ctx, moves, skip,
            held_by([(r.seat, r.from_hand, r.player) for r in sorted(rep.seats, key=lambda r: (r.from_hand, r.seq))],
                    no, rules.players),
        ))  # fmt: skip
    return out


def inputs_from_replay(match: str, rules_json: Mapping[str, Any], rematch_of: str | None,
                       hands: Mapping[int, Mapping[str, Any]], moves: Mapping[int, Sequence[Sequence[Any]]],
                       stocks: Mapping[int, Sequence[int] | None]) -> list[HandInput]:  # fmt: skip
    """The hands of a stored match, from its packed replay
    (:func:`replay.store.replay_blob.unpack_replay`'s hands and moves) and the boneyards'
    orders by hand (the ``hands`` table's ``stock``: the replay keeps only their sizes)."""
    rules = resolve_options(rules_json)
    order = sorted(hands)
    rows: list[_HandRow] = []
    for no in order:
        h = hands[no]
        dealt = h.get("dealt")
        masks = [sum(1 << t for t in seat) for seat in dealt] if dealt else []
        rows.append((no, h.get("result"), h.get("winner"), masks, h.get("leader"), h.get("blocker")))
    out = []
    stock_needed = rules.stock == "draw" and rules.players * 7 < 28
    for no, ctx, tile, why in _walk(rules, rows, rematch_of is not None):
        h = hands[no]
        dealt = h.get("dealt")
        stock = stocks.get(no)
        skip = _why_not(h.get("result"), h.get("play_ok"), h.get("deal_ok"), dealt, stock_needed, stock)
        mv = tuple(
            (row[2], row[3], -1 if row[4] is None else row[4], _end(row[3], row[4], row[5], row[6]))
            for row in moves.get(no, ())
        )
        out.append(HandInput(
            match, no, rules, tuple(tuple(s) for s in dealt) if dealt else (),
            tuple(stock or ()) if rules.stock == "draw" else (), h.get("leader") or 0, tile, why, ctx, mv, skip,
        ))  # fmt: skip
    return out


def analyze(inputs: Iterable[HandInput], analyzer: Analyzer,
            progress: Callable[[HandAnalysis], None] | None = None) -> list[HandAnalysis]:  # fmt: skip
    """Every hand's analysis, in order."""
    out = []
    for inp in inputs:
        a = analyzer.hand(inp)
        out.append(a)
        if progress is not None:
            progress(a)
    return out


# -- rows for the store ---------------------------------------------------------------


def analysis_tables(analyses: Iterable[HandAnalysis]) -> dict[str, pa.Table]:
    """The ``move_analysis`` and ``hand_analysis`` rows of some hands, as Arrow
    tables with the store's columns (replay.store.rows.SCHEMAS)."""
    moves: dict[str, list[Any]] = {f: [] for f in SCHEMAS["move_analysis"].names}
    hands: dict[str, list[Any]] = {f: [] for f in SCHEMAS["hand_analysis"].names}
    for a in analyses:
        if a.skip == NOT_OVER:  # it will be analysed once it is over (its match is stored again)
            continue
        sk = a.skip is not None
        row = {
            "match": a.match, "hand": a.hand, "version": a.version, "samples": a.samples, "seed": a.seed,
            "skip": a.skip, "first_seat": None if sk else a.leader, "par": None if sk else list(a.par),
            "result": None if sk else list(a.result), "lost": None if sk else list(a.lost),
            "stake": None if sk else list(a.stake), "lost_dd": None if sk else list(a.lost_dd),
            "stake_dd": None if sk else list(a.stake_dd), "accuracy": None if sk else list(a.accuracy),
            "accuracy_dd": None if sk else list(a.accuracy_dd),
            "lost_uniform": None if sk else list(a.lost_uniform), "stake_uniform": None if sk else list(a.stake_uniform),
            "accuracy_uniform": None if sk else list(a.accuracy_uniform), "read_model": a.read_model,
        }  # fmt: skip
        for f, v in row.items():
            hands[f].append(v)
        for p in a.plies:
            alts = [
                {"move": x.move, "dd": x.dd, "pimc": x.pimc,
                 "pimc_lo": None if x.pimc_ci is None else x.pimc_ci[0],
                 "pimc_hi": None if x.pimc_ci is None else x.pimc_ci[1]}
                for x in p.alternatives
            ]  # fmt: skip
            means = [x.pimc for x in p.alternatives]
            has_pimc = all(m is not None for m in means)
            pimc_best = max(m for m in means if m is not None) if has_pimc else None
            top = None
            if has_pimc:
                top = max(range(len(means)), key=lambda i: (means[i], -i))  # first best on ties
            ddv = [x.dd for x in p.alternatives]
            r = {
                "match": a.match, "hand": a.hand, "ply": p.ply, "seat": p.seat, "version": a.version,
                "played": p.played, "forced": p.forced, "alternatives": alts, "dd": p.dd,
                "dd_best": p.dd_best, "dd_loss": p.dd_loss, "pimc": p.pimc, "pimc_best": pimc_best,
                "pimc_loss": p.pimc_loss, "class": p.cls, "samples": p.samples, "exact": p.exact,
                "on_line": p.on_line, "stake": (max(means) - min(means)) if has_pimc else None,  # type: ignore[type-var,operator]
                "stake_dd": max(ddv) - min(ddv),
                "pimc_best_played": None if p.pimc_loss is None else p.pimc_loss <= 1e-9,
                "differs": None if top is None else ddv[top] < max(ddv),
                "hindsight": hindsight(p),
                "reads": None if p.read_loss is None else [
                    {"read": x.read, "read_lo": None if x.read_ci is None else x.read_ci[0],
                     "read_hi": None if x.read_ci is None else x.read_ci[1]} for x in p.alternatives
                ],
                "read": p.read, "read_best": _best(x.read for x in p.alternatives),
                "read_loss": p.read_loss, "read_ess": p.read_ess, "class_uniform": p.cls_uniform,
                "too_close": p.close,
            }  # fmt: skip
            for f, v in r.items():
                moves[f].append(v)
    return {
        "move_analysis": pa.table(moves, schema=SCHEMAS["move_analysis"]),
        "hand_analysis": pa.table(hands, schema=SCHEMAS["hand_analysis"]),
    }


def _best(values: Iterable[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return max(got) if got else None


def hindsight(p: Ply) -> float | None:
    """How much better the played move did than the mean alternative on the
    real deal (``dd``), minus the same on the deals the mover could face
    (``read`` where there is one: what a strong reader could know; else
    ``pimc``): 0 on average for a player who sees only what it may (the
    player insights' omniscience statistic, reports.cheats); None for a
    forced move or one without a sampled grade.

    >>> alts = (Alternative("a", 10, 2.0), Alternative("b", -10, 4.0))
    >>> hindsight(Ply(1, 0, "a", False, alts, 0, 2.0, None))
    11.0
    """
    means = [a.read if p.read_loss is not None else a.pimc for a in p.alternatives]
    if p.forced or len(means) < 2 or any(m is None for m in means):
        return None
    dd = [a.dd for a in p.alternatives]
    i = next(k for k, a in enumerate(p.alternatives) if a.move == p.played)
    known = [m for m in means if m is not None]
    return (dd[i] - sum(dd) / len(dd)) - (known[i] - sum(known) / len(known))


_WORKER: Analyzer | None = None


def analyze_tables(tables: Mapping[str, pa.Table], samples: int, seed: int) -> dict[str, pa.Table]:
    """The analysis rows of a batch's matches (its ``matches`` table, whose
    ``replay`` bodies hold each match's hands and moves): every hand of every
    readable match, analysed or with the reason it is not; and the
    ``matches`` table again, its ``analysis`` column naming the batch."""
    global _WORKER
    if _WORKER is None or (_WORKER.samples, _WORKER.seed) != (samples, seed):
        _WORKER = Analyzer(samples=samples, seed=seed)
    matches = tables.get("matches")
    out: list[HandAnalysis] = []
    stocks: dict[tuple[str, int], Any] = {}
    if "hands" in tables:
        h = tables["hands"].select(["match", "hand", "stock"]).to_pydict()
        stocks = {(m, k): st for m, k, st in zip(h["match"], h["hand"], h["stock"], strict=True)}
    if matches is not None and matches.num_rows:
        cols = matches.select(["match", "verdict", "rules", "rematch_of", "replay"]).to_pylist()
        for row in cols:
            if row["verdict"] == "unreadable" or row["rules"] is None or row["replay"] is None:
                continue
            got = unpack_replay(row["replay"])
            if got is None:
                continue
            _, hands, moves = got
            try:
                mine = {k: stocks.get((row["match"], k)) for k in hands}
                inputs = inputs_from_replay(row["match"], orjson.loads(row["rules"]), row["rematch_of"], hands, moves, mine)
            except ValueError:
                continue  # rules the store could not have written: nothing to analyse
            out.extend(_WORKER.hand(inp) for inp in inputs)
    result = analysis_tables(out)
    if matches is not None and matches.num_rows:
        done = pa.array(sorted({a.match for a in out}), pa.string())
        stamp = pc.if_else(pc.is_in(matches.column("match"), value_set=done), matches.column("batch"), None)
        result["matches"] = matches.set_column(matches.schema.get_field_index("analysis"), "analysis", stamp)
    return result
