"""A hand's replay page, /matches/{match}/hands/{n}?ply=N&view=seatK, and its
JSON twin /api/matches/{match}/hands/{n}?view=seatK (`api.hand_page` draws
them, `api.hand_cache` keeps them)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response

from api import schemas as s
from api.deps import MAX_HAND, MAX_PLY, HandNo
from api.hand_cache import NoSuchSeat, cached_page, cached_twin, view_of
from api.responses import not_found, page

router = APIRouter()


# The replay page is a plain Starlette route: FastAPI's parameter solving
# and its thread hop cost a millisecond of the server's one core per page,
# as much as the rest of the request (bench/api.py; the page has no schema)
async def hand_page(request: Request) -> Response:
    match_id, hand = request.path_params["match_id"], request.path_params["hand"]
    raw = request.query_params.get("ply") or None
    if raw is not None and not (raw.isascii() and raw.isdigit() and int(raw) <= MAX_PLY):
        return page("error.html", status=422, title="Bad request",
                    message=f"ply must be a whole number from 0 to {MAX_PLY}, not {raw!r}")
    try:
        viewer = view_of(request.query_params.get("view"))
        body = (await cached_page(request.app.state, match_id, hand, raw and int(raw), viewer)
                if hand <= MAX_HAND else None)
    except (ValueError, NoSuchSeat) as exc:
        return page("error.html", status=422, title="Bad request", message=str(exc))
    if body is None:
        return not_found(f"no hand {hand} in match {match_id!r}")
    return HTMLResponse(body)


router.add_route("/matches/{match_id:path}/hands/{hand:int}", hand_page, methods=["GET"], include_in_schema=False)


@router.get("/api/matches/{match_id:path}/hands/{hand}", tags=["hands"], summary="A hand's replay", operation_id="get_hand",
            response_model=s.Hand, responses=s.errors(404, 422))
async def api_hand(request: Request, match_id: str, hand: HandNo,
                   view: Annotated[str | None, Query(
                       max_length=10, pattern=r"^(all|seat\d{1,2})?$",
                       description="`seatN`: only what seat N knew at each ply; `all` (the default): "
                                   "everything the hand allows")] = None) -> Response:
    """Every step of a hand: the move in words, the line, each seat's tiles, and the
    grades of its moves once analysed. While the hand is on, what no seat may see
    yet stays hidden; with `view=seatN`, only what seat N knew at each step."""
    # async: a cached twin costs no thread, and a render worker draws a new one
    try:
        body = await cached_twin(request.app.state, match_id, hand, view_of(view))
    except NoSuchSeat as exc:
        raise HTTPException(422, str(exc)) from None
    if body is None:
        raise HTTPException(404, f"no hand {hand} in match {match_id!r}")
    return Response(body, media_type="application/json")
