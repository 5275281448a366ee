"""The players: their list, and a player's page (its report under filters,
ratings and luck-and-skill insights: `api.insights`)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response
from markupsafe import Markup

from api import exports, insights
from api import queries as q
from api import schemas as s
from api.charts import cumulative_svg, trend_svg
from api.deps import Cur, Cursor, PageNo, Text, form_date
from api.responses import json_response, not_found, page
from reports.player import ReportFilters, kept_report, player_report

router = APIRouter()


@router.get("/players", response_class=HTMLResponse, include_in_schema=False)
def players_page(cur: Cur, q_: Annotated[str | None, Query(alias="q", max_length=200)] = None,
                 page_no: PageNo = 1, sort: exports.PlayerSort | None = None,
                 order: exports.Order | None = None) -> HTMLResponse:
    return page("players.html", nav="players", q=q_, sorting=q.sort_state(q.PLAYER_SORTS, sort, order),
                **q.list_players(cur, q=q_, page=page_no, sort=sort, order=order))


@router.get("/api/players", tags=["players"], summary="List or search players", operation_id="list_players",
            response_model=s.Players)
def api_players(cur: Cur, q_: Annotated[str | None, Query(alias="q", max_length=200)] = None,
                page_no: PageNo = 1, per_page: Annotated[int, Query(ge=1, le=1000)] = 100,
                sort: exports.PlayerSort | None = None, order: exports.Order | None = None) -> Response:
    """The players, a page at a time; `q` finds any part of a name or id, case and
    accents aside (`zoe` finds Zoé)."""
    return json_response(q.list_players(cur, q=q_, page=page_no, per_page=per_page, sort=sort, order=order))


@router.get("/players/{player:path}", response_class=HTMLResponse, include_in_schema=False)
def player_page(request: Request, cur: Cur, player: str, profile: Text = None, partner: Text = None,
                date_from: Annotated[str | None, Query(max_length=40)] = None,
                date_to: Annotated[str | None, Query(max_length=40)] = None) -> HTMLResponse:
    try:
        # a form's date: "" is no date (parsed as the fairness page parses its form)
        chosen = ReportFilters(profile or None, form_date(date_from, "date_from"), form_date(date_to, "date_to"),
                               partner or None)
    except HTTPException as exc:
        return page("error.html", status=422, title="Bad request", message=exc.detail)
    everything = _player_view(request, cur, player)
    if everything is None:
        return not_found(f"no player {player!r} in the store")
    rep = _player_view(request, cur, player, chosen) if chosen else everything
    assert rep is not None
    points = [(t["bucket"], t["points_per_hand"], t["win_rate"]) for t in rep["trend"]]
    return page("player.html", nav="players", r=rep, all=everything, filters=chosen.to_dict(),
                trend=Markup(trend_svg(points)), cumulative=Markup(cumulative_svg(rep["cumulative"])),
                **insights.player_extras(cur, player, request, chosen))


@router.get("/api/players/{player:path}", tags=["players"], summary="A player's report", operation_id="get_player",
            response_model=s.PlayerReport, responses=s.errors(404))
def api_player(request: Request, cur: Cur, player: str,
               profile: Annotated[str | None, Query(max_length=200, description="hands of this profile only")] = None,
               partner: Annotated[str | None, Query(max_length=200, description="hands beside this partner (a player id) only")] = None,
               date_from: Annotated[dt.date | None, Query(description="hands started on or after (UTC)")] = None,
               date_to: Annotated[dt.date | None, Query(description="hands started on or before (UTC)")] = None,
               ) -> Response:
    """A player's report: matches and hands won and lost, points, partners, profiles,
    deal luck, the trend, ratings and skill; the filters narrow it to some hands.
    `grading`: how far the store's grading on what each player could know has got
    (`first`: the player's newest matches without it, asked to be graded first)."""
    chosen = ReportFilters(profile or None, date_from, date_to, partner or None)
    if chosen and _player_view(request, cur, player) is None:
        raise HTTPException(404, f"no player {player!r}")
    rep = _player_view(request, cur, player, chosen or None)
    if rep is None:
        raise HTTPException(404, f"no player {player!r}")
    return json_response({**rep, "ratings": insights.player_ratings(cur, player, request),
                          "skill": insights.player_skill(request, cur, player, chosen),
                          "grading": insights.player_grading(request, cur, player)})


def _player_view(request: Request, cur: Cursor, player: str,
                 filters: ReportFilters | None = None) -> dict[str, Any] | None:
    """The player's report: kept at load time, or worked out here when none is
    kept (yet), or kept by a store older than its cumulative points, its
    deal luck's counts or its trend's dates; with
    `filters`, worked out here (both cached until the player's matches change)."""
    state = request.app.state

    def make() -> dict[str, Any] | None:
        if filters:
            return player_report(cur, player, filters)
        kept = kept_report(cur, player)
        fresh = (kept is not None and "cumulative" in kept and "played" in (kept.get("deal_luck") or {})
                 and all("date_to" in t for t in kept.get("trend") or []))
        return kept if fresh else player_report(cur, player)

    report: dict[str, Any] | None = state.player_cache.fetch(
        (player, filters) if filters else player, state.store.generation,
        lambda: q.player_version(cur, player), make,
    )
    return report
