"""`GET/POST /branches/{b}/schema`: read a revision's schema, change a branch's."""

from __future__ import annotations

import httpx

from tests.server.harness import SCHEMA

NEW = SCHEMA.replace("born: Date?", "born: Date?\n  nick: String?")


def test_get_plan_apply_and_read_with_the_new_schema(
    reader: httpx.Client, writer: httpx.Client, branch: str
) -> None:
    r = reader.get(f"/branches/{branch}/schema")
    assert r.status_code == 200, r.text
    assert r.json()["schema"] == SCHEMA and len(r.json()["commit"]) == 40
    head = r.json()["commit"]

    r = writer.post(f"/branches/{branch}/schema", json={"schema": NEW, "dry_run": True})
    assert r.status_code == 200, r.text
    plan = r.json()
    assert plan["commit"] is None and plan["cost"] == "metadata"
    assert [s["kind"] for s in plan["steps"]] == ["add_property"]
    assert reader.get(f"/branches/{branch}/schema").json()["commit"] == head

    r = writer.post(f"/branches/{branch}/schema", json={"schema": NEW, "message": "nick"})
    assert r.status_code == 200, r.text
    commit = r.json()["commit"]
    got = reader.get(f"/branches/{branch}/schema").json()
    assert got["schema"] == NEW and got["commit"] == commit
    assert reader.get(f"/branches/{head}/schema").json()["schema"] == SCHEMA  # old commit
    r = writer.post(
        f"/branches/{branch}/mutations",
        json={
            "message": "m",
            "operations": [
                {"op": "upsert", "table": "Person", "rows": [{"name": "Zed", "nick": "z"}]}
            ],
        },
    )
    assert r.status_code == 200, r.text
    rows = reader.get(f"/branches/{branch}/tables/Person", params={"where": "name = 'Zed'"})
    assert rows.json()["rows"][0]["nick"] == "z"
    assert reader.get("/branches/main/schema").json()["schema"] == SCHEMA


def test_bad_input_is_typed_and_changes_nothing(
    reader: httpx.Client, writer: httpx.Client, branch: str
) -> None:
    head = reader.get(f"/branches/{branch}/schema").json()["commit"]
    cases = [
        ({"schema": "node Person {"}, 400, "SchemaError", "line 1"),
        ({"schema": SCHEMA}, 400, "SchemaUnchangedError", "nothing was published"),
        (
            {"schema": SCHEMA.replace("Vector(2)", "Vector(3)")},
            400,
            "SchemaChangeRefusedError",
            "dimension",
        ),
        (
            {
                "schema": SCHEMA.replace(
                    "name: String @key\n  age", "name: String @key\n  req: String\n  age"
                )
            },
            400,
            "SchemaChangeRefusedError",
            "nullable",
        ),
        ({"schema": 3}, 422, None, None),
        ({}, 422, None, None),
    ]
    for body, status, kind, message in cases:
        r = writer.post(f"/branches/{branch}/schema", json=body)
        assert r.status_code == status, (body, r.text)
        if kind:
            assert r.json()["error"]["type"] == kind and message in r.json()["error"]["message"]
    r = writer.post("/branches/nope-nope/schema", json={"schema": NEW})
    assert r.status_code == 404
    assert reader.get(f"/branches/{branch}/schema").json()["commit"] == head


def test_rows_that_break_a_narrowing_get_422(writer: httpx.Client, branch: str) -> None:
    r = writer.post(
        f"/branches/{branch}/mutations",
        json={
            "message": "m",
            "operations": [{"op": "upsert", "table": "Person", "rows": [{"name": "NoAge"}]}],
        },
    )
    assert r.status_code == 200, r.text
    r = writer.post(
        f"/branches/{branch}/schema", json={"schema": SCHEMA.replace("age: I32?", "age: I32")}
    )
    assert r.status_code == 422, r.text
    assert r.json()["error"]["type"] == "SchemaDataError" and "NoAge" in r.text


def test_scopes_and_protected_branches(
    reader: httpx.Client, writer: httpx.Client, branch: str
) -> None:
    assert reader.post(f"/branches/{branch}/schema", json={"schema": NEW}).status_code == 403
    r = writer.post("/branches/main/schema", json={"schema": NEW})
    assert r.status_code == 403 and "protected" in r.text
    r = writer.post("/branches/main/schema", json={"schema": NEW, "dry_run": True})
    assert r.status_code == 200 and r.json()["commit"] is None


def test_a_change_that_drops_values_needs_allow_drop(
    reader: httpx.Client, writer: httpx.Client, branch: str
) -> None:
    head = reader.get(f"/branches/{branch}/schema").json()["commit"]
    no_age = SCHEMA.replace("  age: I32? @range(0..150)\n", "")
    r = writer.post(f"/branches/{branch}/schema", json={"schema": no_age, "dry_run": True})
    assert r.status_code == 200 and r.json()["dropped_values"] == {"Person.age": 2}, r.text
    r = writer.post(f"/branches/{branch}/schema", json={"schema": no_age})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["type"] == "SchemaDropError"
    assert "2 values of Person.age" in r.json()["error"]["message"]
    assert reader.get(f"/branches/{branch}/schema").json()["commit"] == head
    r = writer.post(f"/branches/{branch}/schema", json={"schema": no_age, "allow_drop": True})
    assert r.status_code == 200 and r.json()["commit"], r.text
