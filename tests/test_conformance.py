"""Every implementation of the rules reproduces the conformance corpus.

The corpus (tests/conformance/, written by scripts/make_conformance.py from
replay.engine, replay.match and a brute-force minimax) holds hands of every
table of tests/conformance/tables.py: every position's legal moves and
successors, where the hand ends and what it scores, the first hands of a
match (leads, scores, the match after each), and the exact values of
endgames. Here the engine, the C hand replayer, both match scorers and
both solvers must give the same, each called through
tests/conformance/adapters.py.

Under REPLAY_PURE=1 (or without the C build) the C implementations are
skipped; on CI without REPLAY_PURE they must be there.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

import pytest
from hypothesis import given, settings

from replay.engine import YIELD, HandState, apply, legal_moves, new_hand
from replay.match import new_match, score_hand
from replay.rules import PROFILES
from tests.conformance import adapters
from tests.conformance.adapters import REPLAYERS, SCORERS, SOLVERS, final_of, require
from tests.conformance.corpus import (
    FILES,
    brute,
    code,
    digest,
    from_json,
    move,
    read,
    successors,
    tiles_left,
)
from tests.conformance.tables import RULES, TABLE_IDS, TABLES
from tests.conftest import hands, seeds

RULES_OF = dict(zip(TABLE_IDS, RULES, strict=True))
PROFILE_OF = {tid: t[0] for tid, t in zip(TABLE_IDS, TABLES, strict=True)}
CORPUS: dict[str, list[dict[str, Any]]] = {name: list(read(name)) for name in FILES}


def by_table(name: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in CORPUS[name]:
        out[line["table"]].append(line)
    return out


HANDS = by_table("hands")
MATCHES = by_table("matches")
ENDGAMES = by_table("endgames")


def start_of(line: dict[str, Any]) -> HandState:
    return from_json(RULES_OF[line["table"]], line["start"])


def test_the_native_build_is_there_when_expected() -> None:
    """On CI the C extension must be built, unless the pure leg runs (REPLAY_PURE=1)."""
    if adapters.native_expected():
        assert adapters.native is not None, "replay._native did not build or does not import"


@pytest.mark.parametrize("name", FILES)
def test_the_corpus_covers_every_table(name: str) -> None:
    """Each file has lines of every table of the shared list, and no other
    (else: python3 scripts/make_conformance.py)."""
    assert sorted({line["table"] for line in CORPUS[name]}) == sorted(TABLE_IDS)


@pytest.mark.parametrize("table", TABLE_IDS)
def test_engine_legal_moves_and_successors(table: str) -> None:
    for line in HANDS[table]:
        s = start_of(line)
        for codes, legal, nexts in zip(line["moves"], line["legal"], line["next"], strict=True):
            assert successors(s) == (legal, nexts), (table, s)
            s = apply(s, move(codes))
        assert s.over and legal_moves(s) == ()
        assert s == from_json(s.rules, line["final"]) and digest(s) == line["digest"]
        h = score_hand(new_match(s.rules, PROFILES[PROFILE_OF[table]].shutout_note), s)
        assert [h.result, h.winner, h.side, list(h.points), list(h.notes)] == line["score"]


@pytest.mark.parametrize("impl", list(REPLAYERS))
def test_replayer_reaches_each_final_position(impl: str) -> None:
    replay = require(REPLAYERS[impl], f"replayer {impl}")
    for line in CORPUS["hands"]:
        start = start_of(line)
        want = final_of(from_json(start.rules, line["final"]))
        assert replay(start, line["moves"]) == want, line["table"]


def _match_hand(rules: Any, played: dict[str, Any], lead: tuple[int, int]) -> HandState:
    hands = [[t for t in range(28) if mask >> t & 1] for mask in played["masks"]]
    return new_hand(rules, hands, leader=lead[0], opening=lead[1], stock=played["stock"])


@pytest.mark.parametrize("impl", list(SCORERS))
def test_scorer_scores_each_hand(impl: str) -> None:
    make = require(SCORERS[impl], f"scorer {impl}")
    for line in CORPUS["hands"]:
        table = line["table"]
        final = from_json(RULES_OF[table], line["final"])
        got = make(PROFILE_OF[table], RULES_OF[table]).record(final, final.leader)
        result, winner, _, points, notes = line["score"]
        assert got == (result, winner, tuple(points), tuple(notes)), table


@pytest.mark.parametrize("impl", list(SCORERS))
def test_scorer_follows_each_match(impl: str) -> None:
    """Leads, scores and the match after each hand. The C scorer takes the C
    replayer's answer as validate.fast_path hands it over; replay.match the engine's."""
    make = require(SCORERS[impl], f"scorer {impl}")
    for line in CORPUS["matches"]:
        table = line["table"]
        r = RULES_OF[table]
        sc = make(PROFILE_OF[table], r)
        for played in line["hands"]:
            lead = sc.lead(played["masks"], line["drawn"], line["rematch"])
            assert lead == tuple(played["lead"]), table
            start = _match_hand(r, played, lead)
            if impl == "c":
                final: Any = adapters.c_replay_raw(start, played["moves"])
                assert final is not None
            else:
                final = start
                for c in played["moves"]:
                    final = apply(final, move(c))
            result, winner, points, notes = played["score"]
            assert sc.record(final, lead[0]) == (result, winner, tuple(points), tuple(notes)), table
            played_n, score, wins, over, res, win, mnotes = played["match"]
            assert sc.state() == (played_n, tuple(score), tuple(wins), over, res, win, tuple(mnotes)), table


@pytest.mark.parametrize("impl", list(SOLVERS))
def test_solver_values_each_endgame(impl: str) -> None:
    make = require(SOLVERS[impl], f"solver {impl}")
    for table, lines in ENDGAMES.items():
        values = make(RULES_OF[table])
        for line in lines:
            s = from_json(RULES_OF[table], line["position"])
            got = values(s, line["played_before"], line["first_block_paid"], line["seat"])
            assert got == [tuple(v) for v in line["values"]], (table, line)


def test_brute_force_confirms_the_small_endgames() -> None:
    """The corpus's values are the minimax's (here on the endgames of six tiles or fewer)."""
    checked = 0
    for line in CORPUS["endgames"]:
        s = from_json(RULES_OF[line["table"]], line["position"])
        if tiles_left(s) > 6:
            continue
        want = [[c, brute(apply(s, move(c)), line["played_before"], line["first_block_paid"], line["seat"])]
                for c, _ in line["values"]]  # fmt: skip
        assert want == line["values"]
        checked += 1
    assert checked > 50


@settings(max_examples=40, deadline=None)
@given(start=hands(), seed=seeds)
@pytest.mark.parametrize("impl", list(REPLAYERS))
def test_replayer_on_random_hands(impl: str, start: HandState, seed: int) -> None:
    """Beyond the corpus: random hands of the shared tables, the engine's end position."""
    replay = require(REPLAYERS[impl], f"replayer {impl}")
    rnd = random.Random(seed)
    s, codes = start, []
    while not s.over:
        m = rnd.choice([m for m in legal_moves(s) if m is not YIELD])
        codes.append(code(m))
        s = apply(s, m)
    assert replay(start, codes) == final_of(s)
