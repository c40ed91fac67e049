"""Who a request acts as: the author of the commits it makes, and its branch rules.

A pure ASGI middleware reads the request's identity (the bearer token's entry in the
`TokenTable`, or the web UI session's) and, for the whole request, makes the token's
name the author of every commit (`catalog.authors.acting_as`: a context variable, which
the thread a sync route runs in inherits), and restricts its state changes to the
token's branch patterns (`catalog.permissions.restricted_to`). It also leaves the
identity in the request state (`request.state.graphlake_identity`). Without auth
(`--no-auth`) requests act as the default author of the server process and may change
every branch.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Send
from starlette.types import Scope as AsgiScope

from graphlake.catalog.authors import acting_as
from graphlake.catalog.permissions import restricted_to
from graphlake.server.auth import Identity, bearer_token
from graphlake.server.ui.gate import is_ui_path
from graphlake.server.ui.session import cookie_from_scope

IDENTITY_KEY = "graphlake_identity"


def _identity(scope: AsgiScope) -> Identity | None:
    app = scope.get("app")
    state = getattr(getattr(app, "state", None), "graphlake", None)
    if state is None or state.config.no_auth:
        return None
    if is_ui_path(scope.get("path", "")):
        sessions = getattr(app.state, "graphlake_ui_sessions", None)  # type: ignore[union-attr]
        session = sessions.get(cookie_from_scope(scope)) if sessions is not None else None
        if session is None or session.name is None:
            return None
        return Identity(session.scope, session.name, session.branches)
    token = bearer_token(scope)
    return state.tokens.identify(token) if token else None


class ActingIdentity:
    """Runs each HTTP request as its token's author (see the module docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        identity = _identity(scope) if scope["type"] == "http" else None
        if identity is None:
            await self.app(scope, receive, send)
            return
        scope.setdefault("state", {})[IDENTITY_KEY] = identity
        with acting_as(identity.name), restricted_to(identity.branches):
            await self.app(scope, receive, send)
