"""Bearer tokens with scopes read ⊂ write ⊂ admin, compared in constant time.

A request's token is compared with *every* configured token (no early exit, equal-length
digests), so the time taken says nothing about which token or how much of it matched.
Tokens are never logged nor echoed in an error body. An unknown token is answered after a
growing delay per client address (throttle.py); a valid one never waits.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.types import ASGIApp, Receive, Send
from starlette.types import Scope as AsgiScope

from graphlake.algo import NAMES as ALGORITHM_NAMES
from graphlake.server.config import Scope, ServerConfig, display_name
from graphlake.server.errors import ApiError, error_response
from graphlake.server.throttle import FailureThrottle, client_address

bearer = HTTPBearer(auto_error=False, description="`Authorization: Bearer <token>`")

_CHALLENGE = {"WWW-Authenticate": "Bearer"}


@dataclass(frozen=True)
class Identity:
    """Who a token is: its scope, its name (the author of its commits) and the branch
    patterns it may change (empty: every branch)."""

    scope: Scope
    name: str
    branches: tuple[str, ...] = ()


class TokenTable:
    """The configured tokens, kept as SHA-256 digests."""

    def __init__(
        self,
        tokens: Mapping[str, Scope],
        names: Mapping[str, str] | None = None,
        branches: Mapping[str, tuple[str, ...]] | None = None,
    ):
        self._entries = [(_digest(t), scope) for t, scope in tokens.items()]
        self._identities = [
            (
                _digest(t),
                Identity(scope, display_name(t, names or {}), tuple((branches or {}).get(t, ()))),
            )
            for t, scope in tokens.items()
        ]

    def identify(self, token: str) -> Identity | None:
        """The identity of `token` (the highest-scoped entry if listed twice), compared
        with every entry in constant time like `scope_of`."""
        given = _digest(token)
        found: Identity | None = None
        for digest, identity in self._identities:  # always the whole list
            if hmac.compare_digest(given, digest) and (
                found is None or identity.scope > found.scope
            ):
                found = identity
        return found

    def scope_of(self, token: str) -> Scope | None:
        given = _digest(token)
        found: Scope | None = None
        for digest, scope in self._entries:  # always the whole list
            if hmac.compare_digest(given, digest) and (found is None or scope > found):
                found = scope
        return found


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


def token_key(token: str) -> str:
    """A stable name for a token that does not reveal it (e.g. whose UI sessions)."""
    return _digest(token).hex()


def require(scope: Scope) -> Callable[..., Awaitable[Scope]]:
    """A dependency that lets a request through only with a token of `scope` or above."""

    async def check(
        request: Request,
        credentials: HTTPAuthorizationCredentials | None = Depends(bearer),  # noqa: B008
    ) -> Scope:
        state = request.app.state.graphlake
        if state.config.no_auth:
            return Scope.admin
        if credentials is None or not credentials.credentials:
            raise ApiError(401, "Unauthorized", "missing bearer token", _CHALLENGE)
        granted = state.tokens.scope_of(credentials.credentials)
        if granted is None:
            await state.throttle.failed(client_address(request.scope))
            raise ApiError(401, "Unauthorized", "unknown bearer token", _CHALLENGE)
        if granted < scope:
            raise ApiError(
                403,
                "Forbidden",
                f"this operation needs the {scope.name} scope; the token has {granted.name}",
            )
        return granted

    check.__name__ = f"require_{scope.name}"
    return check


def check_not_protected(config: ServerConfig, branch: str, what: str) -> None:
    """Protected branches change only through merge (and are never deleted here)."""
    if branch in config.protected_branches:
        raise ApiError(
            403,
            "ProtectedBranchError",
            f"branch {branch!r} is protected: {what} is not allowed; "
            f"change it by merging another branch into it (POST /merge)",
        )


ReadScope = Depends(require(Scope.read))
WriteScope = Depends(require(Scope.write))
AdminScope = Depends(require(Scope.admin))


class AuthBeforeBody:
    """Pure ASGI middleware: a request that carries a body needs a known token of the
    scope its route needs *before* any byte of the body is read.

    FastAPI reads and parses a body before it runs the route's dependencies, so without
    this an anonymous client could make the server buffer and parse large bodies. The
    route's own scope check still runs afterwards.
    """

    def __init__(
        self,
        app: ASGIApp,
        config: ServerConfig,
        skip: Callable[[str], bool] | None = None,
        throttle: FailureThrottle | None = None,
    ):
        self.app = app
        self.config = config
        self.tokens = TokenTable(config.tokens)
        self.throttle = throttle or FailureThrottle()
        self.skip = skip or (lambda _path: False)  # paths with a gate of their own (/ui)

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or self.config.no_auth
            or not _has_body(scope)
            or self.skip(scope.get("path", ""))
        ):
            await self.app(scope, receive, send)
            return
        token = bearer_token(scope)
        granted = self.tokens.scope_of(token) if token else None
        needed = _body_scope(scope.get("method", ""), scope.get("path", ""))
        if granted is None:
            if token:
                await self.throttle.failed(client_address(scope))
            message = "missing bearer token" if not token else "unknown bearer token"
            # Close: the unread body must not be taken for the next request.
            response = error_response(
                401, "Unauthorized", message, {**_CHALLENGE, "Connection": "close"}
            )
        elif granted < needed:
            response = error_response(
                403,
                "Forbidden",
                f"this operation needs the {needed.name} scope; the token has {granted.name}",
                {"Connection": "close"},
            )
        else:
            await self.app(scope, receive, send)
            return
        await response(scope, receive, send)


def _body_scope(method: str, path: str) -> Scope:
    """The least scope of a route that takes a body: reads, SQL, search, Cypher and graph
    algorithms (a known name: `/branches/{b}/algo/pagerank`) need read, every other POST
    (branches, mutations, load, merge) write."""
    if method in ("GET", "HEAD", "OPTIONS") or path.endswith(("/sql", "/search", "/query")):
        return Scope.read
    head, _, name = path.rpartition("/")
    if head.startswith("/branches/") and head.endswith("/algo") and name in ALGORITHM_NAMES:
        return Scope.read
    return Scope.write


def _has_body(scope: AsgiScope) -> bool:
    for name, value in scope.get("headers", ()):
        if name == b"transfer-encoding" or (name == b"content-length" and value.strip() != b"0"):
            return True
    return False


def bearer_token(scope: AsgiScope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            kind, _, token = value.decode("latin-1").strip().partition(" ")
            if kind.lower() != "bearer":
                return None
            return token.strip() or None
    return None
