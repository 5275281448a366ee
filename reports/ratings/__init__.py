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

`model` holds the rating model, pure; `read` the contests read from the
store; `refresh` the store's refresh; `calibrate` how well they forecast.
"""

from reports.ratings.calibrate import (
    brier,
    calibration,
    log_loss,
    store_calibration,
)
from reports.ratings.model import (
    ALL,
    BETA,
    HISTORY_COLUMNS,
    Contest,
    Key,
    Ratings,
    Side,
    Standing,
    Stint,
    Z,
    default_model,
    finishing_order,
    rated_occupant,
    sides_of,
)
from reports.ratings.read import (
    Listed,
    contests,
)
from reports.ratings.refresh import (
    FLUSH_ROWS,
    keep_in_order,
    refresh_ratings,
    restart_pos,
)

__all__ = [
    "ALL",
    "BETA",
    "Contest",
    "FLUSH_ROWS",
    "HISTORY_COLUMNS",
    "Key",
    "Listed",
    "Ratings",
    "Side",
    "Standing",
    "Stint",
    "Z",
    "brier",
    "calibration",
    "contests",
    "default_model",
    "finishing_order",
    "keep_in_order",
    "log_loss",
    "rated_occupant",
    "refresh_ratings",
    "restart_pos",
    "sides_of",
    "store_calibration",
]
