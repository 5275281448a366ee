"""The responses every route module makes: a page, the not-found page, JSON."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi.responses import HTMLResponse, Response

from api.pages import render

__all__ = ["json_response", "not_found", "page"]


def page(name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
    return HTMLResponse(render(name, **ctx), status_code=status)


def not_found(what: str) -> HTMLResponse:
    return page("error.html", status=404, title="Not found", message=what)


def json_response(data: Any) -> Response:
    return Response(orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS), media_type="application/json")
