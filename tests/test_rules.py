"""Rules model: every profile's values, ruled-out combinations, strict types, estimates.

The expected table is written out here from rules.md, independently of
`replay.rules`, so a typo in a profile's overrides shows up as a diff.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path
from typing import Any, get_args

import pytest

from replay import accel
from replay.rules import (
    OPTION_ENUMS,
    OPTION_NAMES,
    PROFILES,
    EndKind,
    Rules,
    RulesError,
    RulesSpec,
    resolve,
    spec_of,
)

# --- the table of rules.md, written out -------------------------------------

INTERNATIONAL: dict[str, Any] = {
    "players": 4,
    "teams": "pairs",
    "stock": "none",
    "first_lead": "draw_for_lead",
    "later_lead": "rotate",
    "block_lead": "winner_lowest",
    "tie_lead": "rotate",
    "lead_to_partner": False,
    "block_end": "immediate",
    "block_winner": "side_total",
    "block_tie": "no_score",
    "count": "all",
    "round_down": 0,
    "capicua_bonus": 0,
    "chuchazo_bonus": 0,
    "chuchazo_when_both_ends": "chuchazo",
    "ones_bonus": 0,
    "first_block_bonus": 0,
    "hand_bonuses": [],
    "pass_bonus": None,
    "scoring": "pips",
    "match_end": {"kind": "points", "target": 200},
    "redeal": "none",
    "next_match_lead": "rotate_first",
}


def _points(n: int) -> dict[str, Any]:
    return {"match_end": {"kind": "points", "target": n}}


D6 = {"first_lead": "double_six"}
WIN = {"later_lead": "winner"}
ALLP = {"block_end": "all_pass"}
OPP = {"count": "opponents"}
DOSCIENTOS = {**D6, **WIN, **ALLP}
PR_2P = {
    "players": 2,
    "teams": "individual",
    "stock": "draw",
    "first_lead": "highest_double",
    **WIN,
    **ALLP,
}

#: profile -> (differences from international, cells marked (estimate), sources)
TABLE: dict[str, tuple[dict[str, Any], set[str], tuple[str, ...]]] = {
    "international": ({}, set(), ("000",)),
    "puerto_rico": ({**D6, **WIN, **ALLP}, set(), ("000", "004")),
    "venezuela": ({**D6, **OPP, **_points(100)}, {"count", "match_end"}, ("000",)),
    "colombia": (
        {**D6, **OPP, "redeal": "five_doubles_claim", **_points(100)},
        {"count", "match_end"},
        ("000",),
    ),
    "mexico": ({**D6, **OPP, **_points(100)}, {"count", "match_end"}, ("000",)),
    "dominican": (
        {**D6, **WIN, "capicua_bonus": 25},
        {"first_lead", "capicua_bonus"},
        ("000", "002"),
    ),
    "la_plaza": (
        {**D6, **WIN, "block_lead": "blocker", "tie_lead": "blocker", **_points(100)},
        set(),
        ("002",),
    ),
    "pagat": ({**D6, **ALLP, **OPP, **_points(100)}, set(), ("003",)),
    "doscientos": (DOSCIENTOS, set(), ("003", "004")),
    "quinientos": (
        {
            **DOSCIENTOS,
            "capicua_bonus": 100,
            "chuchazo_bonus": 100,
            "hand_bonuses": [100, 75, 50, 25],
            **_points(500),
        },
        set(),
        ("003", "004"),
    ),
    "pase_sureno": (
        {**DOSCIENTOS, "pass_bonus": [20, 10], "round_down": 10},
        set(),
        ("003", "004"),
    ),
    "south_american": (
        {
            **D6,
            **OPP,
            "redeal": "five_doubles_auto",
            "match_end": {"kind": "rounds", "target": 10, "loser_min": 5},
        },
        set(),
        ("003",),
    ),
    "milo": (
        {**D6, "scoring": "milo", "match_end": {"kind": "milo", "target": 5}},
        set(),
        ("003",),
    ),
    "chiva": ({**D6, **WIN, **ALLP, "match_end": {"kind": "chiva", "wins": 4}}, set(), ("004",)),
    "domena_2p": ({**PR_2P, **OPP, **_points(100)}, set(), ("001",)),
    "domena_4p": (
        {**D6, **WIN, **ALLP, "block_winner": "lowest_hand", **OPP, **_points(100)},
        {"block_end"},
        ("001",),
    ),
    "pr_2p": (PR_2P, set(), ("004",)),
    "pr_3p": ({**PR_2P, "players": 3}, set(), ("004",)),
    "doubles_in_boneyard": (
        {
            "players": 3,
            "teams": "individual",
            "stock": "doubles_aside",
            "first_lead": "drawn_double",
            **WIN,
            **ALLP,
            **OPP,
            **_points(200),
        },
        set(),
        ("004",),
    ),
    "royal_rumble": (
        {
            "teams": "individual",
            **D6,
            **WIN,
            **ALLP,
            "scoring": "royal_rumble",
            "match_end": {"kind": "fixed", "hands": 7},
        },
        {"first_lead"},
        ("004",),
    ),
}

#: rules.md, "match_end values": the shutout note of a points match.
SHUTOUT = {
    "puerto_rico": "chiva",
    "doscientos": "chiva",
    "quinientos": "chiva",
    "pase_sureno": "chiva",
    "venezuela": "zapato",
}


def test_table_covers_every_profile() -> None:
    assert set(PROFILES) == set(TABLE)
    assert set(INTERNATIONAL) == set(OPTION_NAMES)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_profile_values(name: str) -> None:
    diff, _, sources = TABLE[name]
    expected = {**INTERNATIONAL, **diff}
    got = resolve(name).model_dump(mode="json")
    assert got == expected
    assert PROFILES[name].sources == sources
    # the profile's own record agrees with what resolve() hands out
    assert PROFILES[name].rules == resolve(name)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_profile_estimates(name: str) -> None:
    assert PROFILES[name].estimates == frozenset(TABLE[name][1])


@pytest.mark.parametrize("name", sorted(TABLE))
def test_profile_shutout_note(name: str) -> None:
    assert PROFILES[name].shutout_note == SHUTOUT.get(name, "shutout")


def test_option_value_estimates_belong_to_no_profile() -> None:
    """rules.md also marks estimates on option *values* rather than profile cells:
    `tie_lead = double_six_holder`, the tie of `blocker_vs_right`, and a points
    match whose reaching sides are level after a hand with no winner.

    Decision: a Profile's `estimates` lists only that profile's cells marked
    (estimate) in the profiles table. No profile selects those option values,
    so no profile has to list them; a table that chooses one by override gets
    it from its own `rules` object (and a report shows the override), the
    value staying selectable.
    """
    for name in PROFILES:
        r = resolve(name)
        assert r.tie_lead != "double_six_holder", name
        assert r.block_winner != "blocker_vs_right", name
        assert "tie_lead" not in PROFILES[name].estimates
    r = resolve("doscientos", {"tie_lead": "double_six_holder"})
    assert r.tie_lead == "double_six_holder"
    assert r.overrides()["tie_lead"] == "double_six_holder"


def test_overrides_on_top_of_profile() -> None:
    r = resolve("la_plaza", {"match_end": {"kind": "points", "target": 150}})
    assert r.target_points == 150
    assert (r.block_lead, r.tie_lead) == ("blocker", "blocker")
    # the profile itself is untouched
    assert resolve("la_plaza").target_points == 100
    # match_end is replaced as a whole object, not merged
    r = resolve("south_american", {"match_end": {"kind": "milo", "target": 3}})
    assert r.match_end.model_dump() == {"kind": "milo", "target": 3}
    assert resolve("pase_sureno", {"pass_bonus": None}).pass_bonus is None
    assert resolve("international", {"hand_bonuses": [5, 0, 7]}).hand_bonuses == (5, 0, 7)


def test_chiva_for_two_and_three_players() -> None:
    # rules.md: chiva with 2 or 3 players needs these three overrides
    for n in (2, 3):
        r = resolve(
            "chiva",
            {"players": n, "teams": "individual", "stock": "draw", "first_lead": "highest_double"},
        )
        assert (r.players, r.sides, r.match_end.kind) == (n, n, "chiva")
    with pytest.raises(RulesError) as e:
        resolve("chiva", {"players": 2})
    assert e.value.option == "teams"
    with pytest.raises(RulesError) as e:
        resolve("chiva", {"players": 3, "teams": "individual"})
    assert e.value.option == "first_lead"


# --- combinations ruled out ----------------------------------------------------

#: (profile, overrides, the option the error must name)
RULED_OUT: list[tuple[str, dict[str, Any], str]] = [
    # teams = pairs without 4 players
    ("international", {"players": 2}, "teams"),
    ("international", {"players": 3}, "teams"),
    ("pr_2p", {"teams": "pairs"}, "teams"),
    # stock = doubles_aside without 3 players
    ("pr_2p", {"stock": "doubles_aside"}, "stock"),
    ("royal_rumble", {"stock": "doubles_aside", "first_lead": "draw_for_lead"}, "stock"),
    # stock = draw with block_end = immediate
    ("pr_2p", {"block_end": "immediate"}, "block_end"),
    ("international", {"stock": "draw"}, "block_end"),
    # double_six first lead unless 4 players with stock = none
    ("pr_2p", {"first_lead": "double_six"}, "first_lead"),
    ("pr_3p", {"first_lead": "double_six"}, "first_lead"),
    ("puerto_rico", {"stock": "draw"}, "first_lead"),
    (
        "international",
        {"teams": "individual", "players": 3, "first_lead": "double_six"},
        "first_lead",
    ),
    # double_six_holder tie lead likewise
    ("pr_2p", {"tie_lead": "double_six_holder"}, "tie_lead"),
    ("doubles_in_boneyard", {"tie_lead": "double_six_holder"}, "tie_lead"),
    (
        "international",
        {"stock": "draw", "block_end": "all_pass", "tie_lead": "double_six_holder"},
        "tie_lead",
    ),
    # drawn_double without doubles_aside
    ("international", {"first_lead": "drawn_double"}, "first_lead"),
    ("pr_3p", {"first_lead": "drawn_double"}, "first_lead"),
    # pair-only options in individual games
    ("pr_2p", {"block_tie": "first_side_wins"}, "block_tie"),
    ("royal_rumble", {"block_tie": "last_side_wins"}, "block_tie"),
    ("pr_3p", {"lead_to_partner": True}, "lead_to_partner"),
    ("pr_2p", {"pass_bonus": [20, 10]}, "pass_bonus"),
    # bonuses, pass_bonus and round_down need scoring = pips
    ("milo", {"capicua_bonus": 25}, "capicua_bonus"),
    ("milo", {"chuchazo_bonus": 100}, "chuchazo_bonus"),
    ("milo", {"ones_bonus": 100}, "ones_bonus"),
    ("milo", {"first_block_bonus": 100}, "first_block_bonus"),
    ("milo", {"hand_bonuses": [100, 75]}, "hand_bonuses"),
    ("milo", {"pass_bonus": [20, 10]}, "pass_bonus"),
    ("milo", {"round_down": 5}, "round_down"),
    ("royal_rumble", {"capicua_bonus": 1}, "capicua_bonus"),
    ("royal_rumble", {"round_down": 10}, "round_down"),
    ("quinientos", {"scoring": "milo"}, "capicua_bonus"),
    # royal_rumble without teams = individual
    ("international", {"scoring": "royal_rumble"}, "scoring"),
]


@pytest.mark.parametrize(("profile", "overrides", "option"), RULED_OUT)
def test_ruled_out_combination(profile: str, overrides: dict[str, Any], option: str) -> None:
    with pytest.raises(RulesError) as e:
        resolve(profile, overrides)
    assert e.value.option == option
    assert option in str(e.value)


def test_edges_of_the_combinations_are_allowed() -> None:
    # zero-valued bonuses are no bonus, so they pass under other scorings
    assert (
        resolve("milo", {"capicua_bonus": 0, "hand_bonuses": [0], "round_down": 0}).scoring
        == "milo"
    )
    assert resolve("pr_3p", {"first_lead": "bayamon_draw"}).first_lead == "bayamon_draw"
    assert resolve("international", {"lead_to_partner": True}).lead_to_partner is True
    assert resolve("international", {"block_tie": "last_side_wins"}).block_tie == "last_side_wins"
    # stock = draw with 4 players: nothing left to draw, but not ruled out
    assert resolve("international", {"stock": "draw", "block_end": "all_pass"}).stock_size == 0


# --- unknown names and values, strict types ------------------------------------


@pytest.mark.parametrize("profile", ["nope", "International", "", None, 3])
def test_unknown_profile(profile: Any) -> None:
    with pytest.raises(RulesError) as e:
        resolve(profile)
    assert e.value.option is None
    assert "unknown profile" in str(e.value)


@pytest.mark.parametrize(
    ("overrides", "option"),
    [
        ({"spinner": True}, "spinner"),
        ({"Players": 4}, "Players"),
        ({"match_end": {"kind": "points", "target": 100, "bonus": 1}}, "match_end"),
    ],
)
def test_unknown_option(overrides: dict[str, Any], option: str) -> None:
    with pytest.raises(RulesError) as e:
        resolve("international", overrides)
    assert e.value.option == option
    assert "unknown option" in str(e.value)


@pytest.mark.parametrize(
    ("overrides", "option"),
    [
        ({"players": 5}, "players"),
        ({"players": 1}, "players"),
        ({"teams": "trios"}, "teams"),
        ({"stock": "boneyard"}, "stock"),
        ({"first_lead": "lowest_double"}, "first_lead"),
        ({"later_lead": "loser"}, "later_lead"),
        ({"block_lead": "leader"}, "block_lead"),
        ({"tie_lead": "winner"}, "tie_lead"),
        ({"block_end": "never"}, "block_end"),
        ({"block_winner": "highest_hand"}, "block_winner"),
        ({"block_tie": "both_score"}, "block_tie"),
        ({"count": "mine"}, "count"),
        ({"round_down": 3}, "round_down"),
        ({"capicua_bonus": -5}, "capicua_bonus"),
        ({"chuchazo_when_both_ends": "capicua"}, "chuchazo_when_both_ends"),
        ({"hand_bonuses": [100, -1]}, "hand_bonuses"),
        ({"hand_bonuses": 100}, "hand_bonuses"),
        ({"pass_bonus": [20]}, "pass_bonus"),
        ({"pass_bonus": [20, 10, 5]}, "pass_bonus"),
        ({"scoring": "points"}, "scoring"),
        ({"redeal": "always"}, "redeal"),
        ({"next_match_lead": "winner"}, "next_match_lead"),
        ({"match_end": {"kind": "sudden_death"}}, "match_end"),
        ({"match_end": {"kind": "points", "target": 0}}, "match_end"),
        ({"match_end": {"kind": "chiva", "wins": 0}}, "match_end"),
        ({"match_end": {"kind": "rounds", "target": 10, "loser_min": -1}}, "match_end"),
        ({"match_end": "points"}, "match_end"),
        ({"match_end": None}, "match_end"),
        ({"players": None}, "players"),
    ],
)
def test_unknown_value(overrides: dict[str, Any], option: str) -> None:
    with pytest.raises(RulesError) as e:
        resolve("international", overrides)
    assert e.value.option == option
    assert option in str(e.value)


@pytest.mark.parametrize(
    ("overrides", "option"),
    [
        ({"players": "4"}, "players"),
        ({"players": 4.0}, "players"),  # was accepted: Literal ints matched 4.0 == 4
        ({"players": True}, "players"),
        ({"round_down": "10"}, "round_down"),
        ({"round_down": False}, "round_down"),  # was accepted as 0 (False == 0)
        ({"round_down": 5.0}, "round_down"),  # was accepted as 5
        ({"lead_to_partner": 1}, "lead_to_partner"),
        ({"lead_to_partner": "true"}, "lead_to_partner"),
        ({"capicua_bonus": True}, "capicua_bonus"),
        ({"capicua_bonus": "25"}, "capicua_bonus"),
        ({"capicua_bonus": 25.0}, "capicua_bonus"),
        ({"hand_bonuses": ["100"]}, "hand_bonuses"),
        ({"hand_bonuses": [True]}, "hand_bonuses"),
        ({"pass_bonus": [20, "10"]}, "pass_bonus"),
        ({"pass_bonus": "20,10"}, "pass_bonus"),
        ({"match_end": {"kind": "points", "target": "100"}}, "match_end"),
        ({"match_end": {"kind": "points", "target": 100.0}}, "match_end"),
        ({"match_end": {"kind": "fixed", "hands": True}}, "match_end"),
        ({"teams": 2}, "teams"),
    ],
)
def test_strict_types(overrides: dict[str, Any], option: str) -> None:
    with pytest.raises(RulesError) as e:
        resolve("pase_sureno", overrides)
    assert e.value.option == option


def test_overrides_must_be_an_object() -> None:
    with pytest.raises(RulesError):
        resolve("international", [("players", 4)])  # type: ignore[arg-type]


def test_rules_are_frozen_and_derived_facts() -> None:
    r = resolve("pr_3p")
    with pytest.raises(ValueError):
        r.players = 4
    assert (r.sides, r.dealt_tiles, r.stock_size, r.target_points) == (3, 21, 7, 200)
    assert [r.side_of(s) for s in range(3)] == [0, 1, 2]
    p = resolve("international")
    assert [p.side_of(s) for s in range(4)] == [0, 1, 0, 1]
    assert (p.sides, p.stock_size, p.lead_draw_used) == (2, 0, True)
    d = resolve("doubles_in_boneyard")
    assert (d.dealt_tiles, d.stock_size, d.lead_draw_used) == (21, 0, True)
    assert resolve("milo").target_points is None
    assert Rules() == resolve("international")
    assert resolve("pase_sureno").overrides() == {
        "first_lead": "double_six",
        "later_lead": "winner",
        "block_end": "all_pass",
        "pass_bonus": [20, 10],
        "round_down": 10,
    }


# -- the options as C takes them ---------------------------------------------------


def test_option_enums_list_the_option_values_in_order() -> None:
    for name, enum in OPTION_ENUMS.items():
        assert get_args(Rules.model_fields[name].annotation) == tuple(m.spelling for m in enum), name
        assert [int(m) for m in enum] == list(range(len(enum))), name
        for m in enum:
            assert enum.of(m.spelling) is m


def test_spec_carries_every_option_that_scores_or_leads() -> None:
    fields = {f.name for f in dataclasses.fields(RulesSpec)}
    # every option but the ones C never reads (players count is `players`; match_end is end_*)
    assert OPTION_NAMES - fields == {"lead_to_partner", "match_end", "redeal", "next_match_lead"}
    assert {"end_kind", "end_a", "end_b"} <= fields
    for name in PROFILES:
        r = resolve(name)
        s = spec_of(r)
        assert spec_of(r) is s
        for option, enum in OPTION_ENUMS.items():
            assert getattr(s, option) is enum.of(getattr(r, option))
        assert (s.players, s.sides, s.pairs) == (r.players, r.sides, r.teams == "pairs")
        assert s.end_kind is EndKind.of(r.match_end.kind)


def test_rules_json_keeps_the_log_spellings() -> None:
    r = resolve("pase_sureno")
    spec_of(r)
    assert r.model_dump(mode="json")["block_end"] == "all_pass"
    assert Rules.model_validate_json(r.model_dump_json()) == r


def _header_tool() -> Any:
    path = Path(__file__).resolve().parents[1] / "scripts" / "gen_rules_header.py"
    spec = importlib.util.spec_from_file_location("gen_rules_header", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_rules_header_is_current() -> None:
    tool = _header_tool()
    assert tool.HEADER.read_text() == tool.header(), "run scripts/gen_rules_header.py"


@pytest.mark.native  # skipped without the C build, failed where CI expects it (tests/conftest.py)
def test_native_build_has_the_current_header() -> None:
    digest = _header_tool().header().split('RULES_H_DIGEST "', 1)[1][:16]
    assert digest == accel.native.RULES_H, "rebuild: python setup.py build_ext --inplace"  # type: ignore[union-attr]
