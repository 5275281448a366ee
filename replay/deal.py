"""Scheme deal-v1: seed chain, HMAC_DRBG word stream, shuffle, deal and lead draw.

Everything here follows ``deal-commitment.md`` bit for bit; a verifier that
is "almost" the server's algorithm is worthless, so the few choices the spec
leaves open are named where they are made.

>>> deal = derive_deal(bytes(32), table="t-1", match="m-1", hand=1, players=4,
...                    client_seeds=["", "", "", ""], beacon=None)
>>> [len(h) for h in deal.hands], len(deal.stock)
([7, 7, 7, 7], 0)
>>> sorted(t for h in deal.hands for t in h) == list(range(28))
True
"""

from __future__ import annotations

import hashlib
import re
import struct
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, Protocol

from replay.accel import native
from replay.tiles import DOUBLE_OF, IS_DOUBLE, N_TILES, PIPS, Tile, tile_name, weight_key

__all__ = [
    "DEAL_LABEL",
    "LEAD_LABEL",
    "LEAD_MODES",
    "SCHEME",
    "Deal",
    "DealError",
    "HmacDrbg",
    "LeadMode",
    "SupportsUniform",
    "WordStream",
    "deal_from_deck",
    "deal_nonce",
    "deal_personalization",
    "deal_stream",
    "derive_deal",
    "derive_deck",
    "derive_lead_deck",
    "enc_int",
    "enc_str",
    "lead_stream",
    "make_chain",
    "resolve_lead_draw",
    "sha256_hex",
    "shuffle",
    "uniform",
    "verify_chain",
]

SCHEME: Final = "deal-v1"
DEAL_LABEL: Final = "deal-v1/deal"
LEAD_LABEL: Final = "deal-v1/lead"

HAND_SIZE: Final = 7
#: Every Generate call asks for this many bytes (part of the scheme: the
#: request size changes the output).
BLOCK_BYTES: Final = 32
WORDS_PER_BLOCK: Final = BLOCK_BYTES // 4
_2_32: Final = 1 << 32

#: Canonical tile ids: all 28, the 21 non-doubles, the 7 doubles.
ALL_IDS: Final[tuple[Tile, ...]] = tuple(range(N_TILES))
NON_DOUBLE_IDS: Final[tuple[Tile, ...]] = tuple(t for t in ALL_IDS if not IS_DOUBLE[t])
DOUBLE_IDS: Final[tuple[Tile, ...]] = tuple(sorted(DOUBLE_OF))

LeadMode = Literal["draw_for_lead", "bayamon_draw", "drawn_double"]
LEAD_MODES: Final[frozenset[str]] = frozenset({"draw_for_lead", "bayamon_draw", "drawn_double"})

_unpack_block = struct.Struct(">8I").unpack
_HEX = re.compile(r"(?:[0-9a-fA-F]{2})*")


class DealError(ValueError):
    """Arguments that no deal-v1 derivation can take (wrong seed count, short deck, ...)."""


# --------------------------------------------------------------------------
# Byte encoding


def enc_str(s: str) -> bytes:
    """4-byte big-endian length of the UTF-8 bytes, then the bytes.

    >>> enc_str("ab").hex()
    '000000026162'
    >>> enc_str("é").hex()
    '00000002c3a9'
    """
    b = s.encode("utf-8")
    return len(b).to_bytes(4, "big") + b


def enc_int(n: int) -> bytes:
    """8-byte big-endian unsigned integer.

    >>> enc_int(1).hex()
    '0000000000000001'
    >>> try:
    ...     enc_int(-1)
    ... except DealError as e:
    ...     print(e)
    enc_int needs 0 <= n < 2**64, got -1
    """
    if not 0 <= n < 1 << 64:
        raise DealError(f"enc_int needs 0 <= n < 2**64, got {n}")
    return n.to_bytes(8, "big")


# --------------------------------------------------------------------------
# HMAC_DRBG (SP 800-90A 10.1.2) with SHA-256


_sha256 = hashlib.sha256
_IPAD: Final = bytes(b ^ 0x36 for b in range(256))
_OPAD: Final = bytes(b ^ 0x5C for b in range(256))
_KEY_FILL: Final = bytes(64 - 32)


def _pads(key: bytes) -> tuple[bytes, bytes]:
    """RFC 2104 inner and outer pads of a 32-byte key (SHA-256 block: 64 bytes)."""
    k = key + _KEY_FILL
    return k.translate(_IPAD), k.translate(_OPAD)


class HmacDrbg:
    """HMAC_DRBG with SHA-256: no reseed, no additional input, no prediction resistance.

    Speed: a deal costs ~16 HMACs, so HMAC is the whole cost. Every key here
    is 32 bytes and is used for two or three HMACs in a row, so we compute
    its RFC 2104 pads once (``bytes.translate``) and hash with ``hashlib``:
    0.73 us per HMAC against 1.3 us for the one-shot ``hmac.digest`` (whose
    OpenSSL HMAC context setup dominates at these sizes). The tests check
    the result against ``hmac.digest`` and the NIST CAVP vector.

    >>> d = HmacDrbg(bytes(32), b"", b"")
    >>> len(d.generate(5)), len(d.generate(40))
    (5, 40)
    """

    __slots__ = ("_v", "_ipad", "_opad")

    def __init__(self, entropy: bytes, nonce: bytes, personalization: bytes = b"") -> None:
        self._set_key(b"\x00" * 32)
        self._v = b"\x01" * 32
        self._update(entropy + nonce + personalization)

    def _set_key(self, key: bytes) -> None:
        self._ipad, self._opad = _pads(key)

    def _hmac(self, msg: bytes) -> bytes:
        """HMAC-SHA256 under the current key."""
        return _sha256(self._opad + _sha256(self._ipad + msg).digest()).digest()

    def _update(self, provided: bytes) -> None:
        self._set_key(self._hmac(self._v + b"\x00" + provided))
        self._v = self._hmac(self._v)
        if provided:
            self._set_key(self._hmac(self._v + b"\x01" + provided))
            self._v = self._hmac(self._v)

    def generate(self, n: int) -> bytes:
        """Return ``n`` pseudorandom bytes (one Generate call).

        The SP 800-90A limit of 7500 bits per request is enforced, since a
        longer request would not be a valid call.
        """
        if not 0 <= n <= 7500 // 8:
            raise DealError(f"HMAC_DRBG request of {n} bytes (0..937 allowed)")
        out = b""
        while len(out) < n:
            self._v = self._hmac(self._v)
            out += self._v
        self._update(b"")  # no additional input: the one-round update
        return out[:n]

    def generate_block(self) -> bytes:
        """One 32-byte Generate call, the only size deal-v1 uses (inlined hot path)."""
        sha, ipad, opad = _sha256, self._ipad, self._opad
        v = sha(opad + sha(ipad + self._v).digest()).digest()
        k = sha(opad + sha(ipad + v + b"\x00").digest()).digest()
        self._ipad, self._opad = ipad, opad = _pads(k)
        self._v = sha(opad + sha(ipad + v).digest()).digest()
        return v


# --------------------------------------------------------------------------
# Words, uniform integers, shuffle


class SupportsUniform(Protocol):
    def uniform(self, m: int) -> int: ...


def _limit(m: int) -> int:
    if not 1 <= m <= _2_32:
        raise DealError(f"uniform(m) needs 1 <= m <= 2**32, got {m}")
    return _2_32 - _2_32 % m


#: Rejection limits for the small bounds a 28-tile shuffle asks for.
_SMALL_LIMITS: Final[tuple[int, ...]] = (0, *(_limit(m) for m in range(1, 33)))


def uniform(words: Iterable[int] | Iterator[int], m: int) -> int:
    """Uniform integer in [0, m) from 32-bit words, by rejection (no modulo bias).

    Takes words until one is below 2^32 - (2^32 mod m), then returns it mod m.

    >>> uniform(iter([4294967295, 5]), 3)   # 2^32-1 is rejected for m = 3
    2
    >>> uniform([7], 1)
    0
    """
    limit = _limit(m)
    it = iter(words)
    for w in it:
        if w < limit:
            return w % m
    raise DealError(f"word stream ran out while drawing uniform({m})")


class WordStream:
    """32-bit big-endian words from a DRBG, eight per 32-byte Generate call.

    Also an iterator of words, so ``uniform(stream, m)`` works too.
    """

    __slots__ = ("_drbg", "_words", "_pos", "blocks")

    def __init__(self, drbg: HmacDrbg) -> None:
        self._drbg = drbg
        self._words: tuple[int, ...] = ()
        self._pos = WORDS_PER_BLOCK
        #: Generate calls made so far.
        self.blocks = 0

    def next_word(self) -> int:
        pos = self._pos
        if pos == WORDS_PER_BLOCK:
            self._words = _unpack_block(self._drbg.generate_block())
            self.blocks += 1
            pos = 0
        self._pos = pos + 1
        return self._words[pos]

    def __iter__(self) -> WordStream:
        return self

    def __next__(self) -> int:
        return self.next_word()

    def uniform(self, m: int) -> int:
        """Uniform integer in [0, m); see :func:`uniform`."""
        limit = _limit(m)
        w = self.next_word()
        while w >= limit:
            w = self.next_word()
        return w % m

    def shuffle_in_place(self, items: list[int]) -> None:
        """:func:`shuffle` with the word loop inlined (the deal hot path, ~2x faster).

        Draws exactly the words ``uniform`` would; the tests check both agree.
        """
        words, pos, gen = self._words, self._pos, self._drbg.generate_block
        limits = _SMALL_LIMITS
        for i in range(len(items) - 1, 0, -1):
            m = i + 1
            limit = limits[m] if m < len(limits) else _limit(m)
            while True:
                if pos == WORDS_PER_BLOCK:
                    words = _unpack_block(gen())
                    self.blocks += 1
                    pos = 0
                w = words[pos]
                pos += 1
                if w < limit:
                    break
            j = w % m
            items[i], items[j] = items[j], items[i]
        self._words, self._pos = words, pos


def shuffle(items: Sequence[int], stream: SupportsUniform) -> list[int]:
    """Fisher-Yates as deal-v1 states it; returns a new list, ``items`` is untouched.

    For i from len-1 down to 1: j = uniform(i+1); swap [i] and [j].

    >>> class Zero:
    ...     def uniform(self, m): return 0
    >>> shuffle([0, 1, 2, 3], Zero())   # j = 0 every time
    [1, 2, 3, 0]
    """
    out = list(items)
    if type(stream) is WordStream:
        stream.shuffle_in_place(out)
        return out
    u = stream.uniform
    for i in range(len(out) - 1, 0, -1):
        j = u(i + 1)
        out[i], out[j] = out[j], out[i]
    return out


# --------------------------------------------------------------------------
# Streams of a match


def deal_nonce(table: str, match: str, hand: int) -> bytes:
    """``enc_str(table) || enc_str(match) || enc_int(hand)``.

    >>> deal_nonce("t-2", "m-0002", 3).hex()
    '00000003742d32000000066d2d303030320000000000000003'
    """
    return enc_str(table) + enc_str(match) + enc_int(hand)


def deal_personalization(
    label: str, beacon: str | None, players: int, client_seeds: Sequence[str]
) -> bytes:
    """``enc_str(label) || enc_str(beacon or "") || enc_int(players) || enc_str(seed_s)...``.

    There must be exactly one client seed per seat (``""`` where a player
    gave none): a padded or truncated list would silently derive another deal.

    >>> deal_personalization("deal-v1/deal", None, 2, ["a", "b"]).hex()
    '0000000c6465616c2d76312f6465616c00000000000000000000000200000001610000000162'
    """
    if len(client_seeds) != players:
        raise DealError(f"{len(client_seeds)} client seeds for {players} players")
    parts = [enc_str(label), enc_str(beacon or ""), enc_int(players)]
    parts.extend(enc_str(s) for s in client_seeds)
    return b"".join(parts)


def deal_stream(
    server_seed: bytes,
    *,
    table: str,
    match: str,
    hand: int,
    players: int,
    client_seeds: Sequence[str],
    beacon: str | None,
    label: str = DEAL_LABEL,
) -> WordStream:
    """The word stream of one derivation (the deal by default)."""
    drbg = HmacDrbg(
        server_seed,
        deal_nonce(table, match, hand),
        deal_personalization(label, beacon, players, client_seeds),
    )
    return WordStream(drbg)


def lead_stream(
    hand1_seed: bytes,
    *,
    table: str,
    match: str,
    players: int,
    client_seeds: Sequence[str],
    beacon: str | None,
) -> WordStream:
    """The lead-draw stream: always hand 1's seed and client seeds, ``n = 1``."""
    return deal_stream(
        hand1_seed,
        table=table,
        match=match,
        hand=1,
        players=players,
        client_seeds=client_seeds,
        beacon=beacon,
        label=LEAD_LABEL,
    )


# --------------------------------------------------------------------------
# Deck, deal, lead draw


@dataclass(frozen=True, slots=True)
class Deal:
    """Seat s's hand is ``hands[s]`` (deal order); ``stock[k]`` is the hand's k-th draw."""

    hands: tuple[tuple[Tile, ...], ...]
    stock: tuple[Tile, ...]

    def names(self) -> tuple[list[list[str]], list[str]]:
        """Hands and stock as tile names, the way logs write them."""
        return [[tile_name(t) for t in h] for h in self.hands], [tile_name(t) for t in self.stock]


def derive_deck(
    server_seed: bytes,
    *,
    table: str,
    match: str,
    hand: int,
    players: int,
    client_seeds: Sequence[str],
    beacon: str | None,
    doubles_aside: bool = False,
) -> list[Tile]:
    """The shuffled deck of a hand: all 28 ids, or the 21 non-doubles with ``doubles_aside``."""
    ids = NON_DOUBLE_IDS if doubles_aside else ALL_IDS
    if native is not None:
        return _native_shuffle(server_seed, deal_nonce(table, match, hand),
                               deal_personalization(DEAL_LABEL, beacon, players, client_seeds), ids)  # fmt: skip
    stream = deal_stream(
        server_seed,
        table=table,
        match=match,
        hand=hand,
        players=players,
        client_seeds=client_seeds,
        beacon=beacon,
    )
    return shuffle(ids, stream)


_IDS_BYTES: Final[dict[tuple[Tile, ...], bytes]] = {
    ids: bytes(ids) for ids in (ALL_IDS, NON_DOUBLE_IDS, DOUBLE_IDS)
}


def _native_shuffle(entropy: bytes, nonce: bytes, pers: bytes, ids: tuple[Tile, ...]) -> list[Tile]:
    """HMAC_DRBG + Fisher-Yates in C: the same words, the same swaps (tests/test_native.py)."""
    assert native is not None
    return list(native.shuffle(entropy, nonce, pers, _IDS_BYTES[ids]))


def deal_from_deck(deck: Sequence[Tile], players: int) -> Deal:
    """Seat s gets deck[7s .. 7s+6]; the rest, in order, is the stock.

    >>> d = deal_from_deck(list(range(28)), 2)
    >>> d.hands[1], d.stock[:3]
    ((7, 8, 9, 10, 11, 12, 13), (14, 15, 16))
    """
    dealt = HAND_SIZE * players
    if players < 1 or dealt > len(deck):
        raise DealError(f"cannot deal {players} hands of {HAND_SIZE} from {len(deck)} tiles")
    return Deal(
        hands=tuple(tuple(deck[s * HAND_SIZE : (s + 1) * HAND_SIZE]) for s in range(players)),
        stock=tuple(deck[dealt:]),
    )


def derive_deal(
    server_seed: bytes,
    *,
    table: str,
    match: str,
    hand: int,
    players: int,
    client_seeds: Sequence[str],
    beacon: str | None,
    doubles_aside: bool = False,
) -> Deal:
    """The hands and the stock order of a hand, as the server must have dealt them."""
    deck = derive_deck(
        server_seed,
        table=table,
        match=match,
        hand=hand,
        players=players,
        client_seeds=client_seeds,
        beacon=beacon,
        doubles_aside=doubles_aside,
    )
    return deal_from_deck(deck, players)


def derive_lead_deck(
    hand1_seed: bytes,
    *,
    table: str,
    match: str,
    players: int,
    client_seeds: Sequence[str],
    beacon: str | None,
    doubles_only: bool = False,
) -> list[Tile]:
    """The lead-draw deck: all 28 ids shuffled, or the 7 doubles (``first_lead = drawn_double``)."""
    ids = DOUBLE_IDS if doubles_only else ALL_IDS
    if native is not None:
        nonce = deal_nonce(table, match, 1)
        pers = deal_personalization(LEAD_LABEL, beacon, players, client_seeds)
        return _native_shuffle(hand1_seed, nonce, pers, ids)
    stream = lead_stream(
        hand1_seed,
        table=table,
        match=match,
        players=players,
        client_seeds=client_seeds,
        beacon=beacon,
    )
    return shuffle(ids, stream)


def resolve_lead_draw(
    lead_deck: Sequence[Tile], players: int, mode: LeadMode
) -> tuple[list[tuple[int, Tile]], int]:
    """The draws ``[(seat, tile), ...]`` in drawing order (redraws included) and the leader.

    ``draw_for_lead`` / ``drawn_double``: seats 0..n-1 take one tile each;
    the highest total leads, equal totals decided by the higher half (tiles
    are distinct, so that settles it). ``bayamon_draw``: totals only; the
    seats tied for highest take the next tiles, in seat order, until one is
    highest. If the deck cannot give every tied seat a tile, that round is
    not drawn and the lowest-numbered tied seat leads (spec: "if the lead
    deck runs out"; we never draw a partial round).

    >>> from replay.tiles import parse_tile as p
    >>> resolve_lead_draw([p("62"), p("65"), p("44"), p("55")], 4, "draw_for_lead")
    ([(0, 17), (1, 26), (2, 22), (3, 25)], 1)
    >>> resolve_lead_draw([p("60"), p("51"), p("42"), p("33")], 4, "draw_for_lead")[1]
    0
    >>> draws, leader = resolve_lead_draw([p("60"), p("51"), p("00"), p("11"), p("22")], 3, "bayamon_draw")
    >>> [(s, tile_name(t)) for s, t in draws], leader
    ([(0, '60'), (1, '51'), (2, '00'), (0, '11'), (1, '22')], 1)
    """
    if mode not in LEAD_MODES:
        raise DealError(f"unknown lead draw mode {mode!r}")
    if players < 1 or len(lead_deck) < players:
        raise DealError(f"lead deck of {len(lead_deck)} tiles for {players} players")
    draws = [(s, lead_deck[s]) for s in range(players)]
    if mode != "bayamon_draw":
        leader = max(range(players), key=lambda s: weight_key(lead_deck[s]))
        return draws, leader
    tied = list(range(players))
    totals = {s: PIPS[lead_deck[s]] for s in tied}
    pos = players
    while True:
        best = max(totals[s] for s in tied)
        tied = [s for s in tied if totals[s] == best]
        if len(tied) == 1 or pos + len(tied) > len(lead_deck):
            return draws, tied[0]
        for s in tied:
            t = lead_deck[pos]
            pos += 1
            draws.append((s, t))
            totals[s] = PIPS[t]


# --------------------------------------------------------------------------
# Seed chain


def _unhex(h: object) -> bytes | None:
    """Strict hex (no spaces, even length, not empty); ``None`` if it is not."""
    if not isinstance(h, str) or not h or _HEX.fullmatch(h) is None:
        return None
    return bytes.fromhex(h)


def sha256_hex(h: str) -> str:
    """SHA-256 of the bytes a hex string spells, as hex.

    >>> sha256_hex("49ff1af0d0e532f0520bae7a1d2ba8be7fa99d217991163133ba741a92b2f2ae")
    'f240cc8c95ea6f114a6abca5236dc0546958cc121e48e48260753a53213f4d93'
    >>> try:
    ...     sha256_hex("xyz")
    ... except DealError as e:
    ...     print(e)
    not a hex seed: 'xyz'
    """
    b = _unhex(h)
    if b is None:
        raise DealError(f"not a hex seed: {h!r}")
    return hashlib.sha256(b).hexdigest()


def make_chain(top_seed: bytes, length: int) -> list[bytes]:
    """``[S_0, S_1, ..., S_length]`` with S_length = top_seed and S_{k-1} = SHA-256(S_k).

    >>> c = make_chain(b"x" * 32, 3)
    >>> len(c), c[3] == b"x" * 32, hashlib.sha256(c[1]).digest() == c[0]
    (4, True, True)
    """
    if length < 0:
        raise DealError(f"chain length must be >= 0, got {length}")
    chain = [top_seed]
    s = top_seed
    for _ in range(length):
        s = hashlib.sha256(s).digest()
        chain.append(s)
    chain.reverse()
    return chain


def verify_chain(
    anchor_hex: str, reveals: Mapping[int, str], *, max_gap: int = 10_000
) -> dict[int, bool]:
    """Check every revealed seed against the chain; ``{hand: ok}`` for each revealed hand.

    Hand n is checked against the nearest earlier verified seed S_j (the
    anchor is S_0 and always counts as verified): SHA-256 applied n-j times
    to S_n must give S_j. A missing or failed seed is thus skipped over, and
    a bad seed never spoils the later good ones. Hands without a reveal are
    not in the result (``REVEAL_MISSING`` is the caller's); bad hex, a hand
    number below 1 or a gap above ``max_gap`` (a guard against a log naming
    hand 10**12) give ``False``. Never raises on log content.

    >>> s = make_chain(b"s" * 32, 3)
    >>> verify_chain(s[0].hex(), {1: s[1].hex(), 3: s[3].hex()})
    {1: True, 3: True}
    >>> verify_chain(s[0].hex(), {1: "zz", 2: s[1].hex(), 3: s[3].hex()})
    {1: False, 2: False, 3: True}
    """
    verified: dict[int, bytes] = {}
    anchor = _unhex(anchor_hex)
    if anchor is not None:
        verified[0] = anchor
    out: dict[int, bool] = {}
    sha256 = hashlib.sha256
    for n in sorted(reveals):
        seed = _unhex(reveals[n])
        ok = False
        below = [j for j in verified if j < n]
        if seed is not None and n >= 1 and below:
            j = max(below)
            if n - j <= max_gap:
                h = seed
                for _ in range(n - j):
                    h = sha256(h).digest()
                ok = h == verified[j]
        if ok and seed is not None:
            verified[n] = seed
        out[n] = ok
    return out
