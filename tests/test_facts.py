"""The combinatorial facts of rules.md, computed two ways: by formula and by enumeration."""

from __future__ import annotations

import itertools
from collections import Counter
from math import comb

from replay.match import redeal_due
from replay.rules import resolve
from replay.tiles import (
    DOUBLES,
    FULL_SET,
    IS_DOUBLE,
    N_TILES,
    SUIT_MASK,
    mask_of,
    parse_tile,
    pips_of,
)

HANDS = 1_184_040
BY_DOUBLES = {5: 4_410, 6: 147, 7: 1}


def test_the_set() -> None:
    assert N_TILES == 28 and pips_of(FULL_SET) == 168
    assert DOUBLES.bit_count() == 7 and (FULL_SET & ~DOUBLES).bit_count() == 21
    # each number is on 7 tiles and shows 8 halves (its double twice)
    for n in range(7):
        assert SUIT_MASK[n].bit_count() == 7


def test_seven_tile_hands_by_formula() -> None:
    assert comb(28, 7) == HANDS
    # k of the 7 doubles and 7 - k of the 21 other tiles
    by_k = {k: comb(7, k) * comb(21, 7 - k) for k in range(8)}
    assert sum(by_k.values()) == HANDS
    assert {k: by_k[k] for k in BY_DOUBLES} == BY_DOUBLES
    # the odds quoted by the Puerto Rican source (004)
    assert round(by_k[5] / HANDS, 4) == 0.0037
    assert round(by_k[6] / HANDS, 5) == 0.00012
    assert round(by_k[7] / HANDS, 8) == 0.00000084


def test_seven_tile_hands_by_enumeration() -> None:
    is_double = [int(d) for d in IS_DOUBLE]
    counts = Counter(
        sum(map(is_double.__getitem__, hand)) for hand in itertools.combinations(range(28), 7)
    )
    assert sum(counts.values()) == HANDS
    assert {k: counts[k] for k in BY_DOUBLES} == BY_DOUBLES
    # five or more doubles: what a redeal rule looks at
    assert sum(counts[k] for k in (5, 6, 7)) == 4_558


def test_redeal_due_counts_doubles() -> None:
    r = resolve("colombia")
    five = mask_of(parse_tile(x) for x in ["00", "11", "22", "33", "44", "10", "20"])
    four = mask_of(parse_tile(x) for x in ["00", "11", "22", "33", "10", "20", "30"])
    assert redeal_due(r, [four, five, 0, 0]) == [1]
    assert redeal_due(r, [four, four, 0, 0]) == []


def test_the_doubles_in_boneyard_block_line() -> None:
    # rules.md: 3-0 0-4 4-3 3-1 1-5 5-3 3-2 2-6 6-3 shows 3 at both ends with all six 3s down
    line = ["30", "04", "43", "31", "15", "53", "32", "26", "63"]
    ends = [int(line[0][0]), int(line[0][1])]
    for name in line[1:]:
        a, b = int(name[0]), int(name[1])
        assert a == ends[1]
        ends[1] = b
    assert ends == [3, 3]
    down = mask_of(parse_tile(x) for x in line)
    assert SUIT_MASK[3] & ~DOUBLES & ~down == 0
    # the 12 tiles left in hands hold an even number of pips
    assert (pips_of(FULL_SET & ~DOUBLES) - pips_of(down)) % 2 == 0
