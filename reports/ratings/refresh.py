"""The incremental refresh of the store's ratings (migration 013):
`refresh_ratings` rates the matches new since the last refresh, or again
from the first place that no longer holds.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

import duckdb
import pyarrow as pa

from replay.store import registered  # a table registered for the block
from reports.ratings.model import ALL, Ratings, Standing, default_model
from reports.ratings.read import contests

#: History rows written to the store at a time (memory stays bounded).
FLUSH_ROWS: Final = 100_000

_TS: Final = pa.timestamp("us", tz="UTC")  # as the model's schemas

#: The matches that are rated, with their order key.
_RATED = """
SELECT match, mno, coalesce(ended, started) AS ended FROM matches
WHERE verdict = 'valid' AND result IN ('win', 'tie') AND players >= 2
  AND coalesce(ended, started) IS NOT NULL
"""

def _scalar(conn: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] = ()) -> Any:
    rows = conn.execute(sql, list(params)).fetchall()
    return rows[0][0] if rows else None

# --- the refresh -----------------------------------------------------------------------------


def restart_pos(conn: duckdb.DuckDBPyConnection) -> int | None:
    """The first place in the rating order that no longer holds (a match gone,
    replaced, or a new one before it), or one past the last for new matches
    after them all; None when the ratings are up to date. Needs `_rq`."""
    gone = _scalar(conn, """
        SELECT min(r.pos) FROM rating_matches r WHERE NOT EXISTS (
            SELECT 1 FROM _rq q WHERE q.match = r.match AND q.mno IS NOT DISTINCT FROM r.mno)""")
    count, top = conn.execute("SELECT count(*), coalesce(max(pos), 0) FROM rating_matches").fetchall()[0]
    gap = None
    if count < top:  # rows deleted with their match (api: DELETE a match)
        gap = _scalar(conn, """
            SELECT min(rn) FROM (SELECT pos, row_number() OVER (ORDER BY pos) AS rn FROM rating_matches)
            WHERE pos <> rn""")
    first_new = conn.execute("""
        SELECT q.ended, q.match FROM _rq q WHERE NOT EXISTS (
            SELECT 1 FROM rating_matches r WHERE r.match = q.match AND r.mno IS NOT DISTINCT FROM q.mno)
        ORDER BY q.ended, q.match LIMIT 1""").fetchall()
    new = None
    if first_new:
        e, m = first_new[0]
        new = _scalar(conn, "SELECT min(pos) FROM rating_matches WHERE ended > ? OR (ended = ? AND match > ?)",
                      [e, e, m]) or top + 1
    found = [p for p in (gone, gap, new) if p is not None]
    return int(min(found)) if found else None


def refresh_ratings(
    conn: duckdb.DuckDBPyConnection, *, model: Any = None,
    then: Callable[[duckdb.DuckDBPyConnection], object] | None = None,
) -> int:
    """Bring the ratings (migration 013) up to date with the store; the number
    of matches rated.

    ``then`` keeps what is worked out from the ratings (the rating pages:
    :func:`reports.derived.keep_ratings` subscribes
    ``reports.leaderboard.keep_rating_pages``), in the same transaction,
    whenever the ratings changed or none of it is kept yet.

    The rated matches are compared with those that should be (by id and
    `mno`): new matches after the last one rated are rated on from the
    ratings as they stand; a match gone, replaced, or new before the last
    one rated makes everything from its place on be rated again from the
    history before it. Nothing changed costs a few queries. All in one
    transaction: a crash leaves the old ratings, and the next refresh
    redoes the work.
    """
    if not _scalar(conn, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'rating_matches'"):
        return 0  # a store older than migration 013 (opened read-only)
    conn.execute("BEGIN TRANSACTION")
    try:
        conn.execute("CREATE OR REPLACE TEMP TABLE _rq AS " + _RATED)
        start = restart_pos(conn)
        if start is None:
            conn.execute("DROP TABLE _rq")
            keep_in_order(conn, "rating_history", "player, partner, pool, pos")  # (a store of an older version)
            if then is None or \
                    not _scalar(conn, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'rating_pages'") or \
                    _scalar(conn, "SELECT count(*) FROM rating_pages"):
                conn.execute("COMMIT")
                return 0
            then(conn)  # none kept yet: a store of an older version
            conn.execute("COMMIT")
            return 0
        top = _scalar(conn, "SELECT coalesce(max(pos), 0) FROM rating_matches")
        r = Ratings(model=model if model is not None else default_model())
        if start == top + 1:
            _load_current(conn, r)  # the usual case: later matches only
        else:
            conn.execute("DELETE FROM rating_matches WHERE pos >= ?", [start])
            conn.execute("DELETE FROM rating_history WHERE pos >= ?", [start])
            _load_history(conn, r, start)
        todo = conn.sql(f"""
            SELECT CAST({start - 1} + row_number() OVER (ORDER BY q.ended, q.match) AS INTEGER) AS pos,
                   q.match, q.mno
            FROM _rq q WHERE NOT EXISTS (SELECT 1 FROM rating_matches r WHERE r.match = q.match)
            ORDER BY pos""").to_arrow_table()
        conn.execute("DROP TABLE _rq")
        done = _rate_into(conn, r, todo)
        conn.execute("DELETE FROM ratings")
        with registered(conn, "_rcur", r.current()):
            conn.execute("INSERT INTO ratings BY NAME SELECT * FROM _rcur")
        keep_in_order(conn, "rating_history", "player, partner, pool, pos")
        if then is not None:
            then(conn)  # the player pages' sections: every place may have moved
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(duckdb.Error):
            conn.execute("ROLLBACK")
        raise
    return done


def keep_in_order(conn: duckdb.DuckDBPyConnection, table: str, order: str) -> bool:
    """Rewrite `table` in `order` once the rows come after its last rewrite are
    a quarter of those it had then (migration 014's table_order; a geometric
    schedule: a table of n rows is rewritten about log n times). A reader of
    one entity's rows then finds them in few row groups: a player's rating
    history at 1M hands, 2,900 of 940,000 rows, read in 4 ms rather than 35.
    Whether it rewrote."""
    if not _scalar(conn, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'table_order'"):
        return False  # a store older than migration 014
    rows = _scalar(conn, f"SELECT count(*) FROM {table}")
    done = _scalar(conn, "SELECT coalesce(max(sorted_rows), 0) FROM table_order WHERE name = ?", [table])
    if rows < 4 * 122_880 or (done and rows - done < done // 4):  # a row group or four: nothing to gain
        return False
    conn.execute(f"CREATE OR REPLACE TEMP TABLE _ordered AS SELECT * FROM {table} ORDER BY {order}")
    conn.execute(f"DELETE FROM {table}")
    conn.execute(f"INSERT INTO {table} SELECT * FROM _ordered")  # insertion order kept: the rows in order
    conn.execute("DROP TABLE _ordered")
    conn.execute("DELETE FROM table_order WHERE name = ?", [table])
    conn.execute("INSERT INTO table_order VALUES (?, ?)", [table, rows])
    return True


def _rate_into(conn: duckdb.DuckDBPyConnection, r: Ratings, todo: pa.Table) -> int:
    """Rate the matches of `todo` in order; their rows into the store."""
    matches: dict[str, list[Any]] = {k: [] for k in _MATCH_SCHEMA.names}
    done = 0
    for x, c in contests(conn, todo):
        if c is not None:
            chances = r.play(c, x.pos)
            places, p_all, p_profile = list(c.places), chances[ALL], chances[c.profile]
            done += 1
        else:  # kept in its place, unrated: not taken for new again and again
            places, p_all, p_profile = [], [], []
        for k, v in (("pos", x.pos), ("match", x.match), ("mno", x.mno), ("ended", x.ended),
                     ("profile", x.profile), ("teams", x.teams), ("places", places),
                     ("p_all", p_all), ("p_profile", p_profile)):
            matches[k].append(v)
        if len(r.rows) >= FLUSH_ROWS:
            _flush(conn, r, matches)
    _flush(conn, r, matches)
    return done


def _flush(conn: duckdb.DuckDBPyConnection, r: Ratings, matches: dict[str, list[Any]]) -> None:
    with registered(conn, "_rhist", r.take_rows()):
        conn.execute("INSERT INTO rating_history BY NAME SELECT * FROM _rhist")
    with registered(conn, "_rmat", pa.table(matches, schema=_MATCH_SCHEMA)):
        conn.execute("INSERT INTO rating_matches BY NAME SELECT * FROM _rmat")
    for v in matches.values():
        v.clear()


_MATCH_SCHEMA: Final = pa.schema([
    ("pos", pa.int32()), ("match", pa.string()), ("mno", pa.int64()), ("ended", _TS),
    ("profile", pa.string()), ("teams", pa.string()), ("places", pa.list_(pa.int8())),
    ("p_all", pa.list_(pa.float64())), ("p_profile", pa.list_(pa.float64())),
])

_STANDING_COLS: Final = (
    "pool, player, partner, bot, mu, sigma, matches, wins, ties, losses, hands, points_for, "
    "points_against, timezone('UTC', first_played), timezone('UTC', last_played), last_pos"
)


def _load_current(conn: duckdb.DuckDBPyConnection, r: Ratings) -> None:
    _fill(r, conn.execute(f"SELECT {_STANDING_COLS} FROM ratings").fetchall())


def _load_history(conn: duckdb.DuckDBPyConnection, r: Ratings, before: int) -> None:
    """Every entity's standing after the matches rated before `before`."""
    rows = conn.execute(
        """SELECT pool, player, partner, bool_or(bot), arg_max(mu, pos), arg_max(sigma, pos), count(*),
                  count(*) FILTER (WHERE outcome = 'win'), count(*) FILTER (WHERE outcome = 'tie'),
                  count(*) FILTER (WHERE outcome = 'loss'), sum(hands), sum(points_for),
                  sum(points_against), timezone('UTC', min(ended)), timezone('UTC', max(ended)), max(pos)
           FROM rating_history WHERE pos < ? GROUP BY pool, player, partner""",
        [before],
    ).fetchall()
    _fill(r, rows)


def _fill(r: Ratings, rows: Iterable[tuple[Any, ...]]) -> None:
    utc = dt.UTC
    for pool, player, partner, bot, mu, sigma, n, w, t, lo, hands, pf, pa_, first, last, last_pos in rows:
        r.state[(pool, player, partner)] = Standing(
            r.model.rating(mu=float(mu), sigma=float(sigma)), bool(bot), int(n), int(w), int(t), int(lo),
            int(hands), int(pf), int(pa_), first.replace(tzinfo=utc), last.replace(tzinfo=utc), int(last_pos),
        )
