"""Writes: a batch of mutations as one commit, and JSONL bulk load."""

from __future__ import annotations

import os
import tempfile
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from graphlake.catalog.commits import Commit
from graphlake.errors import GraphLakeError, LoadFormatError
from graphlake.server.auth import WriteScope, check_not_protected
from graphlake.server.deps import AppState, State
from graphlake.server.errors import ApiError, graphlake_error_response
from graphlake.server.models import CommitRef, MutationRequest
from graphlake.server.routes.common import WRITE_ERRORS, BranchPath, errors
from graphlake.server.routing import ThreadedJsonRoute

router = APIRouter(tags=["writes"], route_class=ThreadedJsonRoute)

_UPLOAD_NAME = "upload"  # how error messages name the uploaded file


@router.post(
    "/branches/{branch:path}/mutations",
    response_model=CommitRef,
    dependencies=[WriteScope],
    responses=errors(*WRITE_ERRORS),
    summary="Apply inserts, upserts, updates and deletes as one atomic commit",
)
def mutate(branch: BranchPath, body: MutationRequest, state: State) -> CommitRef:
    check_not_protected(state.config, branch, "a direct write")
    cap = state.config.limits.max_operations
    if len(body.operations) > cap:
        # Each operation costs a staging step while the branch lock is held.
        raise ApiError(
            413,
            "TooManyOperations",
            f"{len(body.operations)} operations in one request; at most {cap} "
            f"(the limit max_operations): split the batch",
        )
    graph = state.graph
    with state.locks.hold(branch):
        txn = graph.write(branch, body.message)
        try:
            for op in body.operations:
                if op.op == "delete":
                    txn.delete(op.table, op.keys or [], cascade=op.cascade)
                    continue
                # Blob values arrive as base64 text, which the write itself decodes (as
                # for /load): one rule for every path.
                getattr(txn, op.op)(op.table, op.rows or [])
        except BaseException:
            txn.discard()
            raise
        commit = txn.commit_now()
    return CommitRef(branch=branch, commit=commit.id)


@router.post(
    "/branches/{branch:path}/load",
    response_model=CommitRef,
    dependencies=[WriteScope],
    responses=errors(*WRITE_ERRORS, 503),
    summary="Load JSONL records (graphlake's load format) as one commit",
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": 'One JSON object a line: `{"type": "Person", "data": {...}}` or '
            '`{"edge": "Knows", "from": "a", "to": "b", "data": {...}}`. '
            "Bodies over the server's upload limit get 413.",
            "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
        }
    },
)
async def load(
    branch: BranchPath,
    request: Request,
    state: State,
    mode: Annotated[
        Literal["append", "merge", "overwrite"],
        Query(
            description="append: new keys only; merge: upsert; overwrite: replace the tables "
            "the upload names."
        ),
    ] = "append",
    message: Annotated[str | None, Query(max_length=10_000)] = None,
) -> CommitRef | Response:
    check_not_protected(state.config, branch, "loading into it")
    await run_in_threadpool(state.loads.acquire)  # before any byte of the body is read
    fd, path = tempfile.mkstemp(prefix="graphlake-upload-", suffix=".jsonl")
    try:
        # The body-size middleware stops the stream (413) once it passes the limit.
        with os.fdopen(fd, "wb") as f:
            async for chunk in request.stream():
                f.write(chunk)
        commit = await run_in_threadpool(_load, state, path, branch, mode, message)
    except GraphLakeError as exc:
        # Name the upload, not the server's temporary file.
        return graphlake_error_response(exc, str(exc).replace(path, _UPLOAD_NAME))
    finally:
        os.unlink(path)
        state.loads.release()
    return CommitRef(branch=branch, commit=commit.id)


def _load(state: AppState, path: str, branch: str, mode: str, message: str | None) -> Commit:
    with state.locks.hold(branch):
        try:
            return state.graph.load(path, branch=branch, mode=mode, message=message)
        except UnicodeDecodeError:
            # The library reads the file as UTF-8 text and lets this escape untyped.
            raise LoadFormatError("not valid UTF-8 text", path=path) from None
