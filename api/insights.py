"""The ratings and player-insight pages and their JSON twins (reports.ratings,
reports.skill, reports.cheats; migrations 013 and 014).

    /leaderboard?kind&pool&sort&order&bots&min_matches&q&page
                                /api/leaderboard (same, per_page), /api/leaderboard.csv|.parquet (every row)
    /pair?a&b                   /api/pair, /api/pair/matches.csv|.parquet (its rated matches)
                                /api/ratings/history?player&partner&pool (+ .csv|.parquet)
                                /api/ratings/calibration?holdout&profile
    /suspicious?bots&min_hands  /api/suspicious (same), /api/suspicious.csv|.parquet
    /suspicious/player?player   /api/suspicious/player, /api/suspicious/evidence.csv|.parquet
                                POST /api/suspicious/audit?player&hands&samples (token)

The player page's rating and insight sections are drawn from
`player_extras` (api.routes.players calls it). Like api.fairness, the router needs only
``app.state.store`` with ``cursor()`` and ``generation``; pages render
through api.pages. Downloads follow api.exports' scheme.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import urlencode

import duckdb
import orjson
import pyarrow as pa
from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response
from markupsafe import Markup

from api import exports
from api import schemas as s

# a cursor per request, and values by (store generation, key): the fairness page's
from api.deps import Cur, Writer
from api.fairness import CACHE_SIZE
from api.grading import ask_player, store_progress
from api.lru import LRU
from api.pages import render, u
from api.queries import lookalike_players
from api.replay_model import esc
from api.skill_charts import luck_svg, months_svg, phase_svg
from reports import cheats, skill
from reports import leaderboard as lb
from reports.pairs import pair_report
from reports.player import ReportFilters
from reports.ratings import ALL, store_calibration

router = APIRouter()

Cursor = duckdb.DuckDBPyConnection
Text = Annotated[str | None, Query(max_length=200)]
Id = Annotated[str, Query(min_length=1, max_length=200)]
Kind = Literal["players", "pairs"]
Order = Literal["asc", "desc"]
Sort = lb.SortKey
PageNo = Annotated[int, Query(alias="page", ge=1, le=100_000)]
MinMatches = Annotated[int, Query(ge=0, le=1_000_000)]
Holdout = Annotated[float, Query(gt=0.0, lt=1.0)]
PER_PAGE = 50
CHART_POINTS = 400  # at most this many points in a rating chart


def _json(data: Any) -> Response:
    return Response(orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS), media_type="application/json")


def _download(rows: Sequence[dict[str, Any]], columns: Sequence[str], fmt: str, stem: str) -> Response:
    """Rows as a CSV or Parquet download in api.exports' scheme (lists as JSON
    text in CSV, kept lists in Parquet; a name safe in a header)."""
    table = pa.Table.from_pylist([{c: r.get(c) for c in columns} for r in rows]) if rows else \
        pa.table({c: pa.array([], pa.string()) for c in columns})
    return exports.table_response(table, fmt, stem)


T = TypeVar("T")


def _cached(request: Request, key: Any, make: Callable[[], T]) -> T:
    state = request.app.state
    cache = getattr(state, "ratings_cache", None)
    if cache is None:
        cache = state.ratings_cache = LRU(CACHE_SIZE)
    value: T = cache.get_or_make((getattr(state.store, "generation", 0), key), make)
    return value


#: Players whose rating and insight sections are kept (per store generation),
#: as api.routes.players keeps 256 player reports: a revisit costs no query.
PLAYER_SECTIONS = 256


def _per_player(request: Request, key: Any, make: Callable[[], T]) -> T:
    state = request.app.state
    cache = getattr(state, "player_sections", None)
    if cache is None:
        cache = state.player_sections = LRU(2 * PLAYER_SECTIONS)  # a player's two sections
    value: T = cache.get_or_make((getattr(state.store, "generation", 0), key), make)
    return value


# --- the leaderboard -------------------------------------------------------------------


def _board(request: Request, cur: Cursor, kind: str, pool: str, sort: str, order: str, bots: bool,
           min_matches: int, q: str | None, page_no: int, per_page: int | None) -> dict[str, Any]:
    key = ("board", kind, pool, sort, order, bots, min_matches, q, page_no, per_page)
    return _cached(request, key, lambda: lb.leaderboard(
        cur, kind=kind, pool=pool, sort=sort, order=order, bots=bots,  # type: ignore[arg-type]
        min_matches=min_matches, q=q, page=page_no, per_page=per_page))


def _calibration(request: Request, cur: Cursor, holdout: float = 0.2, profile: str | None = None) -> dict[str, Any]:
    return _cached(request, ("calibration", holdout, profile),
                   lambda: store_calibration(cur, holdout, profile))


@router.get("/leaderboard", response_class=HTMLResponse, include_in_schema=False)
def leaderboard_page(
    request: Request, cur: Cur, kind: Kind = "players", pool: Text = None, sort: Sort = "rating",
    order: Order = "desc", bots: bool = False, min_matches: Annotated[str | None, Query(max_length=12)] = None,
    q: Text = None, page_no: PageNo = 1,
) -> HTMLResponse:
    # the page's form sends "" for an empty field: read here, not by FastAPI
    least = 0
    if min_matches:
        if not (min_matches.isascii() and min_matches.isdigit()):
            return HTMLResponse(render("error.html", title="Bad request",
                                       message=f"min_matches: a whole number, not {min_matches!r}"),
                                status_code=422)
        least = int(min_matches)
    pool = pool or ALL
    data = _board(request, cur, kind, pool, sort, order, bots, least, q or None, page_no, PER_PAGE)
    params = {k: v for k, v in (("kind", kind), ("pool", pool if pool != ALL else None),
                                ("bots", "true" if bots else None), ("min_matches", least or None),
                                ("q", q or None)) if v is not None}
    sorted_params = {**params, "sort": sort, "order": order}
    cal = _calibration(request, cur)
    return HTMLResponse(render(
        "leaderboard.html", nav="leaderboard", r=data, pools=lb.pools(cur), params=params,
        sorted_params=sorted_params, cal=cal.get("groups", {}).get("all"), cal_info=cal,
        json_url="/api/leaderboard?" + urlencode(sorted_params),
        csv_url="/api/leaderboard.csv?" + urlencode(sorted_params),
    ))


@router.get("/api/leaderboard", tags=["ratings"], summary="Leaderboard", operation_id="leaderboard", response_model=s.Leaderboard)
def api_leaderboard(
    request: Request, cur: Cur, kind: Kind = "players", pool: Text = None, sort: Sort = "rating",
    order: Order = "desc", bots: bool = False, min_matches: MinMatches = 0, q: Text = None,
    page_no: PageNo = 1, per_page: Annotated[int, Query(ge=1, le=1000)] = PER_PAGE,
) -> Response:
    """Players (or pairs) of a pool by rating (mu - 3 sigma; see docs/insights.md).
    `pool`: `*` (default) for every profile together, or a profile."""
    return _json(_board(request, cur, kind, pool or ALL, sort, order, bots, min_matches, q, page_no, per_page))


@router.get("/api/leaderboard.{fmt}", tags=["ratings"], summary="Download the leaderboard", operation_id="download_leaderboard",
            response_class=Response, responses=s.DOWNLOAD)
def api_leaderboard_csv(
    request: Request, cur: Cur, fmt: exports.Format, kind: Kind = "players", pool: Text = None,
    sort: Sort = "rating", order: Order = "desc", bots: bool = False, min_matches: MinMatches = 0, q: Text = None,
) -> Response:
    """Every row the leaderboard's filters keep, in its order, as CSV or Parquet."""
    data = _board(request, cur, kind, pool or ALL, sort, order, bots, min_matches, q, 1, None)
    cols = ["place", *(c for c in _BOARD_COLUMNS if kind == "pairs" or not c.startswith("partner"))]
    return _download(data["rows"], cols, fmt, f"leaderboard-{kind}")


_BOARD_COLUMNS = (
    "pool", "player", "name", "partner", "partner_name", "bot", "rating", "mu", "sigma", "matches", "wins",
    "ties", "losses", "win_rate", "hands", "points_per_hand", "points_against_per_hand", "first_played",
    "last_played",
)


# --- rating history and calibration ---------------------------------------------------------


@router.get("/api/ratings/history", tags=["ratings"], summary="A rating's history", operation_id="rating_history",
            response_model=list[s.HistoryRow])
def api_history(cur: Cur, player: Id, partner: Text = None, pool: Text = None) -> Response:
    """A player's (or with `partner`, a pair's) rating after each rated match of `pool` (default `*`)."""
    return _json(lb.history(cur, player, partner or None, pool or ALL))


@router.get("/api/ratings/history.{fmt}", tags=["ratings"], summary="Download a rating's history",
            operation_id="download_rating_history", response_class=Response, responses=s.DOWNLOAD)
def api_history_csv(cur: Cur, fmt: exports.Format, player: Id, partner: Text = None, pool: Text = None) -> Response:
    """The rating history of /api/ratings/history as CSV or Parquet."""
    rows = lb.history(cur, player, partner or None, pool or ALL)
    return _download(rows, _HISTORY_COLUMNS, fmt, "ratings-" + "-".join(filter(None, (player, partner))))


_HISTORY_COLUMNS = (
    "pos", "match", "ended", "profile", "side", "place", "sides", "outcome", "bot", "rating_before",
    "rating", "mu", "sigma", "hands", "points_for", "points_against",
)


@router.get("/api/ratings/calibration", tags=["ratings"], summary="How well the ratings predict",
            operation_id="rating_calibration", response_model=s.Calibration)
def api_calibration(request: Request, cur: Cur, holdout: Holdout = 0.2, profile: Text = None) -> Response:
    """How well the ratings predicted the last `holdout` of each profile's
    matches, against 1/n and the seats' base rates (log-loss, Brier)."""
    return _json(_calibration(request, cur, holdout, profile or None))


# --- a pair ---------------------------------------------------------------------------------


def _pair(request: Request, cur: Cursor, a: str, b: str) -> dict[str, Any] | None:
    return _cached(request, ("pair", *sorted((a, b))), lambda: pair_report(cur, a, b))


MatchOutcome = Literal["win", "tie", "loss"]


def rated_rows(rows: Sequence[dict[str, Any]], outcome: str | None = None, profile: str | None = None,
               against: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The pair's rated matches a count of its page stands for: of one
    outcome, one profile, against one opposing pair (its two ids).

    >>> rows = [{"outcome": "win", "profile": "p", "opponent": "x", "opponent_partner": "y"},
    ...         {"outcome": "loss", "profile": "p", "opponent": "y", "opponent_partner": "z"}]
    >>> len(rated_rows(rows, "win")), len(rated_rows(rows, against=["y", "x"])), len(rated_rows(rows, profile="q"))
    (1, 1, 0)
    """
    want = set(against)
    return [r for r in rows if (outcome is None or r["outcome"] == outcome)
            and (profile is None or r["profile"] == profile)
            and (not want or {r["opponent"], r["opponent_partner"]} == want)]  # fmt: skip


@router.get("/pair", response_class=HTMLResponse, include_in_schema=False)
def pair_page(request: Request, cur: Cur, a: Id, b: Id, outcome: MatchOutcome | None = None, profile: Text = None,
              against: Annotated[list[str], Query(max_length=2)] = []) -> HTMLResponse:  # noqa: B006 - FastAPI's list default
    r = _pair(request, cur, a, b)
    if r is None:
        return HTMLResponse(render("error.html", title="Not found",
                                   message=f"{a!r} and {b!r} never partnered"), status_code=404)
    x, y = r["players"][0]["player"], r["players"][1]["player"]
    kept = rated_rows(r["matches"], outcome, profile or None, against)
    narrowed = {k: v for k, v in (("outcome", outcome), ("profile", profile or None)) if v}
    if against:
        narrowed["against"] = against  # type: ignore[assignment]
    return HTMLResponse(render(
        "pair.html", nav="leaderboard", r=r, chart=Markup(rating_svg(r["history"])),
        json_url=u("api", "pair", a=x, b=y), csv_url=u("api", "pair", "matches.csv", a=x, b=y),
        history_csv=u("api", "ratings", "history.csv", player=x, partner=y), shown=kept[:MATCH_ROWS],
        kept=kept, narrowed=narrowed,
    ))


MATCH_ROWS = 100  # rated matches listed on the pair page (all of them in the JSON and CSV)


@router.get("/api/pair", tags=["ratings"], summary="Two players together", operation_id="get_pair", response_model=s.Pair,
            responses=s.errors(404))
def api_pair(request: Request, cur: Cur, a: Id, b: Id) -> Response:
    """The pair of players `a` and `b`: hands together, rated matches, opponents, rating history."""
    r = _pair(request, cur, a, b)
    if r is None:
        raise HTTPException(404, f"{a!r} and {b!r} never partnered")
    return _json(r)


@router.get("/api/pair/matches.{fmt}", tags=["ratings"], summary="Download a pair's matches", operation_id="download_pair_matches",
            response_class=Response, responses={**s.DOWNLOAD, **s.errors(404)})
def api_pair_matches_csv(request: Request, cur: Cur, fmt: exports.Format, a: Id, b: Id) -> Response:
    """The pair's rated matches as CSV or Parquet."""
    r = _pair(request, cur, a, b)
    if r is None:
        raise HTTPException(404, f"{a!r} and {b!r} never partnered")
    return _download(r["matches"], _PAIR_MATCH_COLUMNS, fmt, f"pair-{'-'.join(sorted((a, b)))}-matches")


_PAIR_MATCH_COLUMNS = (
    "pos", "match", "ended", "profile", "side", "outcome", "score_for", "score_against", "opponent",
    "opponent_name", "opponent_partner", "opponent_partner_name", "opponent_bot", "rating_before",
    "rating_after", "hands", "points_for", "points_against",
)


# --- the player page's section ------------------------------------------------------------


def player_ratings(cur: Cursor, player: str, request: Request | None = None) -> dict[str, Any]:
    """The ratings the player's JSON twin carries (reports.leaderboard.player_ratings),
    kept per store generation."""
    if request is None:
        return lb.player_ratings(cur, player)
    return _per_player(request, ("ratings", player), lambda: lb.player_ratings(cur, player))


def player_skill(request: Request | None, cur: Cursor, player: str, filters: Any = None) -> dict[str, Any]:
    """The luck, skill and accuracy the player's JSON twin carries
    (reports.skill.player_skill; `filters` as the report's), kept per store generation."""
    if request is None:
        return skill.player_skill(cur, player, filters or None)
    return _per_player(request, ("skill", player, filters or None),
                       lambda: skill.player_skill(cur, player, filters or None))


SkillPart = Literal["phases", "profiles", "months", "line", "percentiles"]

#: Each part's columns, in order (a part's rows, as the player's JSON twin has them).
SKILL_COLUMNS: dict[str, tuple[str, ...]] = {
    "phases": ("phase", "tiles_on_line", "decisions", "accuracy", "accuracy_dd", "lost_per_decision"),
    "profiles": ("profile", "matches", "hands", "decisions", "accuracy", "accuracy_dd", "lost_per_decision",
                 "lost_dd_per_decision", "luck_per_hand", "points_per_hand", "adjusted_per_hand"),
    "months": ("month", "matches", "hands", "decisions", "accuracy", "accuracy_dd", "lost_per_decision",
               "lost_dd_per_decision", "luck_per_hand", "points_per_hand", "adjusted_per_hand"),
    "line": ("match", "day", "hands", "points", "luck", "adjusted"),
    "percentiles": ("profile", "pool", "accuracy", "accuracy_dd", "lost_per_decision", "lost_dd_per_decision",
                    "luck_per_hand", "points_per_hand", "adjusted_per_hand"),
}  # fmt: skip


def skill_rows(sk: dict[str, Any], part: str) -> list[dict[str, Any]]:
    """One part of a player's luck and skill section (reports.skill.player_skill) as rows.

    >>> skill_rows({"line": {"matches": ["m1"], "days": ["2026-11-02"], "hands": [3], "points": [10],
    ...                      "luck": [2.5], "adjusted": [7.5]}}, "line")
    [{'match': 'm1', 'day': '2026-11-02', 'hands': 3, 'points': 10, 'luck': 2.5, 'adjusted': 7.5}]
    """
    if part == "line":
        line = sk.get("line") or {}
        keys = {"match": "matches", "day": "days", "hands": "hands", "points": "points", "luck": "luck",
                "adjusted": "adjusted"}  # fmt: skip
        cols = [line.get(v) or [] for v in keys.values()]
        return [dict(zip(keys, vals, strict=True)) for vals in zip(*cols, strict=True)]
    if part == "percentiles":
        return [{"profile": prof, **p} for prof, p in (sk.get("percentiles") or {}).items()]
    return list(sk.get(part) or [])


@router.get("/api/skill/{part}.{fmt}", tags=["skill"], summary="Download a part of a player's skill",
            operation_id="download_skill", response_class=Response, responses={**s.DOWNLOAD, **s.errors(404)})
def api_skill_csv(
    request: Request, cur: Cur, part: SkillPart, fmt: exports.Format, player: Id,
    profile: Annotated[str | None, Query(max_length=200, description="hands of this profile only")] = None,
    partner: Annotated[str | None, Query(max_length=200, description="hands beside this partner only")] = None,
    date_from: Annotated[dt.date | None, Query(description="matches started on or after (UTC)")] = None,
    date_to: Annotated[dt.date | None, Query(description="matches started on or before (UTC)")] = None,
) -> Response:
    """One part of a player's luck and skill section (the player page's, under
    the same filters) as CSV or Parquet: `phases`, `profiles`, `months`,
    `line` (the luck chart's points, match by match) or `percentiles`."""
    if not cur.execute("SELECT 1 FROM players WHERE player = ?", [player]).fetchall():
        raise HTTPException(404, f"no player {player!r}")
    chosen = ReportFilters(profile or None, date_from, date_to, partner or None)
    sk = player_skill(request, cur, player, chosen)
    return _download(skill_rows(sk, part), SKILL_COLUMNS[part], fmt, f"skill-{part}-{player}")


def player_extras(cur: Cursor, player: str, request: Request | None = None, filters: Any = None) -> dict[str, Any]:
    """What player.html's rating and insight sections are drawn from: `ratings`,
    `rating_chart`, `skill` and its charts (the insights follow the report's `filters`),
    and the store's `grading` (api.grading)."""
    got = player_ratings(cur, player, request)
    sk = player_skill(request, cur, player, filters)
    sampled = sk.get("sampled")
    known = sampled is None or sampled > 0  # no decision graded on what they could know: no such bar
    return {
        "ratings": got, "rating_chart": Markup(rating_svg(got["history"])), "skill": sk,
        "grading": player_grading(request, cur, player),
        "luck_chart": Markup(luck_svg(sk["line"])),
        "phase_chart": Markup(phase_svg(sk["phases"], link=lambda ph: moves_link(player, filters, phase=ph),
                                        known=known)),
        "months_chart": Markup(months_svg(sk["months"], known=known)),
    }  # fmt: skip


def player_grading(request: Request | None, cur: Cursor, player: str) -> dict[str, Any]:
    """The store's grading (api.grading.store_progress) with `first`: how many
    of `player`'s newest matches without it were asked to be graded before
    the rest (api.grading.ask_player)."""
    state = request.app.state if request is not None else None
    g = store_progress(state, cur)
    return {**g, "first": ask_player(state, cur, player, g)}


def moves_link(player: str, filters: Any = None, **more: str) -> str:
    """The address of a player's graded moves (/moves) under the page's filters and `more`.

    >>> moves_link("p 1", None, **{"class": "blunder"})
    '/moves?player=p+1&class=blunder'
    """
    kept = {k: getattr(filters, k, None) for k in ("profile", "date_from", "date_to", "partner")}
    return u("moves", player=player, **{k: v for k, v in kept.items() if v is not None}, **more)


def rating_svg(rows: Sequence[dict[str, Any]], width: int = 640, height: int = 180) -> str:
    """The rating (mu - 3 sigma, solid) and the skill estimate mu (dashed)
    after each rated match, oldest first; at most `CHART_POINTS` points (the
    last match of each stretch). Every text from a log is escaped."""
    if not rows:
        return '<p class="muted">no rated match yet</p>'
    step = -(-len(rows) // CHART_POINTS)
    pts = [rows[i] for i in range(step - 1, len(rows), step)]
    if pts[-1] is not rows[-1]:
        pts.append(rows[-1])
    first = rows[0]
    start = {"rating": first["rating_before"], "mu": first["mu"]}
    lo: float = min(min(p["rating"] for p in pts), start["rating"], 0.0)
    hi: float = max(max(p["mu"] for p in pts), 1.0)
    span = hi - lo or 1.0
    pad_l, pad_r, pad_t, pad_b = 40, 12, 12, 26
    w, h = width - pad_l - pad_r, height - pad_t - pad_b
    n = len(pts)

    def px(i: int) -> float:
        return pad_l + (w * i / (n - 1) if n > 1 else w / 2)

    def py(v: float) -> float:
        return pad_t + h - (v - lo) / span * h

    line = " ".join(f"{px(i):.1f},{py(p['rating']):.1f}" for i, p in enumerate(pts))
    mu = " ".join(f"{px(i):.1f},{py(p['mu']):.1f}" for i, p in enumerate(pts))
    zero = py(0.0)
    out = [
        f'<svg class="ratingsvg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        'role="img" aria-label="rating after each rated match">',
        f'<line x1="{pad_l}" y1="{zero:.1f}" x2="{width - pad_r}" y2="{zero:.1f}" class="axis"/>',
        f'<polyline points="{mu}" class="mu"/>',
        f'<polyline points="{line}" class="rating"/>',
        f'<text x="4" y="{pad_t + 8}" class="ax">{hi:.0f}</text>',
        f'<text x="4" y="{pad_t + h}" class="ax">{lo:.0f}</text>',
        f'<text x="{pad_l}" y="{height - 6}" class="ax">{esc(first["ended"][:10])}</text>',
        f'<text x="{width - pad_r}" y="{height - 6}" class="ax" text-anchor="end">'
        f'{esc(rows[-1]["ended"][:10])} · {len(rows)} matches</text>',
    ]
    if n <= 120:
        for i, p in enumerate(pts):
            out.append(
                f'<circle cx="{px(i):.1f}" cy="{py(p["rating"]):.1f}" r="2.5" class="dot {esc(p["outcome"])}">'
                f'<title>{esc(p["ended"][:16])} {esc(p["match"])}: {esc(p["outcome"])}, rating '
                f'{p["rating_before"]:.1f} → {p["rating"]:.1f}</title></circle>'
            )
    out.append("</svg>")
    return "".join(out)


# --- suspicious play: the auditors' page ----------------------------------------------------


def _suspicious(request: Request, cur: Cursor, bots: bool, min_hands: int) -> dict[str, Any]:
    return _cached(request, ("suspicious", bots, min_hands),
                   lambda: cheats.suspicious(cur, bots=bots, min_hands=min_hands))


MinHands = Annotated[int, Query(ge=0, le=10_000_000)]


def with_grading(request: Request, cur: Cursor, data: dict[str, Any]) -> dict[str, Any]:
    """The list with the grading's progress (api.grading) beside it, and no
    count of flagged players while nothing is graded on what the players
    could know: the signals are not computed then, and "0 flagged" would
    read as a clean table."""
    graded = data.get("graded") or {}
    pending = bool(graded.get("decisions")) and not graded.get("sampled")
    return {**data, "flagged": None if pending else data["flagged"],
            "grading": store_progress(request.app.state, cur)}  # fmt: skip


class FlaggedPlayers:
    """The ids of the players the cheat signals flag (as /suspicious lists
    them), worked out once per store generation: the pages mark every name of
    theirs (api.pages' `flagged`)."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.gen: int | None = None
        self.ids: frozenset[str] = frozenset()

    def __call__(self) -> frozenset[str]:
        gen = getattr(self.store, "generation", 0)
        if gen != self.gen:
            cur = self.store.cursor()
            try:
                rows = cheats.suspicious(cur)["rows"]
            finally:
                cur.close()
            self.ids, self.gen = frozenset(r["player"] for r in rows if r["flagged"]), gen
        return self.ids


@router.get("/suspicious", response_class=HTMLResponse, include_in_schema=False)
def suspicious_page(request: Request, cur: Cur, bots: bool = False,
                    min_hands: Annotated[str | None, Query(max_length=12)] = None) -> HTMLResponse:
    least = 0
    if min_hands:
        if not (min_hands.isascii() and min_hands.isdigit()):
            return HTMLResponse(render("error.html", title="Bad request",
                                       message=f"min_hands: a whole number, not {min_hands!r}"), status_code=422)
        least = int(min_hands)
    data = with_grading(request, cur, _suspicious(request, cur, bots, least))
    params = {k: v for k, v in (("bots", "true" if bots else None), ("min_hands", least or None)) if v is not None}
    return HTMLResponse(render(
        "suspicious.html", nav="suspicious", r=data, grading=data["grading"], params=params, lookalikes=lookalike_players(cur),
        json_url=u("api", "suspicious", **params), csv_url=u("api", "suspicious.csv", **params),
        parquet_url=u("api", "suspicious.parquet", **params),
    ))


@router.get("/api/suspicious", tags=["suspicious"], summary="Cheat signals of every player", operation_id="list_suspicious",
            response_model=s.Suspicious)
def api_suspicious(request: Request, cur: Cur, bots: bool = False, min_hands: MinHands = 0) -> Response:
    """Every player with analysed hands and both cheat signals (docs/insights.md):
    the omniscience index for everyone, the partner-peeking index for the
    players audited; the most suspicious first. `bots`: marked bots too.
    `flagged` is null while no decision is graded on what the players could
    know (the signals are not computed yet); `grading` says how far that
    grade has got and about how long the rest takes."""
    return _json(with_grading(request, cur, _suspicious(request, cur, bots, min_hands)))


_SUSPICIOUS_COLUMNS = (
    "player", "name", "bot", "matches", "hands", "decisions", "flagged",
    "omniscience_index", "omniscience_t", "omniscience_p", "omniscience_p_adjusted", "omniscience_flagged",
    "omniscience_hands", "differs", "differs_hit", "differs_rate",
    "peeking_index", "peeking_t", "peeking_p", "peeking_p_adjusted", "peeking_flagged", "peeking_hands",
    "peeking_decisions", "audit_state", "audit_asked",
)


def _flat(row: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in row.items() if not isinstance(v, dict)}
    for k in ("omniscience", "peeking"):
        for f, v in (row.get(k) or {}).items():
            out[f"{k}_{'flagged' if f == 'flagged' else f}"] = v
    audit = row.get("audit") or {}
    out["audit_state"], out["audit_asked"] = audit.get("state"), audit.get("asked")
    return out


@router.get("/api/suspicious.{fmt}", tags=["suspicious"], summary="Download the cheat signals", operation_id="download_suspicious",
            response_class=Response, responses=s.DOWNLOAD)
def api_suspicious_download(request: Request, cur: Cur, fmt: exports.Format, bots: bool = False,
                            min_hands: MinHands = 0) -> Response:
    """Every row of /api/suspicious, flat, as CSV or Parquet."""
    rows = [_flat(r) for r in _suspicious(request, cur, bots, min_hands)["rows"]]
    return _download(rows, _SUSPICIOUS_COLUMNS, fmt, "suspicious")


def _player_case(request: Request, cur: Cursor, player: str) -> dict[str, Any] | None:
    def make() -> dict[str, Any] | None:
        row = cheats.player_signals(cur, player)
        if row is None:
            return None
        return {**row, "alpha": cheats.ALPHA, "min_hands": cheats.MIN_HANDS, "allowance": cheats.ALLOWANCE,
                "evidence": cheats.evidence(cur, player)}  # fmt: skip
    return _cached(request, ("suspect", player), make)


@router.get("/suspicious/player", response_class=HTMLResponse, include_in_schema=False)
def suspect_page(request: Request, cur: Cur, player: Id) -> HTMLResponse:
    r = _player_case(request, cur, player)
    if r is None:
        return HTMLResponse(render("error.html", title="Not found",
                                   message=f"no analysed hand of {player!r}"), status_code=404)
    running = _auditor(request).running()
    return HTMLResponse(render(
        "suspect.html", nav="suspicious", r=r, running=running, token_set=bool(_token(request)),
        grading=player_grading(request, cur, player),
        audit_hands=cheats.AUDIT_HANDS, audit_samples=cheats.AUDIT_SAMPLES,
        json_url=u("api", "suspicious", "player", player=player),
        csv_url=u("api", "suspicious", "evidence.csv", player=player),
        parquet_url=u("api", "suspicious", "evidence.parquet", player=player),
    ))


@router.get("/api/suspicious/player", tags=["suspicious"], summary="One player's cheat signals", operation_id="get_suspect",
            response_model=s.Suspect, responses=s.errors(404))
def api_suspect(request: Request, cur: Cur, player: Id) -> Response:
    """One player's cheat signals, the pool's rates, the latest audit and the
    evidence: the decisions where the best move on what the player could know
    was no perfect-information best move and it played one anyway. `flagged`
    is null while neither signal is computed; `grading`: how far the store's
    grading on what each player could know has got."""
    r = _player_case(request, cur, player)
    if r is None:
        raise HTTPException(404, f"no analysed hand of {player!r}")
    pending = not (r.get("omniscience") or {}).get("decisions") and r.get("peeking") is None
    return _json({**r, "flagged": None if pending else r["flagged"], "grading": player_grading(request, cur, player)})


_EVIDENCE_COLUMNS = (
    "match", "hand", "ply", "seat", "played", "dd", "dd_best", "pimc", "pimc_best", "best_known", "hindsight",
    "y_peek",
)


@router.get("/api/suspicious/evidence.{fmt}", tags=["suspicious"], summary="Download a player's evidence",
            operation_id="download_evidence", response_class=Response, responses={**s.DOWNLOAD, **s.errors(404)})
def api_evidence_download(request: Request, cur: Cur, fmt: exports.Format, player: Id) -> Response:
    """The evidence rows of /api/suspicious/player as CSV or Parquet."""
    r = _player_case(request, cur, player)
    if r is None:
        raise HTTPException(404, f"no analysed hand of {player!r}")
    return _download(r["evidence"], _EVIDENCE_COLUMNS, fmt, f"evidence-{player}")


# --- audits: the partner-peeking grade, on demand ---------------------------------------------


def _token(request: Request) -> str | None:
    got = getattr(request.app.state, "token", None)
    return got if isinstance(got, str) and got else None


class Auditor:
    """Runs one audit at a time (reports.cheats.audit_player) in a thread of
    the server, the grading in a process of its own (the server keeps its GIL
    for requests); the store's generation is bumped when it is done."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.lock = threading.Lock()
        self.current: str | None = None
        self.thread: threading.Thread | None = None

    def running(self) -> str | None:
        with self.lock:
            return self.current

    def start(self, player: str, hands: int, samples: int, workers: int = 1) -> bool:
        with self.lock:
            if self.current is not None:
                return False
            self.current = player
        self.thread = threading.Thread(target=self._run, args=(player, hands, samples, workers),
                                       name="replay-audit", daemon=True)  # fmt: skip
        self.thread.start()
        return True

    def _run(self, player: str, hands: int, samples: int, workers: int) -> None:
        try:
            cur = self.store.cursor()
            try:
                cheats.audit_player(cur, player, hands=hands, samples=samples, workers=workers,
                                    write_lock=self.store.load_lock)  # fmt: skip
            finally:
                cur.close()
        except Exception:  # noqa: BLE001 - kept in the audits table (state failed, message)
            pass
        finally:
            with self.lock:
                self.current = None
            self.store.bump()


def _auditor(request: Request) -> Auditor:
    state = request.app.state
    got = getattr(state, "auditor", None)
    if got is None:
        got = state.auditor = Auditor(state.store)
    assert isinstance(got, Auditor)
    return got


@router.post("/api/suspicious/audit", status_code=202, tags=["suspicious"], summary="Audit a player for partner peeking",
             operation_id="start_audit", response_model=s.Accepted,
             responses={**s.errors(404, 409), **s.WRITE_ERRORS}, dependencies=[Writer])
def api_audit(request: Request, cur: Cur, player: Id,
              hands: Annotated[int, Query(ge=1, le=100_000)] = cheats.AUDIT_HANDS,
              samples: Annotated[int, Query(ge=1, le=1000)] = cheats.AUDIT_SAMPLES) -> Response:
    """Grade the partner-peeking index of `player` over its latest `hands`
    pair-game hands (`samples` sampled deals a decision), in the background;
    needs the token. 409 while another audit runs; the player's page and
    /api/suspicious/player show the state and, once done, the index."""
    if not cur.execute("SELECT 1 FROM skill_rows WHERE player = ? AND partner IS NOT NULL LIMIT 1",
                       [player]).fetchall():  # fmt: skip
        raise HTTPException(404, f"{player!r} has no analysed hand of a pair game")
    auditor = _auditor(request)
    if not auditor.start(player, hands, samples, getattr(request.app.state, "audit_workers", 1)):
        raise HTTPException(409, f"an audit of {auditor.running()!r} is under way; ask again once it is done")
    return Response(orjson.dumps({"player": player, "state": "running", "hands": hands, "samples": samples,
                                  "status": u("api", "suspicious", "player", player=player)}),
                    status_code=202, media_type="application/json")
