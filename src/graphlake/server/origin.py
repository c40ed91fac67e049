"""Requests from other sites: the `Host` check (DNS rebinding) and, without auth, CSRF.

Pure ASGI middleware that runs before everything else:

- **Host.** A server bound to a loopback address (127.0.0.0/8, ::1, localhost) answers
  only requests whose `Host` header names it: `127.0.0.1:PORT`, `localhost:PORT`,
  `[::1]:PORT` or the bound address, with the bound port (the scheme's default port may
  be left out). Anything else gets 400 `HostNotAllowed`: a page on another site that
  rebinds its DNS name to 127.0.0.1 sends its own name, so it cannot read or write
  through the browser. Servers bound to other addresses are not checked (they need
  tokens; put a proxy in front that sets `Host`).
- **Cross-site requests without auth (`--no-auth`).** A browser sends a cross-site POST
  without asking first (a CORS preflight) only with no `Content-Type` or one of
  `text/plain`, `multipart/form-data`, `application/x-www-form-urlencoded` (and only
  with GET, HEAD or POST). So an API POST (outside `/ui`) must carry another content type
  (its real one: `application/json`, or `application/x-ndjson` for `/load`): else 415
  `UnsupportedMediaType`. A state-changing request (any method but GET/HEAD/OPTIONS)
  whose `Origin` names another host than its `Host` gets 403 `CrossOriginRequest`. The
  server sends no CORS headers, so a preflighted cross-site request never gets through.
  The UI's forms have their own CSRF tokens; with auth on, bearer tokens (which browsers
  never add on their own) are the defence.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Send
from starlette.types import Scope as AsgiScope

from graphlake.server.errors import error_response

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
# The content types a browser may send cross-site without a preflight (CORS "simple").
SIMPLE_TYPES = frozenset({"text/plain", "multipart/form-data", "application/x-www-form-urlencoded"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class SameOrigin:
    def __init__(self, app: ASGIApp, no_auth: bool, skip_csrf: tuple[str, ...] = ("/ui",)):
        self.app = app
        self.no_auth = no_auth
        self.skip_csrf = skip_csrf

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        host = headers.get("host", "")
        problem = _host_problem(scope, host)
        if problem is None and self.no_auth:
            problem = self._csrf_problem(scope, headers, host)
        if problem is None:
            await self.app(scope, receive, send)
            return
        status, kind, message = problem
        await error_response(status, kind, message, {"Connection": "close"})(scope, receive, send)

    def _csrf_problem(
        self, scope: AsgiScope, headers: dict[str, str], host: str
    ) -> tuple[int, str, str] | None:
        path = scope.get("path", "")
        if scope.get("method", "GET") in SAFE_METHODS or any(
            path == p or path.startswith(p + "/") for p in self.skip_csrf
        ):
            return None
        origin = headers.get("origin")
        if origin is not None and origin != "null" and urlsplit(origin).netloc != host:
            return (
                403,
                "CrossOriginRequest",
                "a request from another site is refused (its Origin is not this server)",
            )
        kind = headers.get("content-type", "").split(";")[0].strip().lower()
        if scope.get("method") == "POST" and (not kind or kind in SIMPLE_TYPES or origin == "null"):
            return (
                415,
                "UnsupportedMediaType",
                "without auth, a request that changes the graph must send its real "
                "Content-Type (application/json; application/x-ndjson for /load)",
            )
        return None


def _host_problem(scope: AsgiScope, host: str) -> tuple[int, str, str] | None:
    server = scope.get("server")
    if not server or server[1] is None or not _is_loopback(str(server[0])):
        return None
    bound, port = str(server[0]), int(server[1])
    default = 443 if scope.get("scheme") in ("https", "wss") else 80
    name, given_port = _split_host(host.strip().lower(), default)
    names = {*LOOPBACK_NAMES, f"[{bound}]" if ":" in bound else bound}
    if name in names and given_port == port:
        return None
    return (
        400,
        "HostNotAllowed",
        f"the Host header must name this server: 127.0.0.1:{port} or localhost:{port}",
    )


def _split_host(host: str, default: int) -> tuple[str, int | None]:
    """("name", port) of a Host header; port None when it is not a number."""
    if host.startswith("["):  # an IPv6 literal: [::1]:8080
        end = host.find("]")
        name, rest = host[: end + 1], host[end + 1 :]
        if end < 0 or (rest and not rest.startswith(":")):
            return host, None
        port = rest[1:] if rest else None
    else:
        name, sep, port = host.partition(":")
        port = port if sep else None
    if port is None:
        return name, default
    return (name, int(port)) if port.isdigit() else (name, None)


def _is_loopback(address: str) -> bool:
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


def _headers(scope: AsgiScope) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in scope.get("headers", ()):
        key = name.decode("latin-1").lower()
        if key in ("host", "origin", "content-type") and key not in out:
            out[key] = value.decode("latin-1")
    return out
