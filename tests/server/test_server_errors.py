"""Status codes and error bodies: one shape for every error, no 500 for client input."""

from __future__ import annotations

import dataclasses
import http.client
import json

import httpx
import pytest

import graphlake as gl
from tests.server.harness import (
    BODY_LIMIT,
    READ_TOKEN,
    SQL_MAX_ROWS,
    UPLOAD_LIMIT,
    Server,
    head,
    mutate,
    rows,
    unique,
)


def error_of(r: httpx.Response, status: int, type_: str) -> str:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error"} and set(body["error"]) == {"type", "message"}, body
    assert body["error"]["type"] == type_, body
    return body["error"]["message"]


def insert(table: str, *rows_: dict) -> dict:
    return {"op": "insert", "table": table, "rows": list(rows_)}


# --- 400 / 404 / 409 ----------------------------------------------------------------------


def test_unknown_branch_table_commit_are_404(reader: httpx.Client, writer: httpx.Client) -> None:
    # Reads take any revision: an unknown one (branch or commit id) is one error type.
    error_of(reader.get("/branches/nope/log"), 404, "UnknownRevisionError")
    error_of(reader.get("/branches/nope/tables/Person"), 404, "UnknownRevisionError")
    error_of(reader.get("/branches/main/tables/Nope"), 404, "UnknownTableError")
    error_of(reader.get("/diff", params={"a": "main", "b": "0" * 40}), 404, "UnknownRevisionError")
    error_of(reader.get("/diff", params={"a": "main", "b": "nope"}), 404, "UnknownRevisionError")
    # A cursor names its commit by id.
    from graphlake.server.pages import Cursor, query_digest

    forged = Cursor("0" * 40, "a", query_digest("main", "Person", None, None)).encode()
    error_of(
        reader.get("/branches/main/tables/Person", params={"cursor": forged}),
        404,
        "CommitNotFoundError",
    )
    error_of(
        writer.post("/branches", json={"name": unique("x"), "from": "nope"}),
        404,
        "UnknownRevisionError",
    )
    error_of(
        writer.post(
            "/branches/nope/mutations", json={"operations": [insert("Person", {"name": "X"})]}
        ),
        404,
        "BranchNotFoundError",
    )
    error_of(
        writer.post("/merge", json={"source": "nope", "into": "main"}), 404, "UnknownRevisionError"
    )  # a merge source may be any revision
    error_of(reader.get("/no/such/route"), 404, "NotFound")
    error_of(reader.put("/branches"), 405, "MethodNotAllowed")


@pytest.mark.parametrize("name", ["../escape", "a//b", ".hidden", "x.lock", "with space"])
def test_invalid_branch_names_are_400(
    writer: httpx.Client, reader: httpx.Client, name: str
) -> None:
    error_of(writer.post("/branches", json={"name": name}), 400, "InvalidNameError")


@pytest.mark.parametrize(
    "raw",
    [
        "/branches/..%2F..%2Fetc/log",
        "/branches/a/../../x/log",
        "/branches/../../../etc/tables/Person",
        "/branches/%2E%2E/log",
    ],
)
def test_path_traversal_in_the_url_is_400(server: Server, raw: str) -> None:
    # http.client sends the path exactly as written (httpx would normalise `..`).
    host, port = server.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request("GET", raw, headers={"Authorization": f"Bearer {READ_TOKEN}"})
        response = conn.getresponse()
        status, body = response.status, json.loads(response.read())
    finally:
        conn.close()
    assert status == 400, body
    assert body["error"]["type"] == "RevisionSyntaxError"  # an InvalidNameError subclass


def test_bad_json_and_bad_fields(writer: httpx.Client, branch: str) -> None:
    url = f"/branches/{branch}/mutations"
    error_of(
        writer.post(url, content=b'{"operations": [', headers={"Content-Type": "application/json"}),
        400,
        "BadRequest",
    )
    error_of(writer.post(url, content=b"not an object"), 400, "BadRequest")
    error_of(
        writer.post(url, json={"operations": [{"op": "insert", "table": "Person"}]}),
        422,
        "RequestValidationError",
    )
    error_of(
        writer.post(url, json={"operations": [{"op": "drop", "table": "Person", "rows": []}]}),
        422,
        "RequestValidationError",
    )
    error_of(
        writer.get(f"/branches/{branch}/tables/Person", params={"limit": 0}),
        422,
        "RequestValidationError",
    )
    error_of(
        writer.post(f"/branches/{branch}/load", params={"mode": "replace"}, content=b""),
        422,
        "RequestValidationError",
    )


def test_branch_exists_is_409(writer: httpx.Client, branch: str) -> None:
    error_of(writer.post("/branches", json={"name": branch}), 409, "BranchExistsError")


def test_merge_errors_are_400(writer: httpx.Client, branch: str) -> None:
    error_of(writer.post("/merge", json={"source": branch, "into": branch}), 400, "MergeError")


def test_default_branch_cannot_be_deleted(admin: httpx.Client) -> None:
    # `main` is protected in this server: the protection answers first.
    error_of(admin.delete("/branches/main"), 403, "ProtectedBranchError")


# --- 422: the data breaks the schema -------------------------------------------------------


@pytest.mark.parametrize(
    ("operation", "error"),
    [
        (insert("Person", {"name": "V", "age": "old"}), "TypeMismatchError"),
        (insert("Person", {"age": 3}), "NullValueError"),
        (insert("Person", {"name": "V", "shoe": 9}), "UnknownPropertyError"),
        (insert("Person", {"name": "V", "age": 200}), "ValueConstraintError"),
        (insert("Person", {"name": "V", "email": "alice@x.org"}), "UniqueViolationError"),
        (insert("Person", {"name": "Alice"}), "DuplicateKeyError"),
        (insert("Knows", {"src": "Alice", "dst": "Nobody"}), "MissingEndpointError"),
        (insert("WorksAt", {"src": "Alice", "dst": "Acme", "id": "w2"}), "CardinalityError"),
        ({"op": "delete", "table": "Person", "keys": ["Alice"]}, "NodeHasEdgesError"),
        (
            {"op": "update", "table": "Person", "rows": [{"name": "Zz", "age": 1}]},
            "KeyNotFoundError",
        ),
        (insert("Person", {"name": "V", "photo": "%%% not base64"}), "TypeMismatchError"),
    ],
)
def test_schema_violations_are_422_and_write_nothing(
    writer: httpx.Client, reader: httpx.Client, branch: str, operation: dict, error: str
) -> None:
    before = head(reader, branch)
    r = writer.post(f"/branches/{branch}/mutations", json={"operations": [operation]})
    error_of(r, 422, error)
    assert head(reader, branch) == before


def test_status_mapping_covers_every_library_error() -> None:
    from graphlake.server.errors import status_for

    for name in gl.__all__:
        cls = getattr(gl, name)
        if isinstance(cls, type) and issubclass(cls, gl.GraphLakeError):
            exc = cls.__new__(cls)
            assert status_for(exc) in (400, 404, 408, 409, 413, 422), name


def test_hints_name_the_api_fields(writer: httpx.Client, branch: str) -> None:
    r = writer.post(
        f"/branches/{branch}/mutations",
        json={"operations": [{"op": "delete", "table": "Person", "keys": ["Alice"]}]},
    )
    message = error_of(r, 422, "NodeHasEdgesError")
    assert '"cascade": true' in message and "cascade=True" not in message, message


# --- merge conflicts ---------------------------------------------------------------------


def test_merge_conflict_is_409_with_the_conflicts(
    writer: httpx.Client, reader: httpx.Client
) -> None:
    target, a, b = unique("t/ct"), unique("t/ca"), unique("t/cb")
    for name in (target, a, b):
        assert writer.post("/branches", json={"name": name}).status_code == 201
    mutate(writer, a, {"op": "update", "table": "Person", "rows": [{"name": "Bob", "age": 1}]})
    mutate(writer, b, {"op": "update", "table": "Person", "rows": [{"name": "Bob", "age": 2}]})
    assert writer.post("/merge", json={"source": a, "into": target}).status_code == 200
    before = head(reader, target)

    r = writer.post("/merge", json={"source": b, "into": target})
    assert r.status_code == 409, r.text
    body = r.json()
    assert body["error"]["type"] == "MergeConflictError"
    assert len(body["merge_conflicts"]) == 1
    conflict = body["merge_conflicts"][0]
    expected_keys = {f.name for f in dataclasses.fields(gl.Conflict)}
    assert set(conflict) == expected_keys
    assert conflict["kind"] == "divergent_update" and conflict["table"] == "Person"
    assert conflict["entity_id"] == "Bob" and conflict["properties"] == ["age"]
    assert conflict["source"]["age"] == 2 and conflict["target"]["age"] == 1
    assert head(reader, target) == before  # nothing published

    dry = writer.post("/merge", json={"source": b, "into": target, "dry_run": True})
    assert dry.status_code == 200 and dry.json()["outcome"] == "conflict"
    assert set(dry.json()["conflicts"][0]) == expected_keys

    theirs = writer.post("/merge", json={"source": b, "into": target, "strategy": "theirs"})
    assert theirs.status_code == 200 and theirs.json()["resolved"][0]["resolution"] == "theirs"
    assert rows(reader, target, "Person", where="name = 'Bob'")[0]["age"] == 2


# --- pagination --------------------------------------------------------------------------


def test_pagination_returns_every_row_once_from_one_snapshot(
    writer: httpx.Client, reader: httpx.Client, branch: str
) -> None:
    # Keys that sort differently as bytes and as numbers, plus non-ASCII and quotes.
    names = [f"p{i}" for i in range(57)] + ["O'Brien", "Zoë", "é", "Ω"]
    mutate(
        writer,
        branch,
        insert("Person", *({"name": n, "age": i % 100} for i, n in enumerate(names))),
    )
    expected = sorted([*names, "Alice", "Bob", "Carol"])

    seen: list[str] = []
    commits = set()
    cursor = None
    pages = 0
    while True:
        params: dict = {"limit": 7, "columns": "name"}
        if cursor:
            params["cursor"] = cursor
        page = reader.get(f"/branches/{branch}/tables/Person", params=params)
        assert page.status_code == 200, page.text
        body = page.json()
        assert len(body["rows"]) <= 7
        seen += [r["name"] for r in body["rows"]]
        commits.add(body["commit"])
        pages += 1
        if pages == 2:  # a write between pages does not show in later pages
            mutate(
                writer,
                branch,
                insert("Person", {"name": "a-late"}),
                {"op": "delete", "table": "Person", "keys": ["p30"]},
            )
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert seen == expected  # every row exactly once, in id order
    assert len(commits) == 1 and pages == -(-len(expected) // 7)
    assert "a-late" in {r["id"] for r in rows(reader, branch, "Person")}

    # A filter and columns without id paginate the same way.
    filtered, cursor = [], None
    while True:
        params = {"limit": 4, "where": "age < 10", "columns": "age"}
        if cursor:
            params["cursor"] = cursor
        body = reader.get(f"/branches/{branch}/tables/Person", params=params).json()
        assert all(set(r) == {"age"} for r in body["rows"])
        filtered += [r["age"] for r in body["rows"]]
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert sorted(filtered) == sorted(
        r["age"] for r in rows(reader, branch, "Person", where="age < 10")
    )


def test_bad_cursors_are_400(reader: httpx.Client, branch: str) -> None:
    url = f"/branches/{branch}/tables/Person"
    cursor = reader.get(url, params={"limit": 1}).json()["next_cursor"]
    assert cursor
    error_of(reader.get(url, params={"limit": 1, "cursor": "garbage!"}), 400, "InvalidCursorError")
    error_of(
        reader.get(url, params={"limit": 1, "cursor": cursor, "where": "age > 1"}),
        400,
        "InvalidCursorError",
    )
    error_of(
        reader.get(f"/branches/{branch}/tables/Company", params={"limit": 1, "cursor": cursor}),
        400,
        "InvalidCursorError",
    )
    error_of(
        reader.get("/branches/main/tables/Person", params={"limit": 1, "cursor": cursor}),
        400,
        "InvalidCursorError",
    )


def test_bad_filter_and_columns(reader: httpx.Client) -> None:
    error_of(
        reader.get("/branches/main/tables/Person", params={"where": "age >>> ("}), 400, "QueryError"
    )
    error_of(
        reader.get("/branches/main/tables/Person", params={"columns": "name,shoe"}),
        422,
        "UnknownPropertyError",
    )


# --- SQL ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "DELETE FROM Person",
        "CREATE TABLE t (a INT)",
        "INSERT INTO Person (id) VALUES ('x')",
        "ATTACH 'other.db'",
        "COPY Person TO 'out.csv'",
        "INSTALL httpfs",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT 1; SELECT 2",
        "SELEC nonsense",
    ],
)
def test_sql_is_read_only(reader: httpx.Client, query: str) -> None:
    error_of(reader.post("/branches/main/sql", json={"query": query}), 400, "QueryError")


def test_sql_row_limits(reader: httpx.Client) -> None:
    url = "/branches/main/sql"
    message = error_of(
        reader.post(url, json={"query": "SELECT * FROM Person", "max_rows": 2}), 400, "QueryError"
    )
    assert "more than 2 rows" in message
    ok = reader.post(url, json={"query": "SELECT * FROM Person", "max_rows": 3})
    assert ok.status_code == 200 and len(ok.json()["rows"]) == 3
    # The server's cap holds whatever the client asks for.
    big = f"SELECT * FROM range({SQL_MAX_ROWS + 1})"
    message = error_of(reader.post(url, json={"query": big, "max_rows": 10**9}), 400, "QueryError")
    assert f"more than {SQL_MAX_ROWS} rows" in message
    fits = reader.post(url, json={"query": f"SELECT * FROM range({SQL_MAX_ROWS})"})
    assert fits.status_code == 200 and len(fits.json()["rows"]) == SQL_MAX_ROWS


# --- 413 ---------------------------------------------------------------------------------


def test_upload_over_the_limit_is_413(
    writer: httpx.Client, reader: httpx.Client, branch: str
) -> None:
    line = json.dumps({"type": "Person", "data": {"name": "x" * 100}}) + "\n"
    body = (line * (UPLOAD_LIMIT // len(line) + 2)).encode()
    assert len(body) > UPLOAD_LIMIT
    before = head(reader, branch)
    url = f"/branches/{branch}/load"
    error_of(writer.post(url, content=body), 413, "PayloadTooLarge")

    def chunks():  # no Content-Length: counted while it streams
        for i in range(0, len(body), 8192):
            yield body[i : i + 8192]

    error_of(writer.post(url, content=chunks()), 413, "PayloadTooLarge")
    assert head(reader, branch) == before
    # Just under the limit is fine (and goes through the library's validation).
    small = json.dumps({"type": "Person", "data": {"name": "under-limit"}}) + "\n"
    assert writer.post(url, content=small).status_code == 200


def test_json_body_over_the_limit_is_413(writer: httpx.Client, branch: str) -> None:
    rows_ = [{"name": f"n{i}", "email": "e" * 200} for i in range(BODY_LIMIT // 200 + 10)]
    url = f"/branches/{branch}/mutations"
    error_of(
        writer.post(url, json={"operations": [insert("Person", *rows_)]}), 413, "PayloadTooLarge"
    )
    body = json.dumps({"operations": [insert("Person", *rows_)]}).encode()

    def chunks():  # no Content-Length: counted while FastAPI reads the body
        for i in range(0, len(body), 8192):
            yield body[i : i + 8192]

    error_of(
        writer.post(url, content=chunks(), headers={"Content-Type": "application/json"}),
        413,
        "PayloadTooLarge",
    )


def test_load_errors_name_the_upload_not_a_server_path(writer: httpx.Client, branch: str) -> None:
    body = b'{"type": "Person", "data": {"name": "ok"}}\n{broken\n'
    message = error_of(
        writer.post(f"/branches/{branch}/load", content=body), 400, "LoadFormatError"
    )
    assert message.startswith("upload:2:") and "/tmp" not in message
    message = error_of(
        writer.post(f"/branches/{branch}/load", content=b'{"type": "Ghost", "data": {}}\n'),
        404,
        "UnknownTableError",
    )
    assert "graphlake-upload" not in message
    message = error_of(
        writer.post(f"/branches/{branch}/load", content=b"\xff\xfe{}\n"), 400, "LoadFormatError"
    )
    assert message == "upload: not valid UTF-8 text"
