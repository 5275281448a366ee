"""Player insights from the hand analysis: luck against skill, accuracy, partnerships.

Everything here reads the analysis tables (migration 012: ``move_analysis``,
``hand_analysis``; docs/analysis.md) through the sums of migration 014
(``skill_rows``, one row per player, match and partner), which
:func:`refresh_insights` keeps current after every load.

**Deal luck** of a hand, for a player: the hand's par from the player's
side (its value under perfect play by everyone, before the first move)
minus the pool's mean par for the same profile and role (the seat's place
after the hand's first seat; in pair games its side: the leading side or
the other). Average luck is 0 by construction; a player dealt strong
hands has positive luck.

**Luck-adjusted points** (PokerTracker's "EV line"): the hand's result from
the player's side minus its luck: what the player's side would have scored
with the same play from an average deal. Luck plus the table's play
(both sides' errors) make up the result: result = par + (result - par).

**Skill**: points lost per decision (a non-forced move), on what the player
could know (the sampled grade) and under perfect information; and
accuracy, 100 x (1 - points lost / points at stake), summed (docs/analysis.md),
by phase of the hand (tiles on the line before the move: the lead, 1-7,
8-15, 16 and more), by profile and by month.

**Percentiles** place a player among the pool: the players (bots left out)
with at least :data:`MIN_DECISIONS` decisions (in the profile, for a
profile's percentile); the share of them the player does better than, ties
counted half.

**Partnerships** (:func:`pair_skill`): the pair's combined accuracy (both
players' lost and at-stake points summed over the hands they held side by
side) and the supports-the-partner measure: how often the partner has to
pass in a hand beside the player, against the partner's own rate beside
anyone else (docs/insights.md).
"""

from __future__ import annotations

import datetime as dt
import math
import time
from collections.abc import Sequence
from typing import Any, Final

import duckdb
import orjson
import pyarrow as pa

from replay.analysis import ANALYSIS_VERSION
from replay.store import transaction

__all__ = [
    "MIN_DECISIONS",
    "PHASES",
    "pair_skill",
    "player_skill",
    "refresh_insights",
    "seat_ranges",
]

Cursor = duckdb.DuckDBPyConnection

#: The phases of a hand, by tiles on the line before the move (lower bounds).
PHASES: Final = (("lead", 0), ("early", 1), ("middle", 8), ("late", 16))
#: Decisions a player needs to be placed among the pool (percentiles).
MIN_DECISIONS: Final = 100
#: Points of the luck chart a report keeps, at most.
LINE_POINTS: Final = 120
#: Roles by which par is compared: a seat's place after the first seat (side in pairs).
ROLES: Final = 4
#: The figures placed among the pool: (their value from skill_players' sums, higher is better).
RANKED: Final[dict[str, tuple[str, bool]]] = {
    "accuracy": ("CASE WHEN stake > 0 THEN 100 * greatest(0, 1 - lost / stake) END", True),
    "accuracy_dd": ("CASE WHEN stake_dd > 0 THEN 100 * greatest(0, 1 - lost_dd / stake_dd) END", True),
    "lost_per_decision": ("lost / decisions", False),
    "lost_dd_per_decision": ("lost_dd / decisions", False),
    "luck_per_hand": ("luck / hands", True),
    "points_per_hand": ("points / hands", True),
    "adjusted_per_hand": ("(points - luck) / hands", True),
}

_PHASE = "CASE WHEN on_line = 0 THEN 0 WHEN on_line < 8 THEN 1 WHEN on_line < 16 THEN 2 ELSE 3 END"

def seat_ranges(where: str = "") -> str:
    """A query of seat rows as ranges of hands, [from_hand, to_hand): who held
    each seat in each hand (seat changes resolved as in the player report).

    >>> "to_hand" in seat_ranges("WHERE match = 'm'")
    True
    """
    return (
        "SELECT s.match, s.seat, s.player, s.bot, s.from_hand, "
        "coalesce(lead(s.from_hand) OVER (PARTITION BY s.match, s.seat ORDER BY s.from_hand, s.seq), "
        f"2147483647) AS to_hand FROM seats s {where}"
    )


# The player holding each seat in each hand of the matches to sum.
_RANGES = "CREATE OR REPLACE TEMP TABLE _ins_ranges AS {ranges}"

# One row per analysed hand and seat: par, result, role; and the seat's
# decisions summed (move_analysis). `y`: the omniscience statistic of a
# decision (move_analysis.hindsight, reports.cheats). A subquery of _ROWS
# (a temporary table of its 4M rows at 1M hands cost a second more).
_HAND_SEATS = """
WITH mt AS MATERIALIZED (  -- a match's JSON read once, not once a hand and seat
    SELECT match, profile, rules->>'teams' = 'pairs' AS pairs, started, mno FROM matches {where}
), h AS (
    SELECT match, hand, first_seat, len(par) AS n,
           unnest(range(len(par))) AS seat, unnest(par) AS par, unnest(result) AS result
    FROM hand_analysis WHERE skip IS NULL {and_where}
), d AS (
    SELECT match, hand, seat, forced, {phase} AS ph, coalesce(pimc_loss, dd_loss::DOUBLE) AS lost,
           coalesce(stake, stake_dd::DOUBLE) AS stake, dd_loss, stake_dd, class, hindsight,
           NOT forced AND coalesce(differs, false) AS dif, dd = dd_best AS best
    FROM move_analysis {where}
), s AS (
    -- This scans every move, and its cost is one aggregate update a move and
    -- aggregate: the counts go 12 bits a field into two BIGINT sums (a hand's
    -- seat moves far fewer than 4,096 times), the perfect-information phase
    -- sums (whole points) 32 bits a field into two HUGEINT sums; unpacked
    -- below, a row a hand and seat. 15 sums instead of 32: half the time.
    SELECT match, hand, seat,
           sum(CASE WHEN forced THEN 0 ELSE 1::BIGINT << (12 * ph) END
               + CASE WHEN hindsight IS NULL THEN 0 ELSE 1::BIGINT << 48 END) AS c1,
           sum(CASE class WHEN 'inaccuracy' THEN 1 WHEN 'mistake' THEN 1::BIGINT << 12
                          WHEN 'blunder' THEN 1::BIGINT << 24 ELSE 0 END
               + CASE WHEN dif THEN 1::BIGINT << 36 ELSE 0 END
               + CASE WHEN dif AND best THEN 1::BIGINT << 48 ELSE 0 END) AS c2,
           sum(CASE WHEN forced THEN 0 ELSE dd_loss::HUGEINT << (32 * ph) END) AS ldp,
           sum(CASE WHEN forced THEN 0 ELSE stake_dd::HUGEINT << (32 * ph) END) AS sdp,
           sum(CASE WHEN forced THEN 0 ELSE lost END) AS lost, sum(CASE WHEN forced THEN 0 ELSE stake END) AS stake,
           {phases}
           coalesce(sum(hindsight), 0) AS y_sum
    FROM d GROUP BY match, hand, seat
), u AS (
    SELECT *, {unpack} FROM s
)
SELECT h.match, h.hand, h.seat, h.par, h.result,
       CASE WHEN m.pairs THEN (h.seat - h.first_seat + h.n) % 2
            ELSE (h.seat - h.first_seat + h.n) % h.n END AS role,
       m.profile, m.pairs AND h.n = 4 AS pairs, m.started, m.mno,
       coalesce(s.dec_p0 + s.dec_p1 + s.dec_p2 + s.dec_p3, 0) AS decisions,
       coalesce(s.lost, 0) AS lost, coalesce(s.stake, 0) AS stake,
       coalesce(s.lost_dd_p0 + s.lost_dd_p1 + s.lost_dd_p2 + s.lost_dd_p3, 0) AS lost_dd,
       coalesce(s.stake_dd_p0 + s.stake_dd_p1 + s.stake_dd_p2 + s.stake_dd_p3, 0) AS stake_dd,
       {phase_cols}
       coalesce(s.inaccuracies, 0) AS inaccuracies, coalesce(s.mistakes, 0) AS mistakes,
       coalesce(s.blunders, 0) AS blunders, coalesce(s.y_n, 0) AS y_n, coalesce(s.y_sum, 0) AS y_sum,
       coalesce(s.differs_n, 0) AS differs_n, coalesce(s.differs_hit, 0) AS differs_hit
FROM h JOIN mt m USING (match)
LEFT JOIN u s USING (match, hand, seat)
"""

_HINDSIGHT = """
UPDATE move_analysis SET hindsight = (dd - list_avg(list_transform(alternatives, lambda a: a.dd)))
                                     - (pimc - list_avg(list_transform(alternatives, lambda a: a.pimc)))
WHERE hindsight IS NULL AND NOT forced AND pimc IS NOT NULL AND len(alternatives) > 1"""

_ROWS = """
INSERT INTO skill_rows BY NAME
SELECT r.player, x.match, any_value(x.mno) AS mno, p.player AS partner, any_value(x.profile) AS profile,
       any_value(x.started) AS started, count(*) AS hands, sum(x.result) AS points,
       {par_roles}
       sum(x.decisions) AS decisions, sum(x.lost) AS lost, sum(x.stake) AS stake, sum(x.lost_dd) AS lost_dd,
       sum(x.stake_dd) AS stake_dd,
       {phase_sums}
       sum(x.inaccuracies) AS inaccuracies, sum(x.mistakes) AS mistakes, sum(x.blunders) AS blunders,
       sum(x.y_n) AS y_n, sum(x.y_sum) AS y_sum, count(*) FILTER (x.y_n > 0) AS y_hands,
       sum(x.y_sum * x.y_sum) AS y_sq, sum(x.differs_n) AS differs_n, sum(x.differs_hit) AS differs_hit
FROM ({hand_seats}) x
JOIN _ins_ranges r ON r.match = x.match AND r.seat = x.seat AND x.hand >= r.from_hand AND x.hand < r.to_hand
LEFT JOIN _ins_ranges p ON x.pairs AND p.match = x.match AND p.seat = (x.seat + 2) % 4
     AND x.hand >= p.from_hand AND x.hand < p.to_hand
GROUP BY r.player, x.match, p.player
"""

# skill_players' sums over skill_rows r (joined with luck_base b0..b3), by name
_COUNTED: Final = ("decisions", "lost", "stake", "lost_dd", "stake_dd", "inaccuracies", "mistakes", "blunders")
_SUMS = ", ".join(
    ["count(DISTINCT r.match) AS matches", "sum(r.hands) AS hands", "sum(r.points) AS points", "{luck} AS luck"]
    + [f"sum(r.{c}) AS {c}" for c in (*_COUNTED, "y_n", "y_sum", "y_hands", "y_sq", "differs_n", "differs_hit")]
    + [f"sum(r.{m}_p{k}) AS {m}_p{k}" for m in ("dec", "lost", "stake", "lost_dd", "stake_dd") for k in range(4)]
)


def _phase_sql() -> tuple[str, str, str, str]:
    """The per-phase parts of the statements above: the sums of the pimc grade
    (doubles, a sum each), the unpacking of the packed ones, the columns, and
    their sums by player and match."""
    agg, unpack, cols, sums = [], [], [], []
    unpack += ["c1 >> 48 & 4095 AS y_n", "c2 & 4095 AS inaccuracies", "c2 >> 12 & 4095 AS mistakes",
               "c2 >> 24 & 4095 AS blunders", "c2 >> 36 & 4095 AS differs_n", "c2 >> 48 & 4095 AS differs_hit"]
    for k in range(len(PHASES)):
        for name in ("lost", "stake"):
            agg.append(f"sum(CASE WHEN NOT forced AND ph = {k} THEN {name} ELSE 0 END) AS {name}_p{k},")
        unpack += [f"c1 >> {12 * k} & 4095 AS dec_p{k}", f"(ldp >> {32 * k} & 4294967295)::BIGINT AS lost_dd_p{k}",
                   f"(sdp >> {32 * k} & 4294967295)::BIGINT AS stake_dd_p{k}"]
        for name in ("dec", "lost", "stake", "lost_dd", "stake_dd"):
            cols.append(f"coalesce(s.{name}_p{k}, 0) AS {name}_p{k},")
            sums.append(f"sum(x.{name}_p{k}) AS {name}_p{k},")
    return " ".join(agg), ", ".join(unpack), " ".join(cols), " ".join(sums)


def _luck_sql(alias: str = "") -> str:
    """Luck summed over skill_rows (joined with luck_base as b0..b3)."""
    return " + ".join(f"sum({alias}par_r{k} - {alias}role_r{k} * coalesce(b{k}.par, 0))" for k in range(ROLES))


def _base_joins(alias: str) -> str:
    return " ".join(f"LEFT JOIN luck_base b{k} ON b{k}.profile = {alias}.profile AND b{k}.role = {k}"
                    for k in range(ROLES))


_REPEEK = """
CREATE OR REPLACE TEMP TABLE _ins_peek AS
WITH same AS (
    SELECT i.match FROM insight_matches i JOIN matches m ON m.match = i.match AND m.mno = i.mno
    WHERE i.match IN (SELECT match FROM _ins_gone)
), a AS (
    -- the new grade of what the mover could know: the read grade where there is one
    -- (as the audit takes it: reports.cheats.audit_player), else the uniform one
    SELECT match, hand, ply,
           CASE WHEN reads IS NOT NULL THEN list_transform(reads, lambda r: r.read)
                ELSE list_transform(alternatives, lambda x: x.pimc) END AS known,
           list_position(list_transform(alternatives, lambda x: x.move), played) AS i
    FROM move_analysis WHERE match IN (SELECT match FROM same) AND version = $1
)
SELECT k.match, k.hand, k.ply, k.seat, k.version, k.samples, k.seed, k.peek,
       (k.peek[a.i] - list_avg(k.peek)) - (a.known[a.i] - list_avg(a.known)) AS y_peek
FROM peek_analysis k JOIN a USING (match, hand, ply)
WHERE k.version = $1 AND a.i > 0 AND len(k.peek) = len(a.known) AND list_count(a.known) = len(a.known)
"""


def refresh_insights(conn: Cursor) -> int:
    """Bring migration 014's tables up to date with the analysed matches:
    rows of matches gone, replaced or analysed again are dropped (with their
    partner-peeking grades), rows of newly analysed matches are added, and
    the players' totals and the luck baseline are worked out again. One
    transaction; nothing changed is two small queries. The number of
    matches whose rows were added."""
    if not _count(conn, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'insight_matches'"):
        return 0  # a store older than migration 014 (opened read-only, or being migrated)
    with transaction(conn):
        return _refresh(conn)


def _refresh(conn: Cursor) -> int:
    conn.execute(
        "CREATE OR REPLACE TEMP TABLE _ins_want AS SELECT match, mno, analysis FROM matches "
        "WHERE analysis IS NOT NULL"
    )
    conn.execute(
        "CREATE OR REPLACE TEMP TABLE _ins_gone AS SELECT match FROM insight_matches "
        "EXCEPT SELECT match FROM (SELECT match, mno, analysis FROM insight_matches "
        "  INTERSECT SELECT match, mno, analysis FROM _ins_want)"
    )
    gone = _count(conn, "SELECT count(*) FROM _ins_gone")
    if gone:
        # partner-peeking grades of a match analysed again but stored as it was
        # are kept (an audit costs a sampled search a decision), their y_peek
        # taken again against the new grade (read where there is one, as the
        # audit takes it; else the sampled one): both means stay unbiased,
        # so the null model holds (docs/insights.md); the rest go with the match
        conn.execute(_REPEEK, [ANALYSIS_VERSION])
        for t in ("skill_rows", "insight_matches", "peek_analysis"):
            conn.execute(f"DELETE FROM {t} WHERE match IN (SELECT match FROM _ins_gone)")
        conn.execute("INSERT INTO peek_analysis BY NAME SELECT * FROM _ins_peek")
        conn.execute("DROP TABLE _ins_peek")
    had = _count(conn, "SELECT count(*) FROM insight_matches")
    conn.execute(
        "CREATE OR REPLACE TEMP TABLE _ins_todo AS SELECT match, mno, analysis FROM _ins_want "
        "WHERE match NOT IN (SELECT match FROM insight_matches)"
    )
    todo = _count(conn, "SELECT count(*) FROM _ins_todo")
    if todo:
        # every match (an empty table, or a full redo): no filter to apply
        where = "" if not had else "WHERE match IN (SELECT match FROM _ins_todo)"
        # rows a spool batch of an older version brought without it (migration 014 did the rest)
        conn.execute(_HINDSIGHT + ("" if not had else " AND match IN (SELECT match FROM _ins_todo)"))
        phase_agg, unpack, phase_cols, phase_sums = _phase_sql()
        conn.execute(_RANGES.format(ranges=seat_ranges(where)))
        hand_seats = _HAND_SEATS.format(where=where, and_where=where.replace("WHERE", "AND"), phase=_PHASE,
                                        phases=phase_agg, unpack=unpack, phase_cols=phase_cols)
        par_roles = " ".join(f"coalesce(sum(x.par) FILTER (x.role = {k}), 0) AS par_r{k}, "
                             f"count(*) FILTER (x.role = {k}) AS role_r{k}," for k in range(ROLES))
        conn.execute(_ROWS.format(par_roles=par_roles, phase_sums=phase_sums, hand_seats=hand_seats))
        conn.execute("INSERT INTO insight_matches SELECT match, mno, analysis FROM _ins_todo")
        conn.execute("DROP TABLE _ins_ranges")
    held = _count(conn, "SELECT count(*) FROM insight_matches")
    if gone or todo or held != _count(conn, "SELECT coalesce(max(matches), 0) FROM insight_totals"):
        _totals(conn)
        conn.execute("DELETE FROM insight_totals")
        conn.execute("INSERT INTO insight_totals VALUES (?)", [held])
    for t in ("_ins_want", "_ins_gone", "_ins_todo"):
        conn.execute(f"DROP TABLE {t}")
    return todo


def _totals(conn: Cursor) -> None:
    """luck_base, skill_players (with the pool percentiles), skill_months and
    skill_line from skill_rows, from nothing: what a player page reads."""
    conn.execute("DELETE FROM luck_base")
    parts = " UNION ALL ".join(
        f"SELECT profile, {k} AS role, sum(role_r{k}) AS hands, sum(par_r{k}) AS par FROM skill_rows GROUP BY profile"
        for k in range(ROLES)
    )
    conn.execute(f"INSERT INTO luck_base SELECT profile, role, hands, par / hands FROM ({parts}) WHERE hands > 0")
    for t in ("skill_players", "skill_months", "skill_line"):
        conn.execute(f"DELETE FROM {t}")
    sums = _SUMS.format(luck=_luck_sql("r."))
    for key, group in (("'*'", ""), ("r.profile", ", r.profile")):
        conn.execute(
            f"INSERT INTO skill_players BY NAME SELECT r.player, {key} AS profile, "
            f"coalesce(any_value(pl.bot), false) AS bot, {sums} "
            f"FROM skill_rows r {_base_joins('r')} LEFT JOIN players pl ON pl.player = r.player "
            f"GROUP BY r.player{group}"
        )
    conn.execute(_PERCENTILES.format(
        metrics=", ".join(f"{expr} AS {k}" for k, (expr, _) in RANKED.items()),
        ranks=", ".join(_rank(k, up) for k, (_, up) in RANKED.items()),
        sets=", ".join(f"pct_{k} = x.{k}" for k in RANKED)), [MIN_DECISIONS])  # fmt: skip
    luck = " + ".join(f"(r.par_r{k} - r.role_r{k} * coalesce(b{k}.par, 0))" for k in range(ROLES))
    month = "coalesce(strftime(timezone('UTC', r.started), '%Y-%m'), '?')"
    conn.execute(
        f"INSERT INTO skill_months BY NAME SELECT r.player, {month} AS month, count(DISTINCT r.match) AS matches, "
        f"sum(r.hands) AS hands, sum(r.points) AS points, sum({luck}) AS luck, "
        + ", ".join(f"sum(r.{c}) AS {c}" for c in _COUNTED)
        + f" FROM skill_rows r {_base_joins('r')} GROUP BY r.player, {month}"
    )
    conn.execute(_LINE.format(luck=luck, joins=_base_joins("r"), most=LINE_POINTS))
    _keep_pages(conn)


def _rank(k: str, higher_better: bool) -> str:
    """The share of the other placed players a player does better than on `k`, ties half, 0 to 100."""
    way = "ASC" if higher_better else "DESC"
    return (f"100.0 * (rank() OVER (PARTITION BY profile ORDER BY {k} {way} NULLS LAST) - 1 "
            f"+ 0.5 * (count({k}) OVER (PARTITION BY profile, {k}) - 1)) "
            f"/ nullif(count({k}) OVER (PARTITION BY profile) - 1, 0) AS {k}")  # fmt: skip


# The pool percentiles of every placed player (not a bot, MIN_DECISIONS decisions or more).
_PERCENTILES = """
UPDATE skill_players SET placed = x.placed, {sets}
FROM (
    SELECT player, profile, count(*) OVER (PARTITION BY profile) AS placed,
           {ranks}
    FROM (SELECT player, profile, {metrics} FROM skill_players WHERE NOT bot AND decisions >= ? AND hands > 0)
) x
WHERE skill_players.player = x.player AND skill_players.profile = x.profile
"""

# Each player's points and luck added up match by match (a match's rows of
# several partners together), every k-th match kept and the last.
_LINE = """
INSERT INTO skill_line BY NAME
WITH m AS (
    SELECT r.player, r.match, any_value(r.started) AS started, any_value(r.mno) AS mno, sum(r.hands) AS h,
           sum(r.points) AS p, sum({luck}) AS l
    FROM skill_rows r {joins} GROUP BY r.player, r.match
), c AS (
    SELECT player, match, started, count(*) OVER (PARTITION BY player) AS n,
           row_number() OVER w AS k, sum(h) OVER w AS hands, sum(p) OVER w AS points, sum(l) OVER w AS luck
    FROM m WINDOW w AS (PARTITION BY player ORDER BY started NULLS LAST, mno, match
                        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
)
SELECT player, k, match, strftime(timezone('UTC', started), '%Y-%m-%d') AS day, hands, points, luck
FROM c WHERE (k - 1) % ceil(n / {most}) = 0 OR k = n
"""


def _count(conn: Cursor, sql: str) -> int:
    row = conn.execute(sql).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


# -- reads ---------------------------------------------------------------------------


def accuracy(lost: float | None, stake: float | None) -> float | None:
    """100 x (1 - lost / stake), None when nothing was at stake (docs/analysis.md).

    >>> accuracy(20, 50), accuracy(0, 0)
    (60.0, None)
    """
    if not stake or stake <= 1e-9 or lost is None:
        return None
    return round(max(0.0, 100.0 * (1.0 - lost / stake)), 2)


def _per(x: float | None, n: int | None, nd: int = 3) -> float | None:
    return None if not n or x is None else round(x / n, nd)


def has_insights(cur: Cursor) -> bool:
    """Whether the store has migration 014 (an older one is migrated on open)."""
    return bool(cur.execute(
        "SELECT 1 FROM information_schema.tables WHERE table_name = 'skill_rows'").fetchall())


def player_skill(cur: Cursor, player: str, filters: Any = None) -> dict[str, Any]:
    """A player's luck, skill and accuracy (the player report's section), with
    the pool percentiles (of all their hands, whatever the filters). Empty
    figures (``hands`` 0) when nothing of theirs was analysed. `filters`: a
    reports.player.ReportFilters (profile, days of the match's start,
    partner). Without filters it reads what the refresh kept (skill_players,
    skill_months, skill_line: a few rows); with them, the player's skill_rows."""
    if not filters:
        got = cur.execute("SELECT page FROM skill_pages WHERE player = ?", [player]).fetchall()
        if got:
            return dict(orjson.loads(got[0][0]))
        kept = _dicts(cur, "SELECT * FROM skill_players WHERE player = ?", [player])
        months = _dicts(cur, "SELECT * FROM skill_months WHERE player = ?", [player])
        line = _dicts(cur, "SELECT * FROM skill_line WHERE player = ? ORDER BY k", [player])
        return _kept_page(player, _is_bot(cur, player), kept, months, line)
    out: dict[str, Any] = {"player": player, "bot": _is_bot(cur, player), "min_decisions": MIN_DECISIONS,
                           "filters": filters.to_dict()}
    where, params = "r.player = $player", dict[str, Any](player=player)
    if filters.profile is not None:
        where, params["profile"] = where + " AND r.profile = $profile", filters.profile
    if filters.partner is not None:
        where, params["partner"] = where + " AND r.partner = $partner", filters.partner
    if filters.date_from is not None:  # the days of the match's start, UTC, both ends included
        where += " AND r.started >= $date_from"
        params["date_from"] = dt.datetime.combine(filters.date_from, dt.time(), dt.UTC)
    if filters.date_to is not None and filters.date_to < dt.date.max:  # (the last day bounds nothing)
        where += " AND r.started < $date_to"
        params["date_to"] = dt.datetime.combine(filters.date_to + dt.timedelta(days=1), dt.time(), dt.UTC)
    luck = " + ".join(f"(r.par_r{k} - r.role_r{k} * coalesce(b{k}.par, 0))" for k in range(ROLES))
    data = _dicts(cur, f"SELECT r.*, {luck} AS luck FROM skill_rows r {_base_joins('r')} WHERE {where} "
                       "ORDER BY r.started NULLS LAST, r.mno, r.match", params)  # fmt: skip
    out.update(_figures(data))
    out["phases"] = _phases(data)
    out["profiles"] = _by(data, lambda r: r["profile"] or "?", "profile")
    out["months"] = _by(data, lambda r: _month(r["started"]), "month")
    out["line"] = _line(data)
    out["percentiles"] = percentiles(cur, player, [p["profile"] for p in out["profiles"]])
    return out


def _is_bot(cur: Cursor, player: str) -> bool:
    got = cur.execute("SELECT bot FROM players WHERE player = ?", [player]).fetchone()
    return bool(got and got[0])


def _kept_page(player: str, bot: bool, kept: Sequence[dict[str, Any]], months: Sequence[dict[str, Any]],
               line: Sequence[dict[str, Any]]) -> dict[str, Any]:  # fmt: skip
    """A player's section from what the refresh kept: its skill_players rows
    (all profiles and each), skill_months rows and skill_line rows (in order)."""
    every = [r for r in kept if r["profile"] == "*"]
    out: dict[str, Any] = {"player": player, "bot": bot, "min_decisions": MIN_DECISIONS, "filters": {},
                           **_figures(every)}  # fmt: skip
    out["phases"] = _phases(every)
    out["profiles"] = _by([r for r in kept if r["profile"] != "*"], lambda r: r["profile"], "profile")
    out["months"] = _by(months, lambda r: r["month"], "month")
    out["line"] = {"hands": [r["hands"] for r in line], "points": [r["points"] for r in line],
                   "adjusted": [round(r["points"] - r["luck"], 2) for r in line],
                   "luck": [round(r["luck"], 2) for r in line], "matches": [r["match"] for r in line],
                   "days": [r["day"] for r in line]}  # fmt: skip
    profiles = {p["profile"] for p in out["profiles"]}
    out["percentiles"] = {
        r["profile"]: {"pool": r["placed"], **{k: None if r[f"pct_{k}"] is None else round(r[f"pct_{k}"], 1)
                                               for k in RANKED}}
        for r in sorted(kept, key=lambda r: (r["profile"] != "*", r["profile"]))
        if r["placed"] is not None and (r["profile"] == "*" or r["profile"] in profiles)
    }  # fmt: skip
    return out


def _keep_pages(conn: Cursor) -> None:
    """skill_pages: every player's section (as player_skill gives it without
    filters) from the kept tables, read whole once."""
    def by_player(sql: str) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for r in _dicts(conn, sql, []):
            out.setdefault(r["player"], []).append(r)
        return out

    kept = by_player("SELECT * FROM skill_players")
    months = by_player("SELECT * FROM skill_months")
    line = by_player("SELECT * FROM skill_line ORDER BY player, k")
    bots = {p for p, rows in kept.items() if any(r["bot"] for r in rows)}
    players = sorted(kept)
    pages = [orjson.dumps(_kept_page(p, p in bots, kept[p], months.get(p, []), line.get(p, []))).decode()
             for p in players]  # fmt: skip
    conn.execute("DELETE FROM skill_pages")
    if players:
        conn.register("_pages", pa.table({"player": players, "page": pages}))
        try:
            conn.execute("INSERT INTO skill_pages SELECT player, page FROM _pages")
        finally:
            conn.unregister("_pages")


def _month(t: dt.datetime | None) -> str:
    """A match's month as skill_months keys it: YYYY-MM in UTC.

    >>> _month(dt.datetime(2026, 11, 30, 23, 30, tzinfo=dt.timezone(dt.timedelta(hours=-2))))
    '2026-12'
    """
    return t.astimezone(dt.UTC).strftime("%Y-%m") if t is not None else "?"


def _dicts(cur: Cursor, sql: str, params: Any) -> list[dict[str, Any]]:
    got = cur.execute(sql, params)
    cols = [d[0] for d in got.description or ()]
    return [dict(zip(cols, r, strict=True)) for r in got.fetchall()]


def _figures(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Totals of some skill_rows: luck, points, skill, accuracy."""
    def s(k: str) -> Any:
        return sum(r[k] for r in rows)

    hands, dec = s("hands"), s("decisions")
    # kept totals carry their matches; skill_rows are one a match (a partner)
    matches = s("matches") if rows and "matches" in rows[0] else len({r["match"] for r in rows})
    return {
        "matches": matches,
        "hands": hands,
        "points": s("points"),
        "points_per_hand": _per(s("points"), hands, 2),
        "luck": round(s("luck"), 2),
        "luck_per_hand": _per(s("luck"), hands, 2),
        "adjusted_points": round(s("points") - s("luck"), 2),
        "adjusted_per_hand": _per(s("points") - s("luck"), hands, 2),
        "decisions": dec,
        # decisions with the grade on what the player could know; the others
        # count under perfect information until the store samples them (api.deepen)
        "sampled": s("y_n") if not rows or "y_n" in rows[0] else None,  # (skill_months has no count)
        "lost_per_decision": _per(s("lost"), dec),
        "lost_dd_per_decision": _per(s("lost_dd"), dec),
        "accuracy": accuracy(s("lost"), s("stake")),
        "accuracy_dd": accuracy(s("lost_dd"), s("stake_dd")),
        "inaccuracies": s("inaccuracies"),
        "mistakes": s("mistakes"),
        "blunders": s("blunders"),
    }


def _phases(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for k, (name, low) in enumerate(PHASES):
        hi = PHASES[k + 1][1] - 1 if k + 1 < len(PHASES) else None
        def s(c: str, k: int = k) -> Any:
            return sum(r[f"{c}_p{k}"] for r in rows)
        out.append({
            "phase": name, "tiles_on_line": f"{low}" if hi == low else f"{low}-{hi}" if hi is not None else f"{low}+",
            "decisions": s("dec"), "accuracy": accuracy(s("lost"), s("stake")),
            "accuracy_dd": accuracy(s("lost_dd"), s("stake_dd")),
            "lost_per_decision": _per(s("lost"), s("dec")),
        })  # fmt: skip
    return out


def _by(rows: Sequence[dict[str, Any]], key: Any, name: str) -> list[dict[str, Any]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r)
    out = []
    for k, rs in groups.items():
        f = _figures(rs)
        out.append({name: k, **{c: f[c] for c in (
            "matches", "hands", "decisions", "accuracy", "accuracy_dd", "lost_per_decision",
            "lost_dd_per_decision", "luck_per_hand", "points_per_hand", "adjusted_per_hand")}})  # fmt: skip
    if name == "profile":
        out.sort(key=lambda r: (-r["hands"], r[name]))
    else:
        out.sort(key=lambda r: r[name])
    return out


def _line(rows: Sequence[dict[str, Any]], most: int = LINE_POINTS) -> dict[str, list[Any]]:
    """The real and the luck-adjusted points, added up match by match in time
    order (a match's rows of several partners together), every k-th match
    and the last kept, at most about `most` (as skill_line keeps them).

    >>> rows = [{"hands": 2, "points": 10, "luck": 4.0, "match": "a", "started": None},
    ...         {"hands": 1, "points": -5, "luck": -1.0, "match": "b", "started": None}]
    >>> _line(rows)
    {'hands': [2, 3], 'points': [10, 5], 'adjusted': [6.0, 2.0], 'luck': [4.0, 3.0], 'matches': ['a', 'b'], 'days': [None, None]}
    """
    merged: dict[str, list[Any]] = {}
    for r in rows:  # in time order: a match's first row places it
        got = merged.setdefault(r["match"], [0, 0, 0.0, r["started"]])
        got[0] += r["hands"]
        got[1] += r["points"]
        got[2] += r["luck"]
    hands = points = 0
    luck = 0.0
    full: list[tuple[int, int, float, str, Any]] = []
    for match, (h, p, lk, started) in merged.items():
        hands, points, luck = hands + h, points + p, luck + lk
        full.append((hands, points, luck, match, started))
    n = len(full)
    step = max(1, math.ceil(n / most))
    full = [f for k, f in enumerate(full, 1) if (k - 1) % step == 0 or k == n]
    return {
        "hands": [f[0] for f in full],
        "points": [f[1] for f in full],
        "adjusted": [round(f[1] - f[2], 2) for f in full],
        "luck": [round(f[2], 2) for f in full],
        "matches": [f[3] for f in full],
        "days": [f[4].astimezone(dt.UTC).strftime("%Y-%m-%d") if isinstance(f[4], dt.datetime) else None for f in full],
    }


def percentiles(cur: Cursor, player: str, profiles: Sequence[str] = ()) -> dict[str, dict[str, Any]]:
    """Where the player stands among the pool's players (not bots) with at least
    MIN_DECISIONS decisions, in every profile together (``*``) and in each of
    `profiles`: per figure (RANKED), the share of the others the player does
    better than (ties half), 0 to 100, and `pool`, how many are placed.
    Nothing for a profile where the player is not placed (kept by the refresh)."""
    cols = ", ".join(f"pct_{k}" for k in RANKED)
    got = cur.execute(f"SELECT profile, placed, {cols} FROM skill_players WHERE player = ? "
                      "AND list_contains(?, profile) AND placed IS NOT NULL", [player, ["*", *profiles]]).fetchall()  # fmt: skip
    return {prof: {"pool": placed, **{k: None if v is None else round(v, 1) for k, v in zip(RANKED, vals, strict=True)}}
            for prof, placed, *vals in sorted(got, key=lambda r: (r[0] != "*", r[0]))}  # fmt: skip


# -- pairs -----------------------------------------------------------------------------


def pair_skill(cur: Cursor, a: str, b: str) -> dict[str, Any]:
    """A pair's combined figures over the hands they held side by side, each
    player's own, and the supports-the-partner measure both ways."""
    rows = cur.execute(
        f"SELECT r.*, {' + '.join(f'(r.par_r{k} - r.role_r{k} * coalesce(b{k}.par, 0))' for k in range(ROLES))} AS luck "
        f"FROM skill_rows r {_base_joins('r')} WHERE (r.player = $a AND r.partner = $b) OR (r.player = $b AND r.partner = $a)",
        {"a": a, "b": b},
    )  # fmt: skip
    cols = [d[0] for d in rows.description or ()]
    data = [dict(zip(cols, r, strict=True)) for r in rows.fetchall()]
    mine = {p: [r for r in data if r["player"] == p] for p in (a, b)}
    both = _figures(data)
    combined = {k: both[k] for k in ("decisions", "sampled", "accuracy", "accuracy_dd", "lost_per_decision",
                                     "lost_dd_per_decision", "inaccuracies", "mistakes", "blunders")}
    combined["hands"] = max((_figures(rs)["hands"] for rs in mine.values()), default=0)
    per_player = []
    for p in (a, b):
        f = _figures(mine[p])
        per_player.append({"player": p, **{k: f[k] for k in (
            "hands", "decisions", "accuracy", "accuracy_dd", "lost_per_decision", "luck_per_hand")}})  # fmt: skip
    return {"combined": combined, "players": per_player,
            "support": [support(cur, a, b), support(cur, b, a)]}


# The partner's passes per hand: beside `giver`, and beside anyone else.
_SUPPORT = """
SELECT partner = $giver AS beside, count(*) AS hands, sum(p) AS passes, sum(p * p) AS sq
FROM (SELECT partner, greatest(coalesce(passes, 0) - CASE WHEN result = 'block' AND block_end = 'all_pass'
                                                        THEN 1 ELSE 0 END, 0) AS p
      FROM player_held WHERE of_player = $taker AND partner IS NOT NULL AND result IN ('domino', 'block'))
GROUP BY beside
"""


def support(cur: Cursor, giver: str, taker: str) -> dict[str, Any]:
    """How `giver` supports `taker` as a partner: `taker`'s passes per hand
    (in play; the closing passes of a block under all_pass not counted)
    beside `giver` and beside its other partners, the difference
    (negative: `taker` passes less beside `giver`), and its z (the two
    means' difference over its standard error, hands as the units)."""
    got = {bool(r[0]): r[1:] for r in cur.execute(_SUPPORT, {"giver": giver, "taker": taker}).fetchall()}
    out: dict[str, Any] = {"player": giver, "partner": taker}
    stats = {}
    for key, name in ((True, "beside"), (False, "others")):
        n, s, sq = got.get(key, (0, 0, 0))
        mean = s / n if n else None
        var = (sq - n * mean * mean) / (n - 1) if n and n > 1 and mean is not None else None
        stats[name] = (n, mean, var)
        out[f"hands_{name}"] = n
        out[f"passes_per_hand_{name}"] = None if mean is None else round(mean, 3)
    (n1, m1, v1), (n2, m2, v2) = stats["beside"], stats["others"]
    diff = None if m1 is None or m2 is None else m1 - m2
    out["difference"] = None if diff is None else round(diff, 3)
    se = math.sqrt(v1 / n1 + v2 / n2) if v1 is not None and v2 is not None and n1 and n2 else None
    out["z"] = None if diff is None or not se else round(diff / se, 2)
    return out


def timed_refresh(conn: Cursor) -> tuple[int, float]:
    """:func:`refresh_insights` and its wall time in seconds (the benches')."""
    t0 = time.perf_counter()
    n = refresh_insights(conn)
    return n, time.perf_counter() - t0
