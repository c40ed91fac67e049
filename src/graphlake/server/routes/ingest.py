"""Ingest runs: `GET /ingest` (all runs, newest first) and `GET /ingest/{run_id}` (plan
summary, per-worker progress, the result once finished). Read-only: the state comes from
the run's stored records (see `graphlake.ingestion.status`)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path
from pydantic import BaseModel, Field

from graphlake.server.auth import ReadScope
from graphlake.server.convert import jsonable
from graphlake.server.deps import State
from graphlake.server.errors import ApiError
from graphlake.server.routes.common import errors

router = APIRouter(tags=["ingest"])

RunId = Annotated[str, Path(description="Ingest run id (a ULID unless the run was named).")]
_STATE = (
    "`finished`, `running` (fresh heartbeat), `failed` (the last attempt raised), "
    "`abandoned` (heartbeat stopped without a result) or `unknown`"
)


class IngestRunSummary(BaseModel):
    run_id: str
    state: str = Field(description=_STATE)
    created: str
    into: str
    format: str = Field(description="`parquet` or `jsonl`.")
    table: str | None
    workers: int
    phases: list[str]
    done: int = Field(description="Rows (JSONL: lines) done, summed over phases.")
    total: int
    rows: int = Field(description="Records written.")
    unit: str = Field(description="`rows` or `lines`.")
    heartbeat: str | None
    error: str | None = Field(description="`<ErrorType>: message` of a failed attempt.")


class IngestRunList(BaseModel):
    runs: list[IngestRunSummary]


class IngestWorker(BaseModel):
    worker: int
    phase: str
    branch: str
    done: int
    total: int
    rows: int
    state: str = Field(description="`merged`, `done`, `partial`, `not_started` or `moved`.")


class IngestInputFile(BaseModel):
    path: str
    format: str
    rows: int


class IngestRun(IngestRunSummary):
    base: str = Field(description="Commit the shard branches start from.")
    commit_every: int
    files: list[IngestInputFile]
    progress: list[IngestWorker]
    result: dict[str, Any] | None = Field(
        description="The run's result (as `graphlake ingest --json`) once finished."
    )


@router.get(
    "/ingest",
    response_model=IngestRunList,
    dependencies=[ReadScope],
    responses=errors(401, 403),
    summary="Ingest runs, newest first, with their state",
)
def list_ingest_runs(state: State) -> dict[str, Any]:
    from graphlake.ingestion.status import list_runs  # see app.py: imported on use

    return {"runs": [jsonable(r.to_dict()) for r in list_runs(state.graph)]}


@router.get(
    "/ingest/{run_id}",
    response_model=IngestRun,
    dependencies=[ReadScope],
    responses=errors(400, 401, 403, 404),
    summary="One ingest run: plan summary, per-worker progress, result",
)
def get_ingest_run(run_id: RunId, state: State) -> dict[str, Any]:
    # on first use only: loads lance, pyarrow, lark (start-up time)
    from graphlake.ingestion.status import IngestRunNotFoundError, run_status

    try:
        status = run_status(state.graph, run_id)
    except IngestRunNotFoundError as exc:
        raise ApiError(404, type(exc).__name__, str(exc)) from None
    return jsonable(status.to_dict())
