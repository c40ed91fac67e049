"""The route class every router uses: JSON bodies are parsed in a worker thread.

FastAPI parses a JSON body with `json.loads` on the event loop, so one large body stalls
every other request (even `/health`) while it parses. Bodies are size-limited too
(`limits.max_body_bytes`); this keeps the loop free for the time that still takes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool


class _ThreadedJsonRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            body = await self.body()
            self._json = await run_in_threadpool(json.loads, body)
        return self._json


class ThreadedJsonRoute(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            return await handler(_ThreadedJsonRequest(request.scope, request.receive))

        return route
