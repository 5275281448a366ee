"""Fitting a family's play model and scoring it on held-out hands.

The score is the mean log-likelihood of the held-out hands' moves per
choice (nats), beside that of :data:`replay.belief.UNIFORM` (every legal
move alike) and of :data:`replay.belief.HEURISTIC` (a fixed rule of
thumb). The model is worth using for a belief only where it beats uniform
(:attr:`Fitted.beats_uniform`).

Given the players of each choice's table, the players with enough fitting
choices get coefficients of their own around the family's
(:func:`replay.belief.model.fit_players`); the held-out score is then the
model's with every seat weighed by its player (`loglik_family`: the
family's coefficients alone, for comparison). Players are kept only when
they score better held out than the family's coefficients alone.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from replay.belief.data import Choice
from replay.belief.model import (
    HEURISTIC,
    PLAYER_MIN_CHOICES,
    UNIFORM,
    PlayModel,
    Policy,
    choice,
    fit,
    fit_players,
    log_likelihood,
    seated,
)

#: The players of a choice's table, by seat (None: not known).
Table = Sequence[str | None]

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
    loglik_family: float | None = None

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


def train(family: str, fitting: Sequence[Choice], held: Sequence[Choice], l2: float = 1e-4, *,
          fitting_players: Sequence[Table] | None = None, held_players: Sequence[Table] | None = None,
          player_min_choices: int = PLAYER_MIN_CHOICES) -> Fitted:  # fmt: skip
    """The model of `family` fitted on `fitting`, scored on `held`; with the
    players of each choice's table (`fitting_players`, `held_players`,
    aligned with the choices), each player's own coefficients too."""
    groups, chosen = [], []
    by_player: dict[str, tuple[list[np.ndarray], list[int]]] = defaultdict(lambda: ([], []))
    for i, (state, moves, move, public) in enumerate(fitting):
        got = choice(state, moves, move, public)
        if got is not None:
            groups.append(got[0])
            chosen.append(got[1])
            player = fitting_players[i][state.turn] if fitting_players is not None else None
            if player is not None:
                by_player[player][0].append(got[0])
                by_player[player][1].append(got[1])
    model = PlayModel(family, tuple(float(c) for c in fit(groups, chosen, l2=l2)))
    if by_player:
        model = replace(model, players=fit_players(model.coef, by_player, min_choices=player_min_choices))

    def mean(policy: Policy) -> float | None:
        return log_likelihood(policy, held) / len(held) if held else None

    def seated_mean(m: PlayModel) -> float | None:
        if not held:
            return None
        if held_players is None:
            return mean(m)
        total = sum(log_likelihood(seated(m, held_players[i]), [c]) for i, c in enumerate(held))
        return total / len(held)

    family_only = replace(model, players=())
    score_family = mean(family_only)
    score = seated_mean(model) if model.players else score_family
    if model.players and (score is None or score_family is None or score <= score_family):
        model, score = family_only, score_family  # players of their own did not help on held-out hands
    return Fitted(model, len(groups), len(held), score, mean(UNIFORM), mean(HEURISTIC), score_family)
