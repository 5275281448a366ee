"""How well a belief puts the hidden tiles where they really are.

For one decision and one belief (:class:`replay.belief.weights.Belief`),
each tile the observer cannot place has a probability of being where it
really is (a seat's hand, the boneyard, out of play). The *per-tile
log-loss* is the mean of ``-log`` of that probability over the hidden
tiles (natural log: nats; ``log 3`` = 1.10 for a tile spread evenly over
three hands). The *reliability table* groups every (tile, place)
prediction by its probability and sets the share that came true beside
the mean prediction: a calibrated belief has them equal.

A probability estimated from drawn deals may be 0 for a place the tile is
in; both beliefs compared are mixed with an even spread over the places
(weight :data:`SMOOTH`) so that one unlucky draw costs a bounded amount.

>>> import numpy as np
>>> m = np.zeros((28, 6)); m[:, 1] = m[:, 2] = m[:, 3] = 1 / 3
>>> truth = np.full(28, 1)
>>> loss, n = tile_log_loss(m, truth, unknown=0b111, observer=0)
>>> n, round(loss / n, 3)
(3, 1.103)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

import numpy as np

from replay.tiles import BIT, N_TILES

__all__ = ["BINS", "SMOOTH", "Reliability", "tile_log_loss"]

#: The even spread mixed into every belief's probabilities.
SMOOTH: Final = 0.01
#: Edges of the reliability table's bins.
BINS: Final = (0.0, 0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95, 1.0)


def _smoothed(marginals: np.ndarray, observer: int) -> np.ndarray:
    places = [p for p in range(marginals.shape[1]) if p != observer]
    out = marginals[:, places] * (1 - SMOOTH) + SMOOTH / len(places)
    return np.asarray(out)


def tile_log_loss(marginals: np.ndarray, truth: np.ndarray, *, unknown: int, observer: int) -> tuple[float, int]:
    """The summed ``-log P(tile at its true place)`` over the tiles of
    `unknown` and how many there are; `marginals`: (28, places) from
    :meth:`Belief.marginals`, `truth`: each tile's true place."""
    sm = _smoothed(marginals, observer)
    places = [p for p in range(marginals.shape[1]) if p != observer]
    col = {p: i for i, p in enumerate(places)}
    total, n = 0.0, 0
    for t in range(N_TILES):
        if unknown & BIT[t]:
            total -= math.log(sm[t, col[int(truth[t])]])
            n += 1
    return total, n


@dataclass
class Reliability:
    """Predicted against observed, by bin of predicted probability."""

    counts: list[int] = field(default_factory=lambda: [0] * (len(BINS) - 1))
    predicted: list[float] = field(default_factory=lambda: [0.0] * (len(BINS) - 1))
    observed: list[int] = field(default_factory=lambda: [0] * (len(BINS) - 1))

    def add(self, marginals: np.ndarray, truth: np.ndarray, *, unknown: int, observer: int) -> None:
        """Every (hidden tile, place other than the observer) prediction of one belief."""
        sm = _smoothed(marginals, observer)
        places = [p for p in range(marginals.shape[1]) if p != observer]
        edges = np.asarray(BINS[1:-1])
        for t in range(N_TILES):
            if not unknown & BIT[t]:
                continue
            for i, p in enumerate(places):
                q = float(sm[t, i])
                b = int(np.searchsorted(edges, q, side="right"))
                self.counts[b] += 1
                self.predicted[b] += q
                self.observed[b] += int(truth[t]) == p

    def rows(self) -> Iterable[tuple[str, int, float, float]]:
        """(bin, predictions, mean predicted, share observed) of each non-empty bin."""
        for i, c in enumerate(self.counts):
            if c:
                yield f"{BINS[i]:.2f}-{BINS[i + 1]:.2f}", c, self.predicted[i] / c, self.observed[i] / c
