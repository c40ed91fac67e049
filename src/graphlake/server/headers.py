"""Response headers added to chosen paths (e.g. `/openapi.json` gets the UI's security
headers: no framing, no sniffing, no caching, a CSP that runs no script)."""

from __future__ import annotations

from collections.abc import Mapping

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class SecurityHeaders:
    """Pure ASGI middleware: `headers` are set on every response to one of `paths`."""

    def __init__(self, app: ASGIApp, paths: tuple[str, ...], headers: Mapping[str, str]):
        self.app = app
        self.paths = frozenset(p for p in paths if p)
        self.headers = dict(headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") not in self.paths:
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                out = MutableHeaders(scope=message)
                for name, value in self.headers.items():
                    out[name] = value
            await send(message)

        await self.app(scope, receive, with_headers)
