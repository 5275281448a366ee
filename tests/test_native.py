"""The C accelerator (replay/_native.c) against its pure-Python twins.

* ``sha256`` (both compression functions) against hashlib;
* ``shuffle`` / ``deal`` against HmacDrbg + WordStream + shuffle and
  derive_deal (replay.deal with ``native`` switched off), and the deal-v1
  vectors through both paths;
* ``replay_hand`` against the engine on random hands of every profile,
  and on broken move sequences;
* ``scan`` (replay.canonical_reader) against replay.reader: line counts, what goes back to Python,
  the ``ordered`` flag and the event tuples.

The whole module is skipped when the extension is not built (or
``REPLAY_PURE`` is set), and fails where CI expects the build
(tests/conftest.py).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from replay import accel
from tests.conftest import RULES, TABLE_IDS, random_hand, require_native

if accel.native is None:  # pragma: no cover - depends on the build
    require_native("the C accelerator's twin tests", module=True)

import replay.canonical_reader as scan_mod
import replay.deal as deal_mod
import replay.reader as reader_mod
from replay.canonical_reader import DEAL, HAND_END, MOVE, OTHER, REVEAL, scan_paths
from replay.deal import (
    ALL_IDS,
    DEAL_LABEL,
    DOUBLE_IDS,
    NON_DOUBLE_IDS,
    HmacDrbg,
    WordStream,
    derive_deal,
    derive_deck,
    derive_lead_deck,
    enc_int,
    enc_str,
    shuffle,
)
from replay.engine import (
    DRAW,
    LEFT,
    PASS,
    RIGHT,
    YIELD,
    HandState,
    Play,
    apply,
    can_apply,
    legal_moves,
)
from replay.reader import MAX_LINE_BYTES, EventLine, LogReader
from replay.rules import Rules, resolve
from replay.tiles import BIT, HIGH, IS_DOUBLE, LOW, mask_of, parse_tile, tile_name
from replay.tiles import OTHER as OTHER_HALF

native: Any = accel.native
ROOT = Path(__file__).resolve().parent.parent
VECTORS: dict[str, Any] = json.loads((ROOT / "tests" / "data" / "deal-vectors.json").read_text())

# The module cannot be asked which compression it uses without switching;
# at import it uses SHA-NI exactly when the CPU has it, which is what
# use_shani(True) answers (and sets). The tests put that back.
SHANI = bool(native.use_shani(True))


@pytest.fixture
def shani_restored() -> Iterator[None]:
    yield
    assert native.use_shani(SHANI) is SHANI


@pytest.fixture
def pure_deal(monkeypatch: pytest.MonkeyPatch) -> None:
    """replay.deal without the accelerator (the reference)."""
    monkeypatch.setattr(deal_mod, "native", None)


# -- sha256 ------------------------------------------------------------------------


def _modes() -> list[bool]:
    return [True, False] if SHANI else [False]


def test_use_shani_reports_the_mode(shani_restored: None) -> None:
    assert native.use_shani(False) is False
    assert native.use_shani(True) is SHANI
    assert native.use_shani(0) is False  # any truth value


@pytest.mark.parametrize("on", [True, False], ids=["shani", "portable"])
def test_sha256_equals_hashlib(on: bool, shani_restored: None) -> None:
    got_mode = native.use_shani(on)
    assert got_mode is (on and SHANI)
    rnd = random.Random(1234)
    blob = rnd.randbytes(1 << 20)
    # every padding case: 0..300 bytes covers 55/56/63/64/119/120 boundaries
    for n in range(301):
        data = blob[:n]
        assert native.sha256(data) == hashlib.sha256(data).digest(), n
    for n in (511, 512, 513, 4095, 4096, 65536 + 7, len(blob)):
        data = blob[-n:]
        assert native.sha256(data) == hashlib.sha256(data).digest(), n
    # buffer protocol, not only bytes
    assert native.sha256(bytearray(b"abc")) == hashlib.sha256(b"abc").digest()
    assert native.sha256(memoryview(blob)[3:300]) == hashlib.sha256(blob[3:300]).digest()


def test_sha256_modes_agree_on_random_data(shani_restored: None) -> None:
    rnd = random.Random(99)
    samples = [rnd.randbytes(rnd.randrange(0, 2000)) for _ in range(200)]
    outs = []
    for on in _modes():
        native.use_shani(on)
        outs.append([native.sha256(s) for s in samples])
    want = [hashlib.sha256(s).digest() for s in samples]
    for got in outs:
        assert got == want


# -- shuffle -----------------------------------------------------------------------


class _Textbook:
    """uniform() through WordStream.uniform: the non-inlined shuffle loop."""

    def __init__(self, stream: WordStream) -> None:
        self.stream = stream

    def uniform(self, m: int) -> int:
        return self.stream.uniform(m)


def pure_shuffle(ids: Sequence[int], seed: bytes, nonce: bytes, pers: bytes) -> list[int]:
    fast = shuffle(ids, WordStream(HmacDrbg(seed, nonce, pers)))
    slow = shuffle(ids, _Textbook(WordStream(HmacDrbg(seed, nonce, pers))))
    assert fast == slow
    return fast


DECKS = {"all": ALL_IDS, "non_doubles": NON_DOUBLE_IDS, "doubles": DOUBLE_IDS}


@settings(max_examples=60, deadline=None)
@given(
    deck=st.sampled_from(sorted(DECKS)),
    seed=st.binary(min_size=0, max_size=64),
    nonce=st.binary(min_size=0, max_size=48),
    pers=st.one_of(st.binary(max_size=100), st.binary(min_size=400, max_size=1500)),
)
@example(deck="all", seed=b"", nonce=b"", pers=b"")  # nothing provided: one update round
@example(deck="all", seed=b"", nonce=b"n", pers=b"")
@example(deck="all", seed=bytes(32), nonce=b"", pers=b"p" * 446)  # 478 provided: stack buffer
@example(deck="all", seed=bytes(32), nonce=b"", pers=b"p" * 447)  # 479: the last on the stack
@example(deck="doubles", seed=bytes(32), nonce=b"", pers=b"p" * 448)  # 480: malloc
@example(deck="non_doubles", seed=b"\xff" * 32, nonce=b"x" * 30, pers=b"q" * 5000)
def test_shuffle_equals_pure(deck: str, seed: bytes, nonce: bytes, pers: bytes) -> None:
    ids = DECKS[deck]
    got = native.shuffle(seed, nonce, pers, bytes(ids))
    assert isinstance(got, bytes)
    assert list(got) == pure_shuffle(ids, seed, nonce, pers)
    assert sorted(got) == sorted(ids)


@pytest.mark.parametrize("size", [0, 1, 2, 3, 33, 100, 255])
def test_shuffle_any_deck(size: int) -> None:
    rnd = random.Random(size)
    ids = [rnd.randrange(256) for _ in range(size)]
    seed, nonce, pers = rnd.randbytes(32), rnd.randbytes(10), rnd.randbytes(600)
    assert list(native.shuffle(seed, nonce, pers, bytes(ids))) == pure_shuffle(ids, seed, nonce, pers)


def test_shuffle_same_in_both_modes(shani_restored: None) -> None:
    seed, nonce, pers = b"s" * 32, b"nonce", b"p" * 700
    want = pure_shuffle(ALL_IDS, seed, nonce, pers)
    for on in _modes():
        native.use_shani(on)
        assert list(native.shuffle(seed, nonce, pers, bytes(ALL_IDS))) == want


def test_shuffle_rejects_non_bytes() -> None:
    with pytest.raises(TypeError):
        native.shuffle("seed", b"", b"", bytes(ALL_IDS))


# -- deal --------------------------------------------------------------------------

_TEXT = st.text(max_size=12)  # any code point but surrogates: non-ASCII included


@settings(max_examples=60, deadline=None)
@given(
    players=st.sampled_from([2, 3, 4]),
    aside=st.booleans(),
    seed=st.binary(min_size=32, max_size=32),
    table=_TEXT,
    match=_TEXT,
    hand=st.one_of(st.integers(1, 40), st.just(2**64 - 1)),
    beacon=st.one_of(st.none(), _TEXT),
    data=st.data(),
)
def test_deal_equals_derive_deal(
    players: int, aside: bool, seed: bytes, table: str, match: str, hand: int,
    beacon: str | None, data: st.DataObject,
) -> None:  # fmt: skip
    seeds = tuple(data.draw(st.lists(_TEXT, min_size=players, max_size=players)))
    ids = NON_DOUBLE_IDS if aside else ALL_IDS
    nonce_head = enc_str(table) + enc_str(match)
    pers_head = enc_str(DEAL_LABEL) + enc_str(beacon or "") + enc_int(players)
    if aside and players == 4:
        with pytest.raises(ValueError):
            native.deal(seed, nonce_head, hand, pers_head, seeds, bytes(ids), players)
        return
    masks, stock = native.deal(seed, nonce_head, hand, pers_head, seeds, bytes(ids), players)
    saved = deal_mod.native
    deal_mod.native = None
    try:
        want = derive_deal(seed, table=table, match=match, hand=hand, players=players,
                           client_seeds=list(seeds), beacon=beacon, doubles_aside=aside)  # fmt: skip
    finally:
        deal_mod.native = saved
    assert masks == tuple(mask_of(h) for h in want.hands)
    assert isinstance(stock, bytes)
    assert list(stock) == list(want.stock)


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("aside", [False, True])
def test_deal_non_ascii_client_seeds(players: int, aside: bool, pure_deal: None) -> None:
    if aside and players == 4:
        pytest.skip("21 tiles cannot make 4 hands")
    seeds = ("Zoë", "李雷", "🁫 domino", "")[:players]
    seed = hashlib.sha256(b"x").digest()
    ids = NON_DOUBLE_IDS if aside else ALL_IDS
    want = derive_deal(seed, table="t-ñ", match="m-é", hand=7, players=players,
                       client_seeds=list(seeds), beacon="drand:β", doubles_aside=aside)  # fmt: skip
    masks, stock = native.deal(
        seed, enc_str("t-ñ") + enc_str("m-é"), 7,
        enc_str(DEAL_LABEL) + enc_str("drand:β") + enc_int(players), seeds, bytes(ids), players,
    )  # fmt: skip
    assert masks == tuple(mask_of(h) for h in want.hands)
    assert list(stock) == list(want.stock)
    # the seeds matter: an ASCII look-alike gives another deal
    other = tuple(s.encode("ascii", "replace").decode() for s in seeds)
    if other != seeds:
        assert native.deal(seed, enc_str("t-ñ") + enc_str("m-é"), 7,
                           enc_str(DEAL_LABEL) + enc_str("drand:β") + enc_int(players),
                           other, bytes(ids), players) != (masks, stock)  # fmt: skip


def test_deal_bad_arguments() -> None:
    seed = bytes(32)
    with pytest.raises(ValueError):
        native.deal(seed, b"", 1, b"", ("", ""), bytes(range(10)), 2)  # 14 tiles needed
    with pytest.raises(ValueError):
        native.deal(seed, b"", 1, b"", (), bytes(ALL_IDS), 0)
    with pytest.raises(TypeError):
        native.deal(seed, b"", 1, b"", ("a", 3), bytes(ALL_IDS), 2)
    with pytest.raises(TypeError):
        native.deal(seed, b"", 1, b"", ["a", "b"], bytes(ALL_IDS), 2)  # a tuple is required


# -- derive_deck and the vectors ---------------------------------------------------


def _both(fn: Any, *args: Any, **kw: Any) -> tuple[Any, Any]:
    assert deal_mod.native is not None
    fast = fn(*args, **kw)
    saved = deal_mod.native
    deal_mod.native = None
    try:
        pure = fn(*args, **kw)
    finally:
        deal_mod.native = saved
    return fast, pure


@settings(max_examples=40, deadline=None)
@given(
    seed=st.binary(min_size=32, max_size=32),
    hand=st.integers(1, 300),
    players=st.sampled_from([2, 3, 4]),
    aside=st.booleans(),
    beacon=st.one_of(st.none(), _TEXT),
    doubles_only=st.booleans(),
)
def test_derive_deck_native_equals_pure(
    seed: bytes, hand: int, players: int, aside: bool, beacon: str | None, doubles_only: bool
) -> None:
    kw = {"table": "t-1", "match": "m-ü", "players": players,
          "client_seeds": ["ä" * k for k in range(players)], "beacon": beacon}  # fmt: skip
    fast, pure = _both(derive_deck, seed, hand=hand, doubles_aside=aside, **kw)
    assert fast == pure
    assert isinstance(fast, list)
    fast, pure = _both(derive_lead_deck, seed, doubles_only=doubles_only, **kw)
    assert fast == pure


@pytest.mark.parametrize("case", VECTORS["deals"], ids=[c["case"] for c in VECTORS["deals"]])
def test_deal_vectors_both_paths(case: dict[str, Any]) -> None:
    seed = bytes.fromhex(case["server_seed"])
    aside = len(case["deck_ids"]) == 21
    kw = {k: case[k] for k in ("table", "match", "players", "client_seeds", "beacon")}
    fast, pure = _both(derive_deck, seed, hand=case["hand"], doubles_aside=aside, **kw)
    assert fast == pure == case["deck_ids"]
    dealt, dealt_pure = _both(derive_deal, seed, hand=case["hand"], doubles_aside=aside, **kw)
    assert dealt == dealt_pure
    assert [[tile_name(t) for t in h] for h in dealt.hands] == case["hands"]
    if "lead_deck" in case:
        lead, lead_pure = _both(derive_lead_deck, seed, doubles_only=aside, **kw)
        assert lead == lead_pure
        assert [tile_name(t) for t in lead] == case["lead_deck"]
    # native.deal gives the same hands and stock from the match's heads
    ids = NON_DOUBLE_IDS if aside else ALL_IDS
    n = case["players"]
    masks, stock = native.deal(
        seed, enc_str(case["table"]) + enc_str(case["match"]), case["hand"],
        enc_str(DEAL_LABEL) + enc_str(case["beacon"] or "") + enc_int(n),
        tuple(case["client_seeds"]), bytes(ids), n,
    )  # fmt: skip
    assert masks == tuple(mask_of(h) for h in dealt.hands)
    assert [tile_name(t) for t in stock] == case["stock"]


# -- replay_hand against the engine -------------------------------------------------

# (kind, seat, tile, face, end): kind "play" / "pass" / "draw"; face is the tile as
# written; end "left" / "right" / None
Step = tuple[str, int, int, str, str | None]


def play_out(s: HandState, rnd: random.Random) -> tuple[HandState, list[Step]]:
    """Random legal moves (no lead yield) to the end, as log steps."""
    steps: list[Step] = []
    while not s.over:
        options = [m for m in legal_moves(s) if m is not YIELD]
        m = rnd.choice(options)
        seat = s.turn
        if isinstance(m, Play):
            if s.left < 0:
                if rnd.random() < 0.5:
                    m = Play(m.tile, RIGHT)  # the low half on the left
                hi, lo = HIGH[m.tile], LOW[m.tile]
                face = f"{hi}{lo}" if m.end == LEFT else f"{lo}{hi}"
                steps.append(("play", seat, m.tile, face, None))
            else:
                alt = Play(m.tile, 1 - m.end)
                if s.left != s.right and rnd.random() < 0.3 and can_apply(s, alt):
                    m = alt
                end: str | None = "left" if m.end == LEFT else "right"
                if s.left == s.right and rnd.random() < 0.3:
                    end = None  # equal ends: no end needed
                face = tile_name(m.tile)
                if rnd.random() < 0.3:
                    face = face[::-1]
                steps.append(("play", seat, m.tile, face, end))
        elif m is PASS:
            steps.append(("pass", seat, 0, "", None))
        else:
            t = s.stock[0]
            steps.append(("draw", seat, t, tile_name(t), None))
        s = apply(s, m)
    return s, steps


_KIND = {"play": 0, "pass": 1, "draw": 2}


def pack(steps: Sequence[Step], hand: int, first_seq: int = 10) -> bytes:
    out = []
    for k, (kind, seat, tile, face, end) in enumerate(steps):
        code = {"left": 0, "right": 1, None: 2}[end] + (4 * int(face[0]) if face else 0)
        out.append(MOVE.pack(k + 3, 100 * k, 100 * k + 40, first_seq + k, hand, _KIND[kind], seat, tile, code))
    return b"".join(out)


def events(steps: Sequence[Step], hand: int) -> list[SimpleNamespace]:
    return [
        SimpleNamespace(type=kind, seat=seat, tile=tile, face=face, end=end, hand=hand, seq=10 + k, ts="")
        for k, (kind, seat, tile, face, end) in enumerate(steps)
    ]


def expected(state: HandState, steps: Sequence[Step]) -> tuple[Any, ...] | None:
    """The final position as the engine reaches it, in replay_hand's layout;
    None at the first step the engine refuses, or if the hand is not over."""
    s = state
    for kind, seat, tile, face, end in steps:
        if seat != s.turn:
            return None
        if kind == "play":
            if s.left < 0:  # the face says which half goes left
                move: Any = Play(tile, RIGHT if face[0] < face[1] else LEFT)
            elif end is None:  # no end named: only on equal ends
                if s.left != s.right:
                    return None
                move = Play(tile, LEFT)
            else:
                move = Play(tile, LEFT if end == "left" else RIGHT)
        elif kind == "pass":
            move = PASS
        else:
            if not s.stock or s.stock[0] != tile:
                return None
            move = DRAW
        if not can_apply(s, move):
            return None
        s = apply(s, move)
    if not s.over:
        return None
    return (s.hands, len(s.stock), s.left, s.right, s.turn, s.passes, s.blocker, s.result,
            s.last, s.plays, s.pips())  # fmt: skip


def c_replay(state: HandState, steps: Sequence[Step], hand: int = 5, *, pad: bool = True) -> tuple[Any, ...] | None:
    """native.replay_hand on the steps, between records of other hands (lo/hi matter)."""
    before = pack([("pass", 0, 0, "", None)] * 3, hand - 1) if pad else b""
    after = pack([("play", 1, 27, "66", None)] * 2, hand + 1) if pad else b""
    lo = len(before) // MOVE.size
    hi = lo + len(steps)
    r = state.rules
    got = native.replay_hand(
        before + pack(steps, hand) + after, lo, hi, hand, state.hands, bytes(state.stock),
        state.turn, state.opening, r.stock == "draw", r.block_end == "all_pass",
    )  # fmt: skip
    if got is None:
        return None
    if len(got) > 11:  # since 0a661c8: + the passes of each seat (closing passes too)
        passes = [0] * len(state.hands)
        for kind, seat, *_ in steps:
            passes[seat] += kind == "pass"
        assert got[11] == tuple(passes)
    assert len(got) in (11, 12)
    return tuple(got[:11])


def test_move_layout() -> None:
    assert MOVE.size == native.MOVE_SIZE == 24


@pytest.mark.parametrize(("rules", "name"), list(zip(RULES, TABLE_IDS, strict=True)), ids=TABLE_IDS)
def test_replay_hand_equals_the_engine(rules: Rules, name: str) -> None:
    rnd = random.Random(f"replay-{name}")
    dominoes = 0
    for _ in range(60):
        start = random_hand(rules, rnd)
        final, steps = play_out(start, rnd)
        want = expected(start, steps)
        assert want is not None, "a legal hand replays"
        got = c_replay(start, steps)
        assert got == want
        assert got[0] == final.hands and got[2:4] == (final.left, final.right)
        assert got[7] == final.result and got[9] == final.plays and got[1] == len(final.stock)
        dominoes += final.result == "domino"
        _check_broken_variants(start, steps, rnd)
    assert dominoes > 0


def _check_broken_variants(start: HandState, steps: list[Step], rnd: random.Random) -> None:
    """Sequences that must be irregular for both, and random edits that must agree."""
    n = len(start.hands)
    r = start.rules
    sure: list[list[Step]] = []
    k = rnd.randrange(len(steps))
    kind, seat, tile, face, end = steps[k]
    # wrong seat
    sure.append(steps[:k] + [(kind, (seat + 1) % n, tile, face, end)] + steps[k + 1 :])
    # truncated: the hand is not over
    sure.append(steps[:-1])
    sure.append(steps[: rnd.randrange(len(steps))])
    plays = [i for i, s in enumerate(steps) if s[0] == "play"]
    # a tile the seat does not hold at that point
    i = rnd.choice(plays)
    held = _held_before(start, steps, i)
    not_held = [t for t in range(28) if not held & BIT[t]]
    t = rnd.choice(not_held)
    sure.append(steps[:i] + [("play", steps[i][1], t, tile_name(t), steps[i][4])] + steps[i + 1 :])
    # an extra pass, or a draw, by a seat that plays next (it could play)
    sure.append(steps[:i] + [("pass", steps[i][1], 0, "", None)] + steps[i:])
    sure.append(steps[:i] + [("draw", steps[i][1], steps[i][2], steps[i][3], None)] + steps[i:])
    # a draw where the table has no boneyard
    if r.stock != "draw":
        j = rnd.randrange(len(steps) + 1)
        seat_j = steps[j][1] if j < len(steps) else steps[-1][1]
        sure.append(steps[:j] + [("draw", seat_j, 3, "30", None)] + steps[j:])
    # the wrong end: a later play whose tile lacks the other end's number
    for i in plays[1:]:
        left, right = _ends_before(start, steps, i)
        kind, seat, tile, face, end = steps[i]
        if end is not None and left != right:
            other = right if end == "left" else left
            if OTHER_HALF[tile][other] < 0:
                flipped = "right" if end == "left" else "left"
                sure.append(steps[:i] + [(kind, seat, tile, face, flipped)] + steps[i + 1 :])
                break
    # a play after the end
    sure.append(steps + [("play", steps[-1][1], steps[-1][2], steps[-1][3], "left")])
    for bad in sure:
        assert expected(start, bad) is None, bad
        assert c_replay(start, bad) is None, bad
    # random edits: whatever they give, both give it
    for _ in range(6):
        edited = list(steps)
        j = rnd.randrange(len(edited))
        kind, seat, tile, face, end = edited[j]
        what = rnd.randrange(5)
        if what == 0:
            del edited[j]
        elif what == 1:
            edited.insert(j, edited[j])
        elif what == 2 and j + 1 < len(edited):
            edited[j], edited[j + 1] = edited[j + 1], edited[j]
        elif what == 3:
            edited[j] = (kind, seat, tile, face, rnd.choice(["left", "right", None]))
        else:
            t = rnd.randrange(28)
            edited[j] = (kind, seat, t, tile_name(t), end)
        assert c_replay(start, edited) == expected(start, edited)


def _held_before(start: HandState, steps: Sequence[Step], i: int) -> int:
    seat = steps[i][1]
    held = start.hands[seat]
    for kind, s, tile, _, _ in steps[:i]:
        if s == seat and kind == "play":
            held &= ~BIT[tile]
        elif s == seat and kind == "draw":
            held |= BIT[tile]
    return held


def _ends_before(start: HandState, steps: Sequence[Step], i: int) -> tuple[int, int]:
    left = right = -1
    for kind, _, tile, face, end in steps[:i]:
        if kind != "play":
            continue
        if left < 0:
            left, right = int(face[0]), int(face[1])
        elif end == "right":
            right = OTHER_HALF[tile][right]
        else:
            left = OTHER_HALF[tile][left]
    return left, right


def test_replay_hand_opening_face_sets_the_ends() -> None:
    """The opening's face as written decides the ends ("36": 3 left): turning a
    non-double opening around changes the hand, the same way for both."""
    rnd = random.Random(3)
    changed = 0
    for rules in RULES[:8]:
        for _ in range(10):
            start = random_hand(rules, rnd)
            _, steps = play_out(start, rnd)
            kind, seat, tile, face, end = steps[0]
            assert kind == "play" and end is None
            if IS_DOUBLE[tile]:
                continue
            turned = [(kind, seat, tile, face[::-1], end)] + steps[1:]
            got = c_replay(start, turned)
            assert got == expected(start, turned)
            changed += got != c_replay(start, steps)
            rec = MOVE.unpack(pack(steps[:1], 5))
            assert rec[-1] == 2 + 4 * int(face[0])
    assert changed > 10


def test_replay_hand_wrong_hand_number_and_bad_arguments() -> None:
    r = resolve("international")
    rnd = random.Random(5)
    start = random_hand(r, rnd)
    _, steps = play_out(start, rnd)
    assert c_replay(start, steps, hand=5) is not None
    moves = pack(steps, 5)
    args = (start.hands, bytes(start.stock), start.turn, start.opening, False, False)
    assert native.replay_hand(moves, 0, len(steps), 5, *args) is not None
    assert native.replay_hand(moves, 0, len(steps), 6, *args) is None  # another hand's moves
    assert native.replay_hand(moves, 0, 0, 5, *args) is None  # no moves: not over
    with pytest.raises(ValueError):
        native.replay_hand(moves, 0, len(steps) + 1, 5, *args)
    with pytest.raises(ValueError):
        native.replay_hand(moves, 2, 1, 5, *args)
    with pytest.raises(ValueError):
        native.replay_hand(moves[:-1], 0, 1, 5, *args)  # not whole records
    with pytest.raises(ValueError):
        native.replay_hand(moves, 0, len(steps), 5, (), b"", 0, -1, False, False)
    assert native.replay_hand(moves, 0, len(steps), 5, start.hands, b"", 9, -1, False, False) is None


def test_replay_hand_draws_follow_the_boneyard() -> None:
    r = resolve("domena_2p")
    rnd = random.Random(11)
    seen_draw = 0
    for _ in range(40):
        start = random_hand(r, rnd)
        _, steps = play_out(start, rnd)
        draws = [i for i, s in enumerate(steps) if s[0] == "draw"]
        if not draws:
            continue
        seen_draw += 1
        i = draws[0]
        # another boneyard tile than the next one
        other = [t for t in start.stock if t != steps[i][2]]
        bad = steps[:i] + [("draw", steps[i][1], other[0], tile_name(other[0]), None)] + steps[i + 1 :]
        assert expected(start, bad) is None
        assert c_replay(start, bad) is None
        # a fitting drawn tile must be played at once: a pass after it is irregular
        assert c_replay(start, steps) == expected(start, steps) is not None
    assert seen_draw > 5


# -- scan --------------------------------------------------------------------------

SAMPLE = ROOT / "sample_logs" / "international.jsonl"
SAMPLE_LINES = SAMPLE.read_bytes().splitlines()


def scan(data: bytes, before: int = 0, max_line: int = MAX_LINE_BYTES) -> tuple[int, list[Any], dict[str, Any]]:
    return native.scan(data, before, max_line)


def reader_lines(tmp_path: Path, data: bytes) -> tuple[int, int]:
    p = tmp_path / "r.jsonl"
    p.write_bytes(data)
    reader = LogReader(p)
    list(reader.records())
    return reader.stats.lines, reader.stats.bad_lines


@pytest.mark.parametrize(
    ("data", "lines"),
    [
        (b"", 0),
        (b"\n", 1),
        (b"\n\n", 2),
        (b"x", 1),
        (b"x\n", 1),
        (b"x\ny", 2),
        (b"x\ny\n", 2),
        (b"x\n\n\ny\n", 4),
        (b"x\r\ny\r\n", 2),
        (b"x\r\ny", 2),
        (b"  \t\n\r\n", 2),
        (b"\r", 1),
    ],
)
def test_scan_counts_lines(data: bytes, lines: int, tmp_path: Path) -> None:
    n, others, matches = scan(data)
    assert n == lines
    assert reader_lines(tmp_path, data)[0] == lines
    assert scan(data, 40)[0] == 40 + lines
    # blank lines are counted, never given back; others carry line numbers
    blank = {i + 1 for i, raw in enumerate(data.split(b"\n")) if not raw.rstrip(b"\r").strip(b" \t")}
    assert all(line not in blank for line, _, _ in others)
    assert matches == {}


def test_scan_log_line_count_and_offsets() -> None:
    text = b"\r\n".join(SAMPLE_LINES[:30]) + b"\r\n\r\n" + b"\n".join(SAMPLE_LINES[30:60])
    n, others, matches = scan(text)
    assert n == 61
    for line, start, end in others:
        raw = text[start:end]  # as replay.reader splits lines: without the \n, a \r kept
        assert b"\n" not in raw and raw.endswith(b"\r") == (line <= 30)
        assert raw.rstrip(b"\r") == SAMPLE_LINES[line - 1 if line <= 30 else line - 2]
    (mid,) = matches
    first, ordered, evs, moves, count, s0, s1, t0, t1 = matches[mid]
    assert (first, ordered, count, s0, s1) == (1, 1, 60, 0, 59)
    assert t0 == orjson.loads(SAMPLE_LINES[0])["ts"] and t1 == orjson.loads(SAMPLE_LINES[59])["ts"]
    # every line is either an event tuple or a packed move, each once
    lines = [e[1] for e in evs] + [m[0] for m in MOVE.iter_unpack(moves)]
    assert sorted(lines) == [k for k in range(1, 62) if k != 31]


def test_scan_long_lines_go_back_to_python() -> None:
    line = SAMPLE_LINES[5]
    n, others, matches = scan(line + b"\n", 0, len(line))
    assert others == [] and matches
    n, others, matches = scan(line + b"\n", 0, len(line) - 1)
    assert others == [(1, 0, len(line))] and matches == {}


def _variants() -> list[tuple[str, bytes]]:
    deal = next(x for x in SAMPLE_LINES if b'"type":"deal"' in x)
    play = next(x for x in SAMPLE_LINES if b'"type":"play"' in x and b'"end":"left"' in x)
    end = next(x for x in SAMPLE_LINES if b'"type":"hand_end"' in x)
    reveal = next(x for x in SAMPLE_LINES if b'"type":"reveal"' in x)
    obj = orjson.loads(play)
    ts = obj["ts"]
    return [
        ("space", play.replace(b",", b", ", 1)),
        ("space_at_end", play[:-1] + b" }"),
        ("extra_field", play[:-1] + b',"x":1}'),
        ("key_order", orjson.dumps({k: obj[k] for k in reversed(list(obj))})),
        ("escaped_match", play.replace(obj["match"].encode(), obj["match"].replace("-", "\\u002d").encode(), 1)),
        ("float_seq", play.replace(b'"seq":%d' % obj["seq"], b'"seq":%d.0' % obj["seq"], 1)),
        ("bad_date", play.replace(ts.encode(), b"2026-02-30" + ts[10:].encode(), 1)),
        ("feb29_2025", play.replace(ts.encode(), b"2025-02-29" + ts[10:].encode(), 1)),
        ("offset_ts", play.replace(ts.encode(), ts[:-1].encode() + b"+00:00", 1)),
        ("lower_z", play.replace(ts.encode(), ts[:-1].encode() + b"z", 1)),
        ("minus_zero_points", end.replace(b'"points":[', b'"points":[-0,', 1).replace(b'"score":[', b'"score":[0,', 1)),
        ("leading_zero_hand", play.replace(b'"hand":', b'"hand":0', 1)),
        ("seat_128", play.replace(b'"seat":%d' % obj["seat"], b'"seat":128', 1)),
        ("tile_77", play.replace(b'"tile":"%s"' % obj["tile"].encode(), b'"tile":"77"', 1)),
        ("deal_spaces", deal.replace(b'","', b'", "', 1)),
        ("reveal_extra", reveal[:-1] + b',"note":"x"}'),
        ("non_ascii_match", play.replace(obj["match"].encode(), obj["match"].encode() + "é".encode(), 1)),
        ("crlf_in_middle", play[:-1] + b"\r}"),
    ]


@pytest.mark.parametrize(("name", "raw"), _variants(), ids=[n for n, _ in _variants()])
def test_scan_non_canonical_lines_are_read_by_python(name: str, raw: bytes, tmp_path: Path) -> None:
    n, others, matches = scan(raw + b"\n")
    assert n == 1
    assert others == [(1, 0, len(raw))], name
    # the line still has a canonical head for some variants: then its place is
    # kept as an OTHER placeholder, never as a move or a hand event
    for _, _, evs, moves, *_ in matches.values():
        assert moves == b""
        assert [e[0] for e in evs] == [OTHER]
    # what Python makes of it is what LogReader makes of it
    p = tmp_path / f"{name}.jsonl"
    p.write_bytes(raw + b"\n")
    files, by_match, top = scan_paths([p])
    want = list(LogReader(p).records())
    got = [rec for srcs in by_match.values() for src in srcs for rec in src.records()]
    got_top = [(f.code, f.line) for f in top]
    want_top = [(r.code, r.line) for r in want if not isinstance(r, EventLine) and r.match is None]
    assert got_top == want_top
    assert got == [r for r in want if isinstance(r, EventLine) or r.match is not None]
    assert files[0].lines == 1


def test_scan_ordered_flag() -> None:
    lines = SAMPLE_LINES[:12]

    def ordered(ls: Sequence[bytes]) -> int:
        (acc,) = scan(b"\n".join(ls))[2].values()
        return acc[1]

    assert ordered(lines) == 1
    assert ordered(lines[:5] + lines[6:]) == 0  # a seq skipped
    assert ordered(lines[:5] + [lines[6], lines[5]] + lines[7:]) == 0  # swapped
    assert ordered(lines[3:]) == 1  # need not start at 0
    assert scan(b"\n".join(lines[3:]))[2].popitem()[1][5] == 3
    # a time that goes back, or one written at another precision
    o = orjson.loads(lines[6])
    back = lines[6].replace(o["ts"].encode(), orjson.loads(lines[0])["ts"].encode())
    assert ordered(lines[:6] + [back] + lines[7:]) == 0
    coarse = lines[6].replace(o["ts"].encode(), o["ts"][:19].encode() + b"Z")
    assert ordered(lines[:6] + [coarse] + lines[7:]) == 0
    # equal times are in order
    same = lines[6].replace(o["ts"].encode(), orjson.loads(lines[5])["ts"].encode())
    assert ordered(lines[:6] + [same] + lines[7:]) == 1
    # another match in between does not disturb either
    other = [x.replace(b'"match":"', b'"match":"zz', 1) for x in lines]
    mixed = [x for pair in zip(lines, other, strict=True) for x in pair]
    accs = scan(b"\n".join(mixed))[2]
    assert len(accs) == 2 and all(a[1] == 1 for a in accs.values())
    assert [a[0] for a in accs.values()] == [1, 2]


@pytest.mark.parametrize("name", ["international", "domena_2p", "chiva"])
def test_scan_event_tuples(name: str) -> None:
    raw_lines = (ROOT / "sample_logs" / f"{name}.jsonl").read_bytes().splitlines()
    data = b"\n".join(raw_lines) + b"\n"
    _, others, matches = scan(data)
    objs = [orjson.loads(x) for x in raw_lines]
    seen = {DEAL: 0, HAND_END: 0, REVEAL: 0, OTHER: 0}
    kinds = {0: 0, 1: 0, 2: 0}
    offsets = [0]
    for x in raw_lines:
        offsets.append(offsets[-1] + len(x) + 1)
    for mid, (_, _, evs, moves, *_rest) in matches.items():
        recs = list(MOVE.iter_unpack(moves))
        for e in evs:
            kind, line, off = e[0], e[1], e[2]
            o = objs[line - 1]
            assert o["match"] == mid and off == offsets[line - 1] and e[3] == o["seq"]
            # moves before this event: the packed records of earlier lines
            assert e[-1] == sum(1 for r in recs if r[0] < line)
            seen[kind] += 1
            if kind == OTHER:
                assert o["type"] not in ("deal", "hand_end", "reveal", "play", "pass", "draw")
                assert len(e) == 6 and e[4] == o["ts"]
                continue
            assert e[4] == o["ts"] and e[5] == o["hand"]
            if kind == DEAL:
                assert o["type"] == "deal"
                assert e[6] == tuple(o["client_seeds"])
                assert e[7] == tuple(tuple(parse_tile(t) for t in h) for h in o["hands"])
                assert e[8] == tuple(mask_of(parse_tile(t) for t in h) for h in o["hands"])
                assert (e[9], e[10]) == (o["stock"], o["leader"])
                assert len(e) == 12
            elif kind == HAND_END:
                assert o["type"] == "hand_end"
                assert (e[6], e[7]) == (o["result"], o["winner"])
                assert (e[8], e[9], e[10]) == (tuple(o["points"]), tuple(o["score"]), tuple(o.get("notes", ())))
                assert len(e) == 12
            else:
                assert o["type"] == "reveal" and e[6] == o["server_seed"] and len(e) == 8
        for line, off, ts_off, seq, hand, kind, seat, tile, end in recs:
            o = objs[line - 1]
            assert off == offsets[line - 1] and data[ts_off : ts_off + len(o["ts"])] == o["ts"].encode()
            assert (seq, hand, seat) == (o["seq"], o["hand"], o["seat"])
            assert kind == {"play": 0, "pass": 1, "draw": 2}[o["type"]]
            kinds[kind] += 1
            if o["type"] == "pass":
                assert (tile, end) == (0, 2)
                continue
            assert tile == parse_tile(o["tile"])
            first = int(o["tile"][0])
            if o["type"] == "draw":
                assert end == 2 + 4 * first
            else:
                assert end == {"left": 0, "right": 1, None: 2}[o["end"]] + 4 * first
    assert all(seen.values()), seen
    assert kinds[0] and kinds[1] and (kinds[2] or name != "domena_2p"), kinds
    # every line is somewhere: an event tuple or a move, others only for the OTHER ones
    assert {line for line, _, _ in others} == {
        e[1] for acc in matches.values() for e in acc[2] if e[0] == OTHER
    }


def test_scan_hand_event_variants() -> None:
    base = {"match": "m-1", "seq": 1, "ts": "2026-11-02T18:04:05.120Z", "hand": 2}

    def one(obj: dict[str, Any]) -> tuple[Any, ...] | None:
        _, others, matches = scan(orjson.dumps(obj))
        evs = matches["m-1"][2]
        return None if others else evs[0]

    he = {"type": "hand_end", **base, "result": "block", "winner": None, "points": [0, -5], "score": [10, -5]}
    got = one(he)
    assert got is not None and got[6:11] == ("block", None, (0, -5), (10, -5), ())
    got = one({**he, "notes": ["capicua", "x"]})
    assert got is not None and got[10] == ("capicua", "x")
    assert one({**he, "result": "tie"}) is None
    assert one({**he, "winner": 128}) is None
    assert one({**he, "points": [2**31 - 1], "score": [-(2**31 - 1)]}) is not None
    assert one({**he, "points": [2**31]}) is None
    dl = {"type": "deal", **base, "client_seeds": ["", "a"], "hands": [["36", "00"], []], "stock": 5, "leader": 1}
    got = one(dl)
    assert got is not None and got[6:11] == (("", "a"), ((21, 0), ()), (BIT[21] | BIT[0], 0), 5, 1)
    assert one({**dl, "leader": 128}) is None
    assert one({**dl, "hands": [["37"]]}) is None
    rv = {"type": "reveal", **base, "server_seed": "zz"}
    got = one(rv)
    assert got is not None and got[6] == "zz"
    assert one({**rv, "hand": 0}) is None
    # a move without its end, or hand 0, is left to Python
    mv = {"type": "play", **base, "seat": 0, "tile": "12"}
    assert one(mv) is None
    _, others, matches = scan(orjson.dumps({**mv, "end": None}))
    assert others == [] and len(matches["m-1"][3]) == MOVE.size


def test_scan_buffer_cut_keeps_counting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """scan_paths over many small buffers counts lines and sees every line once."""
    text = b"\n".join(SAMPLE_LINES) + b"\n\n"
    p = tmp_path / "cut.jsonl"
    p.write_bytes(text)
    monkeypatch.setattr(scan_mod, "BUFFER_BYTES", 700)
    monkeypatch.setattr(reader_mod, "_CHUNK", 512)
    files, by_match, top = scan_paths([p])
    assert files[0].lines == len(SAMPLE_LINES) + 1 == reader_lines(tmp_path, text)[0]
    assert top == []
    want = list(LogReader(p).records())
    got = []
    for mid, (src,) in by_match.items():
        assert len(src.segments) > 10
        recs = src.records()
        assert recs == [r for r in want if isinstance(r, EventLine) and r.event.match == mid]
        got.extend(recs)
    assert sorted(r.line for r in got) == list(range(1, len(SAMPLE_LINES) + 1))


def test_source_records_equal_logreader(tmp_path: Path) -> None:
    """Source.records() are the records LogReader makes, line for line."""
    variants = [x for _, x in _variants()]
    lines = SAMPLE_LINES[:40] + variants + [b"", b"  ", b"not json", b'{"type":"play"}'] + SAMPLE_LINES[40:80]
    text = b"\n".join(x + (b"\r" if k % 3 == 0 else b"") for k, x in enumerate(lines)) + b"\n"
    p = tmp_path / "mixed.jsonl"
    p.write_bytes(text)
    want = list(LogReader(p).records())
    files, by_match, top = scan_paths([p])
    got = sorted((rec for srcs in by_match.values() for src in srcs for rec in src.records()), key=lambda r: r.line)
    assert got == [r for r in want if isinstance(r, EventLine) or r.match is not None]
    assert [(f.code, f.line, f.message) for f in top] == [
        (r.code, r.line, r.message) for r in want if not isinstance(r, EventLine) and r.match is None
    ]
    assert files[0].lines == len(lines)


def test_source_records_of_a_line_ending_in_two_carriage_returns(tmp_path: Path) -> None:
    p = tmp_path / "crcr.jsonl"
    p.write_bytes(b"\n".join(SAMPLE_LINES[:3]) + b"\r\r\n")
    want = list(LogReader(p).records())
    _, by_match, _ = scan_paths([p])
    (srcs,) = by_match.values()
    assert srcs[0].records() == want  # LogReader keeps the second \r in `raw`


# -- route: ingest's main loop ------------------------------------------------------


def _route_python(data: bytes) -> tuple[list[tuple[bytes, list[bytes], list[int]]], int]:
    """The groups route() must give for data whose lines all have a routing key
    (replay.ingest.lines.fast_key), in the order of each key's first line, and the line count."""
    from replay.ingest.lines import fast_key

    groups: dict[bytes, tuple[list[bytes], list[int]]] = {}
    n = 0
    for n, raw in enumerate(data.split(b"\n")[: data.count(b"\n")], 1):
        if not raw.rstrip(b"\r").strip(b" \t"):
            continue
        key = fast_key(raw)
        assert key is not None
        raws, nums = groups.setdefault(key[0], ([], []))
        raws.append(raw)
        nums.append(n)
    return [(k, r, ns) for k, (r, ns) in groups.items()], n


def test_route_groups_lines_by_match_as_fast_key_reads_them() -> None:
    import array

    raw = Path("sample_logs/interleaved.jsonl").read_bytes()
    # the match_end lines last, so that no line comes after its match's end
    lines = raw.split(b"\n")[:-1]
    ends = [x for x in lines if x.startswith(b'{"type":"match_end"')]
    body = [x for x in lines if not x.startswith(b'{"type":"match_end"')]
    data = b"\n".join([*body[:40], b"", b"  \t", *(x + b"\r" for x in body[40:80]), *body[80:], *ends]) + b"\n"
    off, n, groups = native.route(data, 0, 0, MAX_LINE_BYTES)
    want, lines_want = _route_python(data)
    assert off == len(data) and n == lines_want
    assert [g[0] for g in groups] == [k for k, _, _ in want]
    for (key, blob, numbers, deals, ended, start), (wkey, raws, nums) in zip(groups, want, strict=True):
        assert key == wkey
        assert bytes(blob) == b"\n".join(raws)  # a trailing \r stays with its line
        assert array.array("q", bytes(numbers)).tolist() == nums
        assert deals == sum(r.startswith(b'{"type":"deal"') for r in raws)
        assert ended == 1 and start == next(r for r in raws if r.startswith(b'{"type":"match_start"'))


def test_route_groups_past_its_first_arrays_as_python_does() -> None:
    """More matches (100) and lines (5,000) than route's first arrays hold
    (64 and 4,096): each grows, and every group still has its own lines."""
    import array

    lines = [
        f'{{"type":"play","match":"m-{m:03d}","seq":{k},"hand":1,"seat":{k % 4},"tile":"{k % 7}{m % 7}"}}'.encode()
        for k in range(50)
        for m in range(100)
    ]
    data = b"\n".join(lines) + b"\n"
    off, n, groups = native.route(data, 0, 0, MAX_LINE_BYTES)
    want, lines_want = _route_python(data)
    assert (off, n, len(groups)) == (len(data), lines_want, 100) and n == 5000
    for (key, blob, numbers, deals, ended, start), (wkey, raws, nums) in zip(groups, want, strict=True):
        assert (key, blob, deals, ended, start) == (wkey, b"\n".join(raws), 0, 0, None)
        assert array.array("q", numbers).tolist() == nums


def test_route_stops_where_python_must_read() -> None:
    head = b'{"type":"play","match":"m-1","seq":3,"ts":"2026-11-02T18:04:05Z","hand":1,"seat":0,"tile":"63"}'
    other = b'{"type":"play","match":"m-2","seq":3}'
    cases = {
        b"not json": 1,  # no routing key
        b'{"type":"play","match":"m-\\u0031","seq":3}': 1,  # an escape in the id
        b'{"type":"play","match":"m-1","seq":3,"match":"m-9"}': 1,  # a second "match" key
        b'{"type":"play", "match":"m-1"}': 1,  # another layout
        '{"type":"play","match":"mé","seq":3}'.encode(): 1,  # not ASCII
    }
    for bad, before in cases.items():
        data = head + b"\n" + bad + b"\n" + other + b"\n"
        off, n, groups = native.route(data, 0, 0, MAX_LINE_BYTES)
        assert (off, n) == (len(head) + 1, before), bad
        assert [g[0] for g in groups] == [b"m-1"]
        # from the line after it, routing goes on
        off2, n2, groups2 = native.route(data, off + len(bad) + 1, n + 1, MAX_LINE_BYTES)
        assert (off2, n2, [g[0] for g in groups2]) == (len(data), 3, [b"m-2"])
    # a line longer than the limit, and a line after its match's end
    end = b'{"type":"match_end","match":"m-1","seq":4,"ts":"2026-11-02T18:04:06Z"}'
    off, n, groups = native.route(head + b"\n" + head + b"\n", 0, 0, len(head) - 1)
    assert (off, n, groups) == (0, 0, [])
    data = head + b"\n" + end + b"\n" + head + b"\n"
    off, n, groups = native.route(data, 0, 0, MAX_LINE_BYTES)
    assert (off, n) == (len(head) + len(end) + 2, 2) and groups[0][4] == 1  # ended


@given(st.lists(st.lists(st.lists(st.integers(0, 27), max_size=9), max_size=4), max_size=30))
def test_deals_flattens_as_python_does(deals: list[list[list[int]]]) -> None:
    import numpy as np

    tiles, per_seat, per_hand = native.deals(deals)
    assert np.frombuffer(tiles, np.int8).tolist() == [t for hand in deals for seat in hand for t in seat]
    assert np.frombuffer(per_seat, np.int32).tolist() == [len(seat) for hand in deals for seat in hand]
    assert np.frombuffer(per_hand, np.int32).tolist() == [len(hand) for hand in deals]


def test_deals_rejects_what_is_no_deal() -> None:
    for bad in ([[[128]]], [[[-1]]], [[["63"]]], [[7]], [7], 7):
        with pytest.raises((TypeError, ValueError, OverflowError)):
            native.deals(bad)
