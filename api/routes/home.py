"""The home page and its JSON twin: the store's counts and the lists worth a look."""

from __future__ import annotations

import hmac
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from api import queries as q
from api import schemas as s
from api.deps import Cur, Cursor
from api.responses import json_response, page
from replay.store import layout, refusals

router = APIRouter()


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
def home(request: Request, cur: Cur) -> HTMLResponse:
    return page("home.html", nav="home", refused=_refused(request, cur), **_summary(request, cur))


@router.get("/api/summary", tags=["summary"], summary="The store at a glance", operation_id="get_summary",
            response_model=s.Summary)
def api_summary(request: Request, cur: Cur) -> Response:
    """The home page's counts (matches by verdict, hands, findings, players, log files),
    the latest matches, the latest that are not valid, and the most frequent finding codes."""
    got = _summary(request, cur)
    refused = _refused(request, cur)
    return json_response({**got, "refused": refused} if refused else got)


def _token_holder(request: Request) -> bool:
    """Whether the request carries the write token (``Authorization: Bearer``)."""
    token = request.app.state.token
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    return bool(token) and scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


def _refused(request: Request, cur: Cursor) -> list[str]:
    """For the token holder: the spool batches the store refused whose files
    are not stored yet (ingesting them again stores them, and the line goes)."""
    if not _token_holder(request):
        return []
    out = []
    for r in refusals(layout(request.app.state.store.db_path).spool)[:20]:
        shas = list(r.files)
        stored = cur.execute("SELECT count(*) FROM log_files WHERE list_contains(?, sha256)", [shas]).fetchall()
        if not shas or stored[0][0] < len(shas):
            out.append(r.line())
    return out


@router.get("/favicon.ico", include_in_schema=False)
def favicon() -> RedirectResponse:
    return RedirectResponse("/static/favicon.svg")


def _summary(request: Request, cur: Cursor) -> dict[str, Any]:
    """The home page's counts and lists, worked out once per store generation
    (ten counts and three sorts over every match: 78 ms at 1M hands)."""
    state = request.app.state
    gen = state.store.generation
    got: dict[str, Any] | None = state.summary_cache.fresh("summary", gen)
    if got is None:
        got = q.summary(cur)
        state.summary_cache.put("summary", (gen, None, got))
    return got
