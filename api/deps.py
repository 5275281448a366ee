"""What the routes share: a cursor per request, the app's store, and the
query and path parameters several pages take, as `Annotated` aliases."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from typing import Annotated, Literal

from fastapi import Depends, HTTPException, Query, Request, Security
from fastapi import Path as PathParam
from fastapi.security import HTTPBearer

from api.connection import Cursor, Store

__all__ = ["MAX_HAND", "MAX_PLY", "AppStore", "Cur", "Cursor", "HandNo", "PageNo", "Severity", "Text", "Verdict",
           "Writer", "cursor", "form_date"]


async def cursor(request: Request) -> AsyncIterator[Cursor]:
    """One cursor per request, closed after it.

    Async on purpose: opening a cursor is a quick call, and a sync generator
    dependency would cost two thread-pool hops per request.
    """
    cur = request.app.state.store.cursor()
    try:
        yield cur
    finally:
        cur.close()


def app_store(request: Request) -> Store:
    """The app's store (`api.connection.Store`), opened by its lifespan."""
    store: Store = request.app.state.store
    return store


Cur = Annotated[Cursor, Depends(cursor)]
AppStore = Annotated[Store, Depends(app_store)]

Verdict = Literal["valid", "invalid", "unreadable"]
Severity = Literal["error", "warning"]
PageNo = Annotated[int, Query(alias="page", ge=1, le=100_000)]
MAX_HAND, MAX_PLY = 1_000_000, 10_000
HandNo = Annotated[int, PathParam(ge=0, le=MAX_HAND)]
Text = Annotated[str | None, Query(max_length=200)]

#: The write token as the API documents it (a route's `dependencies`): the
#: bearer scheme puts an "Authorize" button on /docs, and "Try it out" sends
#: the token. It checks nothing itself: api.middleware.WriteGuard does,
#: before any body is read.
bearer = HTTPBearer(
    scheme_name="token", auto_error=False,
    description="The server's write token (REPLAY_TOKEN), sent as `Authorization: Bearer <token>`.",
)
Writer = Security(bearer)


def form_date(text: str | None, name: str) -> dt.date | None:
    """A date a page's form sent as text ("" for none): parsed here, not by FastAPI,
    so that a bad one is said on the page."""
    if not text:
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise HTTPException(422, f"{name}: not a date (YYYY-MM-DD): {text!r}") from None
