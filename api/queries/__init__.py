"""Reads for the pages and their JSON twins: plain SQL over the store's tables.

`lists` holds the lists with their filters, sorting and pages; `replay` the
match page and the bundle a hand's replay is drawn from; `sql` what both
share. The routes read them through this package (`from api import queries as q`).
"""

from api.queries.lists import (
    FINDING_SORTS,
    MATCH_SORTS,
    PLAYER_SORTS,
    MatchFilters,
    file_counts,
    filter_choices,
    findings_sql,
    hands_sql,
    list_findings,
    list_hands,
    list_matches,
    list_moves,
    list_players,
    matches_by_id,
    matches_sql,
    moves_sql,
    order_by,
    player_version,
    players_sql,
    sort_state,
    summary,
)
from api.queries.replay import (
    COSTLIEST,
    MatchBundle,
    costliest_moves,
    hand_of,
    match_accuracy,
    match_analysis,
    match_bundle,
    match_detail,
    match_version,
    ply_of_seq,
)
from api.queries.sql import Cursor

__all__ = [
    "COSTLIEST",
    "FINDING_SORTS",
    "MATCH_SORTS",
    "PLAYER_SORTS",
    "Cursor",
    "MatchBundle",
    "MatchFilters",
    "costliest_moves",
    "file_counts",
    "filter_choices",
    "findings_sql",
    "hand_of",
    "hands_sql",
    "list_findings",
    "list_hands",
    "list_matches",
    "list_moves",
    "list_players",
    "match_accuracy",
    "match_analysis",
    "match_bundle",
    "match_detail",
    "match_version",
    "matches_by_id",
    "matches_sql",
    "moves_sql",
    "order_by",
    "ply_of_seq",
    "player_version",
    "players_sql",
    "sort_state",
    "summary",
]
