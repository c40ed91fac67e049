"""A branch's data checks: read them, replace them as one commit, run them on its head.

`PUT` replaces the set (`{"checks": {name: query}}`; `{}` removes them all) like
`Graph.set_data_checks` (a protected branch refuses it: change it by merging); `POST
.../run` runs them on the revision's head, each query in a query worker under the
server's `[limits]` like `POST /branches/{b}/sql`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from graphlake.server.auth import ReadScope, WriteScope, check_not_protected
from graphlake.server.convert import jsonable
from graphlake.server.deps import State
from graphlake.server.queries import check_runner
from graphlake.server.routes.common import READ_ERRORS, WRITE_ERRORS, BranchPath, errors
from graphlake.server.routing import ThreadedJsonRoute

router = APIRouter(tags=["data checks"], route_class=ThreadedJsonRoute)


class DataChecksChange(BaseModel):
    checks: dict[str, str | dict[str, str]] = Field(
        description="{name: query}: a query string (Cypher if it parses as Cypher, else "
        'SQL) or {"language": "cypher" | "sql", "query": text}; passes when it returns '
        "no rows. Replaces the branch's set."
    )
    message: str | None = Field(None, max_length=10_000)


@router.get(
    "/branches/{branch:path}/data-checks",
    dependencies=[ReadScope],
    responses=errors(*READ_ERRORS),
    summary="The data checks in force at a branch or any revision",
)
def get_checks(branch: BranchPath, state: State) -> dict[str, Any]:
    commit = state.graph.resolve(branch)
    return {
        "revision": branch,
        "commit": commit.id,
        "checks": state.graph.repo.data_checks.of(commit),
    }


@router.put(
    "/branches/{branch:path}/data-checks",
    dependencies=[WriteScope],
    responses=errors(*WRITE_ERRORS),
    summary="Replace the branch's data checks as one commit",
)
def set_checks(branch: BranchPath, body: DataChecksChange, state: State) -> dict[str, Any]:
    check_not_protected(state.config, branch, "changing data checks directly")
    with state.locks.hold(branch):
        commit = state.graph.set_data_checks(body.checks, branch, message=body.message)
    return {
        "revision": branch,
        "commit": commit.id,
        "checks": state.graph.repo.data_checks.of(commit),
    }


@router.post(
    "/branches/{branch:path}/data-checks/run",
    dependencies=[ReadScope],
    responses=errors(*READ_ERRORS, 408, 413, 503),
    summary="Run the data checks on the revision's head (up to 20 offending rows each)",
)
def run_checks(branch: BranchPath, state: State) -> dict[str, Any]:
    # only when checks run: the query engine and Lance load lazily
    from graphlake.query.data_checks import run_checks as run

    # only when checks run: the query engine and Lance load lazily
    from graphlake.read.snapshot import Snapshot

    commit = state.graph.resolve(branch)
    with state.reads.hold():
        results = run(
            Snapshot(state.graph.repo, commit),
            state.graph.repo.data_checks.of(commit),
            check_runner(state),
        )
    return {
        "revision": branch,
        "commit": commit.id,
        "passed": all(r.passed for r in results),
        "results": [jsonable(r.to_dict()) for r in results],
    }
