"""deal-v1: known-answer vectors, the two example logs, chain and lead-draw edge cases."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replay.deal import (
    DEAL_LABEL,
    LEAD_LABEL,
    Deal,
    DealError,
    HmacDrbg,
    WordStream,
    deal_from_deck,
    deal_nonce,
    deal_personalization,
    deal_stream,
    derive_deal,
    derive_deck,
    derive_lead_deck,
    enc_int,
    enc_str,
    make_chain,
    resolve_lead_draw,
    sha256_hex,
    shuffle,
    uniform,
    verify_chain,
)
from replay.tiles import DOUBLE_OF, IS_DOUBLE, parse_tile, tile_name

DATA = Path(__file__).parent / "data"
VECTORS: dict[str, Any] = json.loads((DATA / "deal-vectors.json").read_text())
DEALS: list[dict[str, Any]] = VECTORS["deals"]

# Lead-draw mode of each example profile (rules.md profiles table).
FIRST_LEAD = {"international": "draw_for_lead", "domena_2p": "highest_double"}


def names(tiles: Any) -> list[str]:
    return [tile_name(t) for t in tiles]


def case_kwargs(case: dict[str, Any]) -> dict[str, Any]:
    return {
        "table": case["table"],
        "match": case["match"],
        "players": case["players"],
        "client_seeds": case["client_seeds"],
        "beacon": case["beacon"],
    }


def doubles_aside(case: dict[str, Any]) -> bool:
    # The vectors mark the doubles-aside case only by its 21-tile deck.
    return len(case["deck_ids"]) == 21


# ---------------------------------------------------------------- encoding


def test_enc_str_and_int() -> None:
    assert enc_str("") == b"\x00\x00\x00\x00"
    assert enc_str("t-17") == b"\x00\x00\x00\x04t-17"
    assert enc_str("ñ") == b"\x00\x00\x00\x02\xc3\xb1"  # length counts UTF-8 bytes
    assert enc_int(0) == bytes(8)
    assert enc_int(2**64 - 1) == b"\xff" * 8
    with pytest.raises(DealError):
        enc_int(2**64)


# ---------------------------------------------------------------- HMAC_DRBG


def test_hmac_drbg_nist_cavp() -> None:
    v = VECTORS["hmac_drbg_sha256_nist_cavp"]
    drbg = HmacDrbg(
        bytes.fromhex(v["entropy_input"]),
        bytes.fromhex(v["nonce"]),
        bytes.fromhex(v["personalization"]),
    )
    first = drbg.generate(128)
    second = drbg.generate(128)
    assert second.hex() == v["returned_bits"]
    assert first != second


class _ReferenceDrbg:
    """SP 800-90A 10.1.2 written out with hmac.digest, to check the fast HMAC."""

    def __init__(self, seed_material: bytes) -> None:
        self.k, self.v = b"\x00" * 32, b"\x01" * 32
        self.update(seed_material)

    def update(self, data: bytes) -> None:
        self.k = hmac.digest(self.k, self.v + b"\x00" + data, "sha256")
        self.v = hmac.digest(self.k, self.v, "sha256")
        if data:
            self.k = hmac.digest(self.k, self.v + b"\x01" + data, "sha256")
            self.v = hmac.digest(self.k, self.v, "sha256")

    def generate(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            self.v = hmac.digest(self.k, self.v, "sha256")
            out += self.v
        self.update(b"")
        return out[:n]


@given(
    entropy=st.binary(min_size=0, max_size=80),
    nonce=st.binary(max_size=40),
    pers=st.binary(max_size=200),
    sizes=st.lists(st.integers(0, 200), min_size=1, max_size=5),
)
def test_drbg_matches_reference(
    entropy: bytes, nonce: bytes, pers: bytes, sizes: list[int]
) -> None:
    fast = HmacDrbg(entropy, nonce, pers)
    ref = _ReferenceDrbg(entropy + nonce + pers)
    assert [fast.generate(n) for n in sizes] == [ref.generate(n) for n in sizes]
    assert fast.generate_block() == ref.generate(32)


def test_generate_block_equals_generate_32() -> None:
    a = HmacDrbg(b"e" * 32, b"n", b"p")
    b = HmacDrbg(b"e" * 32, b"n", b"p")
    assert [a.generate(32) for _ in range(3)] == [b.generate_block() for _ in range(3)]


def test_request_size_changes_output() -> None:
    # Why the scheme fixes 32-byte requests: one 64-byte call is not two 32-byte calls.
    a = HmacDrbg(b"e" * 32, b"n", b"p").generate(64)
    b = HmacDrbg(b"e" * 32, b"n", b"p")
    first, second = b.generate(32), b.generate(32)
    assert a[:32] == first and a[32:] != second
    with pytest.raises(DealError):
        HmacDrbg(b"e" * 32, b"", b"").generate(938)


# ---------------------------------------------------------------- words, uniform, shuffle


def test_uniform_rejection_vector() -> None:
    v = VECTORS["uniform_rejection"]
    assert uniform(iter(v["words"]), v["m"]) == v["result"]
    assert uniform(v["words"], v["m"]) == v["result"]


def test_uniform_edges() -> None:
    assert uniform([2**32 - 1], 2**32) == 2**32 - 1  # nothing rejected when m = 2^32
    # m = 2^32 - 1: only the word 2^32 - 1 is rejected.
    assert uniform([2**32 - 1, 2**32 - 2], 2**32 - 1) == 2**32 - 2
    assert uniform([2**32 - 1, 2**32 - 1, 4], 3) == 1
    with pytest.raises(DealError, match="ran out"):
        uniform([2**32 - 1], 3)
    with pytest.raises(DealError):
        uniform([1], 0)


def test_word_stream_rejection_matches_module_uniform() -> None:
    seed = bytes(range(32))
    a = WordStream(HmacDrbg(seed, b"n", b"p"))
    b = WordStream(HmacDrbg(seed, b"n", b"p"))
    ms = [3, 5, 2**31 + 1, 2**32 - 1, 7, 2**31 + 1] * 20
    assert [a.uniform(m) for m in ms] == [uniform(b, m) for m in ms]
    assert a.blocks == b.blocks >= 2


def test_word_stream_uses_eight_words_per_block() -> None:
    drbg = HmacDrbg(b"s" * 32, b"", b"")
    ref = HmacDrbg(b"s" * 32, b"", b"")
    ws = WordStream(drbg)
    words = [ws.next_word() for _ in range(16)]
    raw = ref.generate(32) + ref.generate(32)
    assert words == [int.from_bytes(raw[4 * i : 4 * i + 4], "big") for i in range(16)]
    assert ws.blocks == 2


class _Scripted:
    """A stream that answers uniform() from a script and records the bounds asked."""

    def __init__(self, answers: list[int]) -> None:
        self.answers = answers
        self.asked: list[int] = []

    def uniform(self, m: int) -> int:
        self.asked.append(m)
        return self.answers[len(self.asked) - 1]


def test_shuffle_is_textbook_fisher_yates() -> None:
    s = _Scripted([3, 0, 1])
    out = shuffle([10, 11, 12, 13], s)
    assert s.asked == [4, 3, 2]  # uniform(i+1) for i = 3, 2, 1 (Sattolo would ask 3, 2, 1)
    # i=3, j=3: no change; i=2, j=0: [12,11,10,13]; i=1, j=1: no change.
    assert out == [12, 11, 10, 13]


@given(
    items=st.lists(st.integers(0, 27), unique=True, max_size=28),
    seed=st.binary(min_size=32, max_size=32),
)
def test_shuffle_returns_a_permutation(items: list[int], seed: bytes) -> None:
    before = list(items)
    out = shuffle(items, WordStream(HmacDrbg(seed, b"", b"")))
    assert sorted(out) == sorted(before)
    assert items == before  # input untouched


# ---------------------------------------------------------------- deal vectors


@pytest.mark.parametrize("case", DEALS, ids=[c["case"] for c in DEALS])
def test_deal_vector(case: dict[str, Any]) -> None:
    seed = bytes.fromhex(case["server_seed"])
    kw = case_kwargs(case)
    assert deal_nonce(case["table"], case["match"], case["hand"]).hex() == case["nonce_hex"]
    pers = deal_personalization(DEAL_LABEL, kw["beacon"], kw["players"], kw["client_seeds"])
    assert pers.hex() == case["personalization_hex"]

    stream = deal_stream(seed, hand=case["hand"], **kw)
    assert [stream.next_word() for _ in range(8)] == case["first_words"]

    deck = derive_deck(seed, hand=case["hand"], doubles_aside=doubles_aside(case), **kw)
    assert deck == case["deck_ids"]
    assert names(deck) == case["deck"]

    deal = derive_deal(seed, hand=case["hand"], doubles_aside=doubles_aside(case), **kw)
    assert [names(h) for h in deal.hands] == case["hands"]
    assert names(deal.stock) == case["stock"]
    assert deal.names() == (case["hands"], case["stock"])

    if "lead_deck" in case:
        lead = derive_lead_deck(seed, doubles_only=doubles_aside(case), **kw)
        assert names(lead) == case["lead_deck"]


def test_beacon_none_equals_empty_and_changes_deal() -> None:
    case = DEALS[0]
    seed = bytes.fromhex(case["server_seed"])
    kw = case_kwargs(case)
    kw["beacon"] = None
    assert derive_deck(seed, hand=1, **kw) == case["deck_ids"]
    kw["beacon"] = "drand:1"
    assert derive_deck(seed, hand=1, **kw) != case["deck_ids"]


def test_every_input_changes_the_deck() -> None:
    case = DEALS[0]
    seed = bytes.fromhex(case["server_seed"])
    base = case_kwargs(case)
    ref = derive_deck(seed, hand=1, **base)
    for field, value in [
        ("table", "t-18"),
        ("match", "m-0002"),
        ("client_seeds", ["", "ana", "", "x8"]),
    ]:
        assert derive_deck(seed, hand=1, **{**base, field: value}) != ref, field
    assert derive_deck(seed, hand=2, **base) != ref
    assert derive_deck(bytes(32), hand=1, **base) != ref
    lead = derive_lead_deck(seed, **base)
    assert lead != ref  # the lead label separates the two streams


def test_client_seed_count_must_match_players() -> None:
    with pytest.raises(DealError, match="3 client seeds for 4 players"):
        derive_deal(
            bytes(32),
            table="t",
            match="m",
            hand=1,
            players=4,
            client_seeds=["", "", ""],
            beacon=None,
        )


def test_personalization_labels_differ() -> None:
    a = deal_personalization(DEAL_LABEL, "", 2, ["", ""])
    b = deal_personalization(LEAD_LABEL, "", 2, ["", ""])
    assert a != b and a[16:] == b[16:]


def test_deal_from_deck_shapes() -> None:
    d = deal_from_deck(list(range(28)), 3)
    assert d == Deal(
        hands=((0, 1, 2, 3, 4, 5, 6), tuple(range(7, 14)), tuple(range(14, 21))),
        stock=tuple(range(21, 28)),
    )
    with pytest.raises(DealError):
        deal_from_deck(list(range(21)), 4)


# ---------------------------------------------------------------- chain


def test_chain_vector() -> None:
    c = VECTORS["chain"]
    assert sha256_hex(c["S3"]) == c["S2"]
    assert sha256_hex(c["S2"]) == c["S1"]
    assert sha256_hex(c["S1"]) == c["anchor_S0"]
    assert verify_chain(c["anchor_S0"], {1: c["S1"], 2: c["S2"], 3: c["S3"]}) == {
        1: True,
        2: True,
        3: True,
    }
    # The vector's deal cases use these seeds for hands 1..3.
    assert [d["server_seed"] for d in DEALS[:3]] == [c["S1"], c["S2"], c["S3"]]


def test_make_chain_reproduces_vector() -> None:
    c = VECTORS["chain"]
    chain = make_chain(bytes.fromhex(c["S3"]), 3)
    assert [s.hex() for s in chain] == [c["anchor_S0"], c["S1"], c["S2"], c["S3"]]
    assert make_chain(b"x", 0) == [b"x"]


def test_chain_missing_middle_seed() -> None:
    s = [x.hex() for x in make_chain(hashlib.sha256(b"top").digest(), 5)]
    got = verify_chain(s[0], {1: s[1], 3: s[3], 4: s[4], 5: s[5]})
    assert got == {1: True, 3: True, 4: True, 5: True}
    # Hand 1 missing too: hand 3 is hashed three times down to the anchor.
    assert verify_chain(s[0], {3: s[3]}) == {3: True}
    # A seed revealed under the wrong hand number fails.
    assert verify_chain(s[0], {1: s[1], 3: s[2]}) == {1: True, 3: False}


def test_chain_broken_middle_seed() -> None:
    s = [x.hex() for x in make_chain(hashlib.sha256(b"top").digest(), 4)]
    bad = "00" * 32
    got = verify_chain(s[0], {1: s[1], 2: bad, 3: s[3], 4: s[4]})
    assert got == {1: True, 2: False, 3: True, 4: True}  # 3 checks against 1, then 4 against 3
    # The same seed revealed twice in a row cannot hash to itself.
    assert verify_chain(s[0], {1: s[1], 2: s[1]}) == {1: True, 2: False}


def test_chain_bad_input_never_raises() -> None:
    s = [x.hex() for x in make_chain(b"t" * 32, 3)]
    got = verify_chain(s[0], {1: "not hex", 2: s[2][:-1], 3: s[3], 0: s[0], -1: s[1]})
    assert got == {-1: False, 0: False, 1: False, 2: False, 3: True}
    assert verify_chain(s[0], {1: s[1] + " ", 2: None}) == {1: False, 2: False}  # type: ignore[dict-item]
    assert verify_chain(s[0].upper(), {1: s[1].upper()}) == {1: True}
    assert verify_chain("zz", {1: s[1], 2: s[2]}) == {1: False, 2: False}
    assert verify_chain("", {}) == {}
    assert verify_chain(s[0], {10**12: s[1]}) == {10**12: False}  # beyond max_gap
    with pytest.raises(DealError):
        sha256_hex("abc")


# ---------------------------------------------------------------- lead draw


def t(*tile_names: str) -> list[int]:
    return [parse_tile(n) for n in tile_names]


def named(draws: list[tuple[int, int]]) -> list[tuple[int, str]]:
    return [(s, tile_name(x)) for s, x in draws]


def test_draw_for_lead_equal_totals_higher_half() -> None:
    draws, leader = resolve_lead_draw(t("33", "42", "60", "51"), 4, "draw_for_lead")
    assert named(draws) == [(0, "33"), (1, "42"), (2, "60"), (3, "51")]
    assert leader == 2
    assert resolve_lead_draw(t("00", "11", "66", "65"), 4, "draw_for_lead")[1] == 2
    assert resolve_lead_draw(t("10", "00", "66"), 2, "draw_for_lead") == ([(0, 1), (1, 0)], 0)


def test_bayamon_tie_and_redraw() -> None:
    deck = t("33", "60", "51", "10", "20", "22", "44", "66", "65")
    draws, leader = resolve_lead_draw(deck, 4, "bayamon_draw")
    # Round 1: seats 0, 1, 2 tie on 6 (3 has 1); round 2: 20 (2), 22 (4), 44 (8) -> seat 2.
    assert named(draws) == [
        (0, "33"),
        (1, "60"),
        (2, "51"),
        (3, "10"),
        (0, "20"),
        (1, "22"),
        (2, "44"),
    ]
    assert leader == 2
    # The same tiles under draw_for_lead: 6-0 wins at once.
    assert resolve_lead_draw(deck, 4, "draw_for_lead") == (draws[:4], 1)


def test_bayamon_several_rounds() -> None:
    deck = t("60", "51", "42", "33", "00", "21", "65")
    draws, leader = resolve_lead_draw(deck, 2, "bayamon_draw")
    assert named(draws) == [(0, "60"), (1, "51"), (0, "42"), (1, "33"), (0, "00"), (1, "21")]
    assert leader == 1


def test_bayamon_lead_deck_exhausted() -> None:
    # Ties until the deck is empty: the lowest-numbered tied seat leads.
    draws, leader = resolve_lead_draw(t("60", "51", "42", "33"), 2, "bayamon_draw")
    assert len(draws) == 4 and leader == 0
    # Seats 1 and 2 tie; no tile left for a redraw: seat 1.
    assert resolve_lead_draw(t("00", "60", "51"), 3, "bayamon_draw") == (
        [(0, 0), (1, parse_tile("60")), (2, parse_tile("51"))],
        1,
    )
    # One tile left for two tied seats: no partial round is drawn.
    draws, leader = resolve_lead_draw(t("00", "60", "51", "66"), 3, "bayamon_draw")
    assert len(draws) == 3 and leader == 1


def test_drawn_double() -> None:
    deck = t("33", "00", "55", "44", "22", "66", "11")
    draws, leader = resolve_lead_draw(deck, 3, "drawn_double")
    assert named(draws) == [(0, "33"), (1, "00"), (2, "55")]
    assert leader == 2


def test_lead_draw_vector_doubles_case() -> None:
    case = DEALS[3]
    lead = derive_lead_deck(
        bytes.fromhex(case["server_seed"]), doubles_only=True, **case_kwargs(case)
    )
    assert sorted(lead) == sorted(DOUBLE_OF)
    assert all(IS_DOUBLE[x] for x in lead)
    assert resolve_lead_draw(lead, 3, "drawn_double")[1] == 2  # 33, 00, 55


def test_lead_draw_bad_arguments() -> None:
    with pytest.raises(DealError):
        resolve_lead_draw(t("00", "11"), 3, "draw_for_lead")
    with pytest.raises(DealError):
        resolve_lead_draw(t("00", "11"), 2, "double_six")  # type: ignore[arg-type]


# ---------------------------------------------------------------- example logs


def load_match(path: Path) -> dict[str, Any]:
    events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    start = next(e for e in events if e["type"] == "match_start")
    return {
        "start": start,
        "deals": {e["hand"]: e for e in events if e["type"] == "deal"},
        "reveals": {e["hand"]: e["server_seed"] for e in events if e["type"] == "reveal"},
        "lead_draw": next((e for e in events if e["type"] == "lead_draw"), None),
        "draws": [e for e in events if e["type"] == "draw"],
    }


EXAMPLES = sorted((DATA / "examples").glob("*.jsonl"))


def test_examples_present() -> None:
    assert [p.name for p in EXAMPLES] == ["domena-2p-to-40.jsonl", "international-to-50.jsonl"]


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_log(path: Path) -> None:
    m = load_match(path)
    start = m["start"]
    players = len(start["seats"])
    assert m["deals"] and set(m["reveals"]) == set(m["deals"])

    chain = verify_chain(start["anchor"], m["reveals"])
    assert chain == {n: True for n in m["deals"]}

    derived: dict[int, Deal] = {}
    for n, ev in m["deals"].items():
        deal = derive_deal(
            bytes.fromhex(m["reveals"][n]),
            table=start["table"],
            match=start["match"],
            hand=n,
            players=players,
            client_seeds=ev["client_seeds"],
            beacon=start.get("beacon"),
        )
        hands, stock = deal.names()
        assert hands == ev["hands"], f"hand {n}"
        assert len(stock) == ev["stock"], f"hand {n}"
        derived[n] = deal

    # The k-th draw of a hand, whoever draws, takes stock[k].
    taken: dict[int, int] = defaultdict(int)
    for ev in m["draws"]:
        k = taken[ev["hand"]]
        assert parse_tile(ev["tile"]) == derived[ev["hand"]].stock[k], f"draw {ev['seq']}"
        taken[ev["hand"]] += 1

    mode = FIRST_LEAD[start["profile"]]
    if mode == "highest_double":
        assert m["lead_draw"] is None
        assert sum(taken.values()) > 0  # example 2 does exercise the boneyard
        return
    lead_deck = derive_lead_deck(
        bytes.fromhex(m["reveals"][1]),
        table=start["table"],
        match=start["match"],
        players=players,
        client_seeds=m["deals"][1]["client_seeds"],
        beacon=start.get("beacon"),
    )
    draws, leader = resolve_lead_draw(lead_deck, players, mode)  # type: ignore[arg-type]
    assert [[s, tile_name(x)] for s, x in draws] == m["lead_draw"]["draws"]
    assert leader == m["deals"][1]["leader"] == 1


def test_example_tampered_seed_is_detected() -> None:
    m = load_match(DATA / "examples" / "international-to-50.jsonl")
    reveals = dict(m["reveals"])
    reveals[2] = reveals[2][:-2] + ("00" if reveals[2][-2:] != "00" else "01")
    got = verify_chain(m["start"]["anchor"], reveals)
    assert got[2] is False and got[1] and got[3]
