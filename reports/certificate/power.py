"""What a window of a given size could have caught: the power table and the limits.

The power study (``bench/fairness_power.py``) simulates windows dealt by
each planted broken shuffler at several sizes and counts how often the
certificate's battery (the battery and the targeted tests, one Holm family
at ``DEALS_ALPHA``) does not PASS. It writes ``power.json`` beside this
module; a certificate reads the chance of a catch at its own number of
deals from it, interpolated linearly in log(deals) between measured sizes
(below the smallest size the figure is an upper bound, above the largest a
lower bound, and the certificate says which).

The friend (one player dealt an extra double in a tenth of his hands)
cannot be caught at 2,000 deals by any test: ``friend_limit`` gives the
power of the most powerful test against exactly that cheat -- the
Neyman-Pearson likelihood ratio of his doubles counts, with his identity
known in advance, which no real test has -- as the bound beside the luck
family's measured power.
"""

from __future__ import annotations

import json
import math
from functools import cache
from importlib import resources
from typing import Any, Final

import numpy as np
from scipy import stats

from reports.battery import ALPHA

__all__ = [
    "DEALS_ALPHA",
    "LUCK_ALPHA",
    "friend_limit",
    "power_at",
    "power_table",
]

#: The certificate's 99%: the deal tests and the player-luck tests are two
#: families, each Holm-corrected at a quarter of 1%, so that a fair server
#: gets any verdict but PASS at most 0.5% of the time (Bonferroni across the
#: two). Half of 1% each would spend the whole 1% on the bound, and the
#: normal approximations' tails measured a hair above it (1.1% of 2,000
#: fair windows); a quarter each keeps the rate clearly under 1% whatever
#: those tails do, for a loss of power only at sizes where no test has much.
DEALS_ALPHA: Final = ALPHA / 4
LUCK_ALPHA: Final = ALPHA / 4

_HAND: Final = 7
SIMS: Final = 20_000
SIMULATED_HANDS: Final = 2_000
_DOUBLES: Final = 7
_TILES: Final = 28


@cache
def power_table() -> dict[str, Any]:
    """The stored power study (``power.json``): sizes, and per cheat the catch rate at each."""
    text = resources.files(__package__).joinpath("power.json").read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def power_at(rates: list[float], sizes: list[int], n: int) -> tuple[float, str]:
    """The catch rate at ``n`` deals from a row of the table, and how it was had.

    >>> power_at([0.2, 0.6, 1.0], [500, 1000, 2000], 1000)
    (0.6, 'measured')
    >>> round(power_at([0.2, 0.6, 1.0], [500, 1000, 2000], 1414)[0], 2)
    0.8
    >>> power_at([0.2, 0.6, 1.0], [500, 1000, 2000], 300)
    (0.2, 'at most')
    """
    if n in sizes:
        return rates[sizes.index(n)], "measured"
    if n < sizes[0]:
        return rates[0], "at most"
    if n > sizes[-1]:
        return rates[-1], "at least"
    k = next(i for i, s in enumerate(sizes) if s > n)
    x0, x1 = math.log(sizes[k - 1]), math.log(sizes[k])
    f = (math.log(n) - x0) / (x1 - x0)
    return rates[k - 1] + f * (rates[k] - rates[k - 1]), "interpolated"


def _doubles_pmf() -> np.ndarray:
    k = np.arange(_DOUBLES + 1)
    return np.asarray(stats.hypergeom.pmf(k, _TILES, _DOUBLES, _HAND), dtype=float)


def friend_limit(hands: int, rate: float = 0.1, alpha: float = LUCK_ALPHA) -> float:
    """Power of the Neyman-Pearson test for the friend over his ``hands`` hands.

    A fair hand holds k doubles with the hypergeometric chance P0(k); the
    friend's hand, with chance ``rate``, trades a non-double for a double
    held elsewhere (possible whenever k < 7), so P1(k) = (1 - rate) P0(k) +
    rate P0(k - 1) (and P1(7) gains rate P0(7)). The log likelihood ratio
    summed over his hands is the most powerful statistic. Its null
    quantile and its power are simulated (``SIMS`` windows each way, a fixed
    seed, so a certificate's figure can be recomputed exactly) up to
    ``SIMULATED_HANDS`` hands; beyond, the sum of so many independent terms
    is read off the normal law with the exact per-hand moments.

    >>> round(friend_limit(500), 2)
    0.36
    """
    p0 = _doubles_pmf()
    shifted = np.r_[0.0, p0[:-1]]
    shifted[-1] += p0[-1]
    p1 = (1 - rate) * p0 + rate * shifted
    llr = np.log(p1 / p0)
    if hands <= 0:
        return 0.0
    if hands <= SIMULATED_HANDS:
        rng = np.random.default_rng(7)
        null = llr[rng.choice(_DOUBLES + 1, size=(SIMS, hands), p=p0)].sum(axis=1)
        alt = llr[rng.choice(_DOUBLES + 1, size=(SIMS, hands), p=p1)].sum(axis=1)
        return float((alt > np.quantile(null, 1 - alpha)).mean())
    m0, m1 = float(p0 @ llr), float(p1 @ llr)
    s0 = math.sqrt(float(p0 @ llr**2) - m0**2)
    s1 = math.sqrt(float(p1 @ llr**2) - m1**2)
    cut = hands * m0 + float(stats.norm.isf(alpha)) * s0 * math.sqrt(hands)
    return float(stats.norm.sf((cut - hands * m1) / (s1 * math.sqrt(hands))))
