"""Ratings: openskill ratings of players and of pairs, match by match.

**What is rated.** Every valid, finished match (verdict `valid`, result
`win` or `tie`), in the order its result became known: `matches.ended`, then
the match id. Abandoned, unfinished and invalid matches are not rated.

**Sides.** In a partnership game (`teams = pairs`) seats 0 and 2 are one
side and seats 1 and 3 the other. For the player ratings each side is a team
of its two players; for the pair ratings it is one entity, the pair. In an
individual game every seat is a side of its own.

**Finishing order** (`finishing_order`): the match winner first; then the
others by what decides the match: the score for `points` and `milo`
matches, the fewest points for `fixed` (Royal Rumble: points are bad), hand
wins then score for `chiva` and `rounds`. Equal standings share a place
(competition ranking: 1, 2, 2, 4). A tied match puts every side first, but
a tied `fixed` match, where several share the fewest points, puts those
first and the others after them.

**Who is rated for a seat** (`rated_occupant`): a seat may change hands
(`seats`: a bot or another player takes over). The match counts for the
player who held the seat in the most played hands, the player report's
rule for who held a hand; on equal counts, the one who sat first. Whoever
held it for fewer hands is not rated for that match. Bots are rated like
players under their own ids and flagged (`bot`); the leaderboard hides
them unless asked. A player or bot id that sits in two seats of one match
is rated for the first only: the other seat plays at the default rating,
unrated.

**Pools.** Every entity has a rating in pool `*` (every profile together)
and one in the pool of each profile it played.

**Model.** openskill's Plackett-Luce (Weng and Lin 2011): it rates a full
finishing order of any number of teams, ties included, in one update, which
3- and 4-player games need. Its defaults (mu 25, sigma 25/3, tau 25/300)
but a wider performance spread, beta 24 (`BETA`): one match of dominoes
says little about skill. On held-out simulated matches it forecast as well
as the Bradley-Terry model and better than Thurstone-Mosteller overall and
in 3- and 4-player games (docs/insights.md). The shown rating is the ordinal
mu - 3 sigma: a newcomer starts at 0 and rises as the system grows sure
of them.

**Store** (migration 013): `refresh_ratings` brings `rating_matches`,
`rating_history` and `ratings` up to date after each load; see its doc.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import duckdb
import pyarrow as pa
from openskill.models import PlackettLuce

from replay.store import registered  # a table registered for the block

__all__ = [
    "ALL",
    "Contest",
    "Ratings",
    "Side",
    "calibration",
    "contests",
    "finishing_order",
    "rated_occupant",
    "refresh_ratings",
    "sides_of",
]

#: The pool of every profile together.
ALL: Final = "*"
#: The shown rating is mu - Z * sigma (openskill's ordinal).
Z: Final = 3.0
#: History rows written to the store at a time (memory stays bounded).
FLUSH_ROWS: Final = 100_000


#: openskill's beta, the spread of one match's performance around the
#: skill (its default is 25/6): dominoes is a game of much luck, and 24 gave
#: the best forecasts of the first 80% of each profile's matches in the
#: simulated calibration set (docs/insights.md, scripts/rating_calibration.py).
BETA: Final = 24.0


def default_model() -> Any:
    """The model the store's ratings use (see the module doc)."""
    return PlackettLuce(beta=BETA)


# --- who plays whom ---------------------------------------------------------------


def sides_of(teams: str, players: int) -> list[tuple[int, ...]]:
    """The seats of each side.

    >>> sides_of("pairs", 4)
    [(0, 2), (1, 3)]
    >>> sides_of("individual", 3)
    [(0,), (1,), (2,)]
    """
    if teams == "pairs":
        if players != 4:
            raise ValueError(f"a partnership game has 4 players, not {players}")
        return [(0, 2), (1, 3)]
    return [(s,) for s in range(players)]


def finishing_order(
    result: str, winner: int | None, score: Sequence[int], kind: str, wins: Sequence[int] | None = None
) -> tuple[int, ...]:
    """Each side's finishing place (1 first; equal standings share a place).

    `score` is the match score per side, `kind` the `match_end` kind,
    `wins` the hands each side won (for `chiva` and `rounds`).

    >>> finishing_order("win", 1, [80, 104], "points")
    (2, 1)
    >>> finishing_order("tie", None, [3, 3], "rounds")
    (1, 1)
    >>> finishing_order("win", 2, [60, 80, 101, 80], "points")
    (4, 2, 1, 2)
    >>> finishing_order("win", 1, [30, 10, 20, 50], "fixed")   # fewest points win
    (3, 1, 2, 4)
    >>> finishing_order("tie", None, [30, 10, 10, 50], "fixed")
    (3, 1, 1, 4)
    >>> finishing_order("win", 0, [40, 90, 10], "chiva", wins=[4, 0, 2])
    (1, 3, 2)
    """
    n = len(score)
    if n < 2:
        raise ValueError(f"a match needs two sides or more, not {n}")
    if result not in ("win", "tie"):
        raise ValueError(f"only a won or tied match has a finishing order, not {result!r}")
    if result == "win" and (winner is None or not 0 <= winner < n):
        raise ValueError(f"a won match needs a winner among its {n} sides, not {winner!r}")
    if kind == "fixed":
        keys: list[tuple[int, ...]] = [(-s,) for s in score]
    elif kind in ("chiva", "rounds"):
        w = list(wins) if wins is not None else [0] * n
        keys = [(w[i], score[i]) for i in range(n)]
    else:
        keys = [(s,) for s in score]
    if result == "tie" and kind != "fixed":
        return (1,) * n
    big = (1 << 30,)
    if result == "win":
        assert winner is not None
        keys[winner] = big  # the match's winner first, whatever the figures say
    return tuple(1 + sum(k > keys[i] for k in keys) for i in range(n))


@dataclass(frozen=True, slots=True)
class Stint:
    """One player's time in a seat of a match: played hands held and points."""

    player: str
    bot: bool
    first_hand: int  # the first hand they held (when they sat down)
    hands: int
    points_for: int = 0
    points_against: int = 0


def rated_occupant(stints: Sequence[Stint]) -> Stint:
    """The one the seat's result counts for: most played hands, then the first to sit.

    >>> a = Stint("p-1", False, 1, 3)
    >>> b = Stint("bot-heavy", True, 4, 6)
    >>> rated_occupant([a, b]).player
    'bot-heavy'
    >>> rated_occupant([a, Stint("p-2", False, 4, 3)]).player
    'p-1'
    """
    if len(stints) == 1:
        return stints[0]
    if not stints:
        raise ValueError("a seat with nobody in it")
    return min(stints, key=lambda s: (-s.hands, s.first_hand, s.player))


@dataclass(frozen=True, slots=True)
class Side:
    """A side of a rated match: its rated players (by seat) and, in a
    partnership game, the two players' hands together."""

    players: tuple[Stint, ...]
    together: Stint | None = None  # a pair: hands both held, their side's points


@dataclass(frozen=True, slots=True)
class Contest:
    """One match as the ratings see it."""

    match: str
    mno: int | None
    ended: dt.datetime
    profile: str
    teams: str
    sides: tuple[Side, ...]
    places: tuple[int, ...]

    @property
    def pairs(self) -> bool:
        return self.teams == "pairs"


# --- the ratings -------------------------------------------------------------------

#: (pool, player, partner): partner None for a player, else player < partner.
Key = tuple[str, str, str | None]


@dataclass(slots=True)
class Standing:
    """An entity's rating in a pool and its counts."""

    rating: Any  # the model's rating object (mu, sigma)
    bot: bool
    matches: int = 0
    wins: int = 0
    ties: int = 0
    losses: int = 0
    hands: int = 0
    points_for: int = 0
    points_against: int = 0
    first: dt.datetime | None = None
    last: dt.datetime | None = None
    last_pos: int = 0


HISTORY_COLUMNS: Final = (
    "pool", "player", "partner", "pos", "match", "ended", "side", "place", "outcome", "bot",
    "mu_before", "sigma_before", "mu", "sigma", "hands", "points_for", "points_against",
)


@dataclass
class Ratings:
    """The ratings of every entity, brought forward one match at a time
    (`play`); `rows` collects the history rows of the matches played.

    >>> r = Ratings()
    >>> c = Contest("m1", 1, dt.datetime(2026, 1, 1), "domena_2p", "individual",
    ...             (Side((Stint("a", False, 1, 5),)), Side((Stint("b", False, 1, 5),))), (1, 2))
    >>> p = r.play(c, 1)
    >>> p[ALL]
    [0.5, 0.5]
    >>> r.standing(ALL, "a").rating.mu > 25 > r.standing(ALL, "b").rating.mu
    True
    >>> r.standing("domena_2p", "a").wins, r.standing(ALL, "b").losses
    (1, 1)
    """

    model: Any = field(default_factory=default_model)
    state: dict[Key, Standing] = field(default_factory=dict)
    rows: list[tuple[Any, ...]] = field(default_factory=list)  # as HISTORY_COLUMNS

    def standing(self, pool: str, player: str, partner: str | None = None) -> Standing:
        return self.state[(pool, player, partner)]

    def _get(self, key: Key, bot: bool) -> Standing:
        got = self.state.get(key)
        if got is None:
            got = self.state[key] = Standing(self.model.rating(), bot)
        return got

    def update(self, teams: list[list[Any]], ranks: list[int]) -> None:
        """openskill's update of `teams` (rating objects) for a finishing
        order, done on the objects themselves.

        `model.rate` returns new objects from a deep copy of its input (and a
        uuid each): a third of the time of a refresh. The same update is its
        `_compute` after the tau dynamics, on the teams in order of place;
        tests/test_ratings.py holds the two equal. Without `_compute` (another
        version of openskill) it is `rate`, its results copied back.
        """
        model = self.model
        compute = getattr(model, "_compute", None)
        if compute is None or getattr(model, "limit_sigma", False):
            new = model.rate(teams, ranks=ranks)
            for team, got in zip(teams, new, strict=True):
                for old, x in zip(team, got, strict=True):
                    old.mu, old.sigma = x.mu, x.sigma
            return
        tau_squared = model.tau * model.tau
        for team in teams:
            for p in team:
                p.sigma = math.sqrt(p.sigma * p.sigma + tau_squared)
        order = sorted(range(len(ranks)), key=ranks.__getitem__)
        compute(teams=[teams[i] for i in order], ranks=[ranks[i] for i in order])

    def play(self, c: Contest, pos: int) -> dict[str, list[float]]:
        """Rate `c` (the `pos`-th match rated) in pool `*` and its profile's;
        each pool's win chances of the sides just before it."""
        firsts = c.places.count(1)
        outcome = ["win" if p == 1 and firsts == 1 else "tie" if p == 1 else "loss" for p in c.places]
        ranks = list(c.places)
        # a repeated id is rated for its first seat only (see the module doc)
        seen: set[str] = set()
        flags: list[list[bool]] = []
        for side in c.sides:
            flags.append([st.player not in seen for st in side.players])
            seen.update(st.player for st in side.players)
        pairs = None
        if c.pairs and all(map(all, flags)):
            pairs = [tuple(sorted(st.player for st in side.players)) for side in c.sides]
        chances: dict[str, list[float]] = {}
        model, get, book = self.model, self._get, self._book
        bots = [any(st.bot for st in side.players) for side in c.sides]
        # pool *'s ratings before and after, by team (the pairs last)
        done: tuple[list[Any], list[list[tuple[float, float]]]] | None = None
        for pool in (ALL, c.profile):
            held = [[get((pool, st.player, None), st.bot) if ok else None
                     for st, ok in zip(side.players, fl, strict=True)]
                    for side, fl in zip(c.sides, flags, strict=True)]
            teams = [[g.rating if g is not None else model.rating() for g in team] for team in held]
            pheld = [get((pool, a, b), bot) for (a, b), bot in zip(pairs, bots, strict=True)] if pairs else []
            before = [[(x.mu, x.sigma) for x in team] for team in teams]
            pbefore = [(g.rating.mu, g.rating.sigma) for g in pheld]
            if done is not None and done[0] == [*before, pbefore]:
                # everybody here stands in the profile's pool as in pool *
                # (they played this profile only): the same update, not worked out twice
                chances[pool] = chances[ALL]
                for team, got in zip([*teams, [g.rating for g in pheld]], done[1], strict=True):
                    for x, (mu, sigma) in zip(team, got, strict=True):
                        x.mu, x.sigma = mu, sigma
            else:
                chances[pool] = model.predict_win(teams)
                self.update(teams, ranks)
                if pheld:
                    self.update([[g.rating] for g in pheld], ranks)
            if done is None:
                after = [[(x.mu, x.sigma) for x in team] for team in [*teams, [g.rating for g in pheld]]]
                done = ([*before, pbefore], after)
            for s, side in enumerate(c.sides):
                for st, g, was in zip(side.players, held[s], before[s], strict=True):
                    if g is not None:
                        book(g, (pool, st.player, None), st, st.bot, pos, c, s, outcome[s], was)
            if pairs:
                for s, side in enumerate(c.sides):
                    a, b = pairs[s]
                    together = side.together or Stint(a, bots[s], 1, 0)
                    book(pheld[s], (pool, a, b), together, bots[s], pos, c, s, outcome[s], pbefore[s])
        return chances

    def _book(self, g: Standing, key: Key, st: Stint, bot: bool, pos: int, c: Contest, side: int,
              outcome: str, before: tuple[float, float]) -> None:
        """Count the match into `g` (its rating already updated) and keep its history row."""
        g.bot = g.bot or bot
        g.matches += 1
        if outcome == "win":
            g.wins += 1
        elif outcome == "tie":
            g.ties += 1
        else:
            g.losses += 1
        g.hands += st.hands
        g.points_for += st.points_for
        g.points_against += st.points_against
        if g.first is None:
            g.first = c.ended
        g.last = c.ended
        g.last_pos = pos
        self.rows.append((
            key[0], key[1], key[2], pos, c.match, c.ended, side, c.places[side], outcome, bot,
            before[0], before[1], g.rating.mu, g.rating.sigma, st.hands, st.points_for, st.points_against,
        ))

    def take_rows(self) -> pa.Table:
        """The history rows collected so far, as an Arrow table (and forget them)."""
        cols = list(zip(*self.rows, strict=True)) if self.rows else [()] * len(HISTORY_COLUMNS)
        t = pa.table(dict(zip(HISTORY_COLUMNS, cols, strict=True)), schema=_HISTORY_SCHEMA)
        self.rows = []
        return t

    def current(self) -> pa.Table:
        """Every entity's standing now, as the rows of the `ratings` table."""
        keys = list(self.state)
        st = [self.state[k] for k in keys]
        return pa.table(
            {
                "pool": [k[0] for k in keys],
                "player": [k[1] for k in keys],
                "partner": [k[2] for k in keys],
                "bot": [g.bot for g in st],
                "mu": [float(g.rating.mu) for g in st],
                "sigma": [float(g.rating.sigma) for g in st],
                "rating": [float(g.rating.mu - Z * g.rating.sigma) for g in st],
                "matches": [g.matches for g in st],
                "wins": [g.wins for g in st],
                "ties": [g.ties for g in st],
                "losses": [g.losses for g in st],
                "hands": [g.hands for g in st],
                "points_for": [g.points_for for g in st],
                "points_against": [g.points_against for g in st],
                "first_played": [g.first for g in st],
                "last_played": [g.last for g in st],
                "last_pos": [g.last_pos for g in st],
            },
            schema=_CURRENT_SCHEMA,
        )


_TS: Final = pa.timestamp("us", tz="UTC")
_HISTORY_SCHEMA: Final = pa.schema([
    ("pool", pa.string()), ("player", pa.string()), ("partner", pa.string()), ("pos", pa.int32()),
    ("match", pa.string()), ("ended", _TS), ("side", pa.int8()), ("place", pa.int8()),
    ("outcome", pa.string()), ("bot", pa.bool_()), ("mu_before", pa.float64()),
    ("sigma_before", pa.float64()), ("mu", pa.float64()), ("sigma", pa.float64()),
    ("hands", pa.int32()), ("points_for", pa.int32()), ("points_against", pa.int32()),
])
_CURRENT_SCHEMA: Final = pa.schema([
    ("pool", pa.string()), ("player", pa.string()), ("partner", pa.string()), ("bot", pa.bool_()),
    ("mu", pa.float64()), ("sigma", pa.float64()), ("rating", pa.float64()), ("matches", pa.int32()),
    ("wins", pa.int32()), ("ties", pa.int32()), ("losses", pa.int32()), ("hands", pa.int32()),
    ("points_for", pa.int64()), ("points_against", pa.int64()), ("first_played", _TS),
    ("last_played", _TS), ("last_pos", pa.int32()),
])


# --- reading matches from the store -----------------------------------------------------

#: The matches that are rated, with their order key.
_RATED = """
SELECT match, mno, coalesce(ended, started) AS ended FROM matches
WHERE verdict = 'valid' AND result IN ('win', 'tie') AND players >= 2
  AND coalesce(ended, started) IS NOT NULL
"""

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


# --- calibration ----------------------------------------------------------------------------


def _outcome(places: Sequence[int]) -> list[float]:
    """Each side's share of the win: 1 for the winner, split among sides tied first.

    >>> _outcome([2, 1]), _outcome([1, 1, 3])
    ([0.0, 1.0], [0.5, 0.5, 0.0])
    """
    firsts = [p == 1 for p in places]
    k = sum(firsts)
    return [1.0 / k if f else 0.0 for f in firsts]


def log_loss(p: Sequence[float], y: Sequence[float]) -> float:
    """Cross-entropy of the predicted win chances against the outcome shares.

    >>> round(log_loss([0.5, 0.5], [1.0, 0.0]), 4)
    0.6931
    """
    return -sum(yi * math.log(min(max(pi, 1e-15), 1.0)) for pi, yi in zip(p, y, strict=True) if yi)


def brier(p: Sequence[float], y: Sequence[float]) -> float:
    """Brier's score over all sides, sum of (p - y)^2 (for two sides twice the
    one-sided score).

    >>> brier([0.5, 0.5], [1.0, 0.0])
    0.5
    """
    return sum((pi - yi) ** 2 for pi, yi in zip(p, y, strict=True))


def calibration(rows: Iterable[tuple[Any, ...]], holdout: float = 0.2) -> dict[str, Any]:
    """How well the ratings predicted the last `holdout` of the matches.

    `rows` are (pos, profile, places, p_all, p_profile) of the rated
    matches. The held-out matches are the last `holdout` of each profile's
    matches in rating order (each profile's share: a profile's tables may
    stop early); each was predicted with the ratings of every match before
    it (rated on as they come: an online forecast), in pool `*`
    (`ratings`) and in its profile's pool (`ratings_profile`). Baselines:
    every side alike (`uniform`, 1/n), and each side's base rate
    (`base_rate`: the share of the profile's earlier matches that side, by
    seat number, won; leading seats may win more). Log-loss and Brier's
    score are averaged per match, over all of them, by number of sides and
    by profile; `reliability` bins the two-sided forecasts of side 0 and
    counts how often it won; `train` is the log-loss of the forecasts of
    the matches before the held-out ones (what a model's parameters may be
    chosen on).
    """
    by_profile: dict[str, list[tuple[Any, ...]]] = {}
    for r in rows:
        if r[2]:  # (a match kept unrated has no places)
            by_profile.setdefault(r[1], []).append(r)
    groups: dict[str, dict[str, list[float]]] = {}
    bins = [[0, 0.0, 0.0] for _ in range(10)]  # matches, sum of p, wins
    train: list[float] = []
    total = held = 0
    for profile, got in sorted(by_profile.items()):
        got.sort(key=lambda r: r[0])
        cut = len(got) - int(round(len(got) * holdout))
        total += len(got)
        held += len(got) - cut
        won: dict[int, list[float]] = {}
        seen: dict[int, int] = {}
        for _, _, places, p_all, _ in got[:cut]:
            k = len(places)
            y = _outcome(places)
            train.append(log_loss(p_all, y))
            acc = won.setdefault(k, [0.0] * k)
            for s, ys in enumerate(y):
                acc[s] += ys
            seen[k] = seen.get(k, 0) + 1
        for _, _, places, p_all, p_profile in got[cut:]:
            k = len(places)
            y = _outcome(places)
            # add-one smoothing: no side is ever certain to lose
            base = [(w + 1.0 / k) / (seen[k] + 1.0) for w in won[k]] if k in won else [1.0 / k] * k
            forecasts = {"ratings": p_all, "ratings_profile": p_profile, "uniform": [1.0 / k] * k,
                         "base_rate": base}
            for g in ("all", f"{k} sides", f"profile {profile}"):
                sums = groups.setdefault(g, {})
                for name, p in forecasts.items():
                    sums.setdefault(f"{name}_log_loss", []).append(log_loss(p, y))
                    sums.setdefault(f"{name}_brier", []).append(brier(p, y))
            if k == 2:
                b = bins[min(int(p_all[0] * 10), 9)]
                b[0] += 1
                b[1] += p_all[0]
                b[2] += y[0]
    out: dict[str, Any] = {
        "matches": total, "held_out": held, "holdout": holdout,
        "train": {"matches": len(train), "ratings_log_loss": round(sum(train) / len(train), 4) if train else None},
        "groups": {},
    }
    for g, sums in sorted(groups.items(), key=lambda kv: (kv[0] != "all", kv[0])):
        n = len(next(iter(sums.values())))
        out["groups"][g] = {"matches": n, **{name: round(sum(v) / n, 4) for name, v in sums.items()}}
    out["reliability"] = [
        {"bin": f"{i / 10:.1f}-{(i + 1) / 10:.1f}", "matches": m, "predicted": round(sp / m, 3),
         "observed": round(w / m, 3)}
        for i, (m, sp, w) in enumerate(bins) if m
    ]
    return out


def store_calibration(cur: duckdb.DuckDBPyConnection, holdout: float = 0.2,
                      profile: str | None = None) -> dict[str, Any]:
    """`calibration` of the store's ratings (rating_matches)."""
    where, params = ("WHERE profile = ?", [profile]) if profile else ("", [])
    rows = cur.execute(
        f"SELECT pos, profile, places, p_all, p_profile FROM rating_matches {where} ORDER BY pos", params
    ).fetchall()
    return calibration(rows, holdout)
