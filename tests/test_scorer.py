"""_native.Scorer (replay/_match.c) against replay.match, its reference.

The fast path leads, scores and records every hand of a clean match with
the Scorer; these tests play whole matches under random rules through
both and compare every answer: the leader and opening tile of each deal,
each hand's result, winner, points and notes, and the match's score, wins,
end, winner and notes after each hand. Synthetic final positions (few
pips, so that ties are common) cover the branches random play reaches
seldom.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay import accel
from tests.conftest import MATCH_OPTIONS, deal, require_native, seeds
from tests.conftest import random_rules as draw_rules

if accel.native is None:  # pragma: no cover - depends on the build
    require_native("the C Scorer's twin tests", module=True)

from replay.engine import HandState, new_hand
from replay.match import MatchState, new_match, next_lead, record, score_hand
from replay.rules import PROFILES, Rules, resolve, spec_of
from replay.tiles import BIT
from tests.test_native import play_out

native: Any = accel.native

def random_rules(rnd: random.Random) -> tuple[str, Rules]:
    """A profile with up to six random overrides of the options the Scorer reads."""
    return draw_rules(rnd, MATCH_OPTIONS, at_most=6)


def scorer(profile: str, r: Rules) -> Any:
    return native.Scorer(spec_of(r), PROFILES[profile].shutout_note)


def lead_of(
    m: MatchState, masks: tuple[int, ...], drawn: int | None, rematch: int | None
) -> tuple[int, int] | None:
    try:
        lead = next_lead(m, masks, drawn_leader=drawn, rematch_leader=rematch)
    except ValueError:
        return None
    return lead.seat, lead.tile


def position(s: HandState) -> tuple[Any, ...]:
    """replay_hand's answer for a finished hand (what Scorer.record takes)."""
    counts = [0] * len(s.hands)
    for p in s.passes:
        counts[p] += 1
    return (s.hands, len(s.stock), s.left, s.right, s.turn, s.passes, s.blocker, s.result, s.last, s.plays,
            s.pips(), tuple(counts))  # fmt: skip


def same_match(m: MatchState, sc: Any) -> None:
    assert (sc.played, sc.score, sc.wins, sc.over) == (m.played, m.score, m.wins, m.over)
    assert (sc.result, sc.winner, sc.notes) == (m.result, m.winner, m.notes)


def masks_of(hands: list[list[int]]) -> tuple[int, ...]:
    return tuple(sum(BIT[t] for t in h) for h in hands)


@pytest.mark.parametrize("seed", range(40))
def test_scorer_plays_whole_matches_as_match_py(seed: int) -> None:
    rnd = random.Random(f"scorer-{seed}")
    for _ in range(6):
        profile, r = random_rules(rnd)
        m = new_match(r, PROFILES[profile].shutout_note)
        sc = scorer(profile, r)
        same_match(m, sc)
        n = r.players
        drawn = rnd.randrange(n) if r.lead_draw_used or rnd.random() < 0.3 else None
        rematch = rnd.randrange(n) if rnd.random() < 0.2 else None
        hands_played = 0
        while not m.over and hands_played < 60:
            hands, stock = deal(r, rnd)
            masks = masks_of(hands)
            want = lead_of(m, masks, drawn, rematch)
            got = sc.lead(masks, -1 if drawn is None else drawn, -1 if rematch is None else rematch)
            assert got == want
            if want is None:
                break
            seat, tile = want
            start = new_hand(r, hands, leader=seat, opening=tile, stock=stock)
            final, _ = play_out(start, rnd)
            hs = score_hand(m, final)
            m = record(m, hs, leader=seat)
            assert sc.record(position(final), seat) == (hs.result, hs.winner, hs.points, hs.notes)
            same_match(m, sc)
            hands_played += 1
        if sc.over:  # a finished match scores no more hands
            with pytest.raises(ValueError, match="over"):
                sc.record(position(final), 0)


@settings(max_examples=400, deadline=None)
@given(
    seed=seeds,
    results=st.lists(
        st.tuples(
            st.booleans(),  # domino?
            st.lists(st.integers(0, 3), min_size=4, max_size=4),  # pips left by seat (ties!)
            st.integers(0, 3),  # turn or blocker
            st.integers(0, 3),  # leader
            st.integers(0, 27),  # last tile
            st.tuples(st.integers(-1, 6), st.integers(0, 6)),  # ends before the last tile
            st.tuples(st.integers(0, 6), st.integers(0, 6)),  # ends after it
            st.lists(st.integers(0, 3), max_size=4),  # passes
        ),
        min_size=1,
        max_size=12,
    ),
)
def test_scorer_on_synthetic_positions(seed: int, results: list[Any]) -> None:
    rnd = random.Random(seed)
    profile, r = random_rules(rnd)
    n = r.players
    m = new_match(r, PROFILES[profile].shutout_note)
    sc = scorer(profile, r)
    for domino, pips, seat, leader, last, before, after, passes in results:
        if m.over:
            break
        seat, leader = seat % n, leader % n
        pips = tuple(pips[:n])
        if domino:
            pips = tuple(0 if s == seat else p for s, p in enumerate(pips))
        passes = tuple(p % n for p in passes)
        # score_hand reads pips from the caller; the masks only need the seat count
        s = HandState(r, (0,) * n, (), after[0], after[1], (seat + 1) % n, leader, -1, False, -1, passes, 0,
                      -1 if domino else seat, "domino" if domino else "block", (last, *before), 20)  # fmt: skip
        hs = score_hand(m, s, pips)
        pos = ((0,) * n, 0, after[0], after[1], (seat + 1) % n, passes, -1 if domino else seat,
               "domino" if domino else "block", (last, *before), 20, pips, (0,) * n)  # fmt: skip
        assert sc.record(pos, leader) == (hs.result, hs.winner, hs.points, hs.notes)
        m = record(m, hs, leader=leader)
        same_match(m, sc)


def test_scorer_declines_what_it_cannot_score() -> None:
    r = resolve("international")
    sc = scorer("international", r)
    ok = ((0,) * 4, 0, 1, 2, 1, (), -1, "domino", (3, 1, 2), 10, (0, 5, 6, 7), (0,) * 4)
    assert sc.record(ok[:7] + ("nothing",) + ok[8:], 0) is None  # not a result
    assert sc.record(ok[:6] + (-1, "block") + ok[8:], 0) is None  # a block without its blocker
    assert sc.record(ok, 7) is None  # a leader off the table
    assert sc.played == 0  # declining changes nothing
    assert sc.record(ok, 0) is not None and sc.played == 1
    with pytest.raises(TypeError):
        sc.record(ok[:5], 0)
    with pytest.raises(ValueError):
        sc.lead((1, 2), -1, -1)  # one mask per seat
    with pytest.raises(ValueError):
        native.Scorer(dataclasses.replace(spec_of(r), players=5), "shutout")
