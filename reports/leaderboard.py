"""Reads of the ratings (reports.ratings, migration 013) for the pages and
their JSON twins: the leaderboard, a player's ratings and rating history.

Every function takes a cursor and returns JSON-ready values; times are
UTC strings. Nothing here writes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final, Literal, get_args

import duckdb
import orjson
import pyarrow as pa

from reports.ratings import ALL, Z
from reports.search import fold, folded_sql

Cursor = duckdb.DuckDBPyConnection
Kind = Literal["players", "pairs"]
Order = Literal["asc", "desc"]

UTC_TS: Final = "%Y-%m-%dT%H:%M:%SZ"

SortKey = Literal["rating", "mu", "sigma", "matches", "wins", "win_rate", "hands", "points_per_hand",
                  "points_against_per_hand", "last_played", "player"]

#: The leaderboard's sort keys and what they sort by (its columns; the
#: underscored ones unrounded).
SORTS: Final[dict[str, str]] = {
    "rating": "_r",
    "mu": "_mu",
    "sigma": "_sigma",
    "matches": "matches",
    "wins": "wins",
    "win_rate": "wins / matches",
    "hands": "hands",
    "points_per_hand": "_pf / nullif(hands, 0)",
    "points_against_per_hand": "_pa / nullif(hands, 0)",
    "last_played": "last_played",
    "player": "coalesce(name, player)",
}
assert set(SORTS) == set(get_args(SortKey))


def _ts(col: str) -> str:
    return f"strftime(timezone('UTC', {col}), '{UTC_TS}')"


def dict_rows(cur: Cursor, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[dict[str, Any]]:
    res = cur.execute(sql, params if isinstance(params, dict) else list(params))
    cols = [d[0] for d in res.description or ()]
    return [dict(zip(cols, r, strict=True)) for r in res.fetchall()]


def has_ratings(cur: Cursor) -> bool:
    """Whether the store has the ratings tables (a store older than 013 opened read-only has not)."""
    rows = cur.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'ratings'").fetchall()
    return bool(rows and rows[0][0])


def pools(cur: Cursor) -> list[str]:
    """The pools rated: `*` first, then the profiles."""
    if not has_ratings(cur):
        return [ALL]
    got = [r[0] for r in cur.execute("SELECT DISTINCT pool FROM ratings ORDER BY pool").fetchall()]
    return [ALL] + [p for p in got if p != ALL]


#: A standing's columns as the pages show them (`r` is `ratings`).
_STANDING = f"""
    r.pool, r.player, pn.name, r.partner, qn.name AS partner_name, r.bot,
    round(r.rating, 2) AS rating, round(r.mu, 3) AS mu, round(r.sigma, 3) AS sigma,
    r.matches, r.wins, r.ties, r.losses, round(r.wins / r.matches, 3) AS win_rate, r.hands,
    round(r.points_for / nullif(r.hands, 0), 2) AS points_per_hand,
    round(r.points_against / nullif(r.hands, 0), 2) AS points_against_per_hand,
    {_ts("r.first_played")} AS first_played, {_ts("r.last_played")} AS last_played
"""

_NAMES = """
LEFT JOIN players pn ON pn.player = r.player
LEFT JOIN players qn ON qn.player = r.partner
"""


def leaderboard(
    cur: Cursor, *, kind: Kind = "players", pool: str = ALL, sort: str = "rating", order: Order = "desc",
    bots: bool = False, min_matches: int = 0, q: str | None = None, page: int = 1, per_page: int | None = 50,
) -> dict[str, Any]:
    """The players (or pairs) of a pool by rating.

    `place` is the place by rating among the rows the filters keep (bots
    hidden unless `bots`; at least `min_matches` rated matches; `q` in an
    id or name); the rows are then sorted by `sort` (a key of `SORTS`) and
    paged (`per_page` None: every row).
    """
    if sort not in SORTS:
        raise ValueError(f"sort by one of {', '.join(SORTS)}, not {sort!r}")
    out: dict[str, Any] = {"kind": kind, "pool": pool, "sort": sort, "order": order, "bots": bots,
                           "min_matches": min_matches, "q": q, "page": page, "total": 0, "pages": 1,
                           "rows": []}
    if not has_ratings(cur):
        return out
    where = ["r.pool = ?", "r.partner IS NULL" if kind == "players" else "r.partner IS NOT NULL",
             "r.matches >= ?"]
    params: list[Any] = [pool, min_matches]
    if not bots:
        where.append("NOT r.bot")
    if q:
        cols = ("r.player", "pn.name", "r.partner", "qn.name")  # case, accents and invisibles aside
        where.append("(" + " OR ".join(f"{folded_sql(c)} LIKE ?" for c in cols) + ")")
        params += [f"%{fold(q)}%"] * 4
    direction = "DESC" if order == "desc" else "ASC"
    key = SORTS[sort]
    sql = f"""
        WITH t AS (
            SELECT {_STANDING}, r.rating AS _r, r.mu AS _mu, r.sigma AS _sigma, r.points_for AS _pf,
                   r.points_against AS _pa, rank() OVER (ORDER BY r.rating DESC) AS place
            FROM ratings r {_NAMES} WHERE {" AND ".join(where)}
        )
        SELECT * EXCLUDE (_r, _mu, _sigma, _pf, _pa), count(*) OVER () AS _total FROM t
        ORDER BY {key} {direction} NULLS LAST, _r DESC, player, partner NULLS FIRST
    """
    if per_page is not None:
        sql += " LIMIT ? OFFSET ?"
        params += [per_page, (page - 1) * per_page]
    rows = dict_rows(cur, sql, params)
    total = rows[0]["_total"] if rows else _count(cur, where, params, per_page is not None)
    for r in rows:
        del r["_total"]
    out.update(total=total, pages=max(1, math.ceil(total / per_page)) if per_page else 1, rows=rows)
    return out


def _count(cur: Cursor, where: list[str], params: list[Any], paged: bool) -> int:
    """Rows the filters keep (a page past the last has none to count them)."""
    if paged:
        params = params[:-2]
    got = cur.execute(f"SELECT count(*) FROM ratings r {_NAMES} WHERE {' AND '.join(where)}", params).fetchall()
    return int(got[0][0]) if got else 0


def history(cur: Cursor, player: str, partner: str | None = None, pool: str = ALL,
            most: int | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """The rating of a player (or of the pair `player`, `partner`) after
    each rated match of `pool`, in rating order: the place the side took,
    the rating before and after (`rating` = mu - 3 sigma). `most`: at most
    about that many rows, the first, the last and every k-th between (a
    chart's points: a player of 3,000 matches costs a tenth)."""
    if not has_ratings(cur):
        return []
    if partner is not None:
        player, partner = sorted((player, partner))
    every = ""
    if most is not None:
        n = dict_rows(cur, "SELECT count(*) AS n FROM rating_history WHERE player = ? AND partner IS NOT DISTINCT FROM ? "
                       "AND pool = ?", [player, partner, pool])[0]["n"]  # fmt: skip
        step = max(1, -(-n // max(most, 1)))
        if step > 1:
            every = (f"QUALIFY (row_number() OVER (ORDER BY h.pos) - 1) % {step} = 0 "
                     f"OR row_number() OVER (ORDER BY h.pos) = {n}")  # fmt: skip
    rows = dict_rows(
        cur,
        f"""SELECT h.pos, h.match, {_ts("h.ended")} AS ended, h.side, h.place, h.outcome, h.bot,
                   round(h.mu_before - {Z} * h.sigma_before, 3) AS rating_before,
                   round(h.mu - {Z} * h.sigma, 3) AS rating, round(h.mu, 3) AS mu, round(h.sigma, 3) AS sigma,
                   h.hands, h.points_for, h.points_against
            FROM rating_history h
            WHERE h.player = ? AND h.partner IS NOT DISTINCT FROM ? AND h.pool = ?
            {every}
            ORDER BY h.pos""",
        [player, partner, pool],
    )
    # the matches' profiles and sides looked up by position: a join read the
    # whole of rating_matches (45 ms at 1M hands), this its rows only
    got = {r["pos"]: r for r in dict_rows(
        cur, "SELECT pos, profile, len(places) AS sides FROM rating_matches WHERE pos IN (SELECT unnest(?))",
        [[r["pos"] for r in rows]])}  # fmt: skip
    keys = ("pos", "match", "ended", "profile", "side", "place", "outcome", "sides", "bot", "rating_before",
            "rating", "mu", "sigma", "hands", "points_for", "points_against")  # the columns, in order
    out = []
    for r in rows:
        m = got.get(r["pos"], {})
        out.append({k: m.get(k) if k in ("profile", "sides") else r[k] for k in keys})
    return out


def standings(cur: Cursor, player: str, partner: str | None = None) -> list[dict[str, Any]]:
    """The entity's rating in every pool it has one, `*` first, with its
    place among the non-bot entities of its kind in that pool (among all,
    for a bot) and how many they are."""
    if not has_ratings(cur):
        return []
    if partner is not None:
        player, partner = sorted((player, partner))
    # one pass over the pools it is in (a correlated count per row took 13 ms at 1M hands)
    return dict_rows(
        cur,
        f"""WITH me AS (SELECT * FROM ratings WHERE player = $p AND partner IS NOT DISTINCT FROM $q),
            counts AS (
                SELECT me.pool, count(*) FILTER (WHERE o.rating > me.rating) + 1 AS place, count(*) AS "of"
                FROM me JOIN ratings o ON o.pool = me.pool AND (o.partner IS NULL) = (me.partner IS NULL)
                     AND (me.bot OR NOT o.bot)
                GROUP BY me.pool
            )
            SELECT {_STANDING}, c.place, c.of
            FROM me r JOIN counts c USING (pool) {_NAMES}
            ORDER BY r.pool <> '{ALL}', r.pool""",
        {"p": player, "q": partner},
    )


#: Points of a player's rating history the player page (and its JSON twin) carries, about.
HISTORY_POINTS: Final = 400


def player_ratings(cur: Cursor, player: str) -> dict[str, Any]:
    """What the player page shows of the ratings: the player's standings in
    every pool, their rating history in pool `*` (about HISTORY_POINTS rows
    of its `history_matches`, the chart's: a match's `profile` and `sides` are
    left out; all of them at /api/ratings/history), and the ratings (pool `*`)
    of the pairs they were part of. Two queries: the page is read often, and a
    query costs 1 to 4 ms at 1M hands whatever it reads."""
    if not has_ratings(cur):
        return {"standings": [], "history": [], "history_matches": 0, "pairs": []}
    if _has_pages(cur):
        got = cur.execute("SELECT page FROM rating_pages WHERE player = ?", [player]).fetchall()
        if got:
            return dict(orjson.loads(got[0][0]))
    rows = dict_rows(cur, _PLAYER_RATINGS, {"p": player, "all": ALL})
    standing = [{k: v for k, v in r.items() if k != "kind"} for r in rows if r["kind"] == 0]
    pairs = [{k: v for k, v in r.items() if k not in ("kind", "place", "of")} for r in rows if r["kind"] == 1]
    for p in pairs:  # the partner as seen from this player
        if p["player"] != player:
            p["player"], p["partner"] = p["partner"], p["player"]
            p["name"], p["partner_name"] = p["partner_name"], p["name"]
    hist = dict_rows(cur, _CHART, {"p": player, "all": ALL, "most": HISTORY_POINTS})
    n = hist[0]["n"] if hist else 0
    for h in hist:
        del h["n"]
    return {"standings": standing, "history": hist, "history_matches": n, "pairs": pairs}


# The player's standings (kind 0: every pool, with its place) and its pairs' (kind 1: pool `*`).
_PLAYER_RATINGS = f"""
WITH me AS (
    SELECT *, CASE WHEN partner IS NULL THEN 0 ELSE 1 END AS kind FROM ratings
    WHERE (player = $p AND partner IS NULL) OR (pool = $all AND partner IS NOT NULL AND (player = $p OR partner = $p))
), counts AS (
    SELECT me.pool, count(*) FILTER (WHERE o.rating > me.rating) + 1 AS place, count(*) AS "of"
    FROM me JOIN ratings o ON o.pool = me.pool AND o.partner IS NULL AND (me.bot OR NOT o.bot)
    WHERE me.kind = 0 GROUP BY me.pool
)
SELECT r.kind, {_STANDING}, c.place, c.of
FROM me r LEFT JOIN counts c ON r.kind = 0 AND c.pool = r.pool {_NAMES}
ORDER BY r.kind, CASE WHEN r.kind = 0 THEN r.pool <> $all END, CASE WHEN r.kind = 0 THEN r.pool END,
         r.matches DESC, r.rating DESC, r.player, r.partner
"""

# The rating history in pool `*`, about `most` rows: the first, every k-th, the last.
_CHART = f"""
SELECT pos, match, {_ts("ended")} AS ended, side, place, outcome, bot,
       round(mu_before - {Z} * sigma_before, 3) AS rating_before, round(mu - {Z} * sigma, 3) AS rating,
       round(mu, 3) AS mu, round(sigma, 3) AS sigma, hands, points_for, points_against, n
FROM (SELECT *, row_number() OVER (ORDER BY pos) AS k, count(*) OVER () AS n FROM rating_history
      WHERE player = $p AND partner IS NULL AND pool = $all)
WHERE (k - 1) % ceil(n / $most) = 0 OR k = n
ORDER BY pos
"""


def _has_pages(cur: Cursor) -> bool:
    rows = cur.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'rating_pages'").fetchall()
    return bool(rows and rows[0][0])


# Every player's standings (a place among the non-bots of the pool, among all for a bot) ...
_ALL_STANDINGS = f"""
SELECT {_STANDING},
       CASE WHEN r.bot THEN rank() OVER (PARTITION BY r.pool ORDER BY r.rating DESC)
            ELSE rank() OVER (PARTITION BY r.pool, r.bot ORDER BY r.rating DESC) END AS place,
       CASE WHEN r.bot THEN count(*) OVER (PARTITION BY r.pool)
            ELSE count(*) OVER (PARTITION BY r.pool, r.bot) END AS "of"
FROM ratings r {_NAMES} WHERE r.partner IS NULL
"""
# ... the pairs' ratings in pool `*` ...
_ALL_PAIRS = f"""
SELECT {_STANDING} FROM ratings r {_NAMES} WHERE r.pool = '{ALL}' AND r.partner IS NOT NULL
ORDER BY r.matches DESC, r.rating DESC, r.player, r.partner
"""
# ... and the chart's points of every player's history in pool `*`
_ALL_CHARTS = f"""
SELECT player AS of_player, pos, match, {_ts("ended")} AS ended, side, place, outcome, bot,
       round(mu_before - {Z} * sigma_before, 3) AS rating_before, round(mu - {Z} * sigma, 3) AS rating,
       round(mu, 3) AS mu, round(sigma, 3) AS sigma, hands, points_for, points_against, n
FROM (SELECT *, row_number() OVER w AS k, count(*) OVER (PARTITION BY player) AS n FROM rating_history
      WHERE partner IS NULL AND pool = '{ALL}' WINDOW w AS (PARTITION BY player ORDER BY pos))
WHERE (k - 1) % ceil(n / {HISTORY_POINTS}) = 0 OR k = n
ORDER BY player, pos
"""


def keep_rating_pages(conn: Cursor) -> int:
    """rating_pages (migration 014): every rated player's section of the player
    page, as player_ratings gives it, worked out for all at once (a place is
    among everyone, so one match rated moves everyone's). The pages kept."""
    if not _has_pages(conn):
        return 0
    pages: dict[str, dict[str, Any]] = {}

    def page(p: str) -> dict[str, Any]:
        return pages.setdefault(p, {"standings": [], "history": [], "history_matches": 0, "pairs": []})

    pool_order = sorted(dict_rows(conn, _ALL_STANDINGS), key=lambda r: (r["player"], r["pool"] != ALL, r["pool"]))
    for r in pool_order:
        page(r["player"])["standings"].append(r)
    for r in dict_rows(conn, _ALL_PAIRS):
        for me in (r["player"], r["partner"]):
            mine = dict(r)
            if me != r["player"]:  # the partner as seen from this player
                mine["player"], mine["partner"] = r["partner"], r["player"]
                mine["name"], mine["partner_name"] = r["partner_name"], r["name"]
            page(me)["pairs"].append(mine)
    for r in dict_rows(conn, _ALL_CHARTS):
        mine = page(r.pop("of_player"))
        mine["history_matches"] = r.pop("n")
        mine["history"].append(r)
    conn.execute("DELETE FROM rating_pages")
    if pages:
        players = sorted(pages)
        conn.register("_pages", pa.table({"player": players,
                                          "page": [orjson.dumps(pages[p]).decode() for p in players]}))
        try:
            conn.execute("INSERT INTO rating_pages SELECT player, page FROM _pages")
        finally:
            conn.unregister("_pages")
    return len(pages)
