"""Errors as JSON: `{"error": {"type": "<ExceptionClassName>", "message": "..."}}`.

Status codes follow the exception class (most specific class first):

- 400: bad input: `InvalidNameError`, `QueryError`, `MergeError`, `LoadFormatError`, any
  other `DataError` or `GraphLakeError`, malformed JSON, a bad cursor;
- 401 / 403: no or unknown token / too small a scope or a protected branch;
- 404: `BranchNotFoundError`, `UnknownTableError`, `CommitNotFoundError`,
  `RowNotFoundError` (row history or blame of a row the branch never held);
- 409: `MergeConflictError` (body adds `merge_conflicts`), `DataCheckFailedError` (body
  adds `data_checks`: a merge whose merged result fails a data check), `ConcurrentWriteError`,
  `BranchExistsError`, `CursorResetError` (the branch was reset past a feed cursor);
- 410: `CursorExpiredError` (gc removed a feed cursor's commit);
- 408: `QueryTimeoutError` (a query past its time limit);
- 413: a request body over its limit, `QueryTooLargeError` (a query past its memory
  limit, or its generated SQL or result past a size cap);
- 422: the data breaks the schema or the graph: `TypeMismatchError`, `NullValueError`,
  `UnknownPropertyError`, `ValueConstraintError`, `UniqueViolationError`,
  `DuplicateKeyError`, `MissingEndpointError`, `CardinalityError`, `NodeHasEdgesError`,
  `KeyNotFoundError`, `SchemaDataError`; and request fields that fail validation
  (`RequestValidationError`).

No client input leads to a 500; an unexpected exception is logged (without request
headers) and answered with a bare `InternalServerError`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from graphlake import errors as gle
from graphlake.read.jsonable import jsonable

log = logging.getLogger("graphlake.server")

# Checked in order; the first class the exception is an instance of decides.
STATUS_BY_ERROR: tuple[tuple[type[gle.GraphLakeError], int], ...] = (
    (gle.BranchPermissionError, 403),
    (gle.ReviewPermissionError, 403),
    (gle.ReviewNotFoundError, 404),
    (gle.ReviewStateError, 409),
    (gle.ResolutionTypeError, 422),
    (gle.CursorExpiredError, 410),
    (gle.CursorResetError, 409),
    (gle.RowNotFoundError, 404),
    (gle.MergeConflictError, 409),
    (gle.DataCheckFailedError, 409),
    (gle.ConcurrentWriteError, 409),
    (gle.BranchExistsError, 409),
    (gle.GraphExistsError, 409),
    (gle.BranchNotFoundError, 404),
    (gle.UnknownTableError, 404),
    (gle.CommitNotFoundError, 404),
    (gle.TypeMismatchError, 422),
    (gle.NullValueError, 422),
    (gle.UnknownPropertyError, 422),
    (gle.ValueConstraintError, 422),
    (gle.UniqueViolationError, 422),
    (gle.DuplicateKeyError, 422),
    (gle.MissingEndpointError, 422),
    (gle.CardinalityError, 422),
    (gle.NodeHasEdgesError, 422),
    (gle.KeyNotFoundError, 422),
    (gle.SchemaDataError, 422),
    (gle.QueryTimeoutError, 408),
    (gle.QueryTooLargeError, 413),
    (gle.GraphLakeError, 400),  # InvalidNameError, QueryError, MergeError, DataError, ...
)

_HTTP_TYPES = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    408: "RequestTimeout",
    413: "PayloadTooLarge",
    415: "UnsupportedMediaType",
}


class ApiError(Exception):
    """An error the server itself detects (auth, limits, cursors, protected branches)."""

    def __init__(
        self, status: int, type_: str, message: str, headers: dict[str, str] | None = None
    ):
        super().__init__(message)
        self.status = status
        self.type = type_
        self.message = message
        self.headers = headers


def status_for(exc: gle.GraphLakeError) -> int:
    for cls, status in STATUS_BY_ERROR:
        if isinstance(exc, cls):
            return status
    return 400


def error_body(type_: str, message: str) -> dict[str, Any]:
    return {"error": {"type": type_, "message": message}}


def error_response(
    status: int, type_: str, message: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(error_body(type_, message), status_code=status, headers=headers)


# The library's hints name Python arguments; the API names its own request fields instead.
_HTTP_HINTS = (("delete with cascade=True", 'delete with `"cascade": true`'),)


def http_wording(message: str) -> str:
    for python, http in _HTTP_HINTS:
        message = message.replace(python, http)
    return message


def graphlake_error_response(exc: gle.GraphLakeError, message: str | None = None) -> JSONResponse:
    """The response for a library error; `message` replaces the text (e.g. to hide paths)."""
    text = message if message is not None else http_wording(str(exc) or type(exc).__name__)
    body = error_body(type(exc).__name__, text)
    if isinstance(exc, gle.MergeConflictError):
        body["merge_conflicts"] = [jsonable(c.to_dict()) for c in exc.conflicts]
    if isinstance(exc, gle.DataCheckFailedError):
        body["data_checks"] = [jsonable(r.to_dict()) for r in exc.results]
    return JSONResponse(body, status_code=status_for(exc))


def install(app: FastAPI) -> None:
    """Register the handlers that give every error the one body shape."""

    @app.exception_handler(gle.GraphLakeError)
    async def _graphlake(_: Request, exc: gle.GraphLakeError) -> JSONResponse:
        return graphlake_error_response(exc)

    @app.exception_handler(ApiError)
    async def _api(_: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.type, exc.message, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = exc.errors()
        if any(p.get("type") == "json_invalid" for p in problems):
            return error_response(400, "BadRequest", "the request body is not valid JSON")
        if any(tuple(p.get("loc", ())) == ("body",) for p in problems):
            # No body, or not a JSON object (e.g. sent without a JSON content type).
            return error_response(
                400,
                "BadRequest",
                "the request body must be a JSON object sent as Content-Type: application/json",
            )
        return error_response(422, "RequestValidationError", describe_problems(problems))

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        type_ = _HTTP_TYPES.get(exc.status_code, "HTTPException")
        return error_response(exc.status_code, type_, str(exc.detail), exc.headers)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        # Path only: headers (the bearer token) and bodies never reach the log.
        log.error("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
        return error_response(500, "InternalServerError", "internal server error")


def describe_problems(problems: Any) -> str:
    """`body.operations.0.op: Input should be ...; query.limit: ...` (no input values)."""
    parts = []
    for p in problems:
        where = ".".join(str(x) for x in p.get("loc", ()))
        parts.append(f"{where}: {p.get('msg', 'invalid')}" if where else p.get("msg", "invalid"))
    return "; ".join(parts) or "invalid request"
