"""The play model: how likely each legal move is, as its seat could see it.

A conditional logit (McFadden's choice model): the probability of move m
among the legal moves M of a choice is ``exp(b . x_m) / sum over M of
exp(b . x)``, with x the move's features (:mod:`replay.belief.features`)
and b fitted by maximum likelihood on played moves, one model per family
of profiles (:func:`family`). :func:`fit` is a few lines of numpy and
scipy's L-BFGS; tests/test_belief.py checks it against statsmodels'
``ConditionalLogit`` on the same data.

Anything with :meth:`Policy.probs` weighs a belief: a fitted
:class:`PlayModel`, :data:`UNIFORM` (every legal move alike: the belief it
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
    "HEURISTIC", "MODEL_VERSION", "UNIFORM", "PlayModel", "Policy", "Uniform", "choice", "family", "fit",
    "log_likelihood",
]  # fmt: skip

#: The version of the features and the fit; a stored model of another version is not used.
MODEL_VERSION: Final = 1


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


@dataclass(frozen=True, slots=True)
class PlayModel:
    """A conditional logit over :data:`FEATURES` (`coef`, one per feature)."""

    family: str
    coef: tuple[float, ...]
    version: int = MODEL_VERSION

    def scores(self, rows: Sequence[Sequence[float]]) -> np.ndarray:
        return np.asarray(np.asarray(rows, dtype=float) @ np.asarray(self.coef))

    def probs(self, state: HandState, moves: Sequence[Move], public: Public) -> Sequence[float] | None:
        rows = move_features(state, state.hands[state.turn], moves, public)
        # plain Python: a handful of rows cost less than numpy's call overhead
        coef = self.coef
        s = [sum(map(operator.mul, coef, row)) for row in rows]
        top = max(s)
        e = [math.exp(x - top) for x in s]
        z = sum(e)
        return [x / z for x in e]

    def to_json(self) -> dict[str, Any]:
        return {"family": self.family, "version": self.version, "features": list(FEATURES),
                "coef": [round(c, 6) for c in self.coef]}  # fmt: skip

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> PlayModel:
        if list(obj["features"]) != list(FEATURES) or int(obj["version"]) != MODEL_VERSION:
            raise ValueError("a play model of other features or another version")
        return cls(str(obj["family"]), tuple(float(c) for c in obj["coef"]), int(obj["version"]))


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


def fit(groups: Sequence[np.ndarray], chosen: Sequence[int], l2: float = 1e-4) -> np.ndarray:
    """The maximum-likelihood coefficients of a conditional logit: `groups`
    the feature rows of each choice, `chosen` the row made; `l2`: a ridge
    penalty per choice (0: plain maximum likelihood; a little keeps a
    feature that never varies at 0)."""
    # here, not at the top: the simulator's reading bot loads this package, and fitting alone needs scipy
    from scipy.optimize import minimize  # noqa: PLC0415

    if not groups:
        return np.zeros(len(FEATURES))
    X = np.vstack(groups)
    sizes = np.array([len(g) for g in groups])
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    picked = starts + np.asarray(chosen)
    Xc = X[picked]
    k = X.shape[1]
    lam = l2 * len(groups)

    def nll(b: np.ndarray) -> tuple[float, np.ndarray]:
        s = X @ b
        m = np.maximum.reduceat(s, starts)
        e = np.exp(s - np.repeat(m, sizes))
        z = np.add.reduceat(e, starts)
        ll = float(np.sum(s[picked] - m - np.log(z)))
        p = e / np.repeat(z, sizes)
        grad = Xc.sum(axis=0) - X.T @ p
        return -ll + 0.5 * lam * float(b @ b), -grad + lam * b

    res = minimize(nll, np.zeros(k), jac=True, method="L-BFGS-B", options={"maxiter": 500, "gtol": 1e-8})
    return np.asarray(res.x)


def log_likelihood(policy: Policy, data: Sequence[tuple[HandState, Sequence[Move], Move, Public]]) -> float:
    """The summed log-probability `policy` gives the moves made (natural log)."""
    total = 0.0
    for state, moves, move, public in data:
        p = policy.probs(state, moves, public)
        if p is not None:
            total += math.log(max(p[list(moves).index(move)], 1e-300))
    return total
