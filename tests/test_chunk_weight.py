"""Ingest's batches, when they carry the analysis, are weighed by what their
hands cost to analyse (replay.analysis.analysis_weight), so that a few
costly matches do not fill one batch left to one worker at the end."""

from __future__ import annotations

import orjson

from replay.analysis.grades import PARANOID_WEIGHT
from replay.ingest.route import match_weight


def _weight(profile: str | None, hands: int, rules: object = None, raw: bytes | None = None) -> int:
    start = raw
    if raw is None and profile is not None:
        start = orjson.dumps({"type": "match_start", "match": "m-1", "profile": profile, "rules": rules or {}})
    return match_weight(start, hands)


def test_four_individual_players_weigh_more() -> None:
    assert _weight("royal_rumble", 7) == 7 * PARANOID_WEIGHT
    assert _weight("international", 7) == 7
    assert _weight("pr_3p", 5) == 5


def test_overrides_count() -> None:
    # four players each for himself, whatever the profile says of teams
    assert _weight("international", 3, {"teams": "individual"}) == 3 * PARANOID_WEIGHT


def test_what_does_not_resolve_weighs_its_hands() -> None:
    assert _weight("no_such_profile", 4) == 4
    assert _weight(None, 4) == 4
    assert _weight(None, 4, raw=b"{not json") == 4
    assert _weight(None, 0) == 1  # a match with no hand still takes its place
    assert _weight("international", 2, {"players": 9}) == 2
