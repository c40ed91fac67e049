"""`create_app(root, config)`: the FastAPI application; `serve(...)` runs it on uvicorn.

Endpoints (JSON; tokens as `Authorization: Bearer <token>`):

    GET    /health                                  none
    GET    /branches                                read
    POST   /branches                {name, from}    write
    DELETE /branches/{name}?force=                  admin
    GET    /branches/{b}/log?limit=                 read
    GET    /branches/{b}/tables/{table}?where=&columns=&limit=&cursor=   read
    POST   /branches/{b}/sql        {query, max_rows?}                   read
    POST   /branches/{b}/query      {query, params?, max_rows?}  (Cypher) read
           (both run in a query worker process: bounded memory, killed at the timeout
            or when the client goes away; see server/queries.py)
    POST   /branches/{b}/mutations  {message, operations}                write
    POST   /branches/{b}/load?mode=append|merge|overwrite  (JSONL body)  write
    GET    /branches/{b}/schema                     read   (.pg text at any revision)
    POST   /branches/{b}/schema     {schema, dry_run?, message?}         write
    GET    /diff?a=&b=                              read
    POST   /merge   {source, into, strategy?, dry_run?, message?}        write
    GET    /ingest                                  read   (ingest runs, newest first)
    GET    /ingest/{run_id}                         read   (progress per worker, result)
    GET    /webhooks/deliveries?webhook=&limit=     admin  (the webhook delivery log)
    GET    /ui/...                                  the web UI (session cookie; ui/)

Branch names may contain `/`; each route's fixed suffix (`/log`, `/tables/{table}`, ...)
keeps them unambiguous. Protected branches refuse mutations, loads and schema changes
(403; a schema `dry_run` is allowed); they change
only by merge, which needs a write token like any merge. Creating a protected branch
needs an admin token, and so does deleting one (with `?force=true`).

A request with a body is authenticated before the body is read; bodies, operations per
request, SQL and concurrent reads and loads are bounded by `[limits]` (see config.py).
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import threading
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI

from graphlake import __version__
from graphlake.graph import Graph
from graphlake.server import errors, ui
from graphlake.server.acting import ActingIdentity
from graphlake.server.auth import AuthBeforeBody
from graphlake.server.auto_optimize import AutoOptimizer
from graphlake.server.config import ServerConfig
from graphlake.server.deps import AppState
from graphlake.server.headers import SecurityHeaders
from graphlake.server.limits import BodyLimit
from graphlake.server.origin import SameOrigin
from graphlake.server.routes import (
    algo,
    branches,
    data_checks,
    health,
    history,
    ingest,
    merge,
    query,
    reviews,
    schema,
    search,
    tables,
    tags,
    timeline,
    webhooks,
    writes,
)


def create_app(root: str | os.PathLike[str] | Graph, config: ServerConfig) -> FastAPI:
    """The application serving the graph at `root`.

    Refuses a config without tokens unless `config.no_auth` is set (`ConfigError`); with
    `no_auth` every request is allowed, so callers should warn (the CLI does).
    """
    config.check()
    graph = root if isinstance(root, Graph) else Graph.open(root)
    app = FastAPI(
        title="graphlake",
        version=__version__,
        description="A versioned, branchable property-graph store on Lance, with three-way "
        'branch merge. Errors are `{"error": {"type", "message"}}`.',
        lifespan=_lifespan,
        # No interactive docs: FastAPI's pages load Swagger's script from a CDN, and no
        # installed package ships its assets. The schema itself stays at /openapi.json,
        # open like /health (it holds no data) and sent with the UI's security headers.
        docs_url=None,
        redoc_url=None,
    )
    app.state.graphlake = AppState(graph, config)
    errors.install(app)
    limits = config.limits

    def limit_for(path: str) -> int:
        if ui.is_ui_path(path):
            return min(ui.FORM_MAX_BYTES, limits.max_body_bytes)
        return limits.max_upload_bytes if path.endswith("/load") else limits.max_body_bytes

    app.add_middleware(BodyLimit, limit_for=limit_for)
    ui.mount(app, config)  # pages, static assets, and the form posts' session gate
    app.add_middleware(ActingIdentity)  # commits made by a request record its token's name
    # Added last, so it runs first: no body byte is read for an unauthenticated request.
    app.add_middleware(
        AuthBeforeBody, config=config, skip=ui.is_ui_path, throttle=app.state.graphlake.throttle
    )
    # Outermost: a request for another Host, or a cross-site write without auth, is
    # refused before anything else looks at it (origin.py).
    app.add_middleware(SameOrigin, no_auth=config.no_auth)
    app.add_middleware(SecurityHeaders, paths=(app.openapi_url or "",), headers=ui.SECURITY_HEADERS)
    for module in (
        health,
        branches,
        history,
        tables,
        query,
        writes,
        merge,
        ingest,
        schema,
        search,
        tags,
        reviews,
        data_checks,
        webhooks,
        timeline,
        algo,  # last: `/branches/{b}/algo/{name}` must not shadow a branch named "x/algo"
    ):
        app.include_router(module.router)
    return app


def serve(
    root: str | os.PathLike[str],
    config: ServerConfig,
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    log_level: str = "info",
    behind_proxy: bool = False,
) -> None:
    """Run the server until interrupted. Only loopback binding is tested; put a TLS
    terminating proxy in front of any other address (tokens travel in a header), and
    pass `behind_proxy=True` so the client's address and scheme are taken from it."""
    # on first use only: loads uvicorn (start-up time)
    import uvicorn

    app = create_app(root, config)
    uvicorn.run(app, host=host, port=port, log_level=log_level, **_uvicorn_options(behind_proxy))


# The routes import Lance, DuckDB and the ingest machinery where a request needs them,
# so the server answers /health soon after start (README "Start-up time"). As the app
# starts, a background thread imports them, so the first data request need not pay.
_DATA_MODULES = (
    "graphlake.read.snapshot",
    "graphlake.read.sql",
    "graphlake.ingestion.status",
    "graphlake.write.transaction",
    "graphlake.merge.engine",
    "graphlake.search.query",
)


@contextlib.asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    _warm_up()
    state: AppState = app.state.graphlake
    auto = None
    if state.config.auto_optimize.enabled:  # README "Search": the automatic threshold
        auto = AutoOptimizer(state.graph, state.config.auto_optimize)
        auto.start()
    hooks = None
    if state.config.webhooks:  # docs/server.md "Webhooks": delivered by background threads
        # on first use only: loads rich (start-up time)
        from graphlake.server.webhooks.engine import WebhookEngine

        hooks = state.webhooks = WebhookEngine(state.graph, state.config.webhooks)
        hooks.start()
    state.workers.start(1)  # one query worker ready; more start as queries arrive
    yield
    if hooks is not None:
        hooks.stop()
    if auto is not None:
        auto.stop()


def _warm_up() -> None:
    def run() -> None:
        for name in _DATA_MODULES:
            try:
                importlib.import_module(name)
            except Exception:  # the request that needs it reports the error
                logging.getLogger(__name__).warning(
                    "warm-up: importing %s failed", name, exc_info=True
                )

    threading.Thread(target=run, name="graphlake-warm-up", daemon=True).start()


def _uvicorn_options(behind_proxy: bool = False) -> dict[str, Any]:
    # Access log lines hold method, path and query only, never headers (so no token).
    # Proxy headers only behind a proxy: uvicorn otherwise takes X-Forwarded-For from
    # any 127.0.0.1 client as its address, so a local client could rotate addresses past
    # the auth throttle (and X-Forwarded-Proto would mark plain http as https).
    proxy = (
        {"proxy_headers": True, "forwarded_allow_ips": "127.0.0.1"}
        if behind_proxy
        else {"proxy_headers": False}
    )
    return {"access_log": True, "server_header": False, **proxy}
