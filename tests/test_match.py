"""Match rules on hand-built hands: points by profile, bonuses, block winners, leads, match ends.

The deals come from test_engine.py (see its doc for the script notation);
every expected figure is worked out by hand in the comments.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from replay.engine import HandState, new_hand
from replay.match import (
    HandScore,
    Lead,
    MatchState,
    block_winner,
    first_hand_lead,
    new_match,
    next_lead,
    record,
    redeal_due,
    score_hand,
)
from replay.rules import PROFILES, Rules, resolve
from replay.tiles import DOUBLE_SIX, mask_of, parse_tile
from tests.test_engine import (
    B_SIDE0,
    B_TIE,
    BLOCK_2P,
    BLOCK_2P_SCRIPT,
    BLOCK_2P_STOCK,
    BLOCK_3P,
    BLOCK_3P_SCRIPT,
    BLOCK_3P_STOCK,
    BLOCK_4P,
    BLOCK_CHUCHA_4P,
    BLOCK_CHUCHA_HOLD,
    BLOCK_DIB,
    BLOCK_DIB_SCRIPT,
    BLOCK_PASSES_4P,
    BP_SIDE1,
    BP_TIE,
    CAPICUA_4P,
    CAPICUA_4P_HOLD,
    CHUCHA_BOTH_4P,
    CHUCHA_BOTH_4P_HOLD,
    CHUCHAZO_4P,
    CHUCHAZO_4P_HOLD,
    DOMINAO_4P,
    DOMINAO_4P_HOLD,
    DOMINO_2P,
    DOMINO_2P_SCRIPT,
    DOMINO_2P_STOCK,
    DOMINO_3P,
    DOMINO_3P_SCRIPT,
    DOMINO_3P_STOCK,
    DOMINO_4P,
    DOMINO_4P_HOLD,
    DOMINO_DIB,
    DOMINO_DIB_SCRIPT,
    PASSES_4P,
    PASSES_4P_HOLD,
    T,
    closing,
    run,
    scripted_hands,
)

# More ways to keep the 18 tiles left by BLOCK_4P (seat 0 keeps 4, seat 1 4,
# seats 2 and 3 five each when seat 0 leads). Pips per seat in the comment.
B_SAME = ("11 12 13 14", "15 22 24 25", "00 02 03 04 05", "33 34 35 44 55")  # 14 23 14 39
B_CROSS_WIN = ("00 04 12 14", "02 03 05 11", "33 34 35 44 55", "13 15 22 24 25")  # 12 12 39 27
B_CROSS_TIE = ("00 04 12 14", "02 03 05 11", "55 44 13 22 25", "15 24 33 34 35")  # 12 12 33 33
B_LOW_VS_TOTAL = ("00 02 03 04", "05 11 12 13", "33 34 35 44 55", "14 15 22 24 25")  # 9 14 39 28
B_RIGHT_EQUAL = ("15 22 24 25", "11 12 13 14", "00 02 03 04 05", "33 34 35 44 55")  # 23 14 14 39
B_RR_ALONE = ("13 15 22 24", "02 03 05 11", "00 04 12 14 25", "33 34 35 44 55")  # 20 12 19 39
# BLOCK_4P led by seat 1 (seat 2 blocks; seats 1, 2 keep 4, seats 3, 0 keep 5)
B_SAME_L1 = ("00 02 03 04 05", "15 22 24 25", "11 12 13 14", "33 34 35 44 55")  # 14 23 14 39
# BLOCK_PASSES_4P (seat 0 blocks; seats keep 3, 7, 4, 4): side 0 wins through seat 2
BP_SIDE0 = ("55 44 35", "05 11 12 13 14 15 22", "00 02 03 04", "24 25 33 34")  # 26 29 9 26


def play_hand(
    r: Rules,
    script: str,
    hold: Sequence[str] | None = None,
    *,
    hands: Sequence[str] | None = None,
    stock: str = "",
    leader: int = 0,
    fixed: bool = True,
    closing_moves: str | None = None,
) -> HandState:
    """Deal, play the script, then the closing moves a block owes."""
    dealt = (
        scripted_hands(script, hold, leader=leader)
        if hold is not None
        else [T(h) for h in hands or ()]
    )
    opening = DOUBLE_SIX if fixed and r.first_lead == "double_six" else -1
    s = run(new_hand(r, dealt, leader=leader, opening=opening, stock=T(stock)), script)
    if s.result == "block" and not s.over:
        s = run(s, closing_moves if closing_moves is not None else closing(r))
    assert s.over
    return s


def first_hand(r: Rules, s: HandState) -> HandScore:
    return score_hand(new_match(r), s)


# --- one domino and one block in every profile ---------------------------------------

# DOMINO_4P: seat 0 goes out; left 55 (seat 1), 44 (seat 2), 63 (seat 3):
# all 10 + 8 + 9 = 27, opponents 10 + 9 = 19. Ends 6|3, no note.
# BLOCK_4P with B_SIDE0: seat 1 blocks; seats hold 7 24 20 39, sides 27 and 63:
# side 0 wins through seat 0 (7); all 90, opponents 63.
FOUR_P: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "international": ((27, 0), (90, 0)),
    "puerto_rico": ((27, 0), (90, 0)),
    "venezuela": ((19, 0), (63, 0)),
    "colombia": ((19, 0), (63, 0)),
    "mexico": ((19, 0), (63, 0)),
    "dominican": ((27, 0), (90, 0)),  # no capicua here, so no bonus
    "la_plaza": ((27, 0), (90, 0)),
    "pagat": ((19, 0), (63, 0)),
    "doscientos": ((27, 0), (90, 0)),
    "quinientos": ((127, 0), (90, 0)),  # 27 + 100 for hand 1; none for a blocked hand 1
    "pase_sureno": ((20, 0), (90, 0)),  # 27 rounded down to 20; no pass in play
    "south_american": ((19, 0), (63, 0)),
    "milo": ((1, 0), (1, 0)),  # ends 6|3 differ: 1; a block: 1
    "chiva": ((27, 0), (90, 0)),
    "domena_4p": ((19, 0), (63, 0)),  # lowest hand: seat 0 with 7
    # each seat its own pips; blocker seat 1 (24) is not lowest: 4 x 24 = 96
    "royal_rumble": ((0, 10, 8, 9), (7, 96, 20, 39)),
}


@pytest.mark.parametrize("profile", sorted(FOUR_P))
def test_four_player_profiles(profile: str) -> None:
    r = resolve(profile)
    dom_points, block_points = FOUR_P[profile]
    d = first_hand(r, play_hand(r, DOMINO_4P, DOMINO_4P_HOLD))
    assert (d.result, d.winner, d.side, d.points, d.notes) == ("domino", 0, 0, dom_points, ())
    assert d.pips == (0, 10, 8, 9) and d.blocker is None
    b = first_hand(r, play_hand(r, BLOCK_4P, B_SIDE0))
    assert (b.result, b.winner, b.side, b.points, b.notes) == ("block", 0, 0, block_points, ())
    assert b.blocker == 1


@pytest.mark.parametrize(
    ("profile", "dom", "block"),
    [
        # domino: seat 1 keeps 52 41 and the drawn 40 = 16 (the rest of the
        # boneyard is nobody's); block: seat 1 keeps 11 20 = 4, seat 0 55 44
        # (18) + the 14 drawn (68) = 86, so seat 1 wins
        ("domena_2p", (16, 0), (0, 86)),  # opponents only
        ("pr_2p", (16, 0), (0, 90)),  # all: 86 + his own 4
    ],
)
def test_two_player_profiles(profile: str, dom: tuple[int, ...], block: tuple[int, ...]) -> None:
    r = resolve(profile)
    d = first_hand(r, play_hand(r, DOMINO_2P_SCRIPT, hands=DOMINO_2P, stock=DOMINO_2P_STOCK))
    assert (d.winner, d.side, d.points, d.notes) == (0, 0, dom, ("chuchazo",))
    s = play_hand(
        r, BLOCK_2P_SCRIPT, hands=BLOCK_2P, stock=BLOCK_2P_STOCK, closing_moves="D " * 14 + "P P"
    )
    b = first_hand(r, s)
    assert (b.result, b.winner, b.side, b.points, b.blocker) == ("block", 1, 1, block, 1)


def test_three_player_profiles() -> None:
    r = resolve("pr_3p")
    # seat 0 out; seat 1 keeps 52 (7), seat 2 60 62 (14): all = 21
    d = first_hand(r, play_hand(r, DOMINO_3P_SCRIPT, hands=DOMINO_3P, stock=DOMINO_3P_STOCK))
    assert (d.winner, d.points) == (0, (21, 0, 0))
    # seat 0 keeps 00 11 20 (4); seat 1 55 44 53 52 (33) + the stock (31) = 64;
    # seat 2 43 42 41 40 (22): seat 0 lowest, all 90
    s = play_hand(
        r, BLOCK_3P_SCRIPT, hands=BLOCK_3P, stock=BLOCK_3P_STOCK, closing_moves="D " * 7 + "P P P"
    )
    b = first_hand(r, s)
    assert (b.winner, b.side, b.points, b.pips, b.blocker) == (0, 0, (90, 0, 0), (4, 64, 22), 0)

    r = resolve("doubles_in_boneyard")
    # seat 0 out; seat 1 keeps 20 (2), seat 2 40 43 (11): opponents 13
    d = first_hand(r, play_hand(r, DOMINO_DIB_SCRIPT, hands=DOMINO_DIB))
    assert (d.winner, d.points) == (0, (13, 0, 0))
    # seat 0 10 20 21 41 (11), seat 1 42 50 52 54 (27), seat 2 60 61 64 65 (34)
    b = first_hand(r, play_hand(r, BLOCK_DIB_SCRIPT, hands=BLOCK_DIB))
    assert (b.winner, b.points, b.blocker) == (0, (61, 0, 0), 2)


# --- bonuses ---------------------------------------------------------------------------


def test_capicua_bonus() -> None:
    # CAPICUA_4P: 36 goes out on 6|3; left 55 44 33 = 24 (opponents 16)
    r = resolve("dominican")
    h = first_hand(r, play_hand(r, CAPICUA_4P, CAPICUA_4P_HOLD))
    assert (h.points, h.notes) == ((24 + 25, 0), ("capicua",))
    r = resolve("quinientos")  # capicua 100 + hand 1 bonus 100
    assert first_hand(r, play_hand(r, CAPICUA_4P, CAPICUA_4P_HOLD)).points == (224, 0)
    r = resolve("international")  # the note stands without a bonus
    h = first_hand(r, play_hand(r, CAPICUA_4P, CAPICUA_4P_HOLD))
    assert (h.points, h.notes) == ((24, 0), ("capicua",))


def test_chuchazo_bonus() -> None:
    # CHUCHAZO_4P: 00 out on the 0 end (6 on the other); left 60 55 44 = 24
    r = resolve("quinientos")  # 24 + chuchazo 100 + hand 1 100
    h = first_hand(r, play_hand(r, CHUCHAZO_4P, CHUCHAZO_4P_HOLD))
    assert (h.points, h.notes) == ((224, 0), ("chuchazo",))
    r = resolve("international", {"chuchazo_bonus": 50, "capicua_bonus": 7})
    assert first_hand(r, play_hand(r, CHUCHAZO_4P, CHUCHAZO_4P_HOLD)).points == (74, 0)


@pytest.mark.parametrize(
    ("when_both", "points", "note"),
    [("chuchazo", (24 + 50, 0), "chuchazo"), ("dominao", (24, 0), "dominao")],
)
def test_chuchazo_when_both_ends(when_both: str, points: tuple[int, int], note: str) -> None:
    # 00 out on 0|0; left 55 44 33 = 24
    r = resolve(
        "international",
        {"chuchazo_bonus": 50, "capicua_bonus": 9, "chuchazo_when_both_ends": when_both},
    )
    h = first_hand(r, play_hand(r, CHUCHA_BOTH_4P, CHUCHA_BOTH_4P_HOLD))
    assert (h.points, h.notes) == (points, (note,))


def test_dominao_and_ones_bonus() -> None:
    # 11 out on 1|1 leaving 1|1: dominao (no capicua bonus) plus ones; left 24
    r = resolve("international", {"capicua_bonus": 100, "ones_bonus": 30, "chuchazo_bonus": 5})
    h = first_hand(r, play_hand(r, DOMINAO_4P, DOMINAO_4P_HOLD))
    assert (h.points, h.notes) == ((24 + 30, 0), ("dominao",))
    # ones only when both ends show 1: the capicua ends 6|6 get nothing
    assert first_hand(r, play_hand(r, CAPICUA_4P, CAPICUA_4P_HOLD)).points == (24 + 100, 0)


def test_no_bonus_on_a_block_with_00() -> None:
    # BLOCK_CHUCHA_4P: 00 blocks; the line holds 42 pips, 126 are left. Seats
    # keep 11 13 14 15 (17), 16 22 23 24 (22), 25 26 33 35 36 (38),
    # 44 45 46 55 66 (49): sides 55 and 71, seat 0 wins all 126, no bonus.
    r = resolve("international", {"chuchazo_bonus": 100, "capicua_bonus": 100, "ones_bonus": 100})
    h = first_hand(r, play_hand(r, BLOCK_CHUCHA_4P, BLOCK_CHUCHA_HOLD, fixed=False))
    assert (h.result, h.winner, h.points, h.notes) == ("block", 0, (126, 0), ())


def test_first_block_bonus_once_per_match() -> None:
    r = resolve(
        "international", {"first_block_bonus": 50, "match_end": {"kind": "points", "target": 1000}}
    )
    m = new_match(r)
    tie = score_hand(m, play_hand(r, BLOCK_4P, B_TIE))
    assert (tie.side, tie.points, tie.first_block_bonus) == (None, (0, 0), False)
    m = record(m, tie, leader=0)
    won = score_hand(m, play_hand(r, BLOCK_4P, B_SIDE0))  # the first *won* block: 90 + 50
    assert (won.points, won.first_block_bonus) == ((140, 0), True)
    m = record(m, won, leader=1)
    assert m.first_block_paid
    again = score_hand(m, play_hand(r, BLOCK_4P, B_SIDE0))
    assert (again.points, again.first_block_bonus) == ((90, 0), False)
    # a domino never takes it
    dom = score_hand(new_match(r), play_hand(r, DOMINO_4P, DOMINO_4P_HOLD))
    assert (dom.points, dom.first_block_bonus) == ((27, 0), False)


def test_resolved_tie_takes_the_first_block_bonus() -> None:
    # B_TIE: sides 45 and 45; last_side_wins gives it to the blocker's side
    r = resolve("international", {"first_block_bonus": 50, "block_tie": "last_side_wins"})
    h = first_hand(r, play_hand(r, BLOCK_4P, B_TIE))
    assert (h.side, h.winner, h.points, h.first_block_bonus) == (1, 1, (0, 140), True)


def test_hand_bonuses() -> None:
    r = resolve("quinientos")
    m = new_match(r)
    # hand 1 blocked: its 100 is not paid
    h1 = score_hand(m, play_hand(r, BLOCK_4P, B_SIDE0))
    assert h1.points == (90, 0)
    m = record(m, h1, leader=0)
    # hand 2, a domino (27): the second bonus, 75
    h2 = score_hand(m, play_hand(r, DOMINO_4P, DOMINO_4P_HOLD, fixed=False))
    assert h2.points == (102, 0)
    m = record(m, h2, leader=0)
    # hand 3 tied: nothing (sides 45/45)
    h3 = score_hand(m, play_hand(r, BLOCK_4P, B_TIE, fixed=False))
    assert h3.points == (0, 0)
    m = record(m, h3, leader=0)
    # hand 4: 25; hand 5 and later: none
    assert score_hand(m, play_hand(r, DOMINO_4P, DOMINO_4P_HOLD, fixed=False)).points == (52, 0)
    m5 = replace(m, played=4)
    assert score_hand(m5, play_hand(r, DOMINO_4P, DOMINO_4P_HOLD, fixed=False)).points == (27, 0)


def test_pass_bonus() -> None:
    # PASSES_4P: seat 1 passes first (side 0 +20) and again (+10), seat 2
    # later (side 1 +10). Seat 0 goes out; left 10 + 12 + 2 = 24.
    r = resolve("pase_sureno")  # 24 + 30 = 54 -> 50; side 1: 10
    h = first_hand(r, play_hand(r, PASSES_4P, PASSES_4P_HOLD))
    assert (h.side, h.points) == (0, (50, 10))
    r = resolve("international", {"pass_bonus": [20, 10]})
    assert first_hand(r, play_hand(r, PASSES_4P, PASSES_4P_HOLD)).points == (54, 10)
    r = resolve("international", {"pass_bonus": [7, 3]})  # side 0: 7 + 3, side 1: 3
    assert first_hand(r, play_hand(r, PASSES_4P, PASSES_4P_HOLD)).points == (34, 3)


def test_pass_bonus_in_a_tied_hand() -> None:
    # BLOCK_PASSES_4P / BP_TIE: seats 18 23 27 22, sides 45 = 45: a tie.
    # Seat 1 passed three times in play: side 0 gets 20 + 10 + 10 = 40.
    r = resolve("pase_sureno")
    h = first_hand(r, play_hand(r, BLOCK_PASSES_4P, BP_TIE))
    assert (h.winner, h.side, h.points) == (None, None, (40, 0))
    # BP_SIDE1: seats 23 18 27 22, sides 50 and 40: side 1 wins 90 (all),
    # through seat 1 (18 < 22); side 0 still has its 40
    h = first_hand(r, play_hand(r, BLOCK_PASSES_4P, BP_SIDE1))
    assert (h.winner, h.side, h.points) == (1, 1, (40, 90))


def test_no_pass_bonus_for_closing_passes() -> None:
    r = resolve("pase_sureno")
    s = play_hand(r, BLOCK_4P, B_SIDE0)  # four closing passes after the block
    assert s.passes == ()
    assert first_hand(r, s).points == (90, 0)


def test_round_down() -> None:
    # DOMINO_4P: all 27, opponents 19
    cases: list[tuple[dict[str, object], tuple[int, int]]] = [
        ({"round_down": 5}, (25, 0)),
        ({"round_down": 10}, (20, 0)),
        ({"round_down": 5, "count": "opponents"}, (15, 0)),
        ({"round_down": 10, "count": "opponents"}, (10, 0)),
        ({"round_down": 0}, (27, 0)),
    ]
    for over, points in cases:
        r = resolve("international", over)
        assert first_hand(r, play_hand(r, DOMINO_4P, DOMINO_4P_HOLD)).points == points, over


# --- who wins a block ----------------------------------------------------------------


def _block(r: Rules, hold: Sequence[str], leader: int = 0) -> HandState:
    return play_hand(r, BLOCK_4P, hold, leader=leader)


@pytest.mark.parametrize(
    ("over", "hold", "leader", "side", "seat"),
    [
        # side_total: the side's member with the fewest pips wins for it
        ({}, B_SIDE0, 0, 0, 0),  # 27 v 63
        ({}, B_TIE, 0, None, None),  # 45 v 45
        ({}, B_LOW_VS_TOTAL, 0, 1, 1),  # 48 v 42; seat 1 (14) < seat 3 (28)
        # lowest_hand: seat 0 alone lowest (9) although side 0 totals more
        ({"block_winner": "lowest_hand"}, B_LOW_VS_TOTAL, 0, 0, 0),
        # same-side tie at 14 (seats 0 and 2): side 0; first from the leader
        ({"block_winner": "lowest_hand"}, B_SAME, 0, 0, 0),
        ({"block_winner": "lowest_hand"}, B_SAME_L1, 1, 0, 2),  # from seat 1: 2 before 0
        # cross-side tie at 12 (seats 0 and 1): totals 51 v 39 decide for side 1
        ({"block_winner": "lowest_hand"}, B_CROSS_WIN, 0, 1, 1),
        # cross-side tie and totals 45 v 45: a tie
        ({"block_winner": "lowest_hand"}, B_CROSS_TIE, 0, None, None),
        # blocker_vs_right: blocker seat 1 against seat 2
        ({"block_winner": "blocker_vs_right"}, B_SIDE0, 0, 0, 2),  # 24 v 20: seat 2, not seat 0
        ({"block_winner": "blocker_vs_right"}, B_CROSS_WIN, 0, 1, 1),  # 12 v 39
        ({"block_winner": "blocker_vs_right"}, B_RIGHT_EQUAL, 0, None, None),  # 14 v 14
        # block_tie picks a side for a tie
        (
            {"block_tie": "first_side_wins"},
            B_TIE,
            0,
            0,
            2,
        ),  # leader's side: seat 2 (14) < seat 0 (31)
        ({"block_tie": "last_side_wins"}, B_TIE, 0, 1, 1),  # the blocker
        ({"block_tie": "no_score"}, B_TIE, 0, None, None),
        (
            {"block_winner": "blocker_vs_right", "block_tie": "first_side_wins"},
            B_RIGHT_EQUAL,
            0,
            0,
            2,
        ),
        (
            {"block_winner": "blocker_vs_right", "block_tie": "last_side_wins"},
            B_RIGHT_EQUAL,
            0,
            1,
            1,
        ),
        ({"block_winner": "lowest_hand", "block_tie": "last_side_wins"}, B_CROSS_TIE, 0, 1, 1),
    ],
)
def test_block_winner(
    over: dict[str, str], hold: Sequence[str], leader: int, side: int | None, seat: int | None
) -> None:
    r = resolve("international", over)
    s = _block(r, hold, leader)
    assert s.blocker == (leader + 1) % 4
    assert block_winner(s) == (side, seat)
    h = first_hand(r, s)
    assert (h.side, h.winner) == (side, seat)
    # count all: a winner takes all 90, a tie scores nothing
    assert h.points == ((0, 0) if side is None else tuple(90 if k == side else 0 for k in range(2)))


def test_lowest_hand_counts_opponents_in_domena_4p() -> None:
    r = resolve("domena_4p")
    h = first_hand(r, _block(r, B_LOW_VS_TOTAL))  # side 0 wins; side 1 holds 14 + 28
    assert (h.side, h.winner, h.points) == (0, 0, (42, 0))


@pytest.mark.parametrize(
    ("hold", "winner", "points"),
    [
        (B_SIDE0, 0, (7, 96, 20, 39)),  # blocker 24, not lowest: x4
        (B_RR_ALONE, 1, (20, 12, 19, 39)),  # blocker alone lowest (12): his own pips
        (B_CROSS_WIN, None, (12, 48, 39, 27)),  # blocker shares the fewest: x4, no winner
    ],
)
def test_royal_rumble_block(
    hold: Sequence[str], winner: int | None, points: tuple[int, ...]
) -> None:
    r = resolve("royal_rumble")
    s = _block(r, hold)
    h = first_hand(r, s)
    assert (h.winner, h.side, h.points) == (winner, winner, points)
    # block_tie / block_winner do not apply: tweak them, same outcome
    r2 = resolve("royal_rumble", {"block_winner": "blocker_vs_right"})
    assert first_hand(r2, _block(r2, hold)).points == points


def test_milo_points() -> None:
    r = resolve("milo")
    # capicua leaves 6|6: a milo, 2 points; dominao 11 leaves 1|1: 2
    assert first_hand(r, play_hand(r, CAPICUA_4P, CAPICUA_4P_HOLD)).points == (2, 0)
    assert first_hand(r, play_hand(r, DOMINAO_4P, DOMINAO_4P_HOLD, fixed=False)).points == (2, 0)
    # a block always shows equal ends but scores 1
    assert first_hand(r, _block(r, B_SIDE0)).points == (1, 0)
    assert first_hand(r, _block(r, B_LOW_VS_TOTAL)).points == (0, 1)
    assert first_hand(r, _block(r, B_TIE)).points == (0, 0)


# --- leads -------------------------------------------------------------------------------


def _masks(hands: Sequence[Sequence[int]]) -> list[int]:
    return [mask_of(h) for h in hands]


def test_first_lead_double_six() -> None:
    r = resolve("puerto_rico")
    assert first_hand_lead(r, _masks(scripted_hands(DOMINO_4P, DOMINO_4P_HOLD)), None) == Lead(
        0, DOUBLE_SIX, "double_six"
    )
    hands = scripted_hands(BLOCK_4P, B_SAME_L1, leader=1)
    assert first_hand_lead(r, _masks(hands), 3) == Lead(1, DOUBLE_SIX, "double_six")


def test_first_lead_highest_double() -> None:
    r = resolve("pr_3p")
    # 66 is in the boneyard: the highest double dealt is seat 0's 44
    assert first_hand_lead(r, _masks([T(h) for h in DOMINO_3P]), None) == Lead(
        0, parse_tile("44"), "highest_double"
    )
    r = resolve("pr_2p")
    assert first_hand_lead(r, _masks([T(h) for h in BLOCK_2P]), None).tile == DOUBLE_SIX
    # no double dealt: the heaviest tile; 61 beats 52 beats 43 (all 7 pips)
    no_doubles = [T("52 43 10 20 21 30 31"), T("61 32 40 41 42 50 51")]
    assert first_hand_lead(r, _masks(no_doubles), None) == Lead(
        1, parse_tile("61"), "highest_double"
    )
    no_doubles = [T("52 43 10 20 21 30 31"), T("60 32 40 41 42 50 51")]
    assert first_hand_lead(r, _masks(no_doubles), None) == Lead(
        0, parse_tile("52"), "highest_double"
    )
    no_doubles = [T("43 42 10 20 21 30 31"), T("60 32 40 41 52 50 51")]
    assert first_hand_lead(r, _masks(no_doubles), None).tile == parse_tile("52")


@pytest.mark.parametrize("profile", ["international", "doubles_in_boneyard"])
def test_first_lead_from_the_lead_draw(profile: str) -> None:
    r = resolve(profile)
    hands = _masks([[]] * r.players)
    assert first_hand_lead(r, hands, 2) == Lead(2)
    with pytest.raises(ValueError):
        first_hand_lead(r, hands, None)
    assert first_hand_lead(resolve("pr_3p", {"first_lead": "bayamon_draw"}), hands[:3], 1) == Lead(
        1
    )


def _after(r: Rules, s: HandState, leader: int) -> MatchState:
    m = new_match(r)
    return record(m, score_hand(m, s), leader=leader)


NEXT = _masks(scripted_hands(BLOCK_4P, B_SAME_L1, leader=1))  # seat 1 holds 66
# seat 3 holds 66 (led by seat 3: seats 3, 0 keep 4 tiles, seats 1, 2 five)
NEXT_3 = _masks(
    scripted_hands(
        BLOCK_4P, ("11 12 13 14", "00 02 03 04 05", "33 34 35 44 55", "15 22 24 25"), leader=3
    )
)


def test_later_lead_rotate() -> None:
    r = resolve("international")
    m = _after(r, play_hand(r, DOMINO_4P, DOMINO_4P_HOLD), leader=0)
    assert next_lead(m, NEXT) == Lead(1)  # not the winner (0): the seat after the leader
    m = _after(r, play_hand(r, BLOCK_4P, B_SAME_L1, leader=1), leader=1)
    assert next_lead(m, NEXT) == Lead(2)


def test_later_lead_winner_after_a_domino() -> None:
    r = resolve("puerto_rico")
    m = _after(r, play_hand(r, PASSES_4P, PASSES_4P_HOLD), leader=0)
    assert next_lead(m, NEXT) == Lead(0)
    # a domino by seat 2 in the rotated deal
    r2 = resolve("doscientos")
    hands = scripted_hands(DOMINO_4P, ("44", "63", "", "55"), leader=2)
    s = run(new_hand(r2, hands, leader=2, opening=DOUBLE_SIX), DOMINO_4P)
    m = _after(r2, s, leader=2)
    assert m.prev is not None and m.prev.winner == 2
    assert next_lead(m, NEXT) == Lead(2)


@pytest.mark.parametrize(
    ("block_lead", "lead"),
    [("winner_lowest", 2), ("blocker", 0), ("rotate", 1)],
)
def test_block_lead(block_lead: str, lead: int) -> None:
    # BLOCK_PASSES_4P / BP_SIDE0: leader 0, blocker 0, side 0 wins through seat 2
    r = resolve("doscientos", {"block_lead": block_lead})
    s = play_hand(r, BLOCK_PASSES_4P, BP_SIDE0)
    m = _after(r, s, leader=0)
    assert m.prev is not None and (m.prev.winner, m.prev.blocker) == (2, 0)
    assert next_lead(m, NEXT) == Lead(lead)


def test_block_lead_after_a_resolved_tie() -> None:
    # a resolved tie is a won block: block_lead decides, not tie_lead
    r = resolve("doscientos", {"block_tie": "first_side_wins", "tie_lead": "blocker"})
    m = _after(r, play_hand(r, BLOCK_4P, B_TIE), leader=0)
    assert next_lead(m, NEXT) == Lead(2)  # winner_lowest: seat 2 (14)
    r = resolve("la_plaza", {"block_tie": "last_side_wins", "block_lead": "rotate"})
    m = _after(r, play_hand(r, BLOCK_PASSES_4P, BP_TIE), leader=0)
    assert next_lead(m, NEXT) == Lead(1)


@pytest.mark.parametrize(
    ("tie_lead", "lead"),
    [
        ("rotate", Lead(1)),
        ("blocker", Lead(0)),
        # the holder of 66 in the *next* deal, who must open with it
        ("double_six_holder", Lead(3, DOUBLE_SIX, "double_six_holder")),
    ],
)
def test_tie_lead(tie_lead: str, lead: Lead) -> None:
    r = resolve("doscientos", {"tie_lead": tie_lead})
    m = _after(r, play_hand(r, BLOCK_PASSES_4P, BP_TIE), leader=0)
    assert m.prev is not None and m.prev.winner is None
    assert next_lead(m, NEXT_3) == lead


def test_la_plaza_leads() -> None:
    r = resolve("la_plaza")  # blocker leads after a block, won or tied
    m = _after(r, play_hand(r, BLOCK_PASSES_4P, BP_SIDE0), leader=0)
    assert next_lead(m, NEXT) == Lead(0)
    m = _after(r, play_hand(r, BLOCK_PASSES_4P, BP_TIE), leader=0)
    assert next_lead(m, NEXT) == Lead(0)


def test_cancelled_hands_keep_the_leader() -> None:
    # a cancelled hand is never recorded, so the same match gives the same lead
    r = resolve("colombia")
    m = _after(r, play_hand(r, DOMINO_4P, DOMINO_4P_HOLD), leader=0)
    assert next_lead(m, NEXT) == next_lead(m, NEXT_3) == Lead(1)
    # before any hand is played, first_lead decides again on the new deal
    m0 = new_match(r)
    assert next_lead(m0, NEXT) == Lead(1, DOUBLE_SIX, "double_six")
    assert next_lead(m0, NEXT_3) == Lead(3, DOUBLE_SIX, "double_six")
    # ... and the original lead draw stands
    m0 = new_match(resolve("international"))
    assert next_lead(m0, NEXT, drawn_leader=2) == next_lead(m0, NEXT_3, drawn_leader=2) == Lead(2)


def test_redeal_due() -> None:
    r = resolve("south_american")
    five = [
        T("00 11 22 33 44 10 20"),
        T("55 66 21 30 31 32 40"),
        T("41 42 43 50 51 52 53"),
        T("54 60 61 62 63 64 65"),
    ]
    assert redeal_due(r, _masks(five)) == [0]
    four_d = [
        T("00 11 22 33 10 20 21"),
        T("44 55 66 30 31 32 40"),
        T("41 42 43 50 51 52 53"),
        T("54 60 61 62 63 64 65"),
    ]
    assert redeal_due(r, _masks(four_d)) == []


def test_rematch_leader() -> None:
    r = resolve("puerto_rico")
    m = _after(r, play_hand(r, DOMINO_4P, DOMINO_4P_HOLD), leader=0)
    assert m.first_leader == 0
    m = record(m, score_hand(m, play_hand(r, DOMINO_4P, DOMINO_4P_HOLD, fixed=False)), leader=0)
    assert m.first_leader == 0
    # the rematch: the seat after the earlier first leader, with any tile
    rematch = new_match(r)
    seat = (m.first_leader + 1) % 4
    assert next_lead(rematch, NEXT_3, rematch_leader=seat) == Lead(1)
    assert next_lead(rematch, NEXT_3, rematch_leader=seat).tile == -1


# --- match ends ---------------------------------------------------------------------------


def _hs(side: int | None, points: Sequence[int], result: str = "domino") -> HandScore:
    n = len(points)
    return HandScore(result, side, side, tuple(points), (), (0,) * max(n, 4))  # type: ignore[arg-type]


def test_points_end_and_shutout_notes() -> None:
    for profile, note in [
        ("international", "shutout"),
        ("puerto_rico", "chiva"),
        ("quinientos", "chiva"),
        ("venezuela", "zapato"),
        ("domena_2p", "shutout"),
    ]:
        p = PROFILES[profile]
        r = resolve(profile, {"match_end": {"kind": "points", "target": 50}})
        m = new_match(r, p.shutout_note)
        n = r.sides
        m = record(m, _hs(0, (30,) + (0,) * (n - 1)), leader=0)
        assert not m.over
        m = record(m, _hs(0, (20,) + (0,) * (n - 1)), leader=0)
        assert (m.over, m.result, m.winner, m.notes) == (True, "win", 0, (note,)), profile
        with pytest.raises(ValueError):
            record(m, _hs(0, (1,) + (0,) * (n - 1)))
    # no shutout once both sides scored
    r = resolve("puerto_rico", {"match_end": {"kind": "points", "target": 50}})
    m = new_match(r, "chiva")
    m = record(m, _hs(1, (0, 5)), leader=0)
    m = record(m, _hs(0, (60, 0)), leader=1)
    assert (m.over, m.winner, m.notes, m.score) == (True, 0, (), (60, 5))


def test_points_several_sides_reach_through_pass_bonus() -> None:
    r = resolve("pase_sureno")  # to 200
    # BP_SIDE1: side 1 wins the block (90), side 0 gets 40 for seat 1's passes
    h = first_hand(r, play_hand(r, BLOCK_PASSES_4P, BP_SIDE1))
    assert h.points == (40, 90)
    m = replace(new_match(r, "chiva"), score=(170, 110), played=3)
    m2 = record(m, h, leader=0)  # 210 v 200: the higher total wins, not the hand's winner
    assert (m2.over, m2.winner) == (True, 0)
    m = replace(m, score=(160, 110))
    m2 = record(m, h, leader=0)  # 200 v 200: the hand's winning side
    assert (m2.over, m2.winner) == (True, 1)
    # a tied hand whose pass bonuses bring both to 200: no winner, play on (estimate)
    tied = HandScore("block", None, None, (20, 10), (), (9, 9, 9, 9), blocker=0)
    m = replace(m, score=(180, 190))
    m2 = record(m, tied, leader=0)
    assert (m2.over, m2.score) == (False, (200, 200))
    m3 = replace(m, score=(185, 190))
    assert record(m3, tied, leader=0).winner == 0  # 205 v 200


def test_chiva_two_sides() -> None:
    r = resolve("chiva")
    m = new_match(r)
    for side in (0, 0):
        m = record(m, _hs(side, (9, 0) if side == 0 else (0, 9)), leader=0)
    assert m.wins == (2, 0)
    m = record(m, _hs(None, (0, 0), "block"), leader=0)  # a tie counts for nobody
    assert m.wins == (2, 0)
    m = record(m, _hs(1, (0, 9)), leader=0)  # side 1 breaks the chiva; its win does not count
    assert m.wins == (0, 0) and not m.over
    for k in range(4):
        assert not m.over
        m = record(m, _hs(1, (0, 9)), leader=0)
        assert m.wins == (0, k + 1)
    assert (m.over, m.result, m.winner, m.notes) == (True, "win", 1, ())
    # 3 wins to 1 never ends it; the first win of a side while both are at 0 counts
    m = new_match(r)
    m = record(m, _hs(1, (0, 9)), leader=0)
    assert m.wins == (0, 1)


def test_chiva_three_players() -> None:
    r = resolve(
        "chiva",
        {"players": 3, "teams": "individual", "stock": "draw", "first_lead": "highest_double"},
    )
    m = new_match(r)

    def win(m: MatchState, seat: int) -> MatchState:
        return record(m, _hs(seat, tuple(9 if k == seat else 0 for k in range(3))), leader=0)

    m = win(win(m, 0), 0)
    m = win(m, 1)  # B wins while C is still at 0: counts
    assert m.wins == (2, 1, 0)
    m = win(m, 2)  # C, the last without a win: the chiva is broken
    assert m.wins == (0, 0, 0)
    m = win(win(m, 0), 1)
    m = win(win(win(m, 0), 0), 0)
    assert (m.wins, m.over, m.winner) == ((4, 1, 0), True, 0)


def test_rounds_end() -> None:
    r = resolve("south_american")

    def play(wins: Sequence[int]) -> MatchState:
        m = new_match(r)
        for side in wins:
            m = record(m, _hs(side, (1, 0) if side == 0 else (0, 1)), leader=0)
        return m

    m = play([1] * 5 + [0] * 9)
    assert not m.over
    m = record(m, _hs(None, (0, 0), "block"), leader=0)
    assert not m.over and m.wins == (9, 5)
    m = record(m, _hs(0, (1, 0)), leader=0)
    assert (m.over, m.result, m.winner, m.wins) == (True, "win", 0, (10, 5))
    m = play([1] * 4 + [0] * 10)  # loser won only 4: a tied match
    assert (m.over, m.result, m.winner) == (True, "tie", None)


def test_milo_end() -> None:
    r = resolve("milo")
    m = new_match(r)
    for pts in [(2, 0), (1, 0), (0, 2)]:
        m = record(m, _hs(0 if pts[0] else 1, pts), leader=0)
    assert not m.over and m.score == (3, 2)
    m = record(m, _hs(0, (2, 0)), leader=0)
    assert (m.over, m.winner, m.notes) == (True, 0, ())
    # no shutout note outside points matches
    m = new_match(r, "chiva")
    for _ in range(3):
        m = record(m, _hs(1, (0, 2)), leader=0)
    assert (m.over, m.winner, m.score, m.notes) == (True, 1, (0, 6), ())


def test_fixed_end() -> None:
    r = resolve("royal_rumble")
    rows = [(0, 10, 8, 9), (7, 96, 20, 39), (5, 0, 3, 1), (0, 4, 4, 4), (1, 1, 0, 1), (3, 0, 2, 2)]
    m = new_match(r)
    for pts in rows:
        m = record(m, HandScore("domino", 0, 0, pts, (), (0, 0, 0, 0)), leader=0)
        assert not m.over
    # after 6 hands: 16 111 37 56; the 7th decides
    last = record(m, HandScore("domino", 1, 1, (9, 0, 0, 0), (), (0, 0, 0, 0)), leader=0)
    assert (last.over, last.result, last.winner, last.score) == (True, "win", 0, (25, 111, 37, 56))
    tie = record(m, HandScore("domino", 1, 1, (21, 0, 0, 0), (), (0, 0, 0, 0)), leader=0)
    assert (tie.over, tie.result, tie.winner, tie.score) == (True, "tie", None, (37, 111, 37, 56))


def test_points_match_played_from_hands() -> None:
    # international to 50: DOMINO_4P (27) then BLOCK_4P (90): 117 - 0, a shutout
    r = resolve("international", {"match_end": {"kind": "points", "target": 50}})
    m = new_match(r, PROFILES["international"].shutout_note)
    m = record(m, score_hand(m, play_hand(r, DOMINO_4P, DOMINO_4P_HOLD)), leader=0)
    assert (m.score, m.over, m.wins) == ((27, 0), False, (1, 0))
    m = record(m, score_hand(m, play_hand(r, BLOCK_4P, B_SIDE0)), leader=1)
    assert (m.score, m.over, m.winner, m.notes) == ((117, 0), True, 0, ("shutout",))
    assert (m.played, m.first_leader, m.prev_leader) == (2, 0, 1)
