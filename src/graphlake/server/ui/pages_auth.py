"""Login and logout. The login form has a double-submit CSRF token (a random cookie the
form repeats), so another site cannot log a browser into a session of its choosing."""

from __future__ import annotations

import hmac
import secrets
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import RedirectResponse

from graphlake.server.auth import token_key
from graphlake.server.throttle import client_address
from graphlake.server.ui.deps import (
    UiRoute,
    app_state,
    check_csrf,
    current_session,
    read_form,
    require_session,
    sessions,
    set_session_cookie,
)
from graphlake.server.ui.render import render
from graphlake.server.ui.session import COOKIE, COOKIE_PATH, LOGIN_COOKIE

router = APIRouter(route_class=UiRoute, include_in_schema=False)


def _safe_next(target: str | None) -> str:
    """Only a path inside the UI: never another site (no open redirect)."""
    if target and target.startswith("/ui") and not target.startswith("//"):
        return target
    return "/ui/branches"


@router.get("/ui/login")
def login_form(
    request: Request, next: Annotated[str | None, Query(max_length=2000)] = None
) -> Response:
    if current_session(request) is not None:  # no_auth, or already logged in
        return RedirectResponse(_safe_next(next), 303)
    return _form(request, next, None, 200)


def _form(request: Request, next_: str | None, problem: str | None, status: int) -> Response:
    nonce = secrets.token_urlsafe(32)
    response = render(
        request,
        "login.html",
        None,
        status=status,
        csrf=nonce,
        next=_safe_next(next_),
        problem=problem,
    )
    response.set_cookie(
        LOGIN_COOKIE,
        nonce,
        path=COOKIE_PATH,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        max_age=3600,
    )
    return response


@router.post("/ui/login")
async def login(request: Request) -> Response:
    form = await read_form(request)
    expected = request.cookies.get(LOGIN_COOKIE, "")
    given = form.get("csrf", "")
    if not expected or not hmac.compare_digest(expected.encode(), given.encode()):
        return _form(request, form.get("next"), "the form expired: try again", 403)
    token = form.get("token", "").strip()
    identity = app_state(request).tokens.identify(token) if token else None
    if identity is None:
        await app_state(request).throttle.failed(client_address(request.scope))
        # Never echo the token back, not even into the form field.
        return _form(request, form.get("next"), "unknown token", 401)
    session = sessions(request).create(
        identity.scope, owner=token_key(token), name=identity.name, branches=identity.branches
    )
    response = RedirectResponse(_safe_next(form.get("next")), 303)
    set_session_cookie(request, response, session)
    response.delete_cookie(LOGIN_COOKIE, path=COOKIE_PATH)
    return response


@router.post("/ui/logout")
async def logout(request: Request) -> Response:
    session = require_session(request)
    check_csrf(session, await read_form(request))
    sessions(request).delete(session.id)
    response = RedirectResponse("/ui/login", 303)
    response.delete_cookie(COOKIE, path=COOKIE_PATH)
    return response


@router.get("/ui")
def home() -> Response:
    return RedirectResponse("/ui/branches", 303)
