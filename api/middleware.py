"""The app's ASGI middleware: the write guard (a bearer token, then a cap on
the body, both before a route reads it) and empty query fields as no field."""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.player_key import PLAYER_KEY_PATHS, SCOPE_KEY, looks_like_key

__all__ = ["MAX_INFLATED", "MAX_UPLOAD", "MULTIPART_SLACK", "TOKEN_HELP", "EmptyParams", "WriteGuard", "too_big_msg"]

MAX_UPLOAD = 20 * 1024 * 1024  # raw bytes of one uploaded file
MAX_INFLATED = 200 * 1024 * 1024  # what a .jsonl.gz may expand to (gzip bombs)
MULTIPART_SLACK = 64 * 1024  # the multipart envelope around an upload of MAX_UPLOAD
TOKEN_HELP = (
    "write endpoints are disabled: no token is set. Start the server with the "
    "environment variable REPLAY_TOKEN=<a long random secret> and send "
    "'Authorization: Bearer <that secret>' with every POST and DELETE."
)


# --- write guard: auth before the body is read, and a body size cap ----------------


class _TooBig(Exception):
    pass


class WriteGuard:
    """Pure ASGI middleware for POST/PUT/PATCH/DELETE: bearer token, then a body cap.

    A player's own key (api.player_key) is let through to the writes it may
    make, left in the scope for the route, which checks it against the
    player it writes for."""

    def __init__(self, app: ASGIApp, token: Callable[[], str | None], limit: int) -> None:
        self.app = app
        self.token = token
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        expected = self.token()
        if not expected:
            await _send_json(send, 403, {"detail": TOKEN_HELP})
            return
        headers = dict(scope["headers"])
        auth = headers.get(b"authorization", b"").decode("latin-1")
        scheme, _, given = auth.partition(" ")
        given = given.strip()
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.encode(), expected.encode()):
            if scheme.lower() == "bearer" and scope["path"] in PLAYER_KEY_PATHS and looks_like_key(given):
                # a player's own key: the route checks it against the player it writes for
                scope = {**scope, SCOPE_KEY: given}
            else:
                await _send_json(
                    send, 401, {"detail": "send 'Authorization: Bearer <REPLAY_TOKEN>'"},
                    extra=[(b"www-authenticate", b"Bearer")],
                )
                return
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.limit:
            await _send_json(send, 413, {"detail": too_big_msg(self.limit)})
            return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.limit:
                    raise _TooBig
            return msg

        async def watch(msg: Message) -> None:
            nonlocal started
            if msg["type"] == "http.response.start":
                started = True
            await send(msg)

        try:
            await self.app(scope, counted, watch)
        except _TooBig:
            if not started:
                await _send_json(send, 413, {"detail": too_big_msg(self.limit)})


def too_big_msg(limit: int) -> str:
    return f"upload too large: at most {MAX_UPLOAD // (1024 * 1024)} MB per file (body limit {limit} bytes)"


async def _send_json(send: Send, status: int, body: dict[str, Any], extra: list[tuple[bytes, bytes]] | None = None) -> None:
    data = orjson.dumps(body)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + (extra or [])})
    await send({"type": "http.response.body", "body": data})


# --- empty query fields: a filter form's "any" -----------------------------------------


class EmptyParams:
    """Pure ASGI middleware: a query parameter with an empty value is no parameter.

    A filter form sends every field, the empty ones too (``?verdict=&date_from=``);
    empty means "any" on every page and JSON twin alike, so those are dropped
    before the route reads its parameters. A query without one is untouched
    (three byte searches on the replay page's path).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            qs: bytes = scope.get("query_string", b"")
            if qs and (b"=&" in qs or qs.endswith(b"=") or b"&&" in qs):
                kept = [p for p in qs.split(b"&") if p and not p.endswith(b"=")]
                scope = {**scope, "query_string": b"&".join(kept)}
        await self.app(scope, receive, send)
