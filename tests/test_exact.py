"""Exact reference tables: every known count, checked against closed forms."""

from __future__ import annotations

import doctest
from fractions import Fraction
from math import comb

import numpy as np

from reports import exact


def test_doctests() -> None:
    assert doctest.testmod(exact).failed == 0


def test_number_of_hands() -> None:
    assert exact.N_HANDS == comb(28, 7) == 1_184_040
    h = exact.hands()
    assert h.shape == (1_184_040, 7)
    assert (np.diff(h.astype(int), axis=1) > 0).all()  # strictly increasing -> all distinct
    assert exact.hands(exact.NON_DOUBLES).shape == (comb(21, 7), 7)


def test_hands_by_doubles() -> None:
    counts = exact.hands_by_doubles()
    assert counts == (116_280, 379_848, 427_329, 209_475, 46_550, 4_410, 147, 1)
    assert counts == tuple(comb(7, k) * comb(21, 7 - k) for k in range(8))
    assert sum(counts) == exact.N_HANDS


def test_pip_distribution() -> None:
    counts = exact.hand_pip_counts()
    assert sum(counts) == exact.N_HANDS
    assert exact.pip_moments() == (Fraction(42), Fraction(49))
    lo = min(v for v, c in enumerate(counts) if c)
    assert (lo, len(counts) - 1) == (15, 69)
    assert counts[15:70] == counts[15:70][::-1]  # symmetric about 42 (t -> 6-a, 6-b)
    assert counts[42] == max(counts)


def test_pip_distribution_without_doubles() -> None:
    counts = exact.hand_pip_counts(exact.NON_DOUBLES)
    assert sum(counts) == comb(21, 7)
    assert exact.pip_moments(exact.NON_DOUBLES) == (Fraction(42), Fraction(98, 3))


def test_doubles_moments() -> None:
    assert exact.doubles_moments() == (Fraction(7, 4), Fraction(49, 48))


def test_five_doubles_probability() -> None:
    some_hand = sum(exact.hands_by_doubles()[5:])  # 4,558 hands with 5+ doubles
    assert some_hand == 4_558
    # At most one hand can hold 5+ of the 7 doubles, so the events are disjoint.
    for players in (2, 3, 4):
        assert exact.five_doubles_probability(players) == Fraction(players * some_hand, 1_184_040)
    assert round(float(exact.five_doubles_probability(4)), 6) == 0.015398
    # The brief quoted 0.0076986 for 2 players; the exact value is 9,116 / 1,184,040.
    assert round(float(exact.five_doubles_probability(2)), 7) == 0.0076991
    assert exact.five_doubles_probability(4, at_least=8) == 0
    # 4+ doubles: 4 + 4 > 7, so still at most one hand and the events stay disjoint.
    assert exact.five_doubles_probability(4, at_least=4) == Fraction(
        4 * sum(exact.hands_by_doubles()[4:]), exact.N_HANDS
    )


def test_pair_counts_marginals() -> None:
    joint = exact.pip_pair_counts()
    assert int(joint.sum()) == exact.N_HANDS * comb(21, 7)
    marginal = joint.sum(axis=1)
    single = np.array(exact.hand_pip_counts())
    assert (marginal[: len(single)] == single * comb(21, 7)).all()
    assert (marginal[len(single) :] == 0).all()
    assert (joint == joint.T).all()


def test_doubles_pair_counts_closed_form() -> None:
    joint = exact.doubles_pair_counts()
    for a in range(8):
        for b in range(8):
            want = (
                comb(7, a) * comb(21, 7 - a) * comb(7 - a, b) * comb(14 + a, 7 - b)
                if a + b <= 7
                else 0
            )
            assert joint[a, b] == want


def test_seat_covariance_matches_pair_table() -> None:
    joint = exact.pip_pair_counts().astype(object)  # exact integer arithmetic
    v = np.arange(joint.shape[0])
    total = joint.sum()
    exy = Fraction(int((joint * np.outer(v, v)).sum()), int(total))
    assert exy - 42 * 42 == exact.seat_covariance() == Fraction(-49, 3)


def test_pip_difference() -> None:
    total, diff = exact.pip_difference_counts()
    assert total == exact.N_HANDS * comb(21, 7) == sum(diff.values())
    mean = Fraction(sum(d * c for d, c in diff.items()), total)
    var = Fraction(sum(d * d * c for d, c in diff.items()), total) - mean**2
    assert mean == 0
    assert var == 2 * 49 + 2 * Fraction(49, 3) == Fraction(392, 3)
    assert max(diff) == 69 - 15 and diff[54] == diff[-54]
