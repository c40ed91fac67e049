"""`Graph.diff`: old -> new values, edge endpoints, inserted and deleted rows, paging."""

from __future__ import annotations

import pytest

import graphlake as gl
from graphlake.errors import GraphLakeError


def test_diff_reports_values_endpoints_and_rows(people: gl.Graph) -> None:
    g = people
    g.create_branch("dev")
    with g.write("dev") as w:
        w.insert("Person", [{"name": "Dan", "age": 7}])
        w.update("Person", [{"name": "Alice", "age": 31, "role": "pm"}])
        w.insert("Knows", [{"id": "k3", "src": "Carol", "dst": "Dan"}])
        w.update("Knows", [{"id": "k1", "since": "2021-01-02"}])
        w.delete("Knows", ["k2"])
    d = g.diff("main", "dev")
    person, knows = d["Person"], d["Knows"]
    assert person.counts == {"inserted": 1, "updated": 1, "deleted": 0}
    assert person.updated == {"Alice": ["age", "role"]}  # unchanged shape, kept compatible
    assert person.changes == {"Alice": {"age": (30, 31), "role": ("eng", "pm")}}
    assert person.inserted_rows["Dan"]["age"] == 7
    assert person.endpoints == {}
    assert knows.counts == {"inserted": 1, "updated": 1, "deleted": 1}
    assert knows.endpoints == {
        "k3": ("Carol", "Dan"),
        "k1": ("Alice", "Bob"),
        "k2": ("Bob", "Carol"),
    }
    assert str(knows.deleted_rows["k2"]["since"]) == "2020-05-01"
    assert set(knows.changes["k1"]) == {"since"}
    as_dict = person.to_dict()
    assert as_dict["changes"] == {
        "Alice": {"age": {"old": 30, "new": 31}, "role": {"old": "eng", "new": "pm"}}
    }
    assert as_dict["counts"] == person.counts and not as_dict["truncated"]


@pytest.mark.parametrize("insert_only", [True, False])
def test_diff_pages_rows_but_counts_all(people: gl.Graph, insert_only: bool) -> None:
    g = people
    g.create_branch("dev")
    with g.write("dev") as w:
        w.insert("Person", [{"name": f"p{i:02d}"} for i in range(25)])
        if not insert_only:
            w.delete("Person", ["Carol"], cascade=True)
    full = g.diff("main", "dev")["Person"]
    paged = g.diff("main", "dev", limit=3)["Person"]
    assert full.counts["inserted"] == paged.counts["inserted"] == 25
    assert paged.inserted == ["p00", "p01", "p02"] == list(paged.inserted_rows)
    assert len(full.inserted) == 25 and not full.truncated and paged.truncated
    assert paged.counts["deleted"] == (0 if insert_only else 1)
    assert g.diff("main", "dev", limit=0)["Person"].inserted == []


def test_diff_refuses_a_negative_limit(people: gl.Graph) -> None:
    with pytest.raises(GraphLakeError, match="limit"):
        people.diff("main", "main", limit=-1)
