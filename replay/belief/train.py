"""Fitting a family's play model and scoring it on held-out hands.

The score is the mean log-likelihood of the held-out hands' moves per
choice (nats), beside that of :data:`replay.belief.UNIFORM` (every legal
move alike) and of :data:`replay.belief.HEURISTIC` (a fixed rule of
thumb). The model is worth using for a belief only where it beats both
(:attr:`Fitted.beats_uniform`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from replay.belief.data import Choice
from replay.belief.model import HEURISTIC, UNIFORM, PlayModel, Policy, choice, fit, log_likelihood

__all__ = ["Fitted", "beats_uniform", "train"]


@dataclass(frozen=True, slots=True)
class Fitted:
    """A fitted model with its held-out scores (mean log-likelihood a choice, nats)."""

    model: PlayModel
    train_choices: int
    test_choices: int
    loglik_model: float | None
    loglik_uniform: float | None
    loglik_heuristic: float | None

    @property
    def beats_uniform(self) -> bool:
        """The model scores better than uniform on held-out hands (there were some)."""
        return beats_uniform(self.loglik_model, self.loglik_uniform)


def beats_uniform(loglik_model: float | None, loglik_uniform: float | None) -> bool:
    """Whether a model's held-out log-likelihood beats uniform's (both known).

    >>> beats_uniform(-0.32, -1.02), beats_uniform(None, -1.02), beats_uniform(-1.1, -1.02)
    (True, False, False)
    """
    return loglik_model is not None and loglik_uniform is not None and loglik_model > loglik_uniform


def train(family: str, fitting: Sequence[Choice], held: Sequence[Choice], l2: float = 1e-4) -> Fitted:
    """The model of `family` fitted on `fitting`, scored on `held`."""
    groups, chosen = [], []
    for state, moves, move, public in fitting:
        got = choice(state, moves, move, public)
        if got is not None:
            groups.append(got[0])
            chosen.append(got[1])
    model = PlayModel(family, tuple(float(c) for c in fit(groups, chosen, l2=l2)))

    def mean(policy: Policy) -> float | None:
        return log_likelihood(policy, held) / len(held) if held else None

    return Fitted(model, len(groups), len(held), mean(model), mean(UNIFORM), mean(HEURISTIC))
