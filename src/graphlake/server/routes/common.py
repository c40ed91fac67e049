"""Pieces the routers share: path parameters and documented error responses."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Path

from graphlake.server.models import ErrorBody

BranchPath = Annotated[
    str,
    Path(
        description="Branch name (may contain `/`) or, for reads, any revision: a commit "
        "id (prefix), main~1, dev^2, ...; the log also takes a range A...B.",
        examples=["main"],
    ),
]

BranchName = Annotated[
    str, Path(description="Branch name (may contain `/`).", examples=["feature/x"])
]

_DESCRIPTIONS = {
    400: "Bad input (invalid name, query, cursor, JSON or arguments)",
    401: "No or unknown bearer token",
    403: "The token's scope is too small, or the branch is protected",
    404: "Unknown branch, table or commit",
    408: "The query ran past the time limit (`sql_timeout_s`) and was stopped",
    409: "Conflict: the branch exists, or moved concurrently",
    413: "Request body too large, too many operations, or a query past a memory or size limit",
    422: "The data breaks the schema, or a request field is invalid",
    503: "Too many reads or loads running at once; retry after `Retry-After` seconds",
}


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for error codes, all with the `ErrorBody` shape."""
    return {code: {"model": ErrorBody, "description": _DESCRIPTIONS[code]} for code in codes}


READ_ERRORS = (400, 401, 403, 404, 422)
WRITE_ERRORS = (400, 401, 403, 404, 409, 413, 422)
