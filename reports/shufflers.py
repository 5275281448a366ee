"""Fair and broken shufflers, and synthetic windows of deals built with them.

The fairness battery is only as good as the cheats it catches, so these
reproduce the classic failures (deal-commitment.md, "Why these choices").
Each shuffler comes twice:

- scalar: ``f(words, n) -> list[int]``, shuffling ``list(range(n))`` with
  32-bit words from any source (e.g. the deal-v1 HMAC_DRBG stream);
- batch: ``batch_f(rng, batch, n) -> ndarray (batch, n) int8``, vectorized
  over decks with a numpy Generator, for power studies.

A shuffled ``range(n)`` is a deck order of n tile slots; ``deal_decks``
maps slots to tile ids (all 28, or the 21 non-doubles).

>>> words = iter(range(1000)).__next__
>>> fisher_yates(words, 5)  # j = 0, 1, 2, 1: swaps 4<->0 and 3<->1, then no-ops
[4, 3, 2, 1, 0]
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import cache, cmp_to_key
from math import ceil, log2
from typing import Final

import numpy as np

from replay.tiles import IS_DOUBLE, N_TILES

from .battery import DealWindow

Words = Callable[[], int]
Shuffler = Callable[[Words, int], list[int]]
BatchShuffler = Callable[[np.random.Generator, int, int], np.ndarray]

SEED_BITS: Final = 15
LAZY_SWAPS: Final = 20
FRIEND_RATE: Final = 0.1


def uniform(words: Words, m: int) -> int:
    """deal-v1 ``uniform(m)``: rejection sampling, no modulo bias."""
    limit = 2**32 - (2**32 % m)
    while True:
        w = words()
        if w < limit:
            return w % m


# --------------------------------------------------------------------------- scalar


def fisher_yates(words: Words, n: int) -> list[int]:
    """The reference: for i from n-1 down to 1, swap i with uniform j in [0, i]."""
    deck = list(range(n))
    for i in range(n - 1, 0, -1):
        j = uniform(words, i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def modulo_bias(words: Words, n: int) -> list[int]:
    """Fisher-Yates with j = (one random byte) % (i + 1): small j are favoured."""
    deck = list(range(n))
    for i in range(n - 1, 0, -1):
        j = (words() & 0xFF) % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def planet_poker(words: Words, n: int) -> list[int]:
    """The 1999 Planet Poker loop: every i swaps with any position, n^n paths onto n! orders."""
    deck = list(range(n))
    for i in range(n):
        j = uniform(words, n)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def sattolo(words: Words, n: int) -> list[int]:
    """Sattolo's algorithm (j in [0, i-1]): only the (n-1)! cyclic permutations, no fixed point."""
    deck = list(range(n))
    for i in range(n - 1, 0, -1):
        j = uniform(words, i)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def random_comparator(words: Words, n: int) -> list[int]:
    """``sorted`` with a comparator answering -1 or 1 at random (one word per comparison)."""
    return sorted(range(n), key=cmp_to_key(lambda a, b: -1 if words() & 1 else 1))


def _seeded_words(seed: int) -> Words:
    gen = random.Random(seed)
    return lambda: gen.getrandbits(32)


def small_seed_space(words: Words, n: int, bits: int = SEED_BITS) -> list[int]:
    """A fair shuffle driven by a PRNG seeded with only ``bits`` bits: 2^bits decks at most."""
    return fisher_yates(_seeded_words(words() & ((1 << bits) - 1)), n)


def make_lazy_reshuffle(swaps: int = LAZY_SWAPS) -> Shuffler:
    """A stateful shuffler: the next deck is the previous one after ``swaps`` random swaps.

    Each deck alone looks uniform in the long run; consecutive deals of a
    table share most of their layout (a serial-dependence cheat).
    """
    last: list[int] = []

    def shuffle(words: Words, n: int) -> list[int]:
        nonlocal last
        if len(last) != n:
            last = fisher_yates(words, n)
        deck = list(last)
        for _ in range(swaps):
            a, b = uniform(words, n), uniform(words, n)
            deck[a], deck[b] = deck[b], deck[a]
        last = deck
        return deck

    return shuffle


# --------------------------------------------------------------------------- batch


def _swap(deck: np.ndarray, i: int | np.ndarray, j: np.ndarray) -> None:
    rows = np.arange(len(deck))
    held = deck[rows, i].copy()
    deck[rows, i] = deck[rows, j]
    deck[rows, j] = held


def _identity(batch: int, n: int) -> np.ndarray:
    return np.tile(np.arange(n, dtype=np.int8), (batch, 1))


def batch_fisher_yates(rng: np.random.Generator, batch: int, n: int) -> np.ndarray:
    deck = _identity(batch, n)
    for i in range(n - 1, 0, -1):
        _swap(deck, i, rng.integers(0, i + 1, batch))
    return deck


def batch_modulo_bias(rng: np.random.Generator, batch: int, n: int) -> np.ndarray:
    deck = _identity(batch, n)
    for i in range(n - 1, 0, -1):
        _swap(deck, i, rng.integers(0, 256, batch) % (i + 1))
    return deck


def batch_planet_poker(rng: np.random.Generator, batch: int, n: int) -> np.ndarray:
    deck = _identity(batch, n)
    for i in range(n):
        _swap(deck, i, rng.integers(0, n, batch))
    return deck


def batch_sattolo(rng: np.random.Generator, batch: int, n: int) -> np.ndarray:
    deck = _identity(batch, n)
    for i in range(n - 1, 0, -1):
        _swap(deck, i, rng.integers(0, i, batch))
    return deck


def comparator_bits(n: int) -> int:
    """Most comparisons CPython's sort makes on n < 64 items: a run scan, then binary insertion."""
    return (n - 1) + (n - 1) * ceil(log2(n + 1))


def comparator_sort(bits: np.ndarray) -> np.ndarray:
    """``random_comparator`` replayed for a batch: row r uses bits[r] as its comparison answers.

    Emulates CPython 3.11 ``list.sort`` for n < 64 (one run: ``count_run``
    then ``binarysort``), where comparison k answers "less" iff bits[r, k]
    is 1. Equal, given the same answers, to ``random_comparator`` with
    words yielding bits[r] (checked in the tests).
    """
    batch, width = bits.shape
    n = next(m for m in range(2, 64) if comparator_bits(m) == width)
    deck = _identity(batch, n)
    ptr = np.zeros(batch, dtype=np.int64)
    rows = np.arange(batch)

    def less(active: np.ndarray) -> np.ndarray:
        out: np.ndarray = bits[rows, ptr].astype(bool) & active
        ptr[active] += 1
        return out

    # count_run: a strictly descending run (then reversed) or a non-descending one.
    everyone = np.ones(batch, dtype=bool)
    descending = less(everyone)
    run = np.full(batch, 2)
    active = everyone.copy()
    for k in range(2, n):
        lt = less(active)
        active &= np.where(descending, lt, ~lt)
        run[active] = k + 1
    cols = np.arange(n)
    rev = np.where(descending[:, None] & (cols < run[:, None]), run[:, None] - 1 - cols, cols)
    deck = np.take_along_axis(deck, rev, axis=1)
    # binarysort: insert deck[start] into the sorted prefix, for start = run .. n-1.
    for start in range(2, n):
        active = start >= run
        lo = np.zeros(batch, dtype=np.int64)
        hi = np.where(active, start, 0)
        while True:
            searching = lo < hi
            if not searching.any():
                break
            mid = lo + ((hi - lo) >> 1)
            lt = less(searching)  # pivot < deck[mid]
            hi = np.where(searching & lt, mid, hi)
            lo = np.where(searching & ~lt, mid + 1, lo)
        lo = np.where(active, lo, start)
        idx = np.where(
            (cols < lo[:, None]) | (cols > start),
            cols,
            np.where(cols == lo[:, None], start, cols - 1),
        )
        deck = np.take_along_axis(deck, idx, axis=1)
    return deck


def batch_random_comparator(rng: np.random.Generator, batch: int, n: int) -> np.ndarray:
    return comparator_sort(rng.integers(0, 2, (batch, comparator_bits(n)), dtype=np.int8))


@cache
def _seed_table(n: int, bits: int) -> np.ndarray:
    table = np.array([fisher_yates(_seeded_words(s), n) for s in range(1 << bits)], dtype=np.int8)
    table.flags.writeable = False
    return table


def batch_small_seed_space(rng: np.random.Generator, batch: int, n: int) -> np.ndarray:
    """Same decks as ``small_seed_space`` (seed = word & 0x7fff), looked up in a cached table."""
    return _seed_table(n, SEED_BITS)[rng.integers(0, 1 << SEED_BITS, batch)]


def batch_lazy_reshuffle(rng: np.random.Generator, batch: int, n: int) -> np.ndarray:
    """One chain of ``batch`` decks: each the previous after LAZY_SWAPS random swaps."""
    steps = _identity(batch, n)
    for _ in range(LAZY_SWAPS):
        a = rng.integers(0, n, batch)
        b = rng.integers(0, n, batch)
        rows = np.arange(batch)
        held = steps[rows, a].copy()
        steps[rows, a] = steps[rows, b]
        steps[rows, b] = held
    out = np.empty_like(steps)
    deck = batch_fisher_yates(rng, 1, n)[0]
    for k in range(batch):
        deck = deck[steps[k]]
        out[k] = deck
    return out


#: Every batch shuffler by name (the power study's rows).
BATCH: Final[dict[str, BatchShuffler]] = {
    "fair": batch_fisher_yates,
    "modulo_bias": batch_modulo_bias,
    "planet_poker": batch_planet_poker,
    "sattolo": batch_sattolo,
    "random_comparator": batch_random_comparator,
    "small_seed_space": batch_small_seed_space,
    "lazy_reshuffle": batch_lazy_reshuffle,
}

#: Shufflers whose consecutive decks depend on each other (one chain per table).
CHAINED: Final = frozenset({"lazy_reshuffle"})


# --------------------------------------------------------------------------- deals


_DOUBLE = np.array(IS_DOUBLE, dtype=bool)
_NON_DOUBLES = np.flatnonzero(~_DOUBLE).astype(np.int8)


def deal_decks(slots: np.ndarray, doubles_aside: bool = False) -> np.ndarray:
    """Map shuffled slots 0..n-1 to tile ids: the canonical ids, or the 21 non-doubles."""
    return _NON_DOUBLES[slots] if doubles_aside else slots.astype(np.int8)


def give_extra_double(
    deck: np.ndarray, seat: np.ndarray, rng: np.random.Generator, rate: float = FRIEND_RATE
) -> np.ndarray:
    """The friend: where ``seat[d] >= 0``, with probability ``rate`` that seat's hand trades
    one random non-double for a random double held elsewhere (another seat or the stock).

    Returns a new array; deals where the swap is impossible are left alone.
    """
    out = deck.copy()
    rows = np.flatnonzero((seat >= 0) & (rng.random(len(deck)) < rate))
    if not len(rows):
        return out
    sub = out[rows]
    in_hand = (np.arange(deck.shape[1]) // 7)[None, :] == seat[rows, None]
    dbl = _DOUBLE[sub]
    give = in_hand & ~dbl
    take = ~in_hand & dbl
    ok = give.any(axis=1) & take.any(axis=1)
    key = rng.random(sub.shape)
    i = np.where(give, key, -1.0).argmax(axis=1)
    j = np.where(take, key, -1.0).argmax(axis=1)
    r = np.flatnonzero(ok)
    held = sub[r, i[r]].copy()
    sub[r, i[r]] = sub[r, j[r]]
    sub[r, j[r]] = held
    out[rows] = sub
    return out


def simulate_window(
    shuffler: str | BatchShuffler,
    n_deals: int,
    rng: np.random.Generator,
    *,
    players: int = 4,
    tables: int = 4,
    match_len: int = 10,
    doubles_aside: bool = False,
    friend_rate: float = 0.0,
) -> DealWindow:
    """A synthetic window: ``tables`` tables dealing in turn (deal k at table k % tables).

    Each table has its own ``players`` regulars (player ids t*players ..),
    reseated at random every ``match_len`` deals. Player "0" (at table 0,
    so in 1/tables of the deals) is the friend when ``friend_rate`` > 0.
    """
    make = BATCH[shuffler] if isinstance(shuffler, str) else shuffler
    n_tiles = 21 if doubles_aside else N_TILES
    if shuffler in CHAINED:  # consecutive output decks go to consecutive deals of one table
        per = -(-n_deals // tables)
        k = np.arange(n_deals)
        slots = make(rng, per * tables, n_tiles)[(k % tables) * per + k // tables]
    else:
        slots = make(rng, n_deals, n_tiles)
    deck = deal_decks(slots, doubles_aside)
    k = np.arange(n_deals)
    table = k % tables
    match = (k // tables) // match_len
    seating = np.argsort(rng.random((tables, int(match.max()) + 1, players)), axis=2)
    player_idx = table[:, None] * players + seating[table, match]
    if friend_rate > 0:
        at = player_idx == 0
        seat = np.where(at.any(axis=1), at.argmax(axis=1), -1)
        deck = give_extra_double(deck, seat, rng, friend_rate)
    return DealWindow.from_decks(deck, players, table, player_idx)
