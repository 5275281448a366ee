"""The rated matches read from the store as contests (`contests`): their
seats, the hands each occupant held and the points of each side.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass

import duckdb
import pyarrow as pa

from replay.store import registered  # a table registered for the block
from reports.ratings.model import Contest, Side, Stint, finishing_order, rated_occupant, sides_of

# --- reading matches from the store -----------------------------------------------------

_MATCH_ROWS = """
SELECT t.pos, m.match, m.mno, timezone('UTC', t.ended) AS ended, m.profile, t.teams, t.kind,
       m.players, m.result, m.winner, m.score
FROM _rt t JOIN matches m ON m.match = t.match AND m.mno IS NOT DISTINCT FROM t.mno
ORDER BY t.pos
"""

# Every seat's occupants with the played hands each held and their side's
# points in them: seat rows as ranges of hands [from_hand, to_hand), as the
# player tables have them (replay.store.player_rows).
_SEAT_RANGES = """
CREATE OR REPLACE TEMP TABLE _rseats AS
SELECT s.match, s.seat, s.player, s.bot, s.from_hand, s.seq,
       coalesce(lead(s.from_hand) OVER (PARTITION BY s.match, s.seat ORDER BY s.from_hand, s.seq),
                2147483647) AS to_hand,
       CASE WHEN t.teams = 'pairs' THEN s.seat % 2 ELSE s.seat END AS side
FROM seats s JOIN _rt t ON t.match = s.match AND s.mno IS NOT DISTINCT FROM t.mno
WHERE {prune_s};

CREATE OR REPLACE TEMP TABLE _rhands AS
SELECT h.match, h.hand, h.winner, h.points, list_sum(h.points) AS total
FROM hands h JOIN _rt t ON t.match = h.match AND h.mno IS NOT DISTINCT FROM t.mno
WHERE {prune_h} AND h.result IN ('domino', 'block')
"""

_STINTS = """
SELECT s.match, s.seat, s.player, bool_or(s.bot) AS bot, min(s.from_hand) AS first_hand,
       count(h.hand) AS hands, coalesce(sum(h.points[s.side + 1]), 0) AS pf,
       coalesce(sum(h.total - h.points[s.side + 1]), 0) AS pa
FROM _rseats s
LEFT JOIN _rhands h ON h.match = s.match AND h.hand >= s.from_hand AND h.hand < s.to_hand
GROUP BY s.match, s.seat, s.player
"""

# hands both players of a side held together (partnership games)
_TOGETHER = """
SELECT a.match, a.side, a.player AS a, b.player AS b, count(h.hand) AS hands,
       coalesce(sum(h.points[a.side + 1]), 0) AS pf, coalesce(sum(h.total - h.points[a.side + 1]), 0) AS pa
FROM _rseats a
JOIN _rseats b ON b.match = a.match AND b.seat = a.seat + 2
JOIN _rhands h ON h.match = a.match AND h.hand >= greatest(a.from_hand, b.from_hand)
  AND h.hand < least(a.to_hand, b.to_hand)
WHERE a.seat < 2 AND a.player <> b.player
GROUP BY ALL
"""

# hand wins per side, for the kinds they decide (chiva, rounds)
_WINS = """
SELECT h.match, list(h.winner) AS winners FROM _rhands h JOIN _rt t USING (match)
WHERE t.kind IN ('chiva', 'rounds') AND h.winner IS NOT NULL GROUP BY h.match
"""


@dataclass(frozen=True, slots=True)
class Listed:
    """A match the ratings take, as listed (rated or not: a match whose rows
    were lost has nothing to be rated on, but keeps its place all the same)."""

    pos: int
    match: str
    mno: int | None
    ended: dt.datetime
    profile: str
    teams: str


def contests(conn: duckdb.DuckDBPyConnection, todo: pa.Table) -> Iterator[tuple[Listed, Contest | None]]:
    """The matches of `todo` (columns pos, match, mno) with their contests, by pos.

    Reads the matches, their seats and their played hands (pruned by the
    matches' numbers: rows are stored in `mno` order).
    """
    if not len(todo):
        return
    with registered(conn, "_rt0", todo):
        conn.execute(
            "CREATE OR REPLACE TEMP TABLE _rt AS SELECT t.pos, t.match, t.mno, "
            "coalesce(m.ended, m.started) AS ended, coalesce(m.rules->>'teams', 'individual') AS teams, "
            "m.rules->'match_end'->>'kind' AS kind "
            "FROM _rt0 t JOIN matches m ON m.match = t.match AND m.mno IS NOT DISTINCT FROM t.mno"
        )
    try:
        mnos = [x for x in todo.column("mno").to_pylist() if x is not None]
        nulls = len(mnos) < len(todo)
        prune = "TRUE" if nulls or not mnos else f"{{t}}.mno BETWEEN {min(mnos)} AND {max(mnos)}"
        conn.execute(_SEAT_RANGES.format(prune_s=prune.format(t="s"), prune_h=prune.format(t="h")))
        stints: dict[tuple[str, int], list[Stint]] = {}
        for m, seat, player, bot, first, hands, pf, pa_ in conn.execute(_STINTS).fetchall():
            stints.setdefault((m, seat), []).append(Stint(player, bool(bot), first, hands, int(pf), int(pa_)))
        together: dict[tuple[str, int, str, str], Stint] = {}
        for m, side, a, b, hands, pf, pa_ in conn.execute(_TOGETHER).fetchall():
            lo, hi = sorted((a, b))
            together[(m, side, lo, hi)] = Stint(lo, False, 0, hands, int(pf), int(pa_))
        wins = dict(conn.execute(_WINS).fetchall())
        rows = conn.execute(_MATCH_ROWS).fetchall()
    finally:
        with contextlib.suppress(duckdb.Error):  # (an aborted transaction is rolled back whole)
            for t in ("_rt", "_rseats", "_rhands"):
                conn.execute(f"DROP TABLE IF EXISTS {t}")
    for pos, match, mno, ended, profile, teams, kind, players, result, winner, score in rows:
        ended = ended.replace(tzinfo=dt.UTC)
        listed = Listed(pos, match, mno, ended, profile or "?", teams)
        yield listed, _contest(listed, kind or "points", players, result, winner, score or [],
                               stints, together, wins.get(match))


def _contest(listed: Listed, kind: str, players: int, result: str, winner: int | None, score: list[int],
             stints: dict[tuple[str, int], list[Stint]], together: dict[tuple[str, int, str, str], Stint],
             winners: list[int] | None) -> Contest | None:
    match = listed.match
    try:
        seats = sides_of(listed.teams, players)
    except ValueError:
        return None
    if any((match, s) not in stints for side in seats for s in side) or len(score) != len(seats):
        return None  # a store that lost rows: nothing to rate it on
    wins = None
    if winners is not None:
        wins = [0] * len(seats)
        for w in winners:
            if 0 <= w < len(seats):
                wins[w] += 1
    try:
        places = finishing_order(result, winner, score, kind, wins)
    except ValueError:
        return None
    sides = []
    for s, side in enumerate(seats):
        occupants = tuple(rated_occupant(stints[(match, seat)]) for seat in side)
        both = None
        if len(occupants) == 2:
            lo, hi = sorted(o.player for o in occupants)
            both = together.get((match, s, lo, hi))
        sides.append(Side(occupants, both))
    return Contest(match, listed.mno, listed.ended, listed.profile, listed.teams, tuple(sides), places)
