"""What every UI page needs: its session, form bodies, and errors shown as pages."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import parse_qsl, quote

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse
from fastapi.routing import APIRoute

from graphlake.errors import GraphLakeError
from graphlake.server.config import Scope
from graphlake.server.deps import AppState
from graphlake.server.errors import ApiError, describe_problems, status_for
from graphlake.server.ui.outcomes import Outcomes
from graphlake.server.ui.render import render
from graphlake.server.ui.session import COOKIE, SESSION_TTL_S, Session, SessionStore

MAX_FORM_FIELDS = 20


class LoginRequired(Exception):
    """No live session: a page redirects to the login form."""


def app_state(request: Request) -> AppState:
    return request.app.state.graphlake


def sessions(request: Request) -> SessionStore:
    return request.app.state.graphlake_ui_sessions


def outcomes(request: Request) -> Outcomes:
    return request.app.state.graphlake_ui_outcomes


def current_session(request: Request) -> Session | None:
    state = app_state(request)
    store = sessions(request)
    session = store.get(request.cookies.get(COOKIE))
    if session is None and state.config.no_auth:
        # Without auth everyone is admin; a session still carries the CSRF token.
        session = store.create(Scope.admin)
        request.state.new_session = session
    return session


def require_session(request: Request, scope: Scope = Scope.read) -> Session:
    session = current_session(request)
    if session is None:
        raise LoginRequired
    if session.scope < scope:
        raise ApiError(
            403,
            "Forbidden",
            f"this needs the {scope.name} scope; you are logged in with {session.scope.name}",
        )
    return session


async def read_form(request: Request, max_fields: int = MAX_FORM_FIELDS) -> dict[str, str]:
    """An urlencoded form body (bounded in bytes by the body-size middleware) of at most
    `max_fields` fields."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise ApiError(
            415, "UnsupportedMediaType", "a form must be sent as application/x-www-form-urlencoded"
        )
    body = await request.body()
    try:
        pairs = parse_qsl(
            body.decode("utf-8"),
            keep_blank_values=True,
            strict_parsing=False,
            max_num_fields=max_fields,
        )
    except (UnicodeDecodeError, ValueError):
        raise ApiError(
            400,
            "BadRequest",
            f"the form is not valid UTF-8 urlencoded text of at most {max_fields} fields",
        ) from None
    return dict(pairs)


def check_csrf(session: Session, form: dict[str, str]) -> None:
    if not session.csrf_ok(form.get("csrf")):
        raise ApiError(
            403,
            "CsrfError",
            "the form's CSRF token is missing or wrong: reload the page and try again",
        )


class UiRoute(APIRoute):
    """Library and server errors become an HTML page with the API's status code."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            try:
                response = await handler(request)
            except LoginRequired:
                if request.method != "GET":
                    return error_page(request, 401, "Unauthorized", "log in first")
                target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
                return RedirectResponse(f"/ui/login?next={quote(target, safe='')}", 303)
            except GraphLakeError as exc:
                return error_page(
                    request, status_for(exc), type(exc).__name__, str(exc) or type(exc).__name__
                )
            except ApiError as exc:
                return error_page(request, exc.status, exc.type, exc.message)
            except RequestValidationError as exc:
                # A query parameter out of bounds (too long, a negative page): a page
                # saying which, as the API's JSON names it, not a JSON body in a browser.
                return error_page(
                    request, 422, "RequestValidationError", describe_problems(exc.errors())
                )
            new = getattr(request.state, "new_session", None)
            if new is not None:
                set_session_cookie(request, response, new)
            return response

        return route


def error_page(request: Request, status: int, kind: str, message: str) -> Response:
    session = sessions(request).get(request.cookies.get(COOKIE))
    return render(request, "error.html", session, status=status, kind=kind, message=message)


def set_session_cookie(request: Request, response: Response, session: Session) -> None:
    # Secure when the page came over TLS (uvicorn takes X-Forwarded-Proto from a proxy
    # on 127.0.0.1), so the cookie then never travels in clear text.
    response.set_cookie(
        COOKIE,
        session.id,
        path="/ui",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        max_age=SESSION_TTL_S,
    )
