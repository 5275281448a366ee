"""The ratings pages and their JSON twins (reports.ratings, migration 013).

    /leaderboard?kind&pool&sort&order&bots&min_matches&q&page
                                /api/leaderboard (same, per_page), /api/leaderboard.csv (every row)
    /pair?a&b                   /api/pair, /api/pair/matches.csv (its rated matches)
                                /api/ratings/history?player&partner&pool (+ .csv)
                                /api/ratings/calibration?holdout&profile

The player page's rating section is drawn from `player_extras` (api.app
calls it). Like api.fairness, the router needs only ``app.state.store``
with ``cursor()`` and ``generation``; pages render through api.pages.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

import duckdb
import orjson
from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response
from markupsafe import Markup

# a cursor per request, and values by (store generation, key): the fairness page's
from api.fairness import Cur, _Cache
from api.pages import render, u
from api.render import esc
from reports import leaderboard as lb
from reports.pairs import pair_report
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


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def filename(stem: str) -> str:
    """A download's file name: ids come from logs, a header takes only plain ASCII.

    >>> filename("ratings-p/1-Ōtani <x>")
    'ratings-p_1-_tani_x_.csv'
    """
    return _UNSAFE.sub("_", stem)[:150] + ".csv"


def _csv(rows: Sequence[dict[str, Any]], name: str, columns: Sequence[str] | None = None) -> Response:
    """Rows as a CSV download (the JSON rows' keys as columns, lists as JSON text)."""
    cols = list(columns or (rows[0].keys() if rows else ()))
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow([
            orjson.dumps(v).decode() if isinstance(v, list | dict) else "" if v is None else v
            for v in (r.get(c) for c in cols)
        ])
    return Response(out.getvalue(), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{filename(name)}"'})


def _cached(request: Request, key: Any, make: Callable[[], Any]) -> Any:
    state = request.app.state
    cache = getattr(state, "ratings_cache", None)
    if cache is None:
        cache = state.ratings_cache = _Cache()
    return cache.get_or_make((getattr(state.store, "generation", 0), key), make)


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


@router.get("/api/leaderboard")
def api_leaderboard(
    request: Request, cur: Cur, kind: Kind = "players", pool: Text = None, sort: Sort = "rating",
    order: Order = "desc", bots: bool = False, min_matches: MinMatches = 0, q: Text = None,
    page_no: PageNo = 1, per_page: Annotated[int, Query(ge=1, le=1000)] = PER_PAGE,
) -> Response:
    """Players (or pairs) of a pool by rating (mu - 3 sigma; see docs/insights.md).
    `pool`: `*` (default) for every profile together, or a profile."""
    return _json(_board(request, cur, kind, pool or ALL, sort, order, bots, min_matches, q, page_no, per_page))


@router.get("/api/leaderboard.csv")
def api_leaderboard_csv(
    request: Request, cur: Cur, kind: Kind = "players", pool: Text = None, sort: Sort = "rating",
    order: Order = "desc", bots: bool = False, min_matches: MinMatches = 0, q: Text = None,
) -> Response:
    """Every row the leaderboard's filters keep, in its order, as CSV."""
    data = _board(request, cur, kind, pool or ALL, sort, order, bots, min_matches, q, 1, None)
    cols = ["place", *(c for c in _BOARD_COLUMNS if kind == "pairs" or not c.startswith("partner"))]
    return _csv(data["rows"], f"leaderboard-{kind}", cols)


_BOARD_COLUMNS = (
    "pool", "player", "name", "partner", "partner_name", "bot", "rating", "mu", "sigma", "matches", "wins",
    "ties", "losses", "win_rate", "hands", "points_per_hand", "points_against_per_hand", "first_played",
    "last_played",
)


# --- rating history and calibration ---------------------------------------------------------


@router.get("/api/ratings/history")
def api_history(cur: Cur, player: Id, partner: Text = None, pool: Text = None) -> Response:
    """A player's (or with `partner`, a pair's) rating after each rated match of `pool` (default `*`)."""
    return _json(lb.history(cur, player, partner or None, pool or ALL))


@router.get("/api/ratings/history.csv")
def api_history_csv(cur: Cur, player: Id, partner: Text = None, pool: Text = None) -> Response:
    rows = lb.history(cur, player, partner or None, pool or ALL)
    return _csv(rows, "ratings-" + "-".join(filter(None, (player, partner))), _HISTORY_COLUMNS)


_HISTORY_COLUMNS = (
    "pos", "match", "ended", "profile", "side", "place", "sides", "outcome", "bot", "rating_before",
    "rating", "mu", "sigma", "hands", "points_for", "points_against",
)


@router.get("/api/ratings/calibration")
def api_calibration(request: Request, cur: Cur, holdout: Holdout = 0.2, profile: Text = None) -> Response:
    """How well the ratings predicted the last `holdout` of each profile's
    matches, against 1/n and the seats' base rates (log-loss, Brier)."""
    return _json(_calibration(request, cur, holdout, profile or None))


# --- a pair ---------------------------------------------------------------------------------


def _pair(request: Request, cur: Cursor, a: str, b: str) -> dict[str, Any] | None:
    return _cached(request, ("pair", *sorted((a, b))), lambda: pair_report(cur, a, b))


@router.get("/pair", response_class=HTMLResponse, include_in_schema=False)
def pair_page(request: Request, cur: Cur, a: Id, b: Id) -> HTMLResponse:
    r = _pair(request, cur, a, b)
    if r is None:
        return HTMLResponse(render("error.html", title="Not found",
                                   message=f"{a!r} and {b!r} never partnered"), status_code=404)
    x, y = r["players"][0]["player"], r["players"][1]["player"]
    return HTMLResponse(render(
        "pair.html", nav="leaderboard", r=r, chart=Markup(rating_svg(r["history"])),
        json_url=u("api", "pair", a=x, b=y), csv_url=u("api", "pair", "matches.csv", a=x, b=y),
        history_csv=u("api", "ratings", "history.csv", player=x, partner=y), shown=r["matches"][:MATCH_ROWS],
    ))


MATCH_ROWS = 100  # rated matches listed on the pair page (all of them in the JSON and CSV)


@router.get("/api/pair")
def api_pair(request: Request, cur: Cur, a: Id, b: Id) -> Response:
    """The pair of players `a` and `b`: hands together, rated matches, opponents, rating history."""
    r = _pair(request, cur, a, b)
    if r is None:
        raise HTTPException(404, f"{a!r} and {b!r} never partnered")
    return _json(r)


@router.get("/api/pair/matches.csv")
def api_pair_matches_csv(request: Request, cur: Cur, a: Id, b: Id) -> Response:
    r = _pair(request, cur, a, b)
    if r is None:
        raise HTTPException(404, f"{a!r} and {b!r} never partnered")
    return _csv(r["matches"], f"pair-{'-'.join(sorted((a, b)))}-matches", _PAIR_MATCH_COLUMNS)


_PAIR_MATCH_COLUMNS = (
    "pos", "match", "ended", "profile", "side", "outcome", "score_for", "score_against", "opponent",
    "opponent_name", "opponent_partner", "opponent_partner_name", "opponent_bot", "rating_before",
    "rating_after", "hands", "points_for", "points_against",
)


# --- the player page's section ------------------------------------------------------------


def player_ratings(cur: Cursor, player: str) -> dict[str, Any]:
    """The ratings the player's JSON twin carries (reports.leaderboard.player_ratings)."""
    return lb.player_ratings(cur, player)


def player_extras(cur: Cursor, player: str) -> dict[str, Any]:
    """What player.html's rating section is drawn from: `ratings` and `rating_chart`."""
    got = lb.player_ratings(cur, player)
    return {"ratings": got, "rating_chart": Markup(rating_svg(got["history"]))}


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
    lo = min(min(p["rating"] for p in pts), start["rating"], 0.0)
    hi = max(max(p["mu"] for p in pts), 1.0)
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
