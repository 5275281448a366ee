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

from reports.ratings import ALL, Z

Cursor = duckdb.DuckDBPyConnection
Kind = Literal["players", "pairs"]
Order = Literal["asc", "desc"]

_TS: Final = "%Y-%m-%dT%H:%M:%SZ"

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
    return f"strftime(timezone('UTC', {col}), '{_TS}')"


def _rows(cur: Cursor, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    res = cur.execute(sql, list(params))
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
        where.append("(r.player ILIKE ? OR pn.name ILIKE ? OR r.partner ILIKE ? OR qn.name ILIKE ?)")
        params += [f"%{q}%"] * 4
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
    rows = _rows(cur, sql, params)
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


def history(cur: Cursor, player: str, partner: str | None = None, pool: str = ALL) -> list[dict[str, Any]]:
    """The rating of a player (or of the pair `player`, `partner`) after
    each rated match of `pool`, in rating order: the place the side took,
    the rating before and after (`rating` = mu - 3 sigma)."""
    if not has_ratings(cur):
        return []
    if partner is not None:
        player, partner = sorted((player, partner))
    return _rows(
        cur,
        f"""SELECT h.pos, h.match, {_ts("h.ended")} AS ended, m.profile, h.side, h.place, h.outcome,
                   len(m.places) AS sides, h.bot,
                   round(h.mu_before - {Z} * h.sigma_before, 3) AS rating_before,
                   round(h.mu - {Z} * h.sigma, 3) AS rating, round(h.mu, 3) AS mu, round(h.sigma, 3) AS sigma,
                   h.hands, h.points_for, h.points_against
            FROM rating_history h JOIN rating_matches m ON m.pos = h.pos
            WHERE h.player = ? AND h.partner IS NOT DISTINCT FROM ? AND h.pool = ?
            ORDER BY h.pos""",
        [player, partner, pool],
    )


def standings(cur: Cursor, player: str, partner: str | None = None) -> list[dict[str, Any]]:
    """The entity's rating in every pool it has one, `*` first, with its
    place among the non-bot entities of its kind in that pool (among all,
    for a bot) and how many they are."""
    if not has_ratings(cur):
        return []
    if partner is not None:
        player, partner = sorted((player, partner))
    return _rows(
        cur,
        f"""SELECT {_STANDING},
                   (SELECT count(*) + 1 FROM ratings o WHERE o.pool = r.pool
                      AND (o.partner IS NULL) = (r.partner IS NULL) AND (r.bot OR NOT o.bot)
                      AND o.rating > r.rating) AS place,
                   (SELECT count(*) FROM ratings o WHERE o.pool = r.pool
                      AND (o.partner IS NULL) = (r.partner IS NULL) AND (r.bot OR NOT o.bot)) AS of
            FROM ratings r {_NAMES}
            WHERE r.player = ? AND r.partner IS NOT DISTINCT FROM ?
            ORDER BY r.pool <> '{ALL}', r.pool""",
        [player, partner],
    )


def player_ratings(cur: Cursor, player: str) -> dict[str, Any]:
    """What the player page shows of the ratings: the player's standings in
    every pool, their rating history in pool `*`, and the ratings (pool `*`)
    of the pairs they were part of."""
    if not has_ratings(cur):
        return {"standings": [], "history": [], "pairs": []}
    pairs = _rows(
        cur,
        f"""SELECT {_STANDING} FROM ratings r {_NAMES}
            WHERE r.pool = ? AND r.partner IS NOT NULL AND (r.player = ? OR r.partner = ?)
            ORDER BY r.matches DESC, r.rating DESC""",
        [ALL, player, player],
    )
    for p in pairs:  # the partner as seen from this player
        if p["player"] != player:
            p["player"], p["partner"] = p["partner"], p["player"]
            p["name"], p["partner_name"] = p["partner_name"], p["name"]
    return {"standings": standings(cur, player), "history": history(cur, player), "pairs": pairs}
