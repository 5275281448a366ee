"""Tests aimed at the known shuffler bugs, each as powerful as we can make it against one bug.

The battery (``reports.battery``) asks whether deals look uniformly random
in general; a general test spreads its power over every direction a deck
could lean. A lab that knows the classic failures can do better: against
one named alternative, the Neyman-Pearson lemma says the most powerful test
is the likelihood ratio. Where that ratio is exact and cheap it is used;
where it is not, the ratio of the position margins stands in for it.

- ``modulo_bias_lr``: Fisher-Yates is a bijection between the draws
  j_i in [0, i] (i = T-1 .. 1) and the decks, so every deck gives back its
  draws (``fisher_yates_draws``). Under a fair shuffle the draws are
  independent and uniform; the modulo-bias bug draws j = byte mod (i + 1).
  The exact log likelihood ratio of a deck is the sum over i of
  log((i + 1) q_i(j_i)); its null mean and variance are sums over
  independent uniform draws: a one-sided z-test.
- ``cyclic_decks``: Sattolo's off-by-one (j in [0, i-1]) only ever makes
  decks whose draws never pick j = i; a fair shuffle does that with
  probability 1/T. The likelihood ratio is a function of the count of such
  decks: a one-sided binomial test.
- ``position_lr[planet_poker]``, ``position_lr[random_comparator]``: the
  sum over positions of log(T M[t, p]), M the bug's chance of tile t at
  position p (exact for the swap loop, from 100,000 simulated decks for
  the comparator sort). Under a fair shuffle this is a linear permutation
  statistic with an exact mean and variance (Hoeffding): one-sided z.
- ``same_position``: consecutive deals of a table that keep tiles at the
  same place (a lazy reshuffle). For two independent uniform decks the
  count is the fixed points of a uniform permutation: mean 1, variance 1,
  and the pairs are uncorrelated: one-sided z over the window's pairs.

Every statistic is a function of deck orders only, fixed before the data
is seen, so its false-alarm rate holds whatever the M tables' accuracy.
`battery_with_targeted` puts them in one Holm family with the battery's
tests (docs/fairness.md, "Targeted tests").
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import Any, Final

import numpy as np
from scipy import stats

from replay.tiles import N_TILES
from reports import shufflers
from reports.battery import (
    ALPHA,
    BatteryReport,
    DealGroup,
    DealWindow,
    Skipped,
    TestResult,
    holm,
    run_battery,
    verdict_of,
    worst,
)

__all__ = [
    "POSITION_LR",
    "TARGETED",
    "battery_with_targeted",
    "fisher_yates_draws",
    "position_matrix",
    "targeted_tests",
]

#: The bugs whose position margins drive ``position_lr``.
POSITION_LR: Final = ("planet_poker", "random_comparator")
#: Every targeted test, as named in reports (``name[group]``).
TARGETED: Final = ("modulo_bias_lr", "cyclic_decks", *(f"position_lr_{k}" for k in POSITION_LR),
                   "same_position")  # fmt: skip
_SIMULATED: Final = 100_000
#: The comparator sort's simulated position counts (``_simulated_counts``), in reports/certificate/.
COMPARATOR_FILE: Final = "comparator_positions.json"
_FLOOR: Final = 1e-4  # a cell the bug never fills still weighs, so a fair deck is not -inf

Raw = tuple[float, float | None, float, dict[str, Any]] | str


_FY_STEP: Final = 4096


def _local(g: DealGroup) -> np.ndarray:
    """Decks as local ids 0..T-1 (the group's tiles in canonical order)."""
    local = np.full(N_TILES, -1, dtype=np.int16)
    local[list(g.spec.tiles)] = np.arange(g.spec.n_tiles)
    out: np.ndarray = local[g.deck].astype(np.int64)
    return out


def fisher_yates_draws(decks: np.ndarray) -> np.ndarray:
    """The draws j_i (columns for i = T-1 down to 1) that Fisher-Yates made for each deck.

    >>> words = iter([2, 0, 1]).__next__  # j for i = 3, 2, 1
    >>> deck = shufflers.fisher_yates(words, 4)
    >>> fisher_yates_draws(np.array([deck])).tolist()
    [[2, 0, 1]]
    """
    n_decks, t = decks.shape
    draws = np.empty((n_decks, t - 1), dtype=np.int64)
    # undo the shuffle from the last place down, on flat arrays (one index a deck and
    # place), a few thousand decks at a time (they stay in the cache: six times faster
    # than all at once); place i is final once passed, so neither it nor the card put
    # there is looked at again
    for start in range(0, n_decks, _FY_STEP):
        chunk = decks[start : start + _FY_STEP].astype(np.int32)
        n = len(chunk)
        base = np.arange(n, dtype=np.int32) * t
        cur = np.tile(np.arange(t, dtype=np.int32), n)  # cur[r*t + p]: the card at place p
        pos = cur.copy()  # pos[r*t + v]: where card v sits
        for k, i in enumerate(range(t - 1, 0, -1)):
            j = pos[base + chunk[:, i]]
            draws[start : start + n, k] = j
            a = cur[base + i]
            cur[base + j] = a
            pos[base + a] = j
    return draws


def _modulo_weights(t: int) -> list[np.ndarray]:
    """log((i + 1) q_i(j)) for i = T-1 .. 1: q_i the modulo-bias chance of draw j."""
    out = []
    for i in range(t - 1, 0, -1):
        q = np.bincount(np.arange(256) % (i + 1), minlength=i + 1) / 256
        out.append(np.log((i + 1) * q))
    return out


def _modulo_bias_lr(g: DealGroup, draws: np.ndarray) -> Raw:
    if g.n < 30:
        return "needs 30 deals"
    weights = _modulo_weights(g.spec.n_tiles)
    total = sum(float(w[draws[:, k]].sum()) for k, w in enumerate(weights))
    mean = sum(float(w.mean()) for w in weights)
    var = sum(float(w.var()) for w in weights)
    z = (total - g.n * mean) / math.sqrt(g.n * var)
    return z, None, float(stats.norm.sf(z)), {"log_lr_per_deal": total / g.n}


def _cyclic_decks(g: DealGroup, draws: np.ndarray) -> Raw:
    t = g.spec.n_tiles
    i = np.arange(t - 1, 0, -1)
    k = int((draws < i).all(axis=1).sum())
    p = float(stats.binom.sf(k - 1, g.n, 1 / t))
    return float(k), None, p, {"observed": k, "expected": g.n / t}


def _swap_matrix(steps: list[tuple[int, np.ndarray]], t: int) -> np.ndarray:
    """m[c, p]: chance card c ends at p after swaps (i with j ~ q), starting in order."""
    m = np.eye(t)
    for i, q in steps:
        at_i = m[:, i].copy()
        new = m * (1 - q)[None, :] + np.outer(at_i, q)  # j != i: the card at j goes to i with q_j
        new[:, i] = m @ q  # whatever sat at j lands on i
        m = new
    return m


@cache
def position_matrix(bug: str, t: int) -> np.ndarray:
    """M[c, p]: the chance that ``bug`` puts card c (canonical slot) at deck position p.

    >>> m = position_matrix("sattolo", 5)
    >>> bool(np.allclose(np.diag(m), 0)), bool(np.allclose(m.sum(axis=0), 1))
    (True, True)
    """
    if bug == "planet_poker":
        m = _swap_matrix([(i, np.full(t, 1 / t)) for i in range(t)], t)
    elif bug == "sattolo":
        m = _swap_matrix([(i, np.r_[np.full(i, 1 / i), np.zeros(t - i)]) for i in range(t - 1, 0, -1)], t)
    elif bug == "modulo_bias":
        steps = []
        for i in range(t - 1, 0, -1):
            q = np.bincount(np.arange(256) % (i + 1), minlength=i + 1) / 256
            steps.append((i, np.r_[q, np.zeros(t - i - 1)]))
        m = _swap_matrix(steps, t)
    else:
        m = _simulated_counts(bug, t) / _SIMULATED
    m.flags.writeable = False
    return m


def _simulated_counts(bug: str, t: int, *, stored: bool = True) -> np.ndarray:
    """counts[c, p]: of ``_SIMULATED`` decks made by ``bug`` (a fixed seed), those with card c
    at place p. The comparator sort's are stored (``COMPARATOR_FILE``): simulating them took
    3 to 8 s of every process that issued a certificate or ran the monitor."""
    if stored and bug == "random_comparator":
        got = _stored_counts().get(str(t))
        if got is not None:
            return np.array(got, dtype=np.int64)
    decks = shufflers.BATCH[bug](np.random.default_rng(0x5EED), _SIMULATED, t).astype(np.int64)
    return np.stack([np.bincount(decks[:, p], minlength=t) for p in range(t)], axis=1)


@cache
def _stored_counts() -> dict[str, list[list[int]]]:
    text = resources.files("reports.certificate").joinpath(COMPARATOR_FILE).read_text()
    doc = json.loads(text)
    assert doc["decks"] == _SIMULATED
    counts: dict[str, list[list[int]]] = doc["counts"]
    return counts


@cache
def _position_weights(bug: str, t: int) -> tuple[np.ndarray, float, float]:
    """w[c, p] = log(T M[c, p]) and the null mean and variance of sum_p w[deck[p], p]."""
    w = np.log(t * np.maximum(position_matrix(bug, t), _FLOOR / t))
    d = w - w.mean(axis=1, keepdims=True) - w.mean(axis=0, keepdims=True) + w.mean()
    w.flags.writeable = False
    return w, float(w.sum() / t), float((d**2).sum() / (t - 1))


def _position_lr(g: DealGroup, counts: np.ndarray, bug: str) -> Raw:
    """``counts[c, p]``: the decks with card c at place p (the statistic is linear in them)."""
    if g.n < 30:
        return "needs 30 deals"
    t = g.spec.n_tiles
    w, mean, var = _position_weights(bug, t)
    total = float((w * counts).sum())
    z = (total - g.n * mean) / math.sqrt(g.n * var)
    return z, None, float(stats.norm.sf(z)), {"log_lr_per_deal": total / g.n}


def _same_position(g: DealGroup, local: np.ndarray) -> Raw:
    idx = np.lexsort((g.order, g.table_idx))
    same = g.table_idx[idx][1:] == g.table_idx[idx][:-1]
    k = int(same.sum())
    if k < 30:
        return "needs 30 consecutive pairs"
    small = local.astype(np.int8)[idx]  # a byte a tile: the pairs compared in an eighth of the memory
    total = int(np.count_nonzero((small[1:] == small[:-1])[same]))
    z = (total - k) / math.sqrt(k)
    return z, None, float(stats.norm.sf(z)), {"pairs": k, "kept_per_pair": total / k}


def targeted_tests(g: DealGroup) -> list[tuple[str, Raw]]:
    """Every targeted test on one group of deals (``Raw``: a result, or why it was skipped)."""
    if g.n == 0:
        return []
    local = _local(g)
    draws = fisher_yates_draws(local)
    out: list[tuple[str, Raw]] = [
        ("modulo_bias_lr", _modulo_bias_lr(g, draws)),
        ("cyclic_decks", _cyclic_decks(g, draws)),
    ]
    t = g.spec.n_tiles
    counts = np.bincount((local * t + np.arange(t)).ravel(), minlength=t * t).reshape(t, t)
    out += [(f"position_lr_{bug}", _position_lr(g, counts, bug)) for bug in POSITION_LR]
    out.append(("same_position", _same_position(g, local)))
    return out


def battery_with_targeted(
    window: DealWindow, alpha: float = ALPHA, *, battery: Callable[..., BatteryReport] = run_battery
) -> BatteryReport:
    """The battery's tests and the targeted ones, Holm-corrected as one family at ``alpha``."""
    base = battery(window, alpha)
    raw: list[tuple[str, float, float | None, float, dict[str, Any]]] = [
        (t.name, t.statistic, t.df, t.p_value, t.detail) for t in base.tests
    ]
    skipped = list(base.skipped)
    for g in window.groups:
        for name, result in targeted_tests(g):
            full = f"{name}[{g.spec.kind}]"
            if isinstance(result, str):
                skipped.append(Skipped(full, result))
            else:
                raw.append((full, *result))
    adjusted = holm([r[3] for r in raw])
    tests = tuple(
        TestResult(name, float(s), df, p, pa, verdict_of(pa, alpha), d)
        for (name, s, df, p, d), pa in zip(raw, adjusted, strict=True)
    )
    return BatteryReport(
        n_deals=base.n_deals,
        groups=base.groups,
        tests=tests,
        verdict=worst([t.verdict for t in tests]),
        alpha=alpha,
        skipped=tuple(skipped),
    )

