"""The lists the pages show and download: matches, findings, players, hands
and moves, with their filters, sorting and pages, and the home page's counts.

Every function takes a cursor (one per request) and returns JSON-ready
values. Nothing here writes.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from typing import Any

from api.names import same_names
from api.queries.sql import (
    MATCH_COLS,
    WITHHELD,
    Cursor,
    dict_rows,
    int_scalar,
    one_row,
    shown_file,
    shown_message,
    ts_utc,
)
from replay.tiles import tile_name
from reports.search import contains, folded_sql, players_matching

# --- home ---------------------------------------------------------------------


def summary(cur: Cursor) -> dict[str, Any]:
    counts = one_row(
        cur,
        """
        SELECT (SELECT count(*) FROM matches) AS matches,
               (SELECT count(*) FROM matches WHERE verdict = 'valid') AS valid,
               (SELECT count(*) FROM matches WHERE verdict = 'invalid') AS invalid,
               (SELECT count(*) FROM matches WHERE verdict = 'unreadable') AS unreadable,
               (SELECT count(*) FROM matches WHERE result IS NULL) AS unfinished,
               (SELECT coalesce(sum(hands), 0) FROM matches) AS hands,
               (SELECT count(*) FROM findings) AS findings,
               (SELECT count(*) FROM findings WHERE severity = 'error') AS errors,
               (SELECT count(*) FROM players) AS players,
               (SELECT count(*) FROM log_files) AS log_files
        """,
    ) or {}
    invalid = dict_rows(
        cur,
        f"""SELECT {MATCH_COLS} FROM matches m WHERE m.verdict <> 'valid'
            ORDER BY m.started DESC NULLS LAST, m.match LIMIT 20""",
    )
    recent = dict_rows(
        cur,
        f"SELECT {MATCH_COLS} FROM matches m ORDER BY m.started DESC NULLS LAST, m.match LIMIT 20",
    )
    top_codes = dict_rows(
        cur,
        """SELECT code, severity, count(*) AS n FROM findings
           GROUP BY code, severity ORDER BY n DESC, code LIMIT 12""",
    )
    return {"counts": counts, "invalid": invalid, "recent": recent, "codes": top_codes}


# --- sorting ----------------------------------------------------------------------

#: What each list may be sorted by: the `sort` key, its SQL, and the order a
#: first click asks for (numbers and times start with the largest).
MATCH_SORTS: dict[str, tuple[str, str]] = {
    "match": ("m.match", "asc"),
    "table": ("m.table_id", "asc"),
    "profile": ("m.profile", "asc"),
    "verdict": ("m.verdict", "asc"),
    "findings": ("m.errors * 1000000 + m.warnings", "desc"),
    "hands": ("m.hands", "desc"),
    "result": ("m.result", "asc"),
    "started": ("m.started", "desc"),
}
FINDING_SORTS: dict[str, tuple[str, str]] = {
    "severity": ("f.severity", "asc"),
    "code": ("f.code", "asc"),
    "match": ("f.match", "asc"),
    "where": ("f.hand", "asc"),
    "message": ("f.message", "asc"),
}
PLAYER_SORTS: dict[str, tuple[str, str]] = {
    "player": ("coalesce(name, player)", "asc"),
    "id": ("player", "asc"),
    "matches": ("matches", "desc"),
    "first_seen": ("first_seen", "desc"),
    "last_seen": ("last_seen", "desc"),
}


def order_by(sorts: dict[str, tuple[str, str]], sort: str | None, order: str | None,
             default: str, tiebreak: str) -> str:
    """The ORDER BY of a list: `sort` (a key of `sorts`, else the list's
    `default` order) in `order` (asc/desc, else the column's first order),
    then `tiebreak` so that pages never overlap.

    >>> order_by(MATCH_SORTS, "hands", None, "m.match", "m.match")
    'm.hands DESC NULLS LAST, m.match'
    >>> order_by(MATCH_SORTS, None, "desc", "m.started DESC", "m.match")
    'm.started DESC, m.match'
    """
    if sort not in sorts:
        return f"{default}, {tiebreak}"
    expr, first = sorts[sort]
    way = (order or first).upper()
    return f"{expr} {'DESC' if way == 'DESC' else 'ASC'} NULLS LAST, {tiebreak}"


def sort_state(sorts: dict[str, tuple[str, str]], sort: str | None, order: str | None) -> dict[str, Any]:
    """The sort a list was given, as its JSON and its column headers show it
    (None: the list's own order)."""
    if sort not in sorts:
        return {"sort": None, "order": None, "first": {k: v[1] for k, v in sorts.items()}}
    return {"sort": sort, "order": order or sorts[sort][1], "first": {k: v[1] for k, v in sorts.items()}}


# --- matches list ---------------------------------------------------------------


def utc_day(day: dt.date) -> dt.datetime:
    """The first instant of a UTC day.

    >>> utc_day(dt.date(2026, 11, 4)).isoformat()
    '2026-11-04T00:00:00+00:00'
    """
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)


@dataclass(frozen=True, slots=True)
class MatchFilters:
    """Which matches a list, its hands or its moves hold (every given filter holds)."""

    player: str | None = None
    table: str | None = None
    profile: str | None = None
    verdict: str | None = None
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    match: str | None = None
    #: the matches rated in this pool ("*": every profile together, else a
    #: profile): with `player`, those that count in that player's own rating
    #: (a player page's "rated matches"), not those where they held a seat too briefly
    rated: str | None = None
    #: with `rated`: the rated matches won ("win"), tied ("tie") or lost ("loss")
    rated_outcome: str | None = None

    def where(self) -> tuple[str, list[Any]]:
        """The condition on `matches m` and its parameters."""
        where: list[str] = ["TRUE"]
        params: list[str | dt.date] = []
        if self.match:
            where.append("m.match = ?")
            params.append(self.match)
        if self.player:  # an exact id, else any part of a name or id (reports.search)
            ids, id_params = players_matching(self.player)
            where.append(f"m.match IN (SELECT match FROM seats WHERE player IN ({ids}))")
            params += id_params
        if self.rated:
            sql = "m.match IN (SELECT match FROM rating_history WHERE pool = ? AND partner IS NULL"
            params.append(self.rated)
            if self.rated_outcome:
                sql += " AND outcome = ?"
                params.append(self.rated_outcome)
            if self.player:
                ids, id_params = players_matching(self.player)
                sql += f" AND player IN ({ids})"
                params += id_params
            where.append(sql + ")")
        if self.table:
            where.append("m.table_id = ?")
            params.append(self.table)
        if self.profile:
            where.append("m.profile = ?")
            params.append(self.profile)
        if self.verdict:
            where.append("m.verdict = ?")
            params.append(self.verdict)
        # UTC days, as every time is shown: an aware bound binds as TIMESTAMPTZ,
        # whatever the zone of the server's process (a DATE would take it)
        if self.date_from:
            where.append("m.started >= ?")
            params.append(utc_day(self.date_from))
        if self.date_to and self.date_to < dt.date.max:
            # inclusive: the whole last day
            where.append("m.started < ?")
            params.append(utc_day(self.date_to + dt.timedelta(days=1)))
        return " AND ".join(where), params

    def params(self) -> dict[str, str]:
        """The filters given, as query parameters."""
        return {k: str(v) for k, v in (
            ("player", self.player), ("table", self.table), ("profile", self.profile),
            ("verdict", self.verdict), ("date_from", self.date_from), ("date_to", self.date_to),
            ("match", self.match), ("rated", self.rated), ("rated_outcome", self.rated_outcome)) if v not in (None, "")}


def matches_sql(filters: MatchFilters, sort: str | None = None, order: str | None = None) -> tuple[str, list[Any]]:
    """The rows of the matches list, every page (the JSON pages it, the downloads don't).
    With a `player` filter, each row also says how that player did (`_SEEN_BY`)."""
    cond, params = filters.where()
    by = order_by(MATCH_SORTS, sort, order, "(m.verdict = 'valid'), m.started DESC NULLS LAST", "m.match")
    if not filters.player:
        return f"SELECT {MATCH_COLS} FROM matches m WHERE {cond} ORDER BY {by}", params
    ids, id_params = players_matching(filters.player)
    # the seat of the last hand the player held; a match of no hand held
    # (unreadable, or cancelled before a deal) has the seat sat in
    sql = f"""SELECT {MATCH_COLS}, {_SEEN_BY} FROM matches m
              LEFT JOIN (SELECT h.*, row_number() OVER (PARTITION BY h.match ORDER BY h.hand DESC, h.seat) AS k
                         FROM player_held h WHERE h.of_player IN ({ids})) s ON s.match = m.match AND s.k = 1
              LEFT JOIN (SELECT match, arg_min(player, seat) AS player, min(seat) AS seat FROM seats
                         WHERE player IN ({ids}) GROUP BY match) sat ON sat.match = m.match
              LEFT JOIN players p ON p.player = coalesce(s.of_player, sat.player)
              WHERE {cond} ORDER BY {by}"""
    return sql, id_params + id_params + params


#: How the player a `player` filter names did in a match: `player` and
#: `player_name` (the first seat that player held, when the filter names
#: several), `seat`, `outcome` (`won`, `lost`, or the match's result when no
#: side won: `abandoned`; null while it is on) and `partner`, `partner_name`
#: (null in a game of no pairs), all seen from the last hand the player held,
#: as the player's report counts matches won.
_SEEN_BY = """coalesce(s.of_player, sat.player) AS player, p.name AS player_name, coalesce(s.seat, sat.seat) AS seat,
    CASE WHEN s.match_result = 'win'
         THEN CASE WHEN s.match_winner = CASE WHEN s.teams = 'pairs' THEN s.seat % 2 ELSE s.seat END
                   THEN 'won' ELSE 'lost' END
         ELSE s.match_result END AS outcome,
    s.partner, s.partner_name"""


def list_matches(
    cur: Cursor,
    *,
    player: str | None = None,
    table: str | None = None,
    profile: str | None = None,
    verdict: str | None = None,
    date_from: dt.date | None = None,
    date_to: dt.date | None = None,
    page: int = 1,
    per_page: int = 50,
    sort: str | None = None,
    order: str | None = None,
    rated: str | None = None,
    rated_outcome: str | None = None,
) -> dict[str, Any]:
    filters = MatchFilters(player, table, profile, verdict, date_from, date_to, rated=rated,
                           rated_outcome=rated_outcome)
    cond, params = filters.where()
    n = int_scalar(cur, f"SELECT count(*) FROM matches m WHERE {cond}", params)
    sql, params = matches_sql(filters, sort, order)
    rows = dict_rows(cur, sql + " LIMIT ? OFFSET ?", params + [per_page, (page - 1) * per_page])
    pages = max(1, math.ceil(n / per_page))
    return {"total": n, "page": page, "pages": pages, "per_page": per_page,
            **_sorted(MATCH_SORTS, sort, order), "matches": rows}


def _sorted(sorts: dict[str, tuple[str, str]], sort: str | None, order: str | None) -> dict[str, Any]:
    st = sort_state(sorts, sort, order)
    return {"sort": st["sort"], "order": st["order"]}


def filter_choices(cur: Cursor) -> dict[str, list[str]]:
    profiles = [r[0] for r in cur.execute(
        "SELECT DISTINCT profile FROM matches WHERE profile IS NOT NULL ORDER BY 1").fetchall()]
    return {"profiles": profiles, "verdicts": ["valid", "invalid", "unreadable"]}


def player_version(cur: Cursor, player: str) -> tuple[int, int] | None:
    """A digest of the player's matches and the batches that stored them."""
    rows = cur.execute(
        """SELECT count(*), coalesce(bit_xor(hash(match || '/' || batch)), 0)
           FROM (SELECT DISTINCT match, batch FROM player_seats WHERE of_player = ?)""",
        [player],
    ).fetchall()
    if not rows or not rows[0][0]:
        return None
    return int(rows[0][0]), int(rows[0][1])


# --- findings ----------------------------------------------------------------------------


def _findings_where(code: str | None, severity: str | None, match: str | None) -> tuple[str, list[Any]]:
    where, params = ["TRUE"], []
    if code:
        where.append("f.code = ?")
        params.append(code)
    if severity:
        where.append("f.severity = ?")
        params.append(severity)
    if match:
        where.append("f.match = ?")
        params.append(match)
    return " AND ".join(where), params


def findings_sql(code: str | None = None, severity: str | None = None, match: str | None = None,
                 sort: str | None = None, order: str | None = None, page: tuple[int, int] | None = None
                 ) -> tuple[str, list[Any]]:
    """The rows of the findings list, every page (or one: `page` is (limit,
    offset)). A message of a hand still on is withheld here (it may name a
    hidden tile), for the JSON and the downloads alike. The rows are chosen
    and ordered first, the ply of each (a look into the moves) is worked out
    for those only: a page costs the same with a hundred findings or millions."""
    cond, params = _findings_where(code, severity, match)
    by = order_by(FINDING_SORTS, sort, order,
                  "(f.severity = 'error') DESC, f.match NULLS FIRST, f.hand NULLS FIRST",
                  "f.match NULLS FIRST, f.hand NULLS FIRST, f.seq, f.code, f.file, f.line")
    cut = ""
    if page is not None:
        cut = "LIMIT ? OFFSET ?"
        params = [*params, *page]
    sql = f"""WITH f AS (
                SELECT f.match, f.hand, f.seq, f.code, f.severity,
                       CASE WHEN h.match IS NOT NULL AND h.result IS NULL THEN '{WITHHELD}'
                            ELSE {shown_message("f.message", "f.file")} END AS message,
                       {shown_file("f.file")} AS file, f.line, f.k
                FROM (SELECT f.*, row_number() OVER (ORDER BY {by}) AS k FROM findings f
                      WHERE {cond} ORDER BY k {cut}) f
                LEFT JOIN hands h ON h.match = f.match AND h.hand = f.hand
            )
            SELECT f.match, f.hand, f.seq,
                   coalesce((SELECT max(mv.ply) FROM moves mv
                     WHERE mv.match = f.match AND mv.hand = f.hand AND mv.seq <= f.seq), 0) AS ply,
                   f.code, f.severity, f.message, f.file, f.line
            FROM f ORDER BY f.k"""
    return sql, params


def list_findings(
    cur: Cursor,
    *,
    code: str | None = None,
    severity: str | None = None,
    match: str | None = None,
    page: int = 1,
    per_page: int = 100,
    sort: str | None = None,
    order: str | None = None,
) -> dict[str, Any]:
    cond, cond_params = _findings_where(code, severity, match)
    n = int_scalar(cur, f"SELECT count(*) FROM findings f WHERE {cond}", cond_params)
    sql, params = findings_sql(code, severity, match, sort, order, page=(per_page, (page - 1) * per_page))
    rows = dict_rows(cur, sql, params)
    codes = dict_rows(
        cur, "SELECT code, severity, count(*) AS n FROM findings GROUP BY ALL ORDER BY code"
    )
    return {
        "total": n,
        "page": page,
        "pages": max(1, math.ceil(n / per_page)),
        "per_page": per_page,
        **_sorted(FINDING_SORTS, sort, order),
        "findings": rows,
        "codes": codes,
    }


# --- players ------------------------------------------------------------------------------


def players_sql(q: str | None = None, sort: str | None = None, order: str | None = None) -> tuple[str, list[Any]]:
    """The rows of the players list, every page."""
    where, params = _players_where(q)
    by = order_by(PLAYER_SORTS, sort, order, "matches DESC", "player")
    sql = f"""SELECT player, name, bot, matches, {ts_utc("first_seen")} AS first_seen,
                     {ts_utc("last_seen")} AS last_seen
              FROM players WHERE {where} ORDER BY {by}"""
    return sql, params


def _players_where(q: str | None) -> tuple[str, list[Any]]:
    if q:
        # case, accents, compatibility forms and invisible characters aside:
        # "jose" finds "José", "JOSÉ" and "Jose\u0301"
        like = contains(q)
        return (f"({folded_sql('player')} LIKE ? ESCAPE '\\' OR {folded_sql('name')} LIKE ? ESCAPE '\\')",
                [like, like])
    return "TRUE", []


def list_players(cur: Cursor, *, q: str | None = None, page: int = 1, per_page: int = 100,
                 sort: str | None = None, order: str | None = None) -> dict[str, Any]:
    where, params = _players_where(q)
    n = int_scalar(cur, f"SELECT count(*) FROM players WHERE {where}", params)
    sql, params = players_sql(q, sort, order)
    rows = dict_rows(cur, sql + " LIMIT ? OFFSET ?", params + [per_page, (page - 1) * per_page])
    return {"total": n, "page": page, "pages": max(1, math.ceil(n / per_page)), "per_page": per_page,
            **_sorted(PLAYER_SORTS, sort, order), "players": rows}


# --- hands and moves of matches (lists of their own, for the downloads) -------------

#: Tile names by id, for SQL (`_NAMES[t + 1]`): "65" for 6-5.
_NAMES = "[" + ",".join(f"'{tile_name(t)}'" for t in range(28)) + "]"
_MOVE_NAME = (f"CASE WHEN c >= 0 THEN {_NAMES}[c // 2 + 1] || CASE WHEN c % 2 = 0 THEN ':left' ELSE ':right' END "
              "WHEN c = -1 THEN 'PASS' WHEN c = -2 THEN 'DRAW' WHEN c = -3 THEN 'YIELD' ELSE '?' END")


def _iso(col: str) -> str:
    # the downloads' times to the millisecond, in UTC
    return f"strftime(timezone('UTC', {col}), '%Y-%m-%dT%H:%M:%S.%gZ')"


def hands_sql(filters: MatchFilters) -> tuple[str, list[Any]]:
    """Every hand of the matches `filters` selects, in match and hand order.
    The deal and the boneyard of a hand still on stay hidden (NULL)."""
    cond, params = filters.where()
    on = "h.result IS NOT NULL"
    sql = f"""SELECT h.match, h.hand, {_iso("h.started")} AS started, {_iso("h.ended")} AS ended,
                     h.result, h.winner, h.points, h.score, h.notes,
                     h.claimed_result, h.claimed_winner, h.claimed_points, h.claimed_score, h.claimed_notes,
                     h.leader, h.opener, h.blocker, h.plies, h.seed_ok, h.deal_ok, h.play_ok,
                     CASE WHEN {on} THEN list_transform(h.dealt, lambda s: list_transform(s, lambda t: {_NAMES}[t + 1]))
                          END AS dealt,
                     CASE WHEN {on} THEN list_transform(h.stock, lambda t: {_NAMES}[t + 1]) END AS boneyard,
                     CASE WHEN {on} THEN h.pips END AS pips_left
              FROM hands h JOIN matches m ON m.match = h.match
              WHERE {cond}
              ORDER BY h.match, h.hand"""
    return sql, params


#: A move's grade (replay.analysis), as the match page's costliest moves give it:
#: on what the mover could know where the hand is sampled, else under perfect
#: information (`graded` says which); points from the mover's side, the best
#: move named as `legal_moves` names moves. NULL for a move of no analysed hand
#: (analysis rows exist for finished hands only: nothing hidden leaks).
_BEST = ("CASE WHEN a.pimc_loss IS NULL THEN list_filter(a.alternatives, lambda x: x.dd = a.dd_best)[1].move "
         "ELSE list_filter(a.alternatives, lambda x: x.pimc = a.pimc_best)[1].move END")
_GRADE = f"""round(coalesce(a.pimc, a.dd), 2) AS value,
             CASE WHEN ({_BEST}) LIKE '% %' THEN replace({_BEST}, ' ', ':') ELSE upper({_BEST}) END AS best,
             round(coalesce(a.pimc_loss, a.dd_loss), 2) AS lost, a.class AS class,
             CASE WHEN a.match IS NULL THEN NULL WHEN a.pimc_loss IS NULL THEN 'perfect information'
                  ELSE 'could know' END AS graded"""


def moves_sql(filters: MatchFilters, hand: int | None = None) -> tuple[str, list[Any]]:
    """Every move of the matches `filters` selects (of one hand with `hand`),
    in match, hand and ply order. While a hand is on, what its moves reveal of
    the hands stays hidden: a drawn tile, the legal moves, the pips left."""
    cond, params = filters.where()
    if hand is not None:
        cond += " AND mv.hand = ?"
        params = params + [hand]
    on = "h.result IS NOT NULL"
    sql = f"""SELECT mv.match, mv.hand, mv.ply, mv.seq, {_iso("mv.ts")} AS ts, mv.seat, mv.kind,
                     CASE WHEN mv.kind = 'play' OR {on} THEN {_NAMES}[mv.tile + 1] END AS tile,
                     mv.on_end AS "end",
                     CASE WHEN mv.left_end >= 0 THEN mv.left_end END AS left_end,
                     CASE WHEN mv.right_end >= 0 THEN mv.right_end END AS right_end,
                     mv.stock,
                     CASE WHEN {on} THEN mv.legal END AS legal,
                     CASE WHEN {on} THEN mv.forced END AS forced,
                     CASE WHEN {on} THEN list_transform(mv.legal_moves, lambda c: {_MOVE_NAME}) END AS legal_moves,
                     CASE WHEN {on} THEN mv.pips END AS pips_left,
                     mv.error,
                     {_GRADE}
              FROM moves mv JOIN matches m ON m.match = mv.match
                   LEFT JOIN hands h ON h.match = mv.match AND h.hand = mv.hand
                   LEFT JOIN move_analysis a ON a.match = mv.match AND a.hand = mv.hand AND a.ply = mv.ply
              WHERE {cond}
              ORDER BY mv.match, mv.hand, mv.ply"""
    return sql, params


def list_hands(cur: Cursor, filters: MatchFilters, *, page: int = 1, per_page: int = 100) -> dict[str, Any]:
    cond, params = filters.where()
    n = int_scalar(cur, f"SELECT count(*) FROM hands h JOIN matches m ON m.match = h.match WHERE {cond}", params)
    sql, params = hands_sql(filters)
    rows = dict_rows(cur, sql + " LIMIT ? OFFSET ?", params + [per_page, (page - 1) * per_page])
    return {"total": n, "page": page, "pages": max(1, math.ceil(n / per_page)), "per_page": per_page,
            "hands": rows}


def list_moves(cur: Cursor, filters: MatchFilters, *, hand: int | None = None, page: int = 1,
               per_page: int = 500) -> dict[str, Any]:
    cond, params = filters.where()
    if hand is not None:
        cond += " AND mv.hand = ?"
        params = params + [hand]
    n = int_scalar(cur, f"SELECT count(*) FROM moves mv JOIN matches m ON m.match = mv.match WHERE {cond}", params)
    sql, params = moves_sql(filters, hand)
    rows = dict_rows(cur, sql + " LIMIT ? OFFSET ?", params + [per_page, (page - 1) * per_page])
    return {"total": n, "page": page, "pages": max(1, math.ceil(n / per_page)), "per_page": per_page,
            "moves": rows}


def matches_by_id(cur: Cursor, ids: list[str]) -> list[dict[str, Any]]:
    """The listed matches (e.g. those of an upload), in the given order."""
    if not ids:
        return []
    rows = dict_rows(cur, f"SELECT {MATCH_COLS} FROM matches m WHERE m.match IN (SELECT unnest(?))", [ids])
    order = {mid: i for i, mid in enumerate(ids)}
    return sorted(rows, key=lambda r: order.get(r["match"], len(order)))


def file_counts(cur: Cursor, sha256: str) -> dict[str, Any]:
    """What the store holds of one log file (by its sha256): its lines and bad
    lines, its matches and their findings, and the problems of its lines of
    no match (the first 20). The same whether it was stored now or before."""
    lines = cur.execute("SELECT lines, bad_lines FROM log_files WHERE sha256 = ?", [sha256]).fetchall()
    ids = [r[0] for r in cur.execute(
        "SELECT match FROM match_files WHERE sha256 = ? ORDER BY match", [sha256]).fetchall()]
    found = cur.execute(
        "SELECT count(*), count(*) FILTER (WHERE severity = 'error') FROM findings "
        "WHERE list_contains(?, match) OR (match IS NULL AND sha256 = ?)", [ids, sha256]).fetchall()
    problems = dict_rows(cur,
        f"SELECT line, code, {shown_message('message', 'file')} AS message, {shown_file('file')} AS file "
        "FROM findings WHERE match IS NULL AND sha256 = ? "
        "ORDER BY line LIMIT 20", [sha256])
    for p in problems:  # ingest words a line of no match "FILE: line N: ..."
        p["message"] = p["message"].removeprefix(f"{p.pop('file')}: ")
    n_lines, n_bad = lines[0] if lines else (0, 0)
    return {
        "ids": ids,
        "counts": {"lines": n_lines, "bad_lines": n_bad, "matches": len(ids),
                   "findings": found[0][0], "errors": found[0][1]},
        "problems": problems,
    }  # fmt: skip


#: Groups of look-alike players a page lists at most.
LOOKALIKE_GROUPS = 20


def lookalike_players(cur: Cursor) -> list[dict[str, object]]:
    """Distinct players whose names are one after `api.names.fold` (the
    fairness and suspicious pages warn of them), largest groups first."""
    rows = cur.execute("SELECT player, name FROM players").fetchall()
    return same_names(rows)[:LOOKALIKE_GROUPS]
