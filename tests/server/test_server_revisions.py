"""Revisions over HTTP: reads take any revision in the path or in /diff, /diff and the
log take ranges, /merge takes a commit as its source, writes need a branch name."""

from __future__ import annotations

from urllib.parse import quote

import httpx

from graphlake import errors as gle
from graphlake.server.errors import status_for
from tests.server.harness import head, mutate, rows, unique


def insert(name: str) -> dict:
    return {"op": "insert", "table": "Person", "rows": [{"name": name}]}


def at(branch: str, suffix: str) -> str:
    """`/branches/<revision>/...` with the revision's `^` percent-encoded."""
    return f"/branches/{quote(branch, safe='/~.')}/{suffix}"


def error_of(r: httpx.Response, status: int, type_: str) -> str:
    assert r.status_code == status, r.text
    assert r.json()["error"]["type"] == type_, r.text
    return r.json()["error"]["message"]


def test_reads_merges_and_ranges_take_revisions(
    writer: httpx.Client, reader: httpx.Client, branch: str
) -> None:
    fork = head(reader, branch)
    c1 = mutate(writer, branch, insert(unique("R")), message="c1")
    c2 = mutate(
        writer,
        branch,
        {"op": "update", "table": "Person", "rows": [{"name": "Bob", "age": 41}]},
        message="c2",
    )
    side = unique("t/side")
    r = writer.post("/branches", json={"name": side, "from": f"{branch}~2"})
    assert r.status_code == 201 and r.json()["head"] == fork, r.text
    s1 = mutate(writer, side, insert(unique("S")), message="s1")
    # Merge a commit (by id prefix) into the side branch: it becomes the second parent.
    r = writer.post("/merge", json={"source": c1[:10], "into": side})
    assert r.status_code == 200 and r.json()["outcome"] == "merged", r.text
    log = reader.get(at(side, "log"), params={"limit": 1}).json()["commits"]
    assert log[0]["parents"] == [s1, c1]
    # Reads at revisions: path parameter and /diff.
    assert head(reader, f"{side}~1") == s1
    assert head(reader, f"{side}^2") == c1
    assert head(reader, c2[:8] + "~2") == fork
    bob = [p for p in rows(reader, f"{side}^2", "Person") if p["id"] == "Bob"]
    assert bob[0]["age"] == 40
    r = reader.get(at(f"{side}^2", "tables/Person"), params={"limit": 1000})
    assert r.status_code == 200 and r.json()["commit"] == c1, r.text
    r = reader.post(
        at(f"{branch}~1", "sql"), json={"query": "SELECT age FROM Person WHERE name = 'Bob'"}
    )
    assert r.status_code == 200 and r.json()["rows"] == [[40]], r.text
    # Ranges: the log and /diff from the merge base.
    r = reader.get(at(f"{side}~1...{branch}", "log"))
    assert [c["id"] for c in r.json()["commits"]] == [c2, c1], r.text
    r = reader.get("/diff", params={"a": f"{side}~1...{branch}"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["a"], body["b"]) == (fork, c2)
    person = body["tables"]["Person"]
    assert person["updated"] == {"Bob": ["age"]} and len(person["inserted"]) == 1
    assert person["deleted"] == []


def test_revision_errors(writer: httpx.Client, reader: httpx.Client, branch: str) -> None:
    assert "past the root" in error_of(
        reader.get(at(f"{branch}~9999", "log")), 404, "AncestorNotFoundError"
    )
    assert "only 1 parent" in error_of(
        reader.get(at(f"{branch}^2", "tables/Person")), 404, "AncestorNotFoundError"
    )
    assert "did you mean main?" in error_of(
        reader.get(at("mian", "log")), 404, "UnknownRevisionError"
    )
    error_of(reader.get(at("main~x", "log")), 400, "RevisionSyntaxError")
    error_of(reader.get("/diff", params={"a": "main...", "b": "main"}), 400, "RevisionSyntaxError")
    error_of(reader.get("/diff", params={"a": "main"}), 400, "RevisionSyntaxError")
    # Writes need a branch name; nothing is written.
    before = head(reader, branch)
    for revision in (f"{branch}~0", before):
        message = error_of(
            writer.post(
                at(revision, "mutations"), json={"message": "m", "operations": [insert("Nope")]}
            ),
            400,
            "NotABranchError",
        )
        assert "not a branch" in message
    error_of(writer.post(at(f"{branch}^", "load"), content=b""), 400, "NotABranchError")
    error_of(
        writer.post("/merge", json={"source": "main", "into": f"{branch}~1"}),
        400,
        "NotABranchError",
    )
    assert head(reader, branch) == before


def test_every_revision_error_has_a_status() -> None:
    assert status_for(gle.AmbiguousRevisionError("x", ["a", "b"])) == 400
    assert status_for(gle.UnknownRevisionError("x")) == 404
    assert status_for(gle.AncestorNotFoundError("x")) == 404
    assert status_for(gle.RevisionSyntaxError("x")) == 400
    assert status_for(gle.NotABranchError("x")) == 400
    assert status_for(gle.RevisionError("x")) == 400
