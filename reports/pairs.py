"""A pair's report: two players who partnered, as one entity.

Two kinds of figures, kept apart:

- **Hands together**: every hand the two held side by side (seat changes
  resolved as in the player report: `player_held`), whatever the match's
  verdict or end: hands won and lost, points for and against per hand, by
  profile. They agree with the "Results per partner" rows of both players'
  reports.
- **Rated matches**: the valid, finished partnership matches in which the
  two were the side's rated players (reports.ratings: the seat's player of
  the most hands): match wins, ties and losses, the opposing pairs, and the
  pair's rating after each.
- **Play together** (reports.skill, from the hand analysis): the pair's
  combined accuracy over the hands they held side by side, each one's, and
  the supports-the-partner measure both ways.
"""

from __future__ import annotations

from typing import Any, Final

import duckdb

from reports.leaderboard import UTC_TS, dict_rows, has_ratings, history, standings
from reports.ratings import ALL
from reports.skill import pair_skill

Cursor = duckdb.DuckDBPyConnection

# The hands `a` held with `b` as partner, by profile: one read of a's rows.
_TOGETHER: Final = """
SELECT profile, count(DISTINCT match) AS matches, count(*) FILTER (WHERE played) AS hands,
       count(*) FILTER (WHERE played AND winner IS NOT NULL AND winner % 2 = seat % 2) AS wins,
       count(*) FILTER (WHERE played AND winner IS NOT NULL AND winner % 2 <> seat % 2) AS losses,
       count(*) FILTER (WHERE played AND winner IS NULL) AS ties,
       coalesce(sum(side_points) FILTER (WHERE played), 0) AS points_for,
       coalesce(sum(all_points - side_points) FILTER (WHERE played), 0) AS points_against
FROM (SELECT *, result IN ('domino', 'block') AS played FROM player_held
      WHERE of_player = ? AND partner = ?)
GROUP BY profile ORDER BY hands DESC, profile
"""


def _per_hand(r: dict[str, Any]) -> dict[str, Any]:
    n = r["hands"]
    r["win_rate"] = round(r["wins"] / n, 3) if n else None
    r["points_per_hand"] = round(r["points_for"] / n, 2) if n else None
    r["points_against_per_hand"] = round(r["points_against"] / n, 2) if n else None
    return r


def together(cur: Cursor, a: str, b: str) -> dict[str, Any]:
    """The hands `a` and `b` held as partners: totals and by profile."""
    by_profile = [_per_hand(r) for r in dict_rows(cur, _TOGETHER, [a, b])]
    keys = ("matches", "hands", "wins", "losses", "ties", "points_for", "points_against")
    total = _per_hand({k: sum(int(r[k]) for r in by_profile) for k in keys})
    return {**total, "profiles": by_profile}


def rated_matches(cur: Cursor, a: str, b: str, pool: str = ALL) -> list[dict[str, Any]]:
    """The pair's rated matches of `pool`, newest first: the opposing pair,
    the outcome, the match score for and against, the rating before and after."""
    if not has_ratings(cur):
        return []
    return dict_rows(
        cur,
        f"""SELECT h.pos, h.match, strftime(timezone('UTC', h.ended), '{UTC_TS}') AS ended, rm.profile,
                   h.side, h.outcome, m.score[h.side + 1] AS score_for, m.score[2 - h.side] AS score_against,
                   o.player AS opponent, po.name AS opponent_name, o.partner AS opponent_partner,
                   qo.name AS opponent_partner_name, o.bot AS opponent_bot,
                   round(h.mu_before - 3 * h.sigma_before, 2) AS rating_before,
                   round(h.mu - 3 * h.sigma, 2) AS rating_after,
                   h.hands, h.points_for, h.points_against
            FROM rating_history h
            JOIN rating_matches rm ON rm.pos = h.pos
            JOIN matches m ON m.match = h.match
            LEFT JOIN rating_history o ON o.pos = h.pos AND o.pool = h.pool AND o.partner IS NOT NULL
                 AND o.side <> h.side
            LEFT JOIN players po ON po.player = o.player
            LEFT JOIN players qo ON qo.player = o.partner
            WHERE h.player = ? AND h.partner = ? AND h.pool = ?
            ORDER BY h.pos DESC""",
        [a, b, pool],
    )


def opponents(matches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The opposing pairs of `rated_matches`, most met first, with the
    results against each.

    >>> rows = [{"opponent": "x", "opponent_partner": "y", "opponent_name": None,
    ...          "opponent_partner_name": None, "opponent_bot": False, "outcome": o,
    ...          "hands": 5, "points_for": 40, "points_against": 30} for o in ("win", "loss", "win")]
    >>> [(r["matches"], r["wins"], r["losses"], r["points_per_hand"]) for r in opponents(rows)]
    [(3, 2, 1, 8.0)]
    """
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for m in matches:
        if m["opponent"] is None:
            continue
        key = (m["opponent"], m["opponent_partner"])
        r = out.setdefault(key, {
            "player": key[0], "name": m["opponent_name"], "partner": key[1],
            "partner_name": m["opponent_partner_name"], "bot": m["opponent_bot"], "matches": 0,
            "wins": 0, "ties": 0, "losses": 0, "hands": 0, "points_for": 0, "points_against": 0,
        })
        r["matches"] += 1
        r[{"win": "wins", "tie": "ties"}.get(m["outcome"], "losses")] += 1
        for k in ("hands", "points_for", "points_against"):
            r[k] += m[k]
    rows = [_per_hand(r) for r in out.values()]
    for r in rows:  # a match's win rate here, not a hand's
        r["win_rate"] = round(r["wins"] / r["matches"], 3)
    rows.sort(key=lambda r: (-r["matches"], -r["wins"], r["player"], r["partner"]))
    return rows


def pair_report(cur: Cursor, a: str, b: str) -> dict[str, Any] | None:
    """The pair's report (see the module doc); None if the two never partnered."""
    if a == b:
        return None
    a, b = sorted((a, b))
    both = together(cur, a, b)
    kept = standings(cur, a, b)
    if not both["hands"] and not both["matches"] and not kept:
        return None
    names = dict(cur.execute(
        "SELECT player, name FROM players WHERE player IN (?, ?)", [a, b]).fetchall())
    bots = dict(cur.execute(
        "SELECT player, bot FROM players WHERE player IN (?, ?)", [a, b]).fetchall())
    matches = rated_matches(cur, a, b)
    wins = sum(m["outcome"] == "win" for m in matches)
    ties = sum(m["outcome"] == "tie" for m in matches)
    return {
        "players": [{"player": p, "name": names.get(p), "bot": bool(bots.get(p))} for p in (a, b)],
        "together": both,
        "rated": {
            "matches": len(matches), "wins": wins, "ties": ties, "losses": len(matches) - wins - ties,
            "win_rate": round(wins / len(matches), 3) if matches else None,
        },
        "standings": kept,
        "history": history(cur, a, b),
        "opponents": opponents(matches),
        "matches": matches,
        "skill": pair_skill(cur, a, b),
    }
