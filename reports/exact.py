"""Exact reference tables for 7-tile hands of the double-six set.

Everything here is counted, not approximated: hands are enumerated with
``itertools.combinations`` (1,184,040 of them, once, cached), and joint
tables of two disjoint hands come from a small dynamic programme over the
tiles. The fairness battery (``reports.battery``) takes its expected
frequencies, means and covariances from these tables.

>>> N_HANDS
1184040
>>> hands_by_doubles()
(116280, 379848, 427329, 209475, 46550, 4410, 147, 1)
>>> pip_moments()
(Fraction(42, 1), Fraction(49, 1))
>>> float(five_doubles_probability(4))  # doctest: +ELLIPSIS
0.015398...
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from functools import cache
from math import comb, prod
from typing import Final

import numpy as np

from replay.tiles import IS_DOUBLE, N_TILES, PIPS

HAND_SIZE: Final = 7
ALL_TILES: Final[tuple[int, ...]] = tuple(range(N_TILES))
#: The 21 tiles dealt under ``stock = doubles_aside``.
NON_DOUBLES: Final[tuple[int, ...]] = tuple(t for t in ALL_TILES if not IS_DOUBLE[t])
N_HANDS: Final = comb(N_TILES, HAND_SIZE)
N_DOUBLES: Final = sum(IS_DOUBLE)


@cache
def hands(tiles: tuple[int, ...] = ALL_TILES) -> np.ndarray:
    """Every 7-tile hand from ``tiles`` as rows of tile ids (read-only).

    >>> hands().shape, hands(NON_DOUBLES).shape
    ((1184040, 7), (116280, 7))
    """
    flat = itertools.chain.from_iterable(itertools.combinations(tiles, HAND_SIZE))
    out = np.fromiter(flat, dtype=np.int8, count=comb(len(tiles), HAND_SIZE) * HAND_SIZE)
    out = out.reshape(-1, HAND_SIZE)
    out.flags.writeable = False
    return out


@cache
def hands_by_doubles() -> tuple[int, ...]:
    """Number of 7-tile hands holding 0..7 doubles (enumerated)."""
    is_double = np.array(IS_DOUBLE, dtype=np.int8)
    k = is_double[hands()].sum(axis=1)
    return tuple(int(c) for c in np.bincount(k, minlength=N_DOUBLES + 1))


@cache
def hand_pip_counts(tiles: tuple[int, ...] = ALL_TILES) -> tuple[int, ...]:
    """Number of 7-tile hands from ``tiles`` with pip total 0, 1, 2, ... (enumerated).

    >>> c = hand_pip_counts()
    >>> min(v for v, n in enumerate(c) if n), len(c) - 1, c[15], c[69]  # symmetric about 42
    (15, 69, 3, 3)
    """
    pips = np.array(PIPS, dtype=np.int16)
    totals = pips[hands(tiles)].sum(axis=1)
    return tuple(int(c) for c in np.bincount(totals))


def pip_moments(tiles: tuple[int, ...] = ALL_TILES) -> tuple[Fraction, Fraction]:
    """Exact mean and variance of one hand's pip total.

    >>> pip_moments(NON_DOUBLES)
    (Fraction(42, 1), Fraction(98, 3))
    """
    counts = hand_pip_counts(tiles)
    total = sum(counts)
    mean = Fraction(sum(v * c for v, c in enumerate(counts)), total)
    second = Fraction(sum(v * v * c for v, c in enumerate(counts)), total)
    return mean, second - mean * mean


def doubles_moments() -> tuple[Fraction, Fraction]:
    """Exact mean and variance of the number of doubles in one hand.

    Hypergeometric (28 tiles, 7 doubles, 7 drawn): 7/4 and 49/48.

    >>> doubles_moments()
    (Fraction(7, 4), Fraction(49, 48))
    """
    counts = hands_by_doubles()
    mean = Fraction(sum(k * c for k, c in enumerate(counts)), N_HANDS)
    second = Fraction(sum(k * k * c for k, c in enumerate(counts)), N_HANDS)
    return mean, second - mean * mean


def seat_covariance(tiles: tuple[int, ...] = ALL_TILES) -> Fraction:
    """Covariance of the pip totals of two hands of one deal (sampling without replacement).

    Cov = -7 * 7 * sigma^2 / (T - 1), sigma^2 the per-tile pip variance: with
    28 tiles -49/3, i.e. correlation -1/3 (and -49/3 for the 21 non-doubles,
    where three hands always total 126).

    >>> seat_covariance(), seat_covariance(NON_DOUBLES)
    (Fraction(-49, 3), Fraction(-49, 3))
    """
    n = len(tiles)
    mean = Fraction(sum(PIPS[t] for t in tiles), n)
    var = Fraction(sum(PIPS[t] ** 2 for t in tiles), n) - mean * mean
    return -HAND_SIZE * HAND_SIZE * var / (n - 1)


@cache
def pair_counts(values: tuple[int, ...]) -> np.ndarray:
    """Joint counts of (sum over hand A, sum over hand B) for two disjoint 7-tile hands.

    ``values`` gives each tile's value (pips, 1 for a double, ...); the tile
    set is the tuple's positions. Counts ordered pairs of disjoint hands,
    C(T,7) * C(T-7,7) in all. A DP over tiles (each goes to A, to B or
    elsewhere) in int64, so the counts are exact (read-only result).

    >>> c = pair_counts(tuple(int(d) for d in IS_DOUBLE))
    >>> int(c.sum()) == N_HANDS * comb(21, 7), int(c[5:, 5:].sum())
    (True, 0)
    """
    top = HAND_SIZE * max(values) + 1
    # dp[a, b, x, y]: ways to put a tiles in A with sum x and b tiles in B with sum y.
    dp = np.zeros((HAND_SIZE + 1, HAND_SIZE + 1, top, top), dtype=np.int64)
    dp[0, 0, 0, 0] = 1
    for v in values:
        new = dp.copy()
        new[1:, :, v:, :] += dp[:-1, :, : top - v, :]
        new[:, 1:, :, v:] += dp[:, :-1, :, : top - v]
        dp = new
    out: np.ndarray = dp[HAND_SIZE, HAND_SIZE]
    out.flags.writeable = False
    return out


def pip_pair_counts(tiles: tuple[int, ...] = ALL_TILES) -> np.ndarray:
    """Joint counts of the pip totals of two disjoint hands from ``tiles``."""
    return pair_counts(tuple(PIPS[t] for t in tiles))


def doubles_pair_counts() -> np.ndarray:
    """Joint counts of the numbers of doubles in two disjoint hands (8 x 8)."""
    return pair_counts(tuple(int(d) for d in IS_DOUBLE))[: N_DOUBLES + 1, : N_DOUBLES + 1]


def pip_difference_counts(tiles: tuple[int, ...] = ALL_TILES) -> tuple[int, dict[int, int]]:
    """Distribution of pips(A) - pips(B) for two hands of one deal.

    Returns (number of ordered hand pairs, {difference: count}). Mean 0,
    variance 2 * 49 + 2 * 49/3 = 392/3 for the full set.
    """
    joint = pip_pair_counts(tiles)
    x, y = np.nonzero(joint)
    diff: dict[int, int] = {}
    for a, b in zip(x.tolist(), y.tolist(), strict=True):
        diff[a - b] = diff.get(a - b, 0) + int(joint[a, b])
    return int(joint.sum()), dict(sorted(diff.items()))


def _splits(total: int, sizes: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Ways to split ``total`` items among groups of the given capacities."""
    if len(sizes) == 1:
        return [(total,)] if total <= sizes[0] else []
    out: list[tuple[int, ...]] = []
    for k in range(min(total, sizes[0]) + 1):
        out.extend((k, *rest) for rest in _splits(total - k, sizes[1:]))
    return out


@cache
def five_doubles_probability(players: int, at_least: int = 5) -> Fraction:
    """P(some hand of a deal holds ``at_least``+ doubles), by enumerating double splits.

    The 7 doubles land in a uniform 7-subset of the 28 positions, so a split
    (k_0, ..., k_stock) over groups of sizes s_j has probability
    prod C(s_j, k_j) / C(28, 7). Only hands count, not the stock.

    >>> five_doubles_probability(4), five_doubles_probability(2)
    (Fraction(2279, 148005), Fraction(2279, 296010))
    """
    stock = N_TILES - HAND_SIZE * players
    sizes = (HAND_SIZE,) * players + ((stock,) if stock else ())
    hit = sum(
        prod(comb(s, k) for s, k in zip(sizes, split, strict=True))
        for split in _splits(N_DOUBLES, sizes)
        if max(split[:players]) >= at_least
    )
    return Fraction(hit, comb(N_TILES, N_DOUBLES))
