"""Branches isolate writes; reads and SQL see exactly one committed snapshot."""

from __future__ import annotations

import pytest

import graphlake as gl
from tests.conftest import reopen, state


def test_branch_isolation_and_lazy_fork(people: gl.Graph) -> None:
    people.create_branch("dev")
    main_before = state(people, "main")
    assert people.head("dev").id == people.head("main").id  # a new branch copies pointers
    with people.write("dev") as w:
        w.insert("Person", [{"name": "Dave"}])
        w.update("Person", [{"name": "Alice", "age": 99}])
    assert people.get("Person", "Dave", branch="dev") is not None
    assert people.get("Person", "Dave") is None
    assert people.get("Person", "Alice")["age"] == 30
    after = state(people, "main")
    assert after == main_before
    dev_head = people.head("dev")
    main_head = people.head("main")
    # Only the touched table forked; the others still point at main's exact state.
    assert dev_head.tables["Person"].lance_branch != main_head.tables["Person"].lance_branch
    assert dev_head.tables["Knows"] == main_head.tables["Knows"]


def test_main_keeps_writing_after_branching(people: gl.Graph) -> None:
    people.create_branch("dev")
    with people.write("main") as w:
        w.insert("Person", [{"name": "M1"}])
    with people.write("dev") as w:
        w.insert("Person", [{"name": "D1"}])
    with people.write("main") as w:
        w.insert("Person", [{"name": "M2"}])
    main = set(people.nodes("Person").column("id").to_pylist())
    dev = set(people.nodes("Person", branch="dev").column("id").to_pylist())
    assert main == {"Alice", "Bob", "Carol", "M1", "M2"}
    assert dev == {"Alice", "Bob", "Carol", "D1"}


def test_branch_from_branch_and_from_commit(people: gl.Graph) -> None:
    first = people.head("main").id
    with people.write() as w:
        w.insert("Person", [{"name": "Later"}])
    people.create_branch("old", from_=first)
    assert people.get("Person", "Later", branch="old") is None
    people.create_branch("copy", from_="main")
    assert people.get("Person", "Later", branch="copy") is not None
    assert people.branches() == ["copy", "main", "old"]


def test_delete_branch_keeps_other_branches_readable(people: gl.Graph) -> None:
    people.create_branch("dev")
    with people.write("dev") as w:
        w.insert("Person", [{"name": "Dev"}])
    people.create_branch("child", from_="dev")
    people.delete_branch("dev")
    assert "dev" not in people.branches()
    assert people.get("Person", "Dev", branch="child") is not None
    # The name can be reused; it is a new branch.
    people.create_branch("dev")
    assert people.get("Person", "Dev", branch="dev") is None
    with people.write("dev") as w:
        w.insert("Person", [{"name": "Dev2"}])
    assert people.get("Person", "Dev", branch="child") is not None
    assert people.get("Person", "Dev2", branch="child") is None


def test_reopen_sees_everything(people: gl.Graph) -> None:
    people.create_branch("dev")
    g2 = reopen(people)
    assert g2.branches() == ["dev", "main"]
    assert state(g2) == state(people)


def test_log_and_time_travel(people: gl.Graph) -> None:
    with people.write(message="add dan") as w:
        w.insert("Person", [{"name": "Dan"}])
    log = people.log()
    assert [c.message for c in log] == ["add dan", "seed", "init"]
    old = log[1].id
    assert people.get("Person", "Dan", branch=old) is None
    assert people.get("Person", "Dan") is not None
    assert people.log(limit=1)[0].message == "add dan"


def test_nodes_where_columns_limit(people: gl.Graph) -> None:
    t = people.nodes("Person", where="age >= 35", columns=["name", "age"])
    assert t.column_names == ["name", "age"]
    assert t.to_pylist() == [{"name": "Bob", "age": 40}]
    assert people.nodes("Person", limit=2).num_rows == 2


def test_sql_over_pinned_snapshot(people: gl.Graph) -> None:
    t = people.sql(
        "SELECT p.name, c.name AS company FROM Person p "
        "JOIN WorksAt w ON w.src = p.id JOIN Company c ON c.id = w.dst"
    )
    assert t.to_pylist() == [{"name": "Alice", "company": "Acme"}]
    people.create_branch("dev")
    with people.write("dev") as w:
        w.insert("Person", [{"name": "Zed"}])
    assert people.sql("SELECT count(*) AS n FROM Person").to_pylist() == [{"n": 3}]
    assert people.sql("SELECT count(*) AS n FROM Person", branch="dev").to_pylist() == [{"n": 4}]


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * FROM read_csv('/etc/passwd')",
        "COPY Person TO '/tmp/x.csv'",
        "ATTACH '/tmp/x.db' AS x",
        "CREATE TABLE t AS SELECT 1",
        "INSTALL httpfs",
        "SELECT 1; SELECT 2",
        "SET enable_external_access = true",
        "SELEC 1",
    ],
)
def test_sql_is_read_only(people: gl.Graph, query: str) -> None:
    before = state(people)
    with pytest.raises(gl.QueryError):
        people.sql(query)
    assert state(people) == before


def test_sql_row_limit(people: gl.Graph) -> None:
    with pytest.raises(gl.QueryError, match="more than 2 rows"):
        people.sql("SELECT * FROM Person", max_rows=2)
    assert people.sql("SELECT * FROM Person", max_rows=3).num_rows == 3
