"""The UI's half of "authenticate before reading a body".

The API's `AuthBeforeBody` wants a bearer token; UI forms carry a session cookie instead.
This middleware runs for `/ui` paths only (the API's skips them): a form post needs a
live session of the scope its route needs before any byte of its body is read. Only the
login form is open (it is where a session comes from); its body is bounded like every
UI form (`FORM_MAX_BYTES`, by the body-size middleware).
"""

from __future__ import annotations

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Send
from starlette.types import Scope as AsgiScope

from graphlake.server.config import Scope, ServerConfig
from graphlake.server.ui.session import SessionStore, cookie_from_scope

PREFIX = "/ui"
LOGIN_PATH = "/ui/login"
FORM_MAX_BYTES = 16 * 1024
# Form posts that change the graph need write (deleting a tag or a branch admin); the
# rest (logout, a query) any session. A route may ask for more (a reset of a protected
# branch needs admin): this is the least scope its body is read for.
_SCOPES = {
    "/ui/merge": Scope.write,
    "/ui/revert": Scope.write,
    "/ui/cherry-pick": Scope.write,
    "/ui/reset": Scope.write,
    "/ui/tags/create": Scope.write,
    "/ui/tags/delete": Scope.admin,
    "/ui/branches/create": Scope.write,
    "/ui/branches/delete": Scope.admin,
}
_WRITE_PREFIXES = ("/ui/mr",)  # merge requests: open, approve, comment, close, merge


def is_ui_path(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def needed_scope(path: str) -> Scope:
    if path in _SCOPES:
        return _SCOPES[path]
    if any(path == p or path.startswith(p + "/") for p in _WRITE_PREFIXES):
        return Scope.write
    return Scope.read


class UiBodyGate:
    def __init__(self, app: ASGIApp, config: ServerConfig, sessions: SessionStore):
        self.app = app
        self.config = config
        self.sessions = sessions

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if (
            scope["type"] != "http"
            or self.config.no_auth
            or not is_ui_path(path)
            or path == LOGIN_PATH
            or not _has_body(scope)
        ):
            await self.app(scope, receive, send)
            return
        session = self.sessions.get(cookie_from_scope(scope))
        needed = needed_scope(path)
        if session is None:
            response = PlainTextResponse(
                "not logged in: log in at /ui/login", 401, headers={"Connection": "close"}
            )
        elif session.scope < needed:
            response = PlainTextResponse(
                f"this needs the {needed.name} scope; you are logged in with {session.scope.name}",
                403,
                headers={"Connection": "close"},
            )
        else:
            await self.app(scope, receive, send)
            return
        await response(scope, receive, send)


def _has_body(scope: AsgiScope) -> bool:
    for name, value in scope.get("headers", ()):
        if name == b"transfer-encoding" or (name == b"content-length" and value.strip() != b"0"):
            return True
    return False
