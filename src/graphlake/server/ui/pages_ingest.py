"""Ingest runs and one run's per-worker progress; pages of running runs refresh
themselves (a `<meta http-equiv=refresh>`, so without JavaScript too)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request, Response

from graphlake.server.convert import jsonable
from graphlake.server.errors import ApiError
from graphlake.server.ui.deps import UiRoute, app_state, require_session
from graphlake.server.ui.render import render

router = APIRouter(route_class=UiRoute, include_in_schema=False)

REFRESH_S = 2
RUNS_SHOWN = 100


@router.get("/ui/ingest")
def runs(request: Request) -> Response:
    session = require_session(request)
    from graphlake.ingestion.status import list_runs  # the same records as GET /ingest

    found = [jsonable(r.to_dict()) for r in list_runs(app_state(request).graph)]
    running = any(r["state"] == "running" for r in found[:RUNS_SHOWN])
    return render(
        request,
        "ingest.html",
        session,
        runs=found[:RUNS_SHOWN],
        more=len(found) > RUNS_SHOWN,
        refresh=REFRESH_S if running else None,
    )


@router.get("/ui/ingest/{run_id}")
def run(request: Request, run_id: Annotated[str, Path(max_length=200)]) -> Response:
    session = require_session(request)
    # on first use only: loads lance, pyarrow, lark (start-up time)
    from graphlake.ingestion.status import IngestRunNotFoundError, run_status

    try:
        status = jsonable(run_status(app_state(request).graph, run_id).to_dict())
    except IngestRunNotFoundError as exc:
        raise ApiError(404, type(exc).__name__, str(exc)) from None
    refresh = REFRESH_S if status["state"] == "running" else None
    return render(request, "ingest_run.html", session, run=status, refresh=refresh)
