"""The web UI at `/ui`: server-rendered pages over the same internals as the JSON API.

`mount(app)` adds the page routers, the static assets and the body gate for form posts
(see gate.py); `create_app` calls it. Pages read through the functions the API routes
use (`read_page`, `run_diff`, `run_merge`, `g.search`, `run_query`, the ingest status
records), and every list is paged, so no page reads a whole table.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from fastapi.staticfiles import StaticFiles

from graphlake.server.config import ServerConfig
from graphlake.server.ui import (
    pages_auth,
    pages_browse,
    pages_history,
    pages_ingest,
    pages_merge,
    pages_ops,
    pages_query,
    pages_reviews,
    pages_schema,
    pages_search,
)
from graphlake.server.ui.gate import FORM_MAX_BYTES, UiBodyGate, is_ui_path
from graphlake.server.ui.outcomes import Outcomes
from graphlake.server.ui.render import SECURITY_HEADERS, STATIC
from graphlake.server.ui.session import SessionStore

__all__ = ["FORM_MAX_BYTES", "SECURITY_HEADERS", "is_ui_path", "mount"]


def mount(app: FastAPI, config: ServerConfig) -> None:
    sessions = SessionStore(per_owner=config.limits.ui_sessions_per_token)
    app.state.graphlake_ui_sessions = sessions
    app.state.graphlake_ui_outcomes = Outcomes()
    for module in (
        pages_auth,
        pages_history,
        pages_merge,
        pages_ops,
        pages_reviews,
        pages_browse,
        pages_search,
        pages_schema,
        pages_query,
        pages_ingest,
    ):
        app.include_router(module.router)
    app.mount("/ui/static", StaticFiles(directory=STATIC), name="ui-static")

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/ui", 303)

    app.add_middleware(UiBodyGate, config=config, sessions=sessions)
