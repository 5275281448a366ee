"""The matches: their list with filters and sorting, a match's score sheet,
and its deletion (DELETE, with the write token); a hand's replay under a
match is `api.routes.hands`."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response

from api import exports
from api import queries as q
from api import schemas as s
from api.deps import Cur, Cursor, PageNo, Text, Verdict, Writer
from api.grading import match_progress, store_progress
from api.responses import json_response, not_found, page
from api.routes import hands
from replay.store import delete_match

router = APIRouter()

Rated = exports.Rated
RatedOutcome = exports.RatedOutcome | None


def _matches(cur: Cursor, player: str | None, table: str | None, profile: str | None,
             verdict: str | None, date_from: dt.date | None, date_to: dt.date | None,
             page_no: int, per_page: int, sort: str | None = None, order: str | None = None,
             rated: str | None = None, rated_outcome: str | None = None) -> dict[str, Any]:
    return q.list_matches(cur, player=player, table=table, profile=profile, verdict=verdict,
                          date_from=date_from, date_to=date_to, page=page_no, per_page=per_page,
                          sort=sort, order=order, rated=rated, rated_outcome=rated_outcome)


@router.get("/matches", response_class=HTMLResponse, include_in_schema=False)
def matches_page(
    cur: Cur, player: Text = None, table: Text = None, profile: Text = None,
    verdict: Verdict | None = None, date_from: dt.date | None = None,
    date_to: dt.date | None = None, page_no: PageNo = 1,
    sort: exports.MatchSort | None = None, order: exports.Order | None = None, rated: Rated = None,
    rated_outcome: RatedOutcome = None,
) -> HTMLResponse:
    data = _matches(cur, player, table, profile, verdict, date_from, date_to, page_no, 50, sort, order, rated,
                    rated_outcome)
    filters = {"player": player, "table": table, "profile": profile, "verdict": verdict,
               "date_from": date_from, "date_to": date_to, "rated": rated,
               "rated_outcome": rated_outcome}
    return page("matches.html", nav="matches", filters=filters, choices=q.filter_choices(cur),
                sorting=q.sort_state(q.MATCH_SORTS, sort, order), **data)


@router.get("/api/matches", tags=["matches"], summary="List matches", operation_id="list_matches",
            response_model=s.Matches)
def api_matches(
    cur: Cur, player: Text = None, table: Text = None, profile: Text = None,
    verdict: Verdict | None = None, date_from: dt.date | None = None,
    date_to: dt.date | None = None, page_no: PageNo = 1,
    per_page: Annotated[int, Query(ge=1, le=500)] = 50,
    sort: exports.MatchSort | None = None, order: exports.Order | None = None, rated: Rated = None,
    rated_outcome: RatedOutcome = None,
) -> Response:
    """The matches the filters select, a page at a time. `player` finds any part of a
    player's name or id, case and accents aside; with it, each row says how that
    player did (`outcome`) and beside whom (`partner`). `rated`: only the matches rated in
    that pool ("*" every profile together, else a profile's name), with `player` those
    counted in that player's own rating; `rated_outcome` narrows them to those won,
    tied or lost."""
    return json_response(_matches(cur, player, table, profile, verdict, date_from, date_to, page_no, per_page,
                                  sort, order, rated, rated_outcome))


# a match id may hold "/" (so "{match_id:path}"): the hand routes go before the match's own
router.include_router(hands.router)


@router.get("/matches/{match_id:path}", response_class=HTMLResponse, include_in_schema=False)
def match_page(request: Request, cur: Cur, match_id: str) -> HTMLResponse:
    data = q.match_detail(cur, match_id)
    if data is None:
        return not_found(f"no match {match_id!r} in the store")
    return page("match.html", nav="matches", grading=store_progress(request.app.state, cur),
                match_grading=match_progress(request.app.state, match_id, data["accuracy"]), **data)


@router.get("/api/matches/{match_id:path}", tags=["matches"], summary="A match's score sheet", operation_id="get_match",
            response_model=s.MatchDetail, responses=s.errors(404))
def api_match(request: Request, cur: Cur, match_id: str) -> Response:
    """A match's score sheet: its rules, seats, every hand's result and grades, its
    findings, each seat's accuracy and the costliest moves; `grading`: how far the
    store's grading on what each player could know has got; `match_grading`:
    this match's (one that lacks it is graded first, as soon as it is asked for)."""
    data = q.match_detail(cur, match_id)
    if data is None:
        raise HTTPException(404, f"no match {match_id!r}")
    return json_response({**data, "grading": store_progress(request.app.state, cur),
                          "match_grading": match_progress(request.app.state, match_id, data["accuracy"])})


@router.delete("/api/matches/{match_id:path}", tags=["matches"], summary="Delete a match", operation_id="delete_match",
               response_model=s.Deleted, responses={**s.errors(404), **s.WRITE_ERRORS}, dependencies=[Writer])
def api_delete_match(request: Request, cur: Cur, match_id: str) -> Response:
    """Delete a match and everything worked out from it (needs the write token).
    Its log file stays kept: uploading it again stores it again."""
    store = request.app.state.store
    with store.load_lock:  # the store's one writer: no spool load meanwhile
        # its seeds' SEED_REUSED, players, reports and ratings follow
        if not delete_match(cur, match_id):
            raise HTTPException(404, f"no match {match_id!r}")
    store.bump()
    return json_response({"deleted": match_id})
