"""Browser sessions of the web UI: a token is given once, at login, and never again.

The login form checks the token against the same `TokenTable` as the API and keeps only
its scope, in a server-side session named by a random id. The browser holds that id in
an HttpOnly, SameSite=Strict cookie (scripts cannot read it; other sites cannot send it),
so the token itself is never stored in a cookie nor written into any page. Each session
has its own CSRF token, which every state-changing form carries in a hidden field.

Sessions live in this process's memory (a restart logs everyone out), expire after
`SESSION_TTL_S`, and are capped at `MAX_SESSIONS` (the oldest go first), so logging in
repeatedly cannot grow the server's memory without bound. Each token may hold at most
`per_owner` sessions (`limits.ui_sessions_per_token`, default 100): its next login
evicts *its own* oldest session, so one token holder cannot push everyone else's
sessions out of the store.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from http.cookies import SimpleCookie

from starlette.types import Scope as AsgiScope

from graphlake.server.config import Scope

COOKIE = "graphlake_session"
LOGIN_COOKIE = "graphlake_login"  # double-submit CSRF token of the login form
COOKIE_PATH = "/ui"
SESSION_TTL_S = 8 * 3600
MAX_SESSIONS = 10_000
SESSIONS_PER_OWNER = 100


@dataclass(frozen=True)
class Session:
    id: str
    scope: Scope
    csrf: str
    expires: float
    owner: str = ""  # whose: a digest of the login's token ("" without auth)
    name: str | None = None  # the token's name: the author of the commits made here
    branches: tuple[str, ...] = ()  # the token's branch patterns (empty: every branch)

    def csrf_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.csrf.encode())


class SessionStore:
    def __init__(
        self,
        ttl_s: float = SESSION_TTL_S,
        max_sessions: int = MAX_SESSIONS,
        per_owner: int = SESSIONS_PER_OWNER,
    ):
        self._ttl = ttl_s
        self._max = max_sessions
        self._per_owner = per_owner
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._owned: dict[str, OrderedDict[str, None]] = {}  # owner -> its ids, oldest first
        self._lock = threading.Lock()

    def create(
        self, scope: Scope, owner: str = "", name: str | None = None, branches: tuple[str, ...] = ()
    ) -> Session:
        """A new session; an `owner` (token) over its quota loses its oldest session."""
        session = Session(
            secrets.token_urlsafe(32),
            scope,
            secrets.token_urlsafe(32),
            time.monotonic() + self._ttl,
            owner,
            name,
            branches,
        )
        with self._lock:
            self._sessions[session.id] = session
            if owner:
                ids = self._owned.setdefault(owner, OrderedDict())
                ids[session.id] = None
                while len(ids) > self._per_owner:
                    self._drop(next(iter(ids)))
            while len(self._sessions) > self._max:
                self._drop(next(iter(self._sessions)))
        return session

    def _drop(self, session_id: str) -> None:
        session = self._sessions.pop(session_id, None)
        if session is None:
            return
        ids = self._owned.get(session.owner)
        if ids is not None:
            ids.pop(session_id, None)
            if not ids:
                del self._owned[session.owner]

    def get(self, session_id: str | None) -> Session | None:
        if not session_id:
            return None
        with self._lock:
            session = self._sessions.get(session_id)
            if session is not None and session.expires < time.monotonic():
                self._drop(session_id)
                return None
        return session

    def delete(self, session_id: str | None) -> None:
        with self._lock:
            self._drop(session_id or "")


def cookie_from_scope(scope: AsgiScope, name: str = COOKIE) -> str | None:
    """A cookie's value from the raw ASGI headers (the middleware has no Request)."""
    for key, value in scope.get("headers", ()):
        if key == b"cookie":
            jar: SimpleCookie = SimpleCookie()
            try:
                jar.load(value.decode("latin-1"))
            except Exception:  # a malformed Cookie header is no session
                return None
            if name in jar:
                return jar[name].value
    return None
