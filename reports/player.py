"""A player's report: polars over one DuckDB read of the hands they held.

A player is whoever held the seat in that hand: the seat history
(`seats.from_hand`, seat changes included) decides, so a player who left
mid-match is charged only with the hands they sat for, and a bot that took
the seat over gets the rest. Cancelled hands count for the deal luck (a deal
is a deal) but not as hands played: the deal luck's count of deals is the
hands played plus the cancelled ones, less the hands dealt other than 7 tiles
(its `played`, `cancelled` and `left_out` say so).

Deal luck compares the average pips and doubles dealt with the exact
expectations for 7 tiles drawn from the 28: 7 * 6 = 42 pips (variance 49)
and 7 * 7 / 28 = 1.75 doubles (hypergeometric variance 1.0208). Tables
that set the doubles aside (`stock = doubles_aside`) deal no doubles and
are left out of the doubles figure.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import duckdb
import numpy as np
import orjson
import polars as pl

from replay.store import registered, transaction

EXPECTED_PIPS = 42.0
VAR_PIPS = 49.0
EXPECTED_DOUBLES = 1.75
# hypergeometric: n=7 draws, K=7 doubles, N=28 tiles
VAR_DOUBLES = 7 * (7 / 28) * (21 / 28) * (21 / 27)
SHUTOUT_NOTES = ("shutout", "chiva", "zapato")
# a report's frames are small: the in-memory engine starts in half the
# time of the streaming one (the default of polars 2)
ENGINE: Final = "in-memory"


# One plain read (DuckDB) of player_held (migration 004): a row per hand the
# player held, the seat already resolved through the seat changes, the
# partner and the seat's own figures taken out of the per-seat lists at load
# time. Kept in player order, so a player's rows sit in few row groups and
# the scan skips the rest by their min/max; no joins left for the report.
_Q_HELD = """SELECT match, hand, seat, bot, partner, partner_name, partner_bot, result, winner,
       side_points, all_points, out_notes AS notes, passes, dealt_pips, dealt_doubles,
       dealt_tiles, started, profile, teams, stock, block_end, match_result,
       match_winner, match_shutout
FROM player_held WHERE of_player = $player"""


#: Points of the cumulative chart a report keeps, at most (evenly spread over the hands).
CUMULATIVE_POINTS = 120


@dataclass(frozen=True, slots=True)
class ReportFilters:
    """Which of a player's hands a report counts: a profile, a range of days
    (the hand's start, UTC, both ends included) and a partner (pairs games).
    The report with none of them is the one kept at load time."""

    profile: str | None = None
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    partner: str | None = None

    def __bool__(self) -> bool:
        return any(v is not None for v in (self.profile, self.date_from, self.date_to, self.partner))

    def where(self) -> tuple[str, dict[str, Any]]:
        """The conditions on player_held, and their parameters.

        >>> ReportFilters(profile="mexico", date_to=dt.date(2026, 1, 31)).where()[0]
        ' AND profile = $profile AND started < $date_to'
        """
        sql = ""
        params: dict[str, Any] = {}
        if self.profile is not None:
            sql += " AND profile = $profile"
            params["profile"] = self.profile
        if self.date_from is not None:
            sql += " AND started >= $date_from"
            params["date_from"] = _utc(self.date_from)
        if self.date_to is not None and self.date_to < dt.date.max:  # (the last day bounds nothing)
            sql += " AND started < $date_to"  # the whole last day
            params["date_to"] = _utc(self.date_to + dt.timedelta(days=1))
        if self.partner is not None:
            sql += " AND partner = $partner"
            params["partner"] = self.partner
        return sql, params

    def to_dict(self) -> dict[str, str]:
        return {k: str(v) for k, v in (("profile", self.profile), ("date_from", self.date_from),
                                       ("date_to", self.date_to), ("partner", self.partner)) if v is not None}


def _utc(d: dt.date) -> dt.datetime:
    # player_held.started is a plain TIMESTAMP holding UTC (migration 004): a
    # plain bound compares as it is; an aware one would be moved into the
    # session's zone, the server process's, first
    return dt.datetime(d.year, d.month, d.day)


def _frame(table: Any) -> pl.DataFrame:
    df = pl.from_arrow(table)
    assert isinstance(df, pl.DataFrame)
    return df


_KEY = "of_player"


def _held(cur: duckdb.DuckDBPyConnection, players: Sequence[str],
          filters: ReportFilters | None = None) -> pl.DataFrame:
    """player_held of `players`, one row per hand each held, with their name first."""
    params: dict[str, Any]
    if len(players) == 1:  # one player: the equality prunes row groups by min/max
        sql, params = _Q_HELD.replace("SELECT ", f"SELECT {_KEY}, ", 1), {"player": players[0]}
        if filters:
            more, extra = filters.where()
            sql, params = sql + more, params | extra
    else:
        sql = _Q_HELD.replace("SELECT ", f"SELECT {_KEY}, ", 1).replace(
            "WHERE of_player = $player",
            "WHERE of_player BETWEEN $lo AND $hi AND of_player IN (SELECT unnest($players))")
        params = {"lo": min(players), "hi": max(players), "players": list(players)}
    # through Arrow: a fifth faster than .pl() on a player's 15,000 rows
    return _frame(cur.sql(sql, params=params).to_arrow_table())


def hands_of(cur: duckdb.DuckDBPyConnection, players: Sequence[str],
             filters: ReportFilters | None = None) -> pl.DataFrame:
    """Every hand `players` held (cancelled ones too), one row each, by player
    (`of_player`): the seat, the partner (pairs), the passes made while the
    hand was on, and what was dealt. `filters` (one player only) keeps some."""
    return _prepared(_held(cur, players, filters))


def hand_outcomes(cur: duckdb.DuckDBPyConnection, player: str, filters: ReportFilters | None = None) -> pl.DataFrame:
    """Every hand `player` held (`hands_of`), with what the report counts of
    it: `played`, `won`, `lost`, `tied`, `pts_for`, `pts_against`, `went_out`
    (the rows behind the player page's counts, for the list of hands)."""
    return _with_outcome(hands_of(cur, [player], filters).lazy()).collect(engine=ENGINE)


def seat_outcomes(cur: duckdb.DuckDBPyConnection, match: str, seat: int) -> pl.DataFrame:
    """`hand_outcomes` of one seat of one match, whoever held it (`of_player`)
    in each hand: the rows behind a match page's count of a seat's hands."""
    sql = _Q_HELD.replace("SELECT ", f"SELECT {_KEY}, ", 1).replace(
        "WHERE of_player = $player", "WHERE match = $match AND seat = $seat")
    df = _prepared(_frame(cur.sql(sql, params={"match": match, "seat": seat}).to_arrow_table()))
    return _with_outcome(df.sort("hand").lazy()).collect(engine=ENGINE)


def analysed_only(cur: duckdb.DuckDBPyConnection, df: pl.DataFrame) -> pl.DataFrame:
    """The rows of hands with a hand analysis (what the pages' skill figures count)."""
    got = cur.execute("SELECT match, hand FROM hand_analysis WHERE skip IS NULL AND match IN (SELECT unnest(?))",
                      [df["match"].unique().to_list()]).fetchall()
    keys = pl.DataFrame(got, schema={"match": pl.String, "hand": df.schema["hand"]}, orient="row")
    return df.join(keys, on=["match", "hand"], how="semi", maintain_order="left")


def match_end_hands(df: pl.DataFrame, which: str, shutout: bool = False) -> pl.DataFrame:
    """The last hand held in each match the player won (`which` "won") or
    lost ("lost"), by a shutout only with `shutout`, as the player report
    counts its match wins, losses and shutouts given and taken."""
    last = df.sort("hand", maintain_order=True).group_by("match", maintain_order=True).last()
    mine = last["match_winner"] == last["side"]
    if shutout:
        over = last["match_shutout"].fill_null(False) & last["match_winner"].is_not_null()
    else:
        over = (last["match_result"] == "win").fill_null(False)
    ended = last.filter(over & (mine if which == "won" else ~mine).fill_null(False))
    return df.join(ended.select("match", "hand"), on=["match", "hand"], how="semi", maintain_order="left")


def _prepared(df: pl.DataFrame) -> pl.DataFrame:
    closing = (pl.col("result") == "block") & (pl.col("block_end") == "all_pass")
    return (
        df.lazy()
        .with_columns(
            pl.col("passes").cast(pl.Int32),
            pl.col("dealt_pips").cast(pl.Int32),
            pl.col("dealt_doubles").cast(pl.Int32),
            pl.col("dealt_tiles").cast(pl.UInt32),
        )
        # under all_pass every seat passes once after the blocking tile: not a pass in play
        .with_columns(passes=(pl.col("passes").fill_null(0) - closing.cast(pl.Int32)).clip(lower_bound=0))
        .sort(_KEY, "started", "match", "hand", nulls_last=True)
        .collect(engine=ENGINE)
    )


def _with_outcome(lf: pl.LazyFrame) -> pl.LazyFrame:
    side = pl.when(pl.col("teams") == "pairs").then(pl.col("seat") % 2).otherwise(pl.col("seat"))
    wside = (
        pl.when(pl.col("teams") == "pairs")
        .then(pl.col("winner") % 2)
        .otherwise(pl.col("winner"))
    )
    played = pl.col("result").is_in(["domino", "block"])
    return lf.with_columns(
        side=side.cast(pl.Int32),
        played=played,
    ).with_columns(
        won=played & pl.col("winner").is_not_null() & (wside == pl.col("side")),
        lost=played & pl.col("winner").is_not_null() & (wside != pl.col("side")),
        tied=played & pl.col("winner").is_null(),
        pts_for=pl.when(played).then(pl.col("side_points")).otherwise(0).fill_null(0),
        pts_all=pl.when(played).then(pl.col("all_points")).otherwise(0).fill_null(0),
        went_out=played & (pl.col("result") == "domino") & (pl.col("winner") == pl.col("seat")),
    ).with_columns(pts_against=pl.col("pts_all") - pl.col("pts_for"))


def _z(mean: float | None, expected: float, var: float, n: int) -> float | None:
    if mean is None or n == 0:
        return None
    return (mean - expected) / math.sqrt(var / n)


def _r(x: Any, nd: int = 2) -> Any:
    return None if x is None else round(float(x), nd)


def _count(cond: pl.Expr) -> pl.Expr:
    return cond.sum().cast(pl.Int64)


def player_report(cur: duckdb.DuckDBPyConnection, player: str,
                  filters: ReportFilters | None = None) -> dict[str, Any] | None:
    """The whole report as JSON values; None if the player never held a seat.
    With `filters`, of the hands they keep only (and the filters under "filters")."""
    rep = player_reports(cur, [player], filters).get(player)
    if rep is not None and filters:
        rep["filters"] = filters.to_dict()
    return rep


def player_reports(cur: duckdb.DuckDBPyConnection, players: Sequence[str],
                   filters: ReportFilters | None = None) -> dict[str, dict[str, Any]]:
    """The reports of `players` (see `player_report`), worked out together
    (`store_reports` keeps them for the players a load touched).

    Every figure is a lazy polars query over the players' hands, grouped by
    player (their outcome columns collected once first), all collected in
    one `collect_all` (each eager step would cost a collect).
    """
    players = sorted(set(players))
    if not players:
        return {}
    found = cur.execute(
        "SELECT player, name, bot, matches FROM players WHERE player IN (SELECT unnest(?))", [players]
    ).fetchall()
    infos = {r[0]: r for r in found}
    if filters and len(players) != 1:
        raise ValueError("filtered reports are worked out one player at a time")
    df = hands_of(cur, players, filters)
    # the outcome columns once, not once per figure below
    all_hands = _with_outcome(df.lazy()).collect(engine=ENGINE).lazy()
    hands = all_hands.filter(pl.col("played"))
    played = pl.col("played")
    totals = all_hands.group_by(_KEY).agg(
        matches=pl.col("match").n_unique(),
        hands=_count(played),
        cancelled=_count(pl.col("result") == "cancelled"),
        unfinished=_count(pl.col("result").is_null()),
        wins=_count(pl.col("won")),
        losses=_count(pl.col("lost")),
        ties=_count(pl.col("tied")),
        pts_for=pl.col("pts_for").sum().cast(pl.Int64),
        pts_against=pl.col("pts_against").sum().cast(pl.Int64),
        wins_domino=_count(pl.col("won") & (pl.col("result") == "domino")),
        wins_block=_count(pl.col("won") & (pl.col("result") == "block")),
        went_out=_count(pl.col("went_out")),
        passes=pl.col("passes").filter(played).sum().cast(pl.Int64),
        as_bot=_count(pl.col("bot") & played),
    )
    # bonus words on the hands the player went out with
    bonus = (
        hands.filter(pl.col("went_out"))
        .select(_KEY, pl.col("notes").alias("note"))
        .explode("note")
        .drop_nulls()
        .group_by(_KEY, "note")
        .len()
        .sort(_KEY, "note")
    )
    # match results and shutouts, seen from the player's last seat in each match
    last = all_hands.sort(_KEY, "hand", maintain_order=True).group_by(_KEY, "match", maintain_order=True).last()
    shutout = pl.col("match_shutout")
    mine = pl.col("match_winner") == pl.col("side")
    won_match = pl.col("match_result") == "win"
    matches = last.group_by(_KEY).agg(
        match_wins=_count(won_match & mine),
        match_losses=_count(won_match & ~mine),
        given=_count(shutout & pl.col("match_winner").is_not_null() & mine),
        taken=_count(shutout & pl.col("match_winner").is_not_null() & ~mine),
    )
    partners = (
        hands.filter(pl.col("partner").is_not_null())
        .group_by(_KEY, "partner")
        .agg(
            name=pl.col("partner_name").last(),
            bot=pl.col("partner_bot").any(),
            hands=pl.len(),
            wins=pl.col("won").sum(),
            losses=pl.col("lost").sum(),
            pts_for=pl.col("pts_for").sum(),
            pts_against=pl.col("pts_against").sum(),
        )
        .with_columns(ppf=(pl.col("pts_for") / pl.col("hands")).round(2))
        .sort([_KEY, "hands", "partner"], descending=[False, True, False])
    )
    profiles = (
        all_hands.group_by(_KEY, "profile")
        .agg(
            matches=pl.col("match").n_unique(),
            hands=pl.col("played").sum(),
            wins=pl.col("won").sum(),
            pts_for=pl.col("pts_for").sum(),
        )
        .sort([_KEY, "hands", "profile"], descending=[False, True, False])
    )
    # deal luck over every deal the player received; a hand still on keeps
    # its deal secret, even as an average. A cancelled hand's deal counts (it
    # was dealt) though it is no hand played: the two counts differ by those,
    # and the report says how (`played`, `cancelled`, `left_out`)
    dealt = pl.col("dealt_tiles") == 7
    with_doubles = pl.col("stock") != "doubles_aside"
    luck = all_hands.filter(dealt & pl.col("result").is_not_null()).group_by(_KEY).agg(
        played_n=_count(played),
        cancelled_n=_count(pl.col("result") == "cancelled"),
        pips_n=pl.len(),
        pips_mean=pl.col("dealt_pips").mean(),
        dbl_n=_count(with_doubles),
        dbl_mean=pl.col("dealt_doubles").filter(with_doubles).mean(),
    )
    daily = (
        hands.filter(pl.col("started").is_not_null())
        .group_by(_KEY, day=pl.col("started").dt.date())
        .agg(hands=pl.len(), pts=pl.col("pts_for").sum(), wins=pl.col("won").sum())
        .sort(_KEY, "day")
    )
    # the running totals of points, hand by hand in time order (the frame's order)
    running = hands.group_by(_KEY, maintain_order=True).agg(
        pf=pl.col("pts_for").cum_sum(), pa=pl.col("pts_against").cum_sum(),
        day=pl.col("started").dt.strftime("%Y-%m-%d"),
    )
    got = pl.collect_all([totals, bonus, matches, partners, profiles, luck, daily, running], engine=ENGINE)
    tot, bonus_df, m, partners_df, profiles_df, lk, daily_df, run_df = (_by_player(x) for x in got)
    out = {}
    for player in players:
        info = infos.get(player)
        if info is None and player not in tot:
            continue
        t = tot.get(player, [_NO_TOTALS])[0]
        mw = m.get(player, [_NO_MATCHES])[0]
        lr = lk.get(player, [_NO_LUCK])[0]
        n = t["hands"]
        out[player] = {
            "player": player,
            "name": info[1] if info else None,
            "bot": bool(info[2]) if info else bool(t["as_bot"]),
            "matches": t["matches"],
            "match_wins": mw["match_wins"],
            "match_losses": mw["match_losses"],
            "hands": n,
            "hands_as_bot": t["as_bot"],
            "cancelled": t["cancelled"],
            "unfinished": t["unfinished"],
            "wins": t["wins"],
            "losses": t["losses"],
            "ties": t["ties"],
            "points_for": t["pts_for"],
            "points_against": t["pts_against"],
            "points_per_hand": _r(t["pts_for"] / n) if n else None,
            "points_against_per_hand": _r(t["pts_against"] / n) if n else None,
            "wins_by_domino": t["wins_domino"],
            "wins_by_block": t["wins_block"],
            "went_out": t["went_out"],
            "passes": t["passes"],
            "passes_per_hand": _r(t["passes"] / n, 3) if n else None,
            "bonuses": {r["note"]: r["len"] for r in bonus_df.get(player, [])},
            "shutouts_given": mw["given"],
            "shutouts_taken": mw["taken"],
            "partners": partners_df.get(player, []),
            "profiles": profiles_df.get(player, []),
            "deal_luck": {
                "hands": lr["pips_n"],
                "played": lr["played_n"],
                "cancelled": lr["cancelled_n"],
                # hands played whose deal was not 7 tiles: the expectations are for 7 of 28
                "left_out": n - lr["played_n"],
                "pips_mean": _r(lr["pips_mean"], 3),
                "pips_expected": EXPECTED_PIPS,
                "pips_z": _r(_z(lr["pips_mean"], EXPECTED_PIPS, VAR_PIPS, lr["pips_n"])),
                "doubles_hands": lr["dbl_n"],
                "doubles_mean": _r(lr["dbl_mean"], 3),
                "doubles_expected": EXPECTED_DOUBLES,
                "doubles_z": _r(_z(lr["dbl_mean"], EXPECTED_DOUBLES, VAR_DOUBLES, lr["dbl_n"])),
            },
            "trend": _trend([tuple(r.values()) for r in daily_df.get(player, [])],
                            within=(filters.date_from, filters.date_to) if filters else (None, None)),
            "cumulative": _cumulative(run_df.get(player, [None])[0]),
        }
    return out


def _cumulative(run: dict[str, Any] | None, most: int = CUMULATIVE_POINTS) -> dict[str, list[Any]]:
    """Points for and against, added up hand by hand (hands played, in time
    order), at `most` hands spread evenly (the first and the last among them).

    >>> _cumulative({"pf": [3, 3, 10], "pa": [0, 5, 5], "day": ["d1", "d1", "d2"]}, most=2)
    {'hands': [1, 3], 'points_for': [3, 10], 'points_against': [0, 5], 'days': ['d1', 'd2']}
    """
    if not run or not run["pf"]:
        return {"hands": [], "points_for": [], "points_against": [], "days": []}
    n = len(run["pf"])
    at = np.unique(np.linspace(0, n - 1, min(n, most)).round().astype(int)).tolist()
    return {
        "hands": [i + 1 for i in at],
        "points_for": [int(run["pf"][i]) for i in at],
        "points_against": [int(run["pa"][i]) for i in at],
        "days": [run["day"][i] for i in at],
    }


#: Hands worked out together by `store_reports`: polars holds about 1 KB a hand.
CHUNK_HANDS = 200_000


def store_reports(conn: duckdb.DuckDBPyConnection) -> int:
    """Work out and keep (``player_reports``, migration 007) the report of
    every player who has hands and no kept report; returns how many.

    The players go in chunks of about `CHUNK_HANDS` hands, each chunk in one
    transaction: a crash loses only the chunk under way, which the next
    derivation works out again.
    """
    todo = conn.execute(
        """SELECT of_player, count(*) FROM player_held
           WHERE of_player NOT IN (SELECT player FROM player_reports) GROUP BY 1 ORDER BY 1"""
    ).fetchall()
    chunks: list[list[str]] = [[]]
    size = 0
    for player, n in todo:
        if chunks[-1] and size + n > CHUNK_HANDS:
            chunks.append([])
            size = 0
        chunks[-1].append(player)
        size += n
    done = 0
    for chunk in filter(None, chunks):
        reports = player_reports(conn, chunk)
        rows = pl.DataFrame(
            {"player": list(reports), "report": [orjson.dumps(r).decode() for r in reports.values()]},
            schema={"player": pl.String, "report": pl.String},
        )
        with registered(conn, "_reports", rows), transaction(conn):
            conn.execute("DELETE FROM player_reports WHERE player IN (SELECT player FROM _reports)")
            conn.execute("INSERT INTO player_reports SELECT player, report FROM _reports")
        done += len(reports)
    return done


def kept_report(cur: duckdb.DuckDBPyConnection, player: str) -> dict[str, Any] | None:
    """The player's report as kept at load time (`store_reports`), or None if
    none is kept (worked out from the player tables by `player_report` then)."""
    rows = cur.execute("SELECT report FROM player_reports WHERE player = ?", [player]).fetchall()
    return orjson.loads(rows[0][0]) if rows else None


# what a player with no hand of a kind gets (a group_by has no row for them)
_NO_TOTALS = dict.fromkeys(
    ("matches", "hands", "cancelled", "unfinished", "wins", "losses", "ties", "pts_for",
     "pts_against", "wins_domino", "wins_block", "went_out", "passes", "as_bot"), 0)
_NO_MATCHES = dict.fromkeys(("match_wins", "match_losses", "given", "taken"), 0)
_NO_LUCK = {"played_n": 0, "cancelled_n": 0, "pips_n": 0, "pips_mean": None, "dbl_n": 0, "dbl_mean": None}


def _by_player(df: pl.DataFrame) -> dict[str, list[dict[str, Any]]]:
    """A frame's rows by player, in order, without the player column (one
    conversion for all players: a frame per player costs more than its figures)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for row in df.to_dicts():
        out.setdefault(row.pop(_KEY), []).append(row)
    return out


def _trend(daily: list[tuple[Any, int, int, int]], most: int = 60,
           within: tuple[dt.date | None, dt.date | None] = (None, None)) -> list[dict[str, Any]]:
    """Points per hand and win rate by day, week or month (at most `most` buckets),
    from per-day (day, hands, points for, wins) rows in day order; each bucket's
    first and last day, cut to the report's dates `within` (so that a list of the
    hands between them holds the bucket's hands, no more).

    >>> d = dt.date(2026, 1, 1)
    >>> t = _trend([(d, 2, 10, 1), (d + dt.timedelta(days=80), 1, 5, 1)], within=(d, None))
    >>> [(b["bucket"], b["hands"], b["date_from"], b["date_to"]) for b in t]
    [('2025-12-29', 2, '2026-01-01', '2026-01-04'), ('2026-03-16', 1, '2026-03-16', '2026-03-22')]
    """
    if not daily:
        return []
    span = (daily[-1][0] - daily[0][0]).days

    def week(d: dt.date) -> dt.date:
        return d - dt.timedelta(days=d.weekday())

    def month_end(d: dt.date) -> dt.date:
        return (d.replace(day=28) + dt.timedelta(days=4)).replace(day=1) - dt.timedelta(days=1)

    # each bucket's first and last day: the dates of the list of hands behind it
    key: Callable[[dt.date], dt.date]
    end: Callable[[dt.date], dt.date]
    if span <= most:
        key, end, fmt = (lambda d: d), (lambda d: d), "%Y-%m-%d"
    elif span <= most * 7:
        key, end, fmt = week, (lambda d: d + dt.timedelta(days=6)), "%Y-%m-%d"
    else:
        key, end, fmt = (lambda d: d.replace(day=1)), month_end, "%Y-%m"
    lo, hi = within[0] or dt.date.min, within[1] or dt.date.max
    buckets: dict[dt.date, list[int]] = {}
    for day, n, pts, wins in daily:
        b = buckets.setdefault(key(day), [0, 0, 0])
        b[0] += n
        b[1] += pts
        b[2] += wins
    return [
        {"bucket": k.strftime(fmt), "hands": n, "points_per_hand": round(pts / n, 2),
         "win_rate": round(wins / n, 3), "date_from": max(k, lo).isoformat(), "date_to": min(end(k), hi).isoformat()}
        for k, (n, pts, wins) in buckets.items()
    ]
