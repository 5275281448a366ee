"""Hand engine: hand-built deals played move by move with `apply`.

Deals are written as the line they produce: a script of moves in turn
order (the opener's tile as "ab" = a on the left, b on the right; later
tiles "abL"/"abR" for the end they go on; P pass, D draw, Y yield) plus
the tiles each seat still holds at the end. `scripted_hands` turns that
into the dealt hands; `run` replays the script through `apply`, so every
move is checked by the engine. test_match.py scores the same deals.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from replay.engine import (
    DRAW,
    LEFT,
    PASS,
    RIGHT,
    YIELD,
    HandState,
    IllegalMoveError,
    Move,
    Play,
    apply,
    can_apply,
    can_yield,
    going_out_note,
    legal_moves,
    new_hand,
    why_illegal,
)
from replay.rules import Rules, resolve
from replay.tiles import DOUBLE_SIX, iter_tiles, mask_of, parse_tile, pips_of

# --- script helpers (imported by test_match.py) ----------------------------------


def T(names: str) -> list[int]:
    """Tile ids of space-separated names."""
    return [parse_tile(x) for x in names.split()]


def to_move(token: str) -> Move:
    if token == "P":
        return PASS
    if token == "D":
        return DRAW
    if token == "Y":
        return YIELD
    tile = parse_tile(token[:2])
    if len(token) == 2:  # the opening tile: the first half goes left
        return Play(tile, LEFT if int(token[0]) >= int(token[1]) else RIGHT)
    return Play(tile, LEFT if token[2] == "L" else RIGHT)


def scripted_hands(script: str, holding: Sequence[str], *, leader: int = 0) -> list[list[int]]:
    """The deal of a script without draws: what each seat plays plus what it keeps."""
    n = len(holding)
    hands: list[list[int]] = [[] for _ in range(n)]
    seat = leader
    for tok in script.split():
        if tok == "Y":
            seat = (seat + 2) % n
            continue
        if tok != "P":
            hands[seat].append(parse_tile(tok[:2]))
        seat = (seat + 1) % n
    for s, kept in enumerate(holding):
        hands[s] += T(kept)
    dealt = [t for h in hands for t in h]
    assert all(len(h) == 7 for h in hands), [len(h) for h in hands]
    assert len(set(dealt)) == len(dealt)
    return hands


def run(state: HandState, script: str) -> HandState:
    for tok in script.split():
        state = apply(state, to_move(tok))
    return state


def closing(rules: Rules) -> str:
    """The passes owed after a block (none under `immediate`)."""
    return " P" * rules.players if rules.block_end == "all_pass" else ""


def start(rules: Rules, hands: Sequence[Sequence[int]], leader: int = 0, **kw: object) -> HandState:
    """A hand whose opening tile is fixed exactly when the first lead fixes it."""
    opening = DOUBLE_SIX if rules.first_lead == "double_six" else -1
    return new_hand(rules, hands, leader=leader, opening=opening, **kw)  # type: ignore[arg-type]


# --- the 4-player deals ------------------------------------------------------------

# Domino by seat 0 on the 25th move, nobody passes. The line runs right from
# 66; the last tile 43 fits the right end only (the left shows 6): no note.
DOMINO_4P = (
    "66 65R 50R 00R  01R 11R 12R 22R  20R 03R 33R 31R  14R 40R 06R 61R"
    "  15R 52R 24R 46R  62R 23R 35R 54R  43R"
)
DOMINO_4P_HOLD = ("", "55", "44", "63")  # left: 10, 8, 9 = 27; opponents 10 + 9 = 19

# Capicua: the last tile 36 fits 3 (right) and 6 (left), ends then (6, 6).
CAPICUA_4P = (
    "66 65R 50R 00R  01R 11R 12R 22R  20R 03R 31R 14R  40R 06R 61R 15R"
    "  52R 24R 46R 62R  23R 35R 54R 43R  36R"
)
CAPICUA_4P_HOLD = ("", "55", "44", "33")  # 10 + 8 + 6 = 24; opponents 16

# Chuchazo: 00 goes out on the right 0, the left shows 6.
CHUCHAZO_4P = (
    "66 65R 50R 01R  11R 12R 22R 20R  03R 33R 31R 14R  42R 23R 34R 45R"
    "  51R 16R 62R 25R  53R 36R 64R 40R  00R"
)
CHUCHAZO_4P_HOLD = ("", "60", "55", "44")  # 6 + 10 + 8 = 24; opponents 6 + 8 = 14

# 00 goes out on two ends both showing 0 (opened "06": 0 left, 6 right).
CHUCHA_BOTH_4P = (
    "06 66R 65R 50R  01R 11R 12R 22R  20R 03R 31R 14R  42R 23R 34R 45R"
    "  51R 16R 62R 25R  53R 36R 64R 40R  00R"
)
CHUCHA_BOTH_4P_HOLD = ("", "55", "44", "33")  # 24; opponents 16

# Dominao with ones: 11 goes out on (1, 1) and leaves (1, 1).
DOMINAO_4P = (
    "16 66R 65R 51R  10R 00R 02R 22R  21R 13R 30R 04R  42R 23R 34R 45R"
    "  50R 06R 62R 25R  53R 36R 64R 41R  11R"
)
DOMINAO_4P_HOLD = ("", "55", "44", "33")  # 24; opponents 16

# A domino with passes by both sides: seat 1 passes twice (first pass of
# the hand, then a later one), seat 2 once (a later one).
PASSES_4P = (
    "66 62L 60R 50R  32L 65R 64R 53L  43R 52L 20L 63R  30L 61R 51R 55R"
    "  33L P 54R 31L  41R P P 21L  10R"
)
PASSES_4P_HOLD = ("", "00 22 42", "40 44", "11")  # 10 + 12 + 2 = 24

# Block: 66 then 6-x tiles and connectors until all seven 6s are down and
# both ends show 6; seat 1 lays the blocking 16 on the 10th move.
# Line pips 78, so the 18 tiles left hold 90 pips.
BLOCK_4P = "66 62R 23R 36R  64R 45R 56R 60L  01L 16L"
# Who keeps which of the 18 tiles (seat 0: 4, 1: 4, 2: 5, 3: 5):
B_SIDE0 = ("00 02 03 11", "14 15 24 25", "04 05 12 13 22", "33 34 35 44 55")  # 7 24 20 39
B_TIE = ("55 44 35 14", "11 12 13 15", "00 02 03 04 05", "22 24 25 33 34")  # 31 15 14 30

# A block where seat 1 holds no 6 and passes three times while the line is
# built; seat 0 blocks on the 13th move. Seats keep 3, 7, 4, 4 tiles.
BLOCK_PASSES_4P = "66 P 62R 23R  36R P 64R 45R  56R P 60L 01L  16L"
BP_TIE = ("55 44 00", "02 03 04 11 12 13 14", "35 34 25 05", "15 22 24 33")  # 18 23 27 22
BP_SIDE1 = ("55 44 14", "02 03 04 11 12 13 00", "35 34 25 05", "15 22 24 33")  # 23 18 27 22

# A block whose blocking tile is 00 (any-tile opening): line 0..0, then 00.
BLOCK_CHUCHA_4P = "01 12R 20R 03L  34L 40L 05R 56R  60R 00L"
BLOCK_CHUCHA_HOLD = ("11 13 14 15", "16 22 23 24", "25 26 33 35 36", "44 45 46 55 66")

# --- the 2- and 3-player deals --------------------------------------------------

# 2 players, boneyard: seat 1 draws 40 (no fit on 6|3), then 32, and must play it.
DOMINO_2P = ("66 55 44 33 22 11 00", "65 54 43 21 10 52 41")
DOMINO_2P_STOCK = "40 32 20 30 31 42 50 51 53 60 61 62 63 64"
DOMINO_2P_SCRIPT = "66 65R 55R 54R 44R 43R 33R D D 32R 22R 21R 11R 10R 00R"

# 2 players: all sixes down after 10 moves with 14 tiles still in the boneyard.
BLOCK_2P = ("66 54 63 26 10 55 44", "65 46 32 61 06 11 20")
BLOCK_2P_STOCK = "00 21 22 30 31 33 40 41 42 43 50 51 52 53"  # 68 pips
BLOCK_2P_SCRIPT = "66 65R 54R 46R 63R 32R 26R 61R 10R 06R"

# 3 players, boneyard; 66 is in the stock, so 44 is the highest double dealt.
DOMINO_3P = ("30 44 40 21 54 65 11", "52 53 32 50 64 43 41", "00 61 60 63 20 62 31")
DOMINO_3P_STOCK = "42 55 22 66 10 33 51"
DOMINO_3P_SCRIPT = "44 64L 61L 54R 41L D 42L 21L 50R 20R 11L 32R 63R 65R 53R 31L 30L 43R 00L 40R"

BLOCK_3P = ("66 46 26 06 00 11 20", "65 63 61 55 44 53 52", "54 32 10 43 42 41 40")
BLOCK_3P_STOCK = "21 22 30 31 33 50 51"  # 31 pips
BLOCK_3P_SCRIPT = "66 65R 54R 46R 63R 32R 26R 61R 10R 06R"

# Doubles in the boneyard: 21 tiles, no drawing.
DOMINO_DIB = ("65 63 64 32 60 51 10", "62 20 53 21 61 52 31", "42 43 40 41 30 54 50")
DOMINO_DIB_SCRIPT = "51 31R 30R 60R 61R 50L 10L 21L 42L 64L 62L 41R 32L 53L 54R 65L 52R P 63L"
# rules.md's own example: 3-0 0-4 4-3 3-1 1-5 5-3 3-2 2-6 6-3, all six 3s down.
BLOCK_DIB = ("30 31 32 10 20 21 41", "04 15 26 42 50 52 54", "43 53 63 60 61 64 65")
BLOCK_DIB_SCRIPT = "30 04R 43R 31R 15R 53R 32R 26R 63R"


def four(profile: str = "international", **over: object) -> Rules:
    return resolve(profile, dict(over) if over else None)


# --- hand-built hands, every profile's shape ------------------------------------

FOUR_PLAYER = [
    "international",
    "puerto_rico",
    "venezuela",
    "colombia",
    "mexico",
    "dominican",
    "la_plaza",
    "pagat",
    "doscientos",
    "quinientos",
    "pase_sureno",
    "south_american",
    "milo",
    "chiva",
    "domena_4p",
    "royal_rumble",
]


@pytest.mark.parametrize("profile", FOUR_PLAYER)
def test_domino_4p(profile: str) -> None:
    r = resolve(profile)
    s = run(start(r, scripted_hands(DOMINO_4P, DOMINO_4P_HOLD)), DOMINO_4P)
    assert (s.result, s.over, s.plays, s.passes) == ("domino", True, 25, ())
    assert s.hands[0] == 0 and s.ends == (6, 3)
    assert s.pips() == (0, 10, 8, 9)
    assert going_out_note(s) is None
    assert legal_moves(s) == ()


@pytest.mark.parametrize("profile", FOUR_PLAYER)
def test_block_4p(profile: str) -> None:
    r = resolve(profile)
    s = run(start(r, scripted_hands(BLOCK_4P, B_SIDE0)), BLOCK_4P)
    assert (s.result, s.blocker, s.ends, s.plays) == ("block", 1, (6, 6), 10)
    assert s.pips() == (7, 24, 20, 39)
    if r.block_end == "immediate":
        assert s.over and legal_moves(s) == ()
        assert why_illegal(s, PASS) == "the hand is over"
    else:
        # four passes in turn from seat 2, the blocker last
        assert not s.over
        for seat in (2, 3, 0, 1):
            assert s.turn == seat and legal_moves(s) == (PASS,)
            s = apply(s, PASS)
        assert s.over and legal_moves(s) == ()
    assert s.passes == ()  # closing passes are not passes of the play
    assert going_out_note(s) is None


def test_block_4p_line_is_a_block_only_at_the_last_tile() -> None:
    r = four()
    s = start(r, scripted_hands(BLOCK_4P, B_SIDE0))
    toks = BLOCK_4P.split()
    for tok in toks[:-1]:
        s = apply(s, to_move(tok))
        assert s.result is None
    s = apply(s, to_move(toks[-1]))
    assert s.result == "block"


def test_domino_2p_boneyard() -> None:
    for profile in ("domena_2p", "pr_2p"):
        r = resolve(profile)
        s = start(r, [T(h) for h in DOMINO_2P], stock=T(DOMINO_2P_STOCK))
        toks = DOMINO_2P_SCRIPT.split()
        s = run(s, " ".join(toks[:7]))
        # seat 1 holds 21 10 52 41: nothing fits 6|3, so it must draw
        assert s.turn == 1 and s.ends == (6, 3)
        assert legal_moves(s) == (DRAW,)
        assert not can_apply(s, PASS)
        s = apply(s, DRAW)  # 40 does not fit: draw again
        assert s.must_play == -1 and s.turn == 1 and legal_moves(s) == (DRAW,)
        s = apply(s, DRAW)  # 32 fits: it must be played at once
        assert s.must_play == parse_tile("32") and len(s.stock) == 12
        assert legal_moves(s) == (Play(parse_tile("32"), RIGHT),)
        assert not can_apply(s, PASS) and not can_apply(s, DRAW)
        s = run(s, " ".join(toks[9:]))
        assert (s.result, s.ends, s.pips()) == ("domino", (6, 0), (0, 16))
        assert going_out_note(s) == "chuchazo"
        assert len(s.stock) == 12  # the rest of the boneyard is never drawn


def test_drawn_tile_must_be_played_not_another() -> None:
    r = resolve("pr_2p")
    s = start(r, [T(h) for h in DOMINO_2P], stock=T(DOMINO_2P_STOCK))
    s = run(s, "66 65R 55R 54R 44R 43R 33R D D")
    # 21 fits nowhere, but even a tile that fitted would not be allowed
    reason = why_illegal(s, Play(parse_tile("21"), RIGHT))
    assert reason == "the drawn 32 must be played at once"
    with pytest.raises(IllegalMoveError) as e:
        apply(s, Play(parse_tile("21"), RIGHT))
    assert e.value.move == Play(parse_tile("21"), RIGHT)
    assert "seat 1" in str(e.value) and "(6, 3)" in str(e.value)


def test_block_2p_boneyard_drawn_by_the_seat_after_the_blocker() -> None:
    for profile in ("domena_2p", "pr_2p"):
        r = resolve(profile)
        s = start(r, [T(h) for h in BLOCK_2P], stock=T(BLOCK_2P_STOCK))
        s = run(s, BLOCK_2P_SCRIPT)
        assert (s.result, s.blocker, s.ends, len(s.stock)) == ("block", 1, (6, 6), 14)
        # seat 0 draws all 14, then passes; the blocker passes last
        for k in range(14):
            assert s.turn == 0 and legal_moves(s) == (DRAW,), k
            assert not can_apply(s, PASS)
            s = apply(s, DRAW)
            assert s.must_play == -1
        assert s.stock == () and legal_moves(s) == (PASS,)
        assert not can_apply(s, DRAW)
        assert not can_apply(s, Play(parse_tile("55"), LEFT))
        s = apply(s, PASS)
        assert s.turn == 1 and legal_moves(s) == (PASS,)
        s = apply(s, PASS)
        assert s.over and s.passes == ()
        # seat 0: 55 44 (18) + the 14 drawn tiles (68); seat 1: 11 20 (4)
        assert s.pips() == (86, 4)


def test_pass_with_empty_boneyard() -> None:
    r = resolve("pr_2p")
    # seat 0 holds every 6; nobody else can ever follow 6|6
    hands = [T("66 65 64 63 62 61 60"), T("00 11 22 33 44 55 10")]
    stock = T("20 21 30 31 32 40 41 42 43 50 51 52 53 54")
    s = start(r, hands, stock=stock)
    s = apply(s, to_move("66"))
    for _ in range(14):
        assert legal_moves(s) == (DRAW,)
        s = apply(s, DRAW)
    assert s.turn == 1 and s.stock == ()
    assert legal_moves(s) == (PASS,)
    assert why_illegal(s, DRAW) is not None
    s = apply(s, PASS)
    assert s.turn == 0 and s.passes == (1,) and s.result is None
    # a player with a boneyard left may not pass
    s2 = apply(start(r, hands, stock=stock), to_move("66"))
    assert not can_apply(s2, PASS)


def test_draw_while_holding_a_playable_tile_is_illegal() -> None:
    r = resolve("pr_2p")
    s = start(r, [T(h) for h in DOMINO_2P], stock=T(DOMINO_2P_STOCK))
    s = apply(s, to_move("66"))
    assert s.turn == 1 and can_apply(s, Play(parse_tile("65"), LEFT))
    assert why_illegal(s, DRAW) == "a draw while a tile can be played, or with no boneyard left"
    assert why_illegal(s, PASS) == "a pass while a tile can be played or drawn"


def test_3p_domino_and_block_with_boneyard() -> None:
    r = resolve("pr_3p")
    s = start(r, [T(h) for h in DOMINO_3P], stock=T(DOMINO_3P_STOCK))
    s = run(s, DOMINO_3P_SCRIPT)
    assert (s.result, s.pips(), len(s.stock)) == ("domino", (0, 7, 14), 6)
    s = start(r, [T(h) for h in BLOCK_3P], stock=T(BLOCK_3P_STOCK))
    s = run(s, BLOCK_3P_SCRIPT)
    assert (s.result, s.blocker) == ("block", 0)
    s = run(s, "D D D D D D D P P P")
    assert s.over and s.stock == ()
    assert s.pips() == (4, 64, 22)


def test_doubles_in_boneyard_hands() -> None:
    r = resolve("doubles_in_boneyard")
    s = new_hand(r, [T(h) for h in DOMINO_DIB], leader=0, stock=T("00 11"))
    assert s.stock == ()  # doubles set aside are not a boneyard
    s = run(s, DOMINO_DIB_SCRIPT)
    assert (s.result, s.pips(), s.passes) == ("domino", (0, 2, 11), (2,))
    s = run(new_hand(r, [T(h) for h in BLOCK_DIB], leader=0), BLOCK_DIB_SCRIPT)
    assert (s.result, s.blocker, s.ends) == ("block", 2, (3, 3))
    s = run(s, "P P P")
    assert s.over and s.pips() == (11, 27, 34)


# --- single rules of the engine ------------------------------------------------------


def test_first_tile_listed_once_either_orientation_legal() -> None:
    r = four()
    hands = scripted_hands(DOMINO_4P, DOMINO_4P_HOLD)
    s = new_hand(r, hands, leader=0)
    moves = legal_moves(s)
    assert len(moves) == 7 and all(isinstance(m, Play) and m.end == LEFT for m in moves)
    assert YIELD not in moves  # lead_to_partner is off
    t62 = parse_tile("62")
    # "62" with the high half left shows 6|2; on the right, 2|6
    assert apply(s, Play(t62, LEFT)).ends == (6, 2)
    assert apply(s, Play(t62, RIGHT)).ends == (2, 6)
    assert can_apply(s, Play(t62, RIGHT))


def test_equal_ends_left_and_right_are_one_move() -> None:
    r = four()
    s = run(new_hand(r, scripted_hands(DOMINO_4P, DOMINO_4P_HOLD), leader=0), "66")
    t65 = parse_tile("65")
    assert Play(t65, LEFT) in legal_moves(s)
    assert Play(t65, RIGHT) not in legal_moves(s)
    assert can_apply(s, Play(t65, RIGHT))
    assert apply(s, Play(t65, LEFT)).ends == (5, 6)
    assert apply(s, Play(t65, RIGHT)).ends == (6, 5)


def test_fixed_opening_and_illegal_move_error() -> None:
    r = four("puerto_rico")
    hands = scripted_hands(DOMINO_4P, DOMINO_4P_HOLD)
    s = start(r, hands)
    assert legal_moves(s) == (Play(DOUBLE_SIX, LEFT),)
    bad = Play(parse_tile("01"), LEFT)
    assert can_apply(s, bad) is False
    with pytest.raises(IllegalMoveError) as e:
        apply(s, bad)
    err = e.value
    assert err.move == bad and err.state is s
    assert err.reason == "the hand must open with 66"
    assert (
        str(err)
        == "illegal Play(tile='10', end='left') by seat 0 at ends None: the hand must open with 66"
    )
    assert can_apply(s, Play(DOUBLE_SIX, LEFT)) is True


@pytest.mark.parametrize(
    ("move", "reason"),
    [
        (Play(parse_tile("44"), LEFT), "seat 1 does not hold 44"),
        (Play(parse_tile("11"), LEFT), "11 does not carry the 6 on the left end"),
        (Play(parse_tile("03"), RIGHT), "30 does not carry the 6 on the right end"),
        (PASS, "a pass while a tile can be played or drawn"),
        (DRAW, "a draw while a tile can be played, or with no boneyard left"),
        (YIELD, "the lead cannot be handed over here"),
    ],
)
def test_illegal_moves_named(move: Move, reason: str) -> None:
    # seat 1 holds 65 11 03 40 52 23 55 and faces 6|6
    s = run(start(four(), scripted_hands(DOMINO_4P, DOMINO_4P_HOLD)), "66")
    assert s.turn == 1
    assert why_illegal(s, move) == reason
    assert can_apply(s, move) is False
    with pytest.raises(IllegalMoveError) as e:
        apply(s, move)
    assert e.value.reason == reason and e.value.move == move
    assert str(e.value) == f"illegal {move!r} by seat 1 at ends (6, 6): {reason}"


def test_play_after_the_block_is_illegal() -> None:
    r = four("puerto_rico")
    s = run(start(r, scripted_hands(BLOCK_4P, B_SIDE0)), BLOCK_4P)
    assert why_illegal(s, Play(parse_tile("00"), LEFT)) == "the line is blocked: only passes remain"
    s = run(s, "P P P P")
    assert why_illegal(s, PASS) == "the hand is over"
    with pytest.raises(IllegalMoveError):
        apply(s, PASS)


def test_pass_recorded_with_seat() -> None:
    r = four("pase_sureno")
    s = run(start(r, scripted_hands(BLOCK_PASSES_4P, BP_TIE)), BLOCK_PASSES_4P)
    assert (s.result, s.blocker, s.passes) == ("block", 0, (1, 1, 1))
    s = run(s, "P P P P")
    assert s.over and s.passes == (1, 1, 1)
    assert s.pips() == (18, 23, 27, 22)


# --- lead_to_partner -------------------------------------------------------------------


def test_yield_to_partner() -> None:
    r = four(lead_to_partner=True)
    hands = scripted_hands(DOMINO_4P, DOMINO_4P_HOLD)
    s = new_hand(r, hands, leader=0)
    assert can_yield(s) and YIELD in legal_moves(s)
    s = apply(s, YIELD)
    assert (s.turn, s.leader, s.yielded) == (2, 0, True)
    # the partner opens with any tile; no second yield
    assert YIELD not in legal_moves(s) and not can_apply(s, YIELD)
    assert len(legal_moves(s)) == 7
    s = apply(s, Play(parse_tile("44"), LEFT))
    assert (s.turn, s.ends) == (3, (4, 4))
    assert not can_apply(s, YIELD)


def test_yield_not_from_partner_seat_after_a_tile_or_when_off() -> None:
    hands = scripted_hands(DOMINO_4P, DOMINO_4P_HOLD)
    off = new_hand(four(), hands, leader=0)
    assert not can_apply(off, YIELD)
    on = new_hand(four(lead_to_partner=True), hands, leader=0)
    after = apply(on, Play(parse_tile("66"), LEFT))
    assert not can_apply(after, YIELD)


@pytest.mark.parametrize("profile", ["puerto_rico", "doscientos", "la_plaza"])
def test_no_yield_with_a_fixed_opening(profile: str) -> None:
    r = resolve(profile, {"lead_to_partner": True})
    hands = scripted_hands(DOMINO_4P, DOMINO_4P_HOLD)
    # first hand (double_six) and a double_six_holder tie lead: the tile is fixed
    fixed = new_hand(r, hands, leader=0, opening=DOUBLE_SIX)
    assert legal_moves(fixed) == (Play(DOUBLE_SIX, LEFT),)
    assert why_illegal(fixed, YIELD) == "the lead cannot be handed over here"
    # a later hand opened with any tile may be yielded
    free = new_hand(r, hands, leader=0)
    assert can_apply(free, YIELD)


# --- going-out notes -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "hold", "when_both", "note", "ends"),
    [
        (DOMINO_4P, DOMINO_4P_HOLD, "chuchazo", None, (6, 3)),
        (CAPICUA_4P, CAPICUA_4P_HOLD, "chuchazo", "capicua", (6, 6)),
        (CHUCHAZO_4P, CHUCHAZO_4P_HOLD, "chuchazo", "chuchazo", (6, 0)),
        (CHUCHAZO_4P, CHUCHAZO_4P_HOLD, "dominao", "chuchazo", (6, 0)),
        (CHUCHA_BOTH_4P, CHUCHA_BOTH_4P_HOLD, "chuchazo", "chuchazo", (0, 0)),
        (CHUCHA_BOTH_4P, CHUCHA_BOTH_4P_HOLD, "dominao", "dominao", (0, 0)),
        (DOMINAO_4P, DOMINAO_4P_HOLD, "chuchazo", "dominao", (1, 1)),
        (PASSES_4P, PASSES_4P_HOLD, "chuchazo", None, (2, 0)),
    ],
)
def test_going_out_note(
    script: str, hold: tuple[str, ...], when_both: str, note: str | None, ends: tuple[int, int]
) -> None:
    r = four(chuchazo_when_both_ends=when_both)
    s = run(new_hand(r, scripted_hands(script, hold), leader=0), script)
    assert (s.result, s.ends) == ("domino", ends)
    assert going_out_note(s) == note


def test_no_note_on_a_block_even_with_00() -> None:
    r = four(chuchazo_bonus=100)
    s = run(
        new_hand(r, scripted_hands(BLOCK_CHUCHA_4P, BLOCK_CHUCHA_HOLD), leader=0), BLOCK_CHUCHA_4P
    )
    assert (s.result, s.blocker, s.ends, s.last) == ("block", 1, (0, 0), (0, 0, 0))
    assert going_out_note(s) is None


def test_note_for_a_non_double_on_equal_ends_and_a_double_on_one_end() -> None:
    # 2 players, no boneyard: hand-made positions a move before going out
    r = resolve("international", {"players": 2, "teams": "individual"})
    base = new_hand(r, [T("35 01 02 03 04 05 06"), T("11 12 13 14 15 16 22")], leader=0)
    # 35 fitting 3|3 fits both ends, but they show the same number: no capicua
    s = base._replace(hands=(mask_of(T("35")), base.hands[1]), left=3, right=3, plays=5)
    assert going_out_note(apply(s, Play(parse_tile("35"), LEFT))) is None
    # a double fitting one end only: no note
    s = base._replace(hands=(mask_of(T("55")), base.hands[1]), left=5, right=2, plays=5)
    assert going_out_note(apply(s, Play(parse_tile("55"), LEFT))) is None
    # the same double on 5|5: dominao
    s = s._replace(right=5)
    assert going_out_note(apply(s, Play(parse_tile("55"), LEFT))) == "dominao"


def test_hand_state_accessors() -> None:
    r = four()
    hands = scripted_hands(DOMINO_4P, DOMINO_4P_HOLD)
    s = new_hand(r, hands, leader=0)
    assert s.ends is None and s.players == 4 and not s.over and not s.blocked
    assert sum(s.pips()) == 168
    assert [sorted(iter_tiles(h)) for h in s.hands] == [sorted(h) for h in hands]
    b = run(start(r, scripted_hands(BLOCK_4P, B_SIDE0)), BLOCK_4P)
    assert b.blocked and b.over
    assert pips_of(b.hands[0]) == 7
