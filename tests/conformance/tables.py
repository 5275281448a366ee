"""The tables the tests play, and the random deals and rules they draw.

`TABLES` is the one list of (profile, overrides) the twin tests share:
every profile as it stands, then the option mixes the tests single out
(options no profile uses, and combinations the scorer and the solvers
branch on), then a few mixes drawn at random from `MATCH_OPTIONS` and
`SCORE_OPTIONS` with fixed seeds. The conformance corpus
(tests/conformance/*.jsonl, made by scripts/make_conformance.py) holds
positions of every one of them.

>>> len(TABLES) == len({table_id(t) for t in TABLES})
True
>>> table_id(("international", {"stock": "draw", "block_end": "all_pass"}))
'international+block_end=all_pass,stock=draw'
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

from replay.engine import HandState, new_hand
from replay.rules import PROFILES, Rules, RulesError, resolve
from replay.tiles import IS_DOUBLE

Table = tuple[str, dict[str, Any]]

PROFILE_NAMES: list[str] = sorted(PROFILES)

#: Options whose every value the match scorer reads (leads, bonuses, match ends).
MATCH_OPTIONS: dict[str, list[Any]] = {
    "later_lead": ["rotate", "winner"],
    "block_lead": ["winner_lowest", "blocker", "rotate"],
    "tie_lead": ["rotate", "double_six_holder", "blocker"],
    "block_winner": ["side_total", "lowest_hand", "blocker_vs_right"],
    "block_tie": ["no_score", "first_side_wins", "last_side_wins"],
    "count": ["all", "opponents"],
    "round_down": [0, 5, 10],
    "capicua_bonus": [0, 25, 100],
    "chuchazo_bonus": [0, 50],
    "chuchazo_when_both_ends": ["chuchazo", "dominao"],
    "ones_bonus": [0, 10],
    "first_block_bonus": [0, 30],
    "hand_bonuses": [[], [100], [50, 25, 0, 10]],
    "pass_bonus": [None, [20, 10], [0, 5]],
    "first_lead": ["double_six", "highest_double", "draw_for_lead"],
    "match_end": [
        {"kind": "points", "target": 40},
        {"kind": "points", "target": 150},
        {"kind": "chiva", "wins": 2},
        {"kind": "rounds", "target": 3, "loser_min": 1},
        {"kind": "milo", "target": 4},
        {"kind": "fixed", "hands": 3},
    ],
}

#: Options a hand's score (and so a solver's value) depends on; odd bonuses
#: so that no two of them add up alike.
SCORE_OPTIONS: dict[str, list[Any]] = {
    "block_winner": ["side_total", "lowest_hand", "blocker_vs_right"],
    "block_tie": ["no_score", "first_side_wins", "last_side_wins"],
    "count": ["all", "opponents"],
    "round_down": [0, 5, 10],
    "capicua_bonus": [0, 25, 7],
    "chuchazo_bonus": [0, 50, 3],
    "chuchazo_when_both_ends": ["chuchazo", "dominao"],
    "ones_bonus": [0, 11],
    "first_block_bonus": [0, 13],
    "hand_bonuses": [[], [100, 75, 50, 25], [9]],
    "pass_bonus": [None, [20, 10], [7, 3]],
    "block_end": ["immediate", "all_pass"],
    "lead_to_partner": [False, True],
    "scoring": ["pips", "pips", "milo", "royal_rumble"],
}


def random_rules(
    rnd: random.Random, options: Mapping[str, list[Any]] = SCORE_OPTIONS, *, at_most: int | None = None
) -> tuple[str, Rules]:
    """A random profile with random values of `options` that resolve
    (combinations the rules rule out are drawn again): every option, or
    between 0 and `at_most` of them."""
    profile, _, r = _draw(rnd, options, at_most)
    return profile, r


def _draw(rnd: random.Random, options: Mapping[str, list[Any]], at_most: int | None) -> tuple[str, dict[str, Any], Rules]:
    while True:
        profile = rnd.choice(PROFILE_NAMES)
        names = sorted(options)
        if at_most is not None:
            names = sorted(rnd.sample(names, rnd.randint(0, at_most)))
        overrides = {k: rnd.choice(options[k]) for k in names}
        try:
            return profile, overrides, resolve(profile, overrides)
        except RulesError:
            continue


def deal(r: Rules, rnd: random.Random) -> tuple[list[list[int]], list[int]]:
    """A random deal: seven tiles a seat, and the tiles left in deck order
    (the boneyard under ``stock = draw``; `new_hand` drops them otherwise)."""
    tiles = [t for t in range(28) if not (r.stock == "doubles_aside" and IS_DOUBLE[t])]
    rnd.shuffle(tiles)
    n = r.players
    return [tiles[7 * s : 7 * s + 7] for s in range(n)], tiles[7 * n :]


def random_hand(r: Rules, rnd: random.Random) -> HandState:
    """A random deal with a random leader, who must open with a given tile one time in four."""
    hands, rest = deal(r, rnd)
    leader = rnd.randrange(r.players)
    opening = rnd.choice(hands[leader]) if rnd.random() < 0.25 else -1
    return new_hand(r, hands, leader=leader, opening=opening, stock=rest)


def _drawn(options: Mapping[str, list[Any]], seed: str, count: int, at_most: int | None) -> list[Table]:
    rnd = random.Random(seed)
    out: list[Table] = []
    for _ in range(count):
        profile, overrides, r = _draw(rnd, options, at_most)
        base = PROFILES[profile].rules.model_dump(mode="json")
        mine = r.model_dump(mode="json")
        out.append((profile, {k: v for k, v in overrides.items() if mine[k] != base[k]}))
    return out


#: The mixes the tests single out, by where they come from.
MIXES: list[Table] = [
    # test_native, test_fast_path, test_properties: options no profile uses
    ("international", {"block_end": "all_pass"}),
    ("international", {"stock": "draw", "block_end": "all_pass"}),
    ("international", {"players": 3, "teams": "individual", "first_lead": "bayamon_draw"}),
    ("international", {"players": 2, "teams": "individual", "first_lead": "highest_double"}),
    ("international", {"lead_to_partner": True, "block_end": "all_pass"}),
    ("doscientos", {"block_winner": "blocker_vs_right", "block_tie": "first_side_wins"}),
    ("doscientos", {"block_winner": "lowest_hand", "block_tie": "last_side_wins", "tie_lead": "double_six_holder"}),
    ("pr_3p", {"match_end": {"kind": "chiva", "wins": 4}}),
    ("pr_2p", {"match_end": {"kind": "chiva", "wins": 3}}),
    ("quinientos", {"ones_bonus": 100, "first_block_bonus": 100, "pass_bonus": [20, 10]}),
    # test_match: bonuses, block winners and ties, leads, match ends
    ("international", {"chuchazo_bonus": 50, "capicua_bonus": 9, "chuchazo_when_both_ends": "dominao"}),
    ("international", {"capicua_bonus": 100, "ones_bonus": 30, "chuchazo_bonus": 5}),
    ("international", {"first_block_bonus": 50, "block_tie": "last_side_wins"}),
    ("international", {"pass_bonus": [7, 3]}),
    ("international", {"round_down": 5, "count": "opponents"}),
    ("international", {"block_winner": "blocker_vs_right", "block_tie": "last_side_wins"}),
    ("royal_rumble", {"block_winner": "blocker_vs_right"}),
    ("pr_3p", {"first_lead": "bayamon_draw"}),
    ("doscientos", {"block_lead": "rotate", "tie_lead": "blocker"}),
    ("doscientos", {"block_tie": "first_side_wins", "tie_lead": "blocker"}),
    ("la_plaza", {"block_tie": "last_side_wins", "block_lead": "rotate"}),
    ("chiva", {"players": 3, "teams": "individual", "stock": "draw", "first_lead": "highest_double"}),
]



def _unique(tables: list[Table]) -> list[Table]:
    seen: set[str] = set()
    out = []
    for t in tables:
        if table_id(t) not in seen:
            seen.add(table_id(t))
            out.append(t)
    return out


def table_id(table: Table) -> str:
    """A table's name: the profile, then its overrides."""
    profile, overrides = table
    if not overrides:
        return profile
    return profile + "+" + ",".join(f"{k}={_short(v)}" for k, v in sorted(overrides.items()))


def _short(v: Any) -> str:
    if isinstance(v, dict):
        return ":".join(str(x) for x in v.values())
    if isinstance(v, list | tuple):
        return "/".join(str(x) for x in v) or "none"
    return json.dumps(v) if v is None or isinstance(v, bool) else str(v)


def rules_of(table: Table) -> Rules:
    return resolve(table[0], table[1] or None)


TABLES: list[Table] = _unique(
    [(p, {}) for p in PROFILE_NAMES]
    + MIXES
    # drawn as test_scorer and test_solver draw them
    + _drawn(MATCH_OPTIONS, "tables-match", 8, at_most=6)
    + _drawn(SCORE_OPTIONS, "tables-score", 8, at_most=None)
)
TABLE_IDS: list[str] = [table_id(t) for t in TABLES]
RULES: list[Rules] = [rules_of(t) for t in TABLES]
