"""Bearer tokens with scopes read ⊂ write ⊂ admin, compared in constant time.

A request's token is compared with *every* configured token (no early exit, equal-length
digests), so the time taken says nothing about which token or how much of it matched.
Tokens are never logged nor echoed in an error body.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Mapping

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from graphlake.server.config import Scope, ServerConfig
from graphlake.server.errors import ApiError

bearer = HTTPBearer(auto_error=False, description="`Authorization: Bearer <token>`")

_CHALLENGE = {"WWW-Authenticate": "Bearer"}


class TokenTable:
    """The configured tokens, kept as SHA-256 digests."""

    def __init__(self, tokens: Mapping[str, Scope]):
        self._entries = [(_digest(t), scope) for t, scope in tokens.items()]

    def scope_of(self, token: str) -> Scope | None:
        given = _digest(token)
        found: Scope | None = None
        for digest, scope in self._entries:  # always the whole list
            if hmac.compare_digest(given, digest) and (found is None or scope > found):
                found = scope
        return found


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


def require(scope: Scope) -> Callable[..., Scope]:
    """A dependency that lets a request through only with a token of `scope` or above."""

    def check(
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
            raise ApiError(401, "Unauthorized", "unknown bearer token", _CHALLENGE)
        if granted < scope:
            raise ApiError(
                403, "Forbidden",
                f"this operation needs the {scope.name} scope; the token has {granted.name}",
            )
        return granted

    check.__name__ = f"require_{scope.name}"
    return check


def check_not_protected(config: ServerConfig, branch: str, what: str) -> None:
    """Protected branches change only through merge (and are never deleted here)."""
    if branch in config.protected_branches:
        raise ApiError(
            403, "ProtectedBranchError",
            f"branch {branch!r} is protected: {what} is not allowed; "
            f"change it by merging another branch into it (POST /merge)",
        )


ReadScope = Depends(require(Scope.read))
WriteScope = Depends(require(Scope.write))
AdminScope = Depends(require(Scope.admin))
