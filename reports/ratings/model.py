"""The rating model, pure: who plays whom in a match (its sides and
finishing order, who is rated for a seat) and the ratings brought forward
one contest at a time (openskill's Plackett-Luce). The rules are those of
the package doc (reports.ratings); nothing here reads the store.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import pyarrow as pa
from openskill.models import PlackettLuce

#: The pool of every profile together.
ALL: Final = "*"
#: The shown rating is mu - Z * sigma (openskill's ordinal).
Z: Final = 3.0


#: openskill's beta, the spread of one match's performance around the
#: skill (its default is 25/6): dominoes is a game of much luck, and 24 gave
#: the best forecasts of the first 80% of each profile's matches in the
#: simulated calibration set (docs/insights.md, scripts/rating_calibration.py).
BETA: Final = 24.0


def default_model() -> Any:
    """The model the store's ratings use (see the package doc)."""
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
