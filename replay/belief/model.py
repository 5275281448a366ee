"""The play model: how likely each legal move is, as its seat could see it.

A conditional logit (McFadden's choice model): the probability of move m
among the legal moves M of a choice is ``exp(b . x_m) / sum over M of
exp(b . x)``, with x the move's features (:mod:`replay.belief.features`)
and b fitted by maximum likelihood on played moves, one model per family
of profiles (:func:`family`). :func:`fit` is a few lines of numpy and
scipy's L-BFGS; tests/test_belief.py checks it against statsmodels'
``ConditionalLogit`` on the same data.

A family's model also keeps, for each player with enough choices, that
player's own coefficients (:attr:`PlayModel.players`): a player-level
random effect, fitted by :func:`fit` with the family's coefficients as
the prior's centre (:func:`fit_players`), so that a player with few
choices keeps the family's and one with many gets its own style. One
model pooled over everyone dilutes a convention player's moves by
everybody else's; :meth:`PlayModel.seated` gives the policy of one
table, each seat weighed by its own player's coefficients.

Anything with :meth:`Policy.probs` weighs a belief: a fitted
:class:`PlayModel` (or its :meth:`~PlayModel.seated` form), :data:`UNIFORM` (every legal move alike: the belief it
gives is the uniform one) or :data:`HEURISTIC`, a fixed rule of thumb
(the heavier tile and a kept number first) the fitted model must beat.

>>> import numpy as np
>>> X = [np.array([[1.0], [0.0]]), np.array([[1.0], [0.0]]), np.array([[0.0], [1.0]])]
>>> b = fit(X, [0, 0, 0], l2=0.0)     # the first move twice of three times
>>> round(float(b[0]), 3) == round(float(np.log(2)), 3)
True
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

import numpy as np

from replay.belief.features import FEATURES, move_features
from replay.belief.history import Public
from replay.engine import HandState, Move
from replay.rules import Rules

__all__ = [
    "HEURISTIC", "MODEL_VERSION", "PLAYER_MIN_CHOICES", "PLAYER_PRECISION", "UNIFORM", "PlayModel", "Policy",
    "Seated", "Uniform", "choice", "family", "fit", "fit_players", "log_likelihood", "seated",
]  # fmt: skip

#: The version of the features and the fit; a stored model of another version is not used.
MODEL_VERSION: Final = 2

#: A player gets coefficients of its own from this many fitting choices on.
PLAYER_MIN_CHOICES: Final = 100

#: The prior precision of a player's coefficients around the family's (a
#: Gaussian random effect, sd 1/sqrt(1) a coefficient): at a hundred
#: choices a player's own moves and the family's weigh about alike on a
#: feature that varies in a few of them; at thousands its own style wins.
PLAYER_PRECISION: Final = 1.0


def family(rules: Rules) -> str:
    """The family of profiles a model is fitted for: ``partnership`` (pairs,
    no boneyard), ``boneyard`` (any game that draws), ``individual`` (every
    seat for itself, no boneyard).

    >>> from replay.rules import resolve
    >>> family(resolve("international")), family(resolve("pr_2p"))
    ('partnership', 'boneyard')
    """
    if rules.stock == "draw":
        return "boneyard"
    return "partnership" if rules.teams == "pairs" and rules.players == 4 else "individual"


class Policy(Protocol):
    """How likely each legal move is for the seat to move in `state` (its
    hand as `state` holds it), given what the table had shown (`public`);
    None: the policy says nothing about this choice (it weighs every deal alike)."""

    def probs(self, state: HandState, moves: Sequence[Move], public: Public) -> Sequence[float] | None: ...


class Uniform:
    """Every legal move alike."""

    def probs(self, state: HandState, moves: Sequence[Move], public: Public) -> Sequence[float] | None:
        return [1.0 / len(moves)] * len(moves)


UNIFORM: Final = Uniform()


def _probs(coef: Sequence[float], rows: Sequence[Sequence[float]]) -> list[float]:
    # plain Python: a handful of rows cost less than numpy's call overhead
    s = [sum(map(operator.mul, coef, row)) for row in rows]
    top = max(s)
    e = [math.exp(x - top) for x in s]
    z = sum(e)
    return [x / z for x in e]


@dataclass(frozen=True, slots=True)
class PlayModel:
    """A conditional logit over :data:`FEATURES` (`coef`, one per feature);
    `players`: (player, its own coefficients) for the players fitted apart."""

    family: str
    coef: tuple[float, ...]
    version: int = MODEL_VERSION
    players: tuple[tuple[str, tuple[float, ...]], ...] = ()

    def scores(self, rows: Sequence[Sequence[float]]) -> np.ndarray:
        return np.asarray(np.asarray(rows, dtype=float) @ np.asarray(self.coef))

    def probs(self, state: HandState, moves: Sequence[Move], public: Public) -> Sequence[float] | None:
        return _probs(self.coef, move_features(state, state.hands[state.turn], moves, public))

    def coef_at(self, seat: int) -> tuple[float, ...]:
        """The coefficients seat `seat`'s moves are weighed by."""
        return self.coef

    def of(self, player: str | None) -> tuple[float, ...]:
        """The coefficients `player`'s moves are weighed by (the family's for one not fitted apart)."""
        if player is not None:
            for p, c in self.players:
                if p == player:
                    return c
        return self.coef

    def seated(self, players: Sequence[str | None]) -> Policy:
        """The policy of one table: seat s weighed by `players[s]`'s
        coefficients (the family's where it has none of its own)."""
        if not self.players or not any(p is not None and p in dict(self.players) for p in players):
            return self
        return Seated(tuple(self.of(p) for p in players), self.coef)

    def to_json(self) -> dict[str, Any]:
        return {"family": self.family, "version": self.version, "features": list(FEATURES),
                "coef": [round(c, 6) for c in self.coef],
                "players": {p: [round(x, 6) for x in c] for p, c in self.players}}  # fmt: skip

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> PlayModel:
        if list(obj["features"]) != list(FEATURES) or int(obj["version"]) != MODEL_VERSION:
            raise ValueError("a play model of other features or another version")
        players = tuple(sorted((str(p), tuple(float(x) for x in c)) for p, c in (obj.get("players") or {}).items()))
        return cls(str(obj["family"]), tuple(float(c) for c in obj["coef"]), int(obj["version"]), players)


@dataclass(frozen=True, slots=True)
class Seated:
    """A play model bound to one table: `coefs[s]` weighs seat s's moves
    (`default` a seat beyond them)."""

    coefs: tuple[tuple[float, ...], ...]
    default: tuple[float, ...]

    def probs(self, state: HandState, moves: Sequence[Move], public: Public) -> Sequence[float] | None:
        s = state.turn
        return _probs(self.coef_at(s), move_features(state, state.hands[s], moves, public))

    def coef_at(self, seat: int) -> tuple[float, ...]:
        """The coefficients seat `seat`'s moves are weighed by."""
        return self.coefs[seat] if seat < len(self.coefs) else self.default


def seated(policy: Policy, players: Sequence[str | None]) -> Policy:
    """`policy` for a table of `players` (by seat): a :class:`PlayModel` with
    players of its own weighs each seat by its player; any other as it is.

    >>> m = PlayModel("example", (1.0,) + (0.0,) * (len(FEATURES) - 1), players=(("ann", (2.0,) * len(FEATURES)),))
    >>> seated(m, ["bob", "cy"]) is m, type(seated(m, ["bob", "ann"])).__name__
    (True, 'Seated')
    """
    return policy.seated(players) if isinstance(policy, PlayModel) and players else policy


def _fixed(**coef: float) -> PlayModel:
    return PlayModel("heuristic", tuple(coef.get(f, 0.0) for f in FEATURES))


#: The rule of thumb a fitted model must beat: shed weight, keep a number.
HEURISTIC: Final = _fixed(pips=3.0, keep=3.0)


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return np.asarray(e / e.sum())


def choice(state: HandState, moves: Sequence[Move], move: Move, public: Public) -> tuple[np.ndarray, int] | None:
    """One choice's feature rows and the index of the move made, or None
    when there was nothing to choose (one legal move)."""
    if len(moves) < 2 or state.result is not None:
        return None
    rows = move_features(state, state.hands[state.turn], moves, public)
    return np.asarray(rows, dtype=float), moves.index(move)


def fit(groups: Sequence[np.ndarray], chosen: Sequence[int], l2: float = 1e-4, *,
        centre: np.ndarray | None = None, precision: float | None = None) -> np.ndarray:  # fmt: skip
    """The maximum-likelihood coefficients of a conditional logit: `groups`
    the feature rows of each choice, `chosen` the row made; `l2`: a ridge
    penalty per choice (0: plain maximum likelihood; a little keeps a
    feature that never varies at 0). With `centre` and `precision`: the
    most probable coefficients under a Gaussian prior of that precision
    around `centre` instead (a random effect: the family's coefficients as
    the centre, one player's choices as the data)."""
    # here, not at the top: the simulator's reading bot loads this package, and fitting alone needs scipy
    from scipy.optimize import minimize  # noqa: PLC0415

    if not groups:
        return np.zeros(len(FEATURES)) if centre is None else np.array(centre, dtype=float)
    X = np.vstack(groups)
    sizes = np.array([len(g) for g in groups])
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    picked = starts + np.asarray(chosen)
    Xc = X[picked]
    k = X.shape[1]
    lam = l2 * len(groups) if precision is None else precision
    c0 = np.zeros(k) if centre is None else np.asarray(centre, dtype=float)

    def nll(b: np.ndarray) -> tuple[float, np.ndarray]:
        s = X @ b
        m = np.maximum.reduceat(s, starts)
        e = np.exp(s - np.repeat(m, sizes))
        z = np.add.reduceat(e, starts)
        ll = float(np.sum(s[picked] - m - np.log(z)))
        p = e / np.repeat(z, sizes)
        grad = Xc.sum(axis=0) - X.T @ p
        d = b - c0
        return -ll + 0.5 * lam * float(d @ d), -grad + lam * d

    res = minimize(nll, c0.copy(), jac=True, method="L-BFGS-B", options={"maxiter": 500, "gtol": 1e-8})
    return np.asarray(res.x)


def fit_players(centre: Sequence[float], by_player: Mapping[str, tuple[Sequence[np.ndarray], Sequence[int]]], *,
                min_choices: int = PLAYER_MIN_CHOICES,
                precision: float = PLAYER_PRECISION) -> tuple[tuple[str, tuple[float, ...]], ...]:  # fmt: skip
    """Each player's own coefficients (those with at least `min_choices`
    choices in `by_player`: their feature rows and moves made), the most
    probable under a Gaussian prior of `precision` around the family's
    `centre`; sorted by player (deterministic)."""
    c = np.asarray(centre, dtype=float)
    out = []
    for player in sorted(by_player):
        groups, chosen = by_player[player]
        if len(groups) >= min_choices:
            b = fit(groups, chosen, centre=c, precision=precision)
            out.append((player, tuple(float(x) for x in b)))
    return tuple(out)


def log_likelihood(policy: Policy, data: Sequence[tuple[HandState, Sequence[Move], Move, Public]]) -> float:
    """The summed log-probability `policy` gives the moves made (natural log)."""
    total = 0.0
    for state, moves, move, public in data:
        p = policy.probs(state, moves, public)
        if p is not None:
            total += math.log(max(p[list(moves).index(move)], 1e-300))
    return total
