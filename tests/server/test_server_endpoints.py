"""Every endpoint's happy path against a real server."""

from __future__ import annotations

import base64
import json

import httpx

from tests.server.harness import head, mutate, rows, unique


def test_health_needs_no_token(anon: httpx.Client) -> None:
    r = anon.get("/health")
    assert r.status_code == 200
    assert r.json()["status"] == "ok" and r.json()["version"]


def test_openapi_documents_every_endpoint(anon: httpx.Client) -> None:
    spec = anon.get("/openapi.json").json()
    assert set(spec["paths"]) >= {
        "/health",
        "/branches",
        "/branches/{name}",
        "/branches/{branch}/log",
        "/branches/{branch}/tables/{table}",
        "/branches/{branch}/sql",
        "/branches/{branch}/mutations",
        "/branches/{branch}/load",
        "/diff",
        "/merge",
        "/merge_many",
    }
    assert "HTTPBearer" in spec["components"]["securitySchemes"]
    merge_409 = spec["paths"]["/merge"]["post"]["responses"]["409"]
    assert merge_409["content"]["application/json"]["schema"]["$ref"].endswith("MergeConflictBody")


def test_branch_create_list_log_delete(
    writer: httpx.Client, admin: httpx.Client, reader: httpx.Client
) -> None:
    name = unique("feature/nested/x")  # slashes in names travel in the path
    main_head = head(reader, "main")
    r = writer.post("/branches", json={"name": name, "from": "main"})
    assert r.status_code == 201, r.text
    assert r.json() == {
        **r.json(),
        "name": name,
        "head": main_head,
        "default": False,
        "protected": False,
    }

    listed = {b["name"]: b for b in reader.get("/branches").json()["branches"]}
    assert listed["main"]["default"] and listed["main"]["protected"]
    assert listed[name]["head"] == main_head

    log = reader.get(f"/branches/{name}/log").json()
    assert log["branch"] == name
    assert [c["message"] for c in log["commits"]][-2:] == ["seed", "init"]
    assert log["commits"][-1]["parents"] == []
    assert len(reader.get(f"/branches/{name}/log", params={"limit": 1}).json()["commits"]) == 1

    assert admin.delete(f"/branches/{name}").status_code == 204
    assert name not in {b["name"] for b in reader.get("/branches").json()["branches"]}
    assert reader.get(f"/branches/{name}/log").status_code == 404


def test_branch_from_a_commit_id(writer: httpx.Client, reader: httpx.Client) -> None:
    seed_commit = reader.get("/branches/main/log").json()["commits"][-1]["id"]  # init
    name = unique("from-commit")
    r = writer.post("/branches", json={"name": name, "from": seed_commit})
    assert r.status_code == 201 and r.json()["head"] == seed_commit
    assert rows(reader, name, "Person") == []


def test_read_rows_as_json(reader: httpx.Client) -> None:
    alice = rows(reader, "main", "Person", where="name = 'Alice'")
    assert alice == [
        {
            "id": "Alice",
            "name": "Alice",
            "age": 30,
            "email": "alice@x.org",
            "born": "1994-03-04",
            "embedding": [0.5, 1.0],
            "photo": base64.b64encode(b"\x89PNG\x00\xff").decode(),
        }
    ]
    assert rows(reader, "main", "Person", where="age >= 30", columns="name,age") == [
        {"name": "Alice", "age": 30},
        {"name": "Bob", "age": 40},
    ]
    assert rows(reader, "main", "Knows") == [
        {"id": "k1", "src": "Alice", "dst": "Bob", "since": "2020-05-01"}
    ]
    page = reader.get("/branches/main/tables/Company").json()
    assert page["table"] == "Company" and page["commit"] == head(reader, "main")


def test_mutations_publish_one_commit(
    writer: httpx.Client, reader: httpx.Client, branch: str
) -> None:
    before = head(reader, branch)
    photo = base64.b64encode(b"\x00\x01binary").decode()
    commit = mutate(
        writer,
        branch,
        {
            "op": "insert",
            "table": "Person",
            "rows": [{"name": "Dave", "age": 25, "photo": photo, "embedding": [1, 2]}],
        },
        {"op": "upsert", "table": "Person", "rows": [{"name": "Bob", "age": 41}, {"name": "Erin"}]},
        {"op": "update", "table": "Person", "rows": [{"name": "Carol", "born": "2001-02-03"}]},
        {"op": "insert", "table": "Knows", "rows": [{"id": "k2", "src": "Dave", "dst": "Alice"}]},
        {"op": "delete", "table": "Knows", "keys": ["k1"]},
        message="one commit",
    )
    log = reader.get(f"/branches/{branch}/log", params={"limit": 2}).json()["commits"]
    assert [c["id"] for c in log] == [commit, before]
    assert log[0]["message"] == "one commit" and log[0]["parents"] == [before]

    people = {r["id"]: r for r in rows(reader, branch, "Person")}
    assert set(people) == {"Alice", "Bob", "Carol", "Dave", "Erin"}
    assert people["Dave"]["photo"] == photo and people["Dave"]["embedding"] == [1.0, 2.0]
    assert people["Bob"]["age"] == 41 and people["Carol"]["born"] == "2001-02-03"
    assert [k["id"] for k in rows(reader, branch, "Knows")] == ["k2"]

    # A node with edges goes only with cascade, which takes its edges along.
    mutate(writer, branch, {"op": "delete", "table": "Person", "keys": ["Dave"], "cascade": True})
    assert "Dave" not in {r["id"] for r in rows(reader, branch, "Person")}
    assert rows(reader, branch, "Knows") == []
    assert head(reader, "main") != head(reader, branch)  # main untouched


def test_load_jsonl(writer: httpx.Client, reader: httpx.Client, branch: str) -> None:
    records = [
        {"type": "Person", "data": {"name": "Frank", "age": 50}},
        {"type": "Company", "data": {"name": "Initech"}},
        {"edge": "WorksAt", "from": "Frank", "to": "Initech"},
    ]
    body = "\n".join(json.dumps(r) for r in records) + "\n"
    r = writer.post(
        f"/branches/{branch}/load",
        params={"mode": "append", "message": "bulk"},
        content=body,
        headers={"Content-Type": "application/x-ndjson"},
    )
    assert r.status_code == 200, r.text
    assert head(reader, branch) == r.json()["commit"]
    assert reader.get(f"/branches/{branch}/log").json()["commits"][0]["message"] == "bulk"
    assert rows(reader, branch, "Person", where="name = 'Frank'")[0]["age"] == 50
    assert sorted((w["src"], w["dst"]) for w in rows(reader, branch, "WorksAt")) == [
        ("Alice", "Acme"),
        ("Frank", "Initech"),
    ]

    merge = '{"type": "Person", "data": {"name": "Frank", "age": 51}}\n'
    r = writer.post(f"/branches/{branch}/load", params={"mode": "merge"}, content=merge)
    assert r.status_code == 200, r.text
    assert rows(reader, branch, "Person", where="name = 'Frank'")[0]["age"] == 51


def test_sql_on_a_pinned_snapshot(reader: httpx.Client) -> None:
    r = reader.post(
        "/branches/main/sql", json={"query": "SELECT name, age FROM Person ORDER BY name"}
    )
    assert r.status_code == 200, r.text
    assert r.json() == {
        "commit": head(reader, "main"),
        "columns": ["name", "age"],
        "rows": [["Alice", 30], ["Bob", 40], ["Carol", None]],
    }
    join = (
        "SELECT p.name, c.name FROM WorksAt w JOIN Person p ON p.id = w.src "
        "JOIN Company c ON c.id = w.dst"
    )
    r = reader.post("/branches/main/sql", json={"query": join, "max_rows": 5})
    assert r.json()["columns"] == ["name", "name"] and r.json()["rows"] == [["Alice", "Acme"]]


def test_diff(writer: httpx.Client, reader: httpx.Client, branch: str) -> None:
    mutate(
        writer,
        branch,
        {"op": "insert", "table": "Person", "rows": [{"name": "Gina"}]},
        {"op": "update", "table": "Person", "rows": [{"name": "Bob", "age": 42}]},
        {"op": "delete", "table": "Knows", "keys": ["k1"]},
    )
    r = reader.get("/diff", params={"a": "main", "b": branch})
    assert r.status_code == 200, r.text
    tables = r.json()["tables"]
    assert set(tables) == {"Person", "Knows"}
    person, knows = tables["Person"], tables["Knows"]
    assert (person["inserted"], person["updated"], person["deleted"]) == (
        ["Gina"],
        {"Bob": ["age"]},
        [],
    )
    assert person["counts"] == {"inserted": 1, "updated": 1, "deleted": 0}
    assert person["changes"] == {"Bob": {"age": {"old": 40, "new": 42}}}
    assert person["inserted_rows"][0]["name"] == "Gina"
    assert (knows["deleted"], knows["endpoints"]) == (["k1"], {"k1": ["Alice", "Bob"]})
    assert knows["deleted_rows"][0]["src"] == "Alice" and not knows["truncated"]
    paged = reader.get("/diff", params={"a": "main", "b": branch, "limit": 0}).json()
    assert paged["tables"]["Person"]["counts"]["inserted"] == 1
    assert paged["tables"]["Person"]["inserted"] == [] and paged["tables"]["Person"]["truncated"]
    same = reader.get("/diff", params={"a": "main", "b": head(reader, "main")})
    assert same.json()["tables"] == {}


def test_merge_fast_forward_merged_and_dry_run(writer: httpx.Client, reader: httpx.Client) -> None:
    target, source = unique("t/target"), unique("t/source")
    for name in (target, source):
        assert writer.post("/branches", json={"name": name}).status_code == 201
    mutate(writer, source, {"op": "insert", "table": "Person", "rows": [{"name": "Hal"}]})
    r = writer.post("/merge", json={"source": source, "into": target})
    assert r.status_code == 200, r.text
    assert r.json()["outcome"] == "fast_forward" and r.json()["commit"] == head(reader, source)

    mutate(writer, source, {"op": "insert", "table": "Person", "rows": [{"name": "Ida"}]})
    mutate(
        writer, target, {"op": "update", "table": "Person", "rows": [{"name": "Bob", "age": 43}]}
    )
    target_head = head(reader, target)
    dry = writer.post("/merge", json={"source": source, "into": target, "dry_run": True})
    assert dry.status_code == 200 and dry.json()["dry_run"] is True
    assert dry.json()["outcome"] == "merged" and head(reader, target) == target_head

    r = writer.post("/merge", json={"source": source, "into": target, "message": "land it"})
    assert r.status_code == 200, r.text
    result = r.json()
    assert result["outcome"] == "merged" and result["commit"] == head(reader, target)
    assert result["source"] == source and result["target"] == target
    assert result["routes"]["Person"] in ("insertion_replay", "three_way")
    assert set(result) >= {"base", "conflicts", "resolved", "stats", "timings"}
    log = reader.get(f"/branches/{target}/log", params={"limit": 1}).json()["commits"][0]
    assert log["message"] == "land it" and len(log["parents"]) == 2
    people = {r["id"]: r for r in rows(reader, target, "Person")}
    assert {"Hal", "Ida"} <= set(people) and people["Bob"]["age"] == 43

    again = writer.post("/merge", json={"source": source, "into": target})
    assert again.json()["outcome"] == "already_up_to_date"


def test_merge_takes_a_lineage_mode(writer: httpx.Client, reader: httpx.Client) -> None:
    target, source = unique("lin/main"), unique("lin/dev")
    assert writer.post("/branches", json={"name": target}).status_code == 201
    assert writer.post("/branches", json={"name": source, "from": target}).status_code == 201
    mutate(writer, source, {"op": "insert", "table": "Person", "rows": [{"name": "Lin"}]})
    mutate(writer, target, {"op": "insert", "table": "Company", "rows": [{"name": "LinCo"}]})
    bad = writer.post("/merge", json={"source": source, "into": target, "lineage": "maybe"})
    assert bad.status_code == 422
    r = writer.post("/merge", json={"source": source, "into": target, "lineage": "verify"})
    assert r.status_code == 200, r.text
    assert r.json()["stats"]["Person"]["discovery"] == "verified"


def test_merge_many_lands_as_one_commit(writer: httpx.Client, reader: httpx.Client) -> None:
    target = unique("mm/target")
    assert writer.post("/branches", json={"name": target}).status_code == 201
    shards = [unique(f"mm/w{i}") for i in range(3)]
    for name in shards:
        assert writer.post("/branches", json={"name": name, "from": target}).status_code == 201
        mutate(writer, name, {"op": "insert", "table": "Person", "rows": [{"name": f"{name}-p"}]})
    before = head(reader, target)
    dry = writer.post("/merge_many", json={"sources": shards, "into": target, "dry_run": True})
    assert dry.status_code == 200 and head(reader, target) == before
    r = writer.post(
        "/merge_many", json={"sources": shards, "into": target, "strict_disjoint": True}
    )
    assert r.status_code == 200, r.text
    assert r.json()["outcome"] == "merged"
    log = reader.get(f"/branches/{target}/log", params={"limit": 1}).json()["commits"][0]
    assert len(log["parents"]) == 4
    names = {row["id"] for row in rows(reader, target, "Person")}
    assert {f"{name}-p" for name in shards} <= names
    bad = writer.post("/merge_many", json={"sources": [], "into": target})
    assert bad.status_code in (400, 422)
    bad = writer.post("/merge_many", json={"sources": shards, "into": target, "strategy": "mine"})
    assert bad.status_code == 422
