"""A player's report: polars over one DuckDB query of the hands they held.

A player is whoever held the seat in that hand: the seat history
(`seats.from_hand`, seat changes included) decides, so a player who left
mid-match is charged only with the hands they sat for, and a bot that took
the seat over gets the rest. Cancelled hands count for the deal luck (a deal
is a deal) but not as hands played.

Deal luck compares the average pips and doubles dealt with the exact
expectations for 7 tiles drawn from the 28: 7 * 6 = 42 pips (variance 49)
and 7 * 7 / 28 = 1.75 doubles (hypergeometric variance 1.0208). Tables
that set the doubles aside (`stock = doubles_aside`) deal no doubles and
are left out of the doubles figure.
"""

from __future__ import annotations

import math
from typing import Any

import duckdb
import polars as pl

from replay.tiles import IS_DOUBLE, PIPS

EXPECTED_PIPS = 42.0
VAR_PIPS = 49.0
EXPECTED_DOUBLES = 1.75
# hypergeometric: n=7 draws, K=7 doubles, N=28 tiles
VAR_DOUBLES = 7 * (7 / 28) * (21 / 28) * (21 / 27)
SHUTOUT_NOTES = ("shutout", "chiva", "zapato")

_PIPS_SQL = "[" + ",".join(str(p) for p in PIPS) + "]"
_DBL_SQL = "[" + ",".join(str(int(d)) for d in IS_DOUBLE) + "]"

# One row per hand the player held (cancelled ones too), with the partner
# (pairs) and the passes made while the hand was being played.
_SEAT_HANDS = f"""
WITH mine AS (SELECT DISTINCT match FROM seats WHERE player = $player),
rng AS (
    SELECT s.match, s.seat, s.player, s.name, s.bot, s.from_hand,
           coalesce(lead(s.from_hand) OVER (PARTITION BY s.match, s.seat
                                            ORDER BY s.from_hand, s.seq), 2147483647) AS to_hand
    FROM seats s WHERE s.match IN (SELECT match FROM mine)
),
held AS (
    SELECT h.match, h.hand, r.seat, r.bot, h.result, h.winner, h.points, h.notes, h.dealt,
           h.started, m.profile, m.players, m.rules->>'teams' AS teams,
           m.rules->>'stock' AS stock, m.result AS match_result, m.winner AS match_winner,
           m.notes AS match_notes, m.hands AS match_hands
    FROM rng r
    JOIN hands h ON h.match = r.match AND h.hand >= r.from_hand AND h.hand < r.to_hand
    JOIN matches m ON m.match = h.match
    WHERE r.player = $player
),
passes AS (
    -- passes while the hand was on: not the closing passes after a blocking tile
    SELECT mv.match, mv.hand, mv.seat, count(*) AS passes
    FROM moves mv
    JOIN held ON held.match = mv.match AND held.hand = mv.hand AND held.seat = mv.seat
    WHERE mv.kind = 'pass'
      AND NOT (held.result = 'block' AND mv.ply > (
            SELECT max(p.ply) FROM moves p
            WHERE p.match = mv.match AND p.hand = mv.hand AND p.kind = 'play'))
    GROUP BY ALL
)
SELECT held.match, held.hand, held.seat, held.bot, held.result, held.winner,
       held.points, held.notes, held.profile, held.players, held.teams, held.stock,
       held.match_result, held.match_winner, held.match_notes, held.match_hands,
       timezone('UTC', held.started) AS started,
       list_sum(list_transform(held.dealt[held.seat + 1], lambda t: {_PIPS_SQL}[t + 1])) AS dealt_pips,
       list_sum(list_transform(held.dealt[held.seat + 1], lambda t: {_DBL_SQL}[t + 1])) AS dealt_doubles,
       len(held.dealt[held.seat + 1]) AS dealt_tiles,
       coalesce(p.passes, 0) AS passes,
       partner.player AS partner, partner.name AS partner_name, partner.bot AS partner_bot
FROM held
LEFT JOIN passes p ON p.match = held.match AND p.hand = held.hand AND p.seat = held.seat
LEFT JOIN rng partner ON held.teams = 'pairs' AND partner.match = held.match
     AND partner.seat = (held.seat + 2) % 4
     AND held.hand >= partner.from_hand AND held.hand < partner.to_hand
ORDER BY held.started, held.match, held.hand
"""


def seat_hands(cur: duckdb.DuckDBPyConnection, player: str) -> pl.DataFrame:
    """Every hand the player held, one row each (see `_SEAT_HANDS`)."""
    return cur.sql(_SEAT_HANDS, params={"player": player}).pl()


def _with_outcome(df: pl.DataFrame) -> pl.DataFrame:
    side = pl.when(pl.col("teams") == "pairs").then(pl.col("seat") % 2).otherwise(pl.col("seat"))
    wside = (
        pl.when(pl.col("teams") == "pairs")
        .then(pl.col("winner") % 2)
        .otherwise(pl.col("winner"))
    )
    played = pl.col("result").is_in(["domino", "block"])
    return df.with_columns(
        side=side.cast(pl.Int32),
        played=played,
    ).with_columns(
        won=played & pl.col("winner").is_not_null() & (wside == pl.col("side")),
        lost=played & pl.col("winner").is_not_null() & (wside != pl.col("side")),
        tied=played & pl.col("winner").is_null(),
        pts_for=pl.when(played)
        .then(pl.col("points").list.get(pl.col("side"), null_on_oob=True))
        .otherwise(0)
        .fill_null(0),
        pts_all=pl.when(played).then(pl.col("points").list.sum()).otherwise(0).fill_null(0),
        went_out=played & (pl.col("result") == "domino") & (pl.col("winner") == pl.col("seat")),
    ).with_columns(pts_against=pl.col("pts_all") - pl.col("pts_for"))


def _z(mean: float | None, expected: float, var: float, n: int) -> float | None:
    if mean is None or n == 0:
        return None
    return (mean - expected) / math.sqrt(var / n)


def _r(x: Any, nd: int = 2) -> Any:
    return None if x is None else round(float(x), nd)


def player_report(cur: duckdb.DuckDBPyConnection, player: str) -> dict[str, Any] | None:
    """The whole report as JSON values; None if the player never held a seat."""
    found = cur.execute(
        "SELECT player, name, bot, matches FROM players WHERE player = ?", [player]
    ).fetchall()
    info = found[0] if found else None
    df = seat_hands(cur, player)
    if info is None and df.is_empty():
        return None
    df = _with_outcome(df)
    hands = df.filter(pl.col("played"))
    n = hands.height
    tot = hands.select(
        wins=pl.col("won").sum(),
        losses=pl.col("lost").sum(),
        ties=pl.col("tied").sum(),
        pts_for=pl.col("pts_for").sum(),
        pts_against=pl.col("pts_against").sum(),
        wins_domino=(pl.col("won") & (pl.col("result") == "domino")).sum(),
        wins_block=(pl.col("won") & (pl.col("result") == "block")).sum(),
        went_out=pl.col("went_out").sum(),
        passes=pl.col("passes").sum(),
        as_bot=pl.col("bot").sum(),
    ).row(0, named=True)

    # bonus words on the hands this player went out with
    bonus = (
        hands.filter(pl.col("went_out"))
        .select(pl.col("notes").explode().alias("note"))
        .drop_nulls()
        .group_by("note")
        .len()
        .sort("note")
    )

    # shutouts: a points match that ended with a side on 0, seen from the player's last seat in it
    last = df.sort("hand").group_by("match", maintain_order=True).last()
    shut = last.filter(
        pl.col("match_notes").list.eval(pl.element().is_in(list(SHUTOUT_NOTES))).list.any()
        & pl.col("match_winner").is_not_null()
    )
    given = shut.filter(pl.col("match_winner") == pl.col("side")).height
    taken = shut.height - given
    match_wins = last.filter(
        (pl.col("match_result") == "win") & (pl.col("match_winner") == pl.col("side"))
    ).height
    match_losses = last.filter(
        (pl.col("match_result") == "win") & (pl.col("match_winner") != pl.col("side"))
    ).height

    partners = (
        hands.filter(pl.col("partner").is_not_null())
        .group_by("partner")
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
        .sort(["hands", "partner"], descending=[True, False])
    )
    profiles = (
        df.group_by("profile")
        .agg(
            matches=pl.col("match").n_unique(),
            hands=pl.col("played").sum(),
            wins=pl.col("won").sum(),
            pts_for=pl.col("pts_for").sum(),
        )
        .sort(["hands", "profile"], descending=[True, False])
    )

    # deal luck over every deal the player received
    dealt = df.filter(pl.col("dealt_tiles") == 7)
    pips_n = dealt.height
    pips_mean = dealt["dealt_pips"].mean() if pips_n else None
    dbl = dealt.filter(pl.col("stock") != "doubles_aside")
    dbl_n = dbl.height
    dbl_mean = dbl["dealt_doubles"].mean() if dbl_n else None

    trend = _trend(hands)
    return {
        "player": player,
        "name": info[1] if info else None,
        "bot": bool(info[2]) if info else bool(tot["as_bot"]),
        "matches": df["match"].n_unique(),
        "match_wins": match_wins,
        "match_losses": match_losses,
        "hands": n,
        "hands_as_bot": int(tot["as_bot"] or 0),
        "cancelled": df.filter(pl.col("result") == "cancelled").height,
        "unfinished": df.filter(pl.col("result").is_null()).height,
        "wins": int(tot["wins"] or 0),
        "losses": int(tot["losses"] or 0),
        "ties": int(tot["ties"] or 0),
        "points_for": int(tot["pts_for"] or 0),
        "points_against": int(tot["pts_against"] or 0),
        "points_per_hand": _r(tot["pts_for"] / n) if n else None,
        "points_against_per_hand": _r(tot["pts_against"] / n) if n else None,
        "wins_by_domino": int(tot["wins_domino"] or 0),
        "wins_by_block": int(tot["wins_block"] or 0),
        "went_out": int(tot["went_out"] or 0),
        "passes": int(tot["passes"] or 0),
        "passes_per_hand": _r(tot["passes"] / n, 3) if n else None,
        "bonuses": {r["note"]: r["len"] for r in bonus.iter_rows(named=True)},
        "shutouts_given": given,
        "shutouts_taken": taken,
        "partners": partners.to_dicts(),
        "profiles": profiles.to_dicts(),
        "deal_luck": {
            "hands": pips_n,
            "pips_mean": _r(pips_mean, 3),
            "pips_expected": EXPECTED_PIPS,
            "pips_z": _r(_z(pips_mean, EXPECTED_PIPS, VAR_PIPS, pips_n)),
            "doubles_hands": dbl_n,
            "doubles_mean": _r(dbl_mean, 3),
            "doubles_expected": EXPECTED_DOUBLES,
            "doubles_z": _r(_z(dbl_mean, EXPECTED_DOUBLES, VAR_DOUBLES, dbl_n)),
        },
        "trend": trend,
    }


def _trend(hands: pl.DataFrame, most: int = 60) -> list[dict[str, Any]]:
    """Points per hand and win rate by day, week or month: at most `most` buckets."""
    if hands.is_empty() or hands["started"].null_count() == hands.height:
        return []
    h = hands.filter(pl.col("started").is_not_null())
    span = (h["started"].max() - h["started"].min()).days  # type: ignore[operator]
    every, fmt = ("1d", "%Y-%m-%d") if span <= most else (
        ("1w", "%Y-%m-%d") if span <= most * 7 else ("1mo", "%Y-%m"))
    out = (
        h.with_columns(bucket=pl.col("started").dt.truncate(every))
        .group_by("bucket")
        .agg(
            hands=pl.len(),
            ppf=pl.col("pts_for").mean(),
            win=pl.col("won").mean(),
        )
        .sort("bucket")
    )
    return [
        {"bucket": r["bucket"].strftime(fmt), "hands": r["hands"], "points_per_hand": round(r["ppf"], 2),
         "win_rate": round(r["win"], 3)}
        for r in out.iter_rows(named=True)
    ]
