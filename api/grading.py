"""How far the grade on what each player could know has got, and how long
the rest should take.

Ingest grades every move under perfect information; the grade on what
each player could know (sampled deals) comes later, from the server's
background grading (api.deepen). A figure that reads it (the cheat
signals, the accuracy on what a player could know) waits on it, and its
page says how many decisions are graded of how many, and about how long
the rest takes at the grader's recent pace. When no pace is known (the
server has just started, or no round ended lately) or this server does
not grade in the background, the page says that instead of a time.

A match opened without it is graded at once (`match_progress`): its page
says so, with the time its hands should take, and shows the grades when
they are stored.

The counts are the store's, from the player insights' sums (`skill_players`,
refreshed at most a minute behind the grader): the decisions analysed, and
of those the ones graded on what the mover could know.
"""

from __future__ import annotations

from typing import Any, Literal

import duckdb

from api.deepen import WANTED

__all__ = ["State", "ask_player", "match_progress", "progress", "store_counts", "store_progress"]

State = Literal["done", "grading", "measuring", "off"]

_COUNTS = """
SELECT coalesce(sum(decisions), 0), coalesce(sum(y_n), 0) FROM skill_players WHERE profile = '*'
"""


def store_counts(cur: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    """The store's analysed decisions, and of those the ones graded on what
    the mover could know ((0, 0) for a store without the insights' tables)."""
    try:
        row = cur.execute(_COUNTS).fetchall()[0]
    except duckdb.CatalogException:
        return 0, 0
    return int(row[0]), int(row[1])


def progress(graded: int, total: int, per_second: float | None, running: bool) -> dict[str, Any]:
    """`graded` of `total` decisions and the time the rest should take at
    `per_second` (decisions a second; None: not measured yet). `running`:
    whether this server grades in the background at all.

    `state`: `done` (nothing left), `grading` (a pace and a time left),
    `measuring` (a grader runs but has no pace yet) or `off` (no grader here:
    the rest waits for one).

    >>> progress(300, 1000, 2.0, True)
    {'graded': 300, 'total': 1000, 'left': 700, 'state': 'grading', 'per_second': 2.0, 'seconds_left': 350}
    >>> progress(0, 1000, None, True)["state"], progress(0, 1000, 5.0, False)["seconds_left"]
    ('measuring', None)
    >>> progress(1000, 1000, None, False)["state"]
    'done'
    """
    left = max(0, total - graded)
    rate = per_second if running and per_second else None
    state: State = "done" if not left else "off" if not running else "measuring" if rate is None else "grading"
    return {
        "graded": graded, "total": total, "left": left, "state": state, "per_second": rate,
        "seconds_left": 0 if not left else None if rate is None else round(left / rate),
    }  # fmt: skip


def store_progress(app_state: Any, cur: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """`progress` of the whole store, at the pace of the app's background
    grader (`app_state.deepener`, an api.deepen.Deepener, if any). The
    counts are kept until the store's generation changes (a load, a round
    of the grader)."""
    store = getattr(app_state, "store", None)
    gen = getattr(store, "generation", None)
    kept = getattr(app_state, "grading_counts", None)  # (generation, counts): a page costs no query
    if gen is not None and kept is not None and kept[0] == gen:
        total, graded = kept[1]
    else:
        total, graded = store_counts(cur)
        if gen is not None:
            app_state.grading_counts = (gen, (total, graded))
    deepener = getattr(app_state, "deepener", None)
    pace = deepener.pace.per_second() if deepener is not None else None
    running = deepener is not None and deepener.is_alive()
    return progress(graded, total, None if pace is None else pace[1], running)


def match_progress(app_state: Any, match: str, accuracy: list[dict[str, Any]]) -> dict[str, Any]:
    """How far the grade on what each player could know has got for one
    match (`accuracy`: api.queries.match_accuracy's rows), asking the app's
    background grader to grade it first if it lacks any (api.deepen.Deepener.want).

    `state`: `done` (every analysed hand has it), `grading` (its process
    has it: `seconds` since it began, `seconds_left` by the prediction of its
    CPU time, good to a factor of two), `next` (asked for: it begins within
    seconds) or `off` (no background grader here).

    >>> match_progress(None, "m", [{"hands": 5, "sampled_hands": 5}])
    {'state': 'done', 'hands': 5, 'sampled_hands': 5, 'seconds': None, 'seconds_left': None}
    >>> match_progress(None, "m", [{"hands": 5, "sampled_hands": 2}])["state"]
    'off'
    """
    hands = int(accuracy[0]["hands"]) if accuracy else 0
    sampled = int(accuracy[0]["sampled_hands"] or 0) if accuracy else 0
    out: dict[str, Any] = {"state": "done", "hands": hands, "sampled_hands": sampled, "seconds": None,
                           "seconds_left": None}  # fmt: skip
    if sampled >= hands:
        return out
    deepener = getattr(app_state, "deepener", None)
    if deepener is None or not deepener.is_alive():
        return {**out, "state": "off"}
    deepener.want(match)
    got = deepener.asked(match)  # None: graded since the page's query (its next view shows it)
    if got is not None and got["state"] == "grading":
        return {**out, "state": "grading", "seconds": got["seconds"],
                "seconds_left": max(0, round(got["predicted"] - got["seconds"]))}  # fmt: skip
    return {**out, "state": "next"}


# a player's matches with an analysed hand not graded on what the players could know, the newest first
_PLAYER_UNSAMPLED = """
SELECT m.match FROM matches m
WHERE m.match IN (SELECT match FROM seats WHERE player = ?)
  AND EXISTS (SELECT 1 FROM hand_analysis a WHERE a.match = m.match AND a.skip IS NULL AND a.samples = 0)
ORDER BY m.mno DESC LIMIT ?
"""


def ask_player(app_state: Any, cur: duckdb.DuckDBPyConnection, player: str, grading: dict[str, Any]) -> int:
    """While the store's grading is not done (`grading`: `store_progress`),
    ask the background grader to grade `player`'s newest matches that lack
    it before the rest of the store (api.deepen.Deepener.want; as many as
    it keeps waiting, api.deepen.WANTED), so that the player's accuracy and
    cheat signals come within minutes; how many were asked for.

    >>> ask_player(None, None, "p-1", {"left": 10})  # no background grader here
    0
    """
    deepener = getattr(app_state, "deepener", None)
    if not grading.get("left") or deepener is None or not deepener.is_alive():
        return 0
    rows = cur.execute(_PLAYER_UNSAMPLED, [player, WANTED]).fetchall()
    for (m,) in rows:  # the newest asked first: it is graded first
        deepener.want(m)
    return len(rows)
