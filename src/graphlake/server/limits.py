"""Request body size limits, enforced while the body streams in (413 beyond them).

A declared `Content-Length` over the limit is refused before any byte is read; a chunked
body is counted as it arrives and stopped the moment it passes the limit.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphlake.server.errors import error_response


class BodyTooLarge(HTTPException):
    """Raised from `receive`: an HTTPException, so FastAPI's body parsing passes it on
    (it turns other errors while reading a body into a 400)."""

    def __init__(self, limit: int):
        super().__init__(413, f"the request body is larger than {limit} bytes")


class BodyLimit:
    """Pure ASGI middleware; `limit_for(path)` gives the byte limit of a request."""

    def __init__(self, app: ASGIApp, limit_for: Callable[[str], int]):
        self.app = app
        self.limit_for = limit_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope.get("path", ""))
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            response = error_response(
                413, "PayloadTooLarge", BodyTooLarge(limit).detail, {"Connection": "close"}
            )
            await response(scope, receive, send)
            return
        received = 0

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)  # answered by the HTTPException handler
            return message

        await self.app(scope, limited, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
