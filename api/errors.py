"""Errors as the client asked for them: the HTML error page on a page, JSON on the API."""

from __future__ import annotations

from fastapi import Request
from fastapi.exception_handlers import http_exception_handler, request_validation_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from api.responses import page

__all__ = ["is_page", "on_bad_request", "on_http_error"]


def is_page(request: Request) -> bool:
    """A web page (HTML), not the JSON API or its docs."""
    path = request.url.path
    return not (path.startswith("/api/") or path.startswith("/static") or path in (
        "/openapi.json", "/docs", "/redoc", "/docs/oauth2-redirect"))


def _field_errors(exc: RequestValidationError) -> str:
    """The validation errors as one sentence: field, what is wrong, the value sent."""
    parts = []
    for err in exc.errors():
        loc = [str(x) for x in err.get("loc", ()) if x not in ("query", "path", "body")]
        given = err.get("input")
        shown = f" (got {given!r})" if isinstance(given, str | int | float) else ""
        parts.append(f"{'.'.join(loc) or 'request'}: {err.get('msg', 'invalid')}{shown}")
    return "; ".join(parts)


async def on_bad_request(request: Request, exc: Exception) -> Response:
    """A bad parameter on a page gets the HTML error page, on the API the JSON 422."""
    assert isinstance(exc, RequestValidationError)
    if is_page(request):
        return page("error.html", status=422, title="Bad request", back=request.url.path,
                    message=f"This page cannot show that: {_field_errors(exc)}.")
    return await request_validation_exception_handler(request, exc)


async def on_http_error(request: Request, exc: Exception) -> Response:
    """An error of a page (not found, a bad date) as the HTML error page; JSON for the API."""
    assert isinstance(exc, StarletteHTTPException)
    if is_page(request) and exc.status_code >= 400 and request.method in ("GET", "HEAD"):
        titles = {404: "Not found", 405: "Method not allowed", 422: "Bad request"}
        message = str(exc.detail)
        if exc.status_code == 404 and message == "Not Found":  # no route at all
            message = f"There is no page at {request.url.path}."
        return page("error.html", status=exc.status_code, title=titles.get(exc.status_code, "Error"),
                    message=message, back=request.url.path if exc.status_code == 422 else None)
    return await http_exception_handler(request, exc)
