"""Writes: one atomic commit per transaction, validated, net effects only."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

import graphlake as gl
from tests.conftest import state


def names(g: gl.Graph, table: str = "Person", branch: str = "main") -> list[str]:
    return sorted(g.nodes(table, branch=branch, columns=["id"]).column("id").to_pylist())


def test_insert_and_read_back(people: gl.Graph) -> None:
    assert names(people) == ["Alice", "Bob", "Carol"]
    alice = people.get("Person", "Alice")
    assert alice == {
        "id": "Alice",
        "name": "Alice",
        "age": 30,
        "email": "alice@x.org",
        "role": "eng",
    }
    acme = people.get("Company", "Acme")
    assert acme["founded"] == dt.date(1999, 1, 2)
    knows = people.edges("Knows").to_pylist()
    assert {(e["src"], e["dst"]) for e in knows} == {("Alice", "Bob"), ("Bob", "Carol")}
    assert people.get("Person", "Nobody") is None


def test_one_commit_per_transaction(people: gl.Graph) -> None:
    log = people.log("main")
    assert [c.message for c in log] == ["seed", "init"]
    assert log[0].parents == (log[1].id,)


def test_generated_edge_ids_are_unique(people: gl.Graph) -> None:
    with people.write() as w:
        w.insert("Knows", [{"src": "Carol", "dst": "Alice"}, {"src": "Carol", "dst": "Bob"}])
    ids = people.edges("Knows").column("id").to_pylist()
    assert len(ids) == len(set(ids)) == 4


def test_update_changes_only_given_properties(people: gl.Graph) -> None:
    with people.write() as w:
        w.update("Person", [{"name": "Alice", "age": 31}])
    alice = people.get("Person", "Alice")
    assert alice["age"] == 31 and alice["email"] == "alice@x.org" and alice["role"] == "eng"


def test_update_rows_with_different_columns(people: gl.Graph) -> None:
    with people.write() as w:
        w.update("Person", [{"name": "Alice", "age": 32}, {"name": "Bob", "role": "pm"}])
    assert people.get("Person", "Alice")["role"] == "eng"
    assert people.get("Person", "Bob")["age"] == 40
    assert people.get("Person", "Bob")["role"] == "pm"


def test_upsert_inserts_and_updates(people: gl.Graph) -> None:
    with people.write() as w:
        w.upsert("Person", [{"name": "Bob", "age": 41}, {"name": "Dan", "age": 5}])
    assert people.get("Person", "Bob")["age"] == 41
    assert people.get("Person", "Dan")["age"] == 5


def test_delete_edge_and_node(people: gl.Graph) -> None:
    with people.write() as w:
        w.delete("Knows", ["k2"])
        w.delete("Person", "Carol")
    assert names(people) == ["Alice", "Bob"]
    assert people.edges("Knows").column("id").to_pylist() == ["k1"]


def test_cascade_deletes_touching_edges(people: gl.Graph) -> None:
    with people.write() as w:
        w.delete("Person", ["Bob"], cascade=True)
    assert names(people) == ["Alice", "Carol"]
    assert people.edges("Knows").num_rows == 0
    assert people.edges("WorksAt").num_rows == 1


def test_net_zero_transaction_makes_no_commit(people: gl.Graph) -> None:
    before = people.head("main").id
    with people.write() as w:
        w.insert("Person", [{"name": "Temp"}])
        w.delete("Person", ["Temp"])
        w.update("Person", [{"name": "Alice", "age": 30}])  # equal to the current value
    assert people.head("main").id == before


def test_insert_then_update_in_one_transaction(graph: gl.Graph) -> None:
    with graph.write() as w:
        w.insert("Person", [{"name": "Eve", "age": 1}])
        w.update("Person", [{"name": "Eve", "age": 2}])
    assert graph.get("Person", "Eve")["age"] == 2
    assert len(graph.log()) == 2


def test_exception_in_block_discards_everything(people: gl.Graph) -> None:
    before = state(people)
    with pytest.raises(RuntimeError), people.write() as w:
        w.insert("Person", [{"name": "Zed"}])
        raise RuntimeError("boom")
    assert state(people) == before


def test_arrow_and_pandas_rows(graph: gl.Graph) -> None:
    import pandas as pd

    with graph.write() as w:
        w.insert("Person", pa.table({"name": ["A1", "A2"], "age": pa.array([1, 2], pa.int64())}))
        w.insert("Person", pd.DataFrame({"name": ["P1"], "age": [3]}))
        w.insert("Person", pa.record_batch({"name": ["R1"]}))
    assert names(graph) == ["A1", "A2", "P1", "R1"]
    assert graph.get("Person", "A2")["age"] == 2


def test_multimodal_types(tmp_path) -> None:
    g = gl.Graph.init(
        tmp_path / "m",
        """
        node Doc {
          slug: String @key
          n: I64
          score: F64?
          at: DateTime?
          tags: [String]?
          emb: Vector(3)?
          body: Blob?
          ok: Bool?
        }
    """,
    )
    with g.write() as w:
        w.insert(
            "Doc",
            [
                {
                    "slug": "d1",
                    "n": 7,
                    "score": 0.5,
                    "at": "2024-01-02T03:04:05Z",
                    "tags": ["a", "b"],
                    "emb": [0.1, 0.2, 0.3],
                    "body": b"\x00\x01",
                    "ok": True,
                }
            ],
        )
    row = g.get("Doc", "d1")
    assert row["n"] == 7 and row["tags"] == ["a", "b"] and row["ok"] is True
    assert row["body"] == b"\x00\x01"
    assert row["at"] == dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    assert [round(x, 3) for x in row["emb"]] == [0.1, 0.2, 0.3]
    with g.write() as w:  # a row rewrite keeps the blob and vector intact
        w.update("Doc", [{"slug": "d1", "n": 8}])
    row = g.get("Doc", "d1")
    assert row["n"] == 8 and row["body"] == b"\x00\x01" and len(row["emb"]) == 3
    assert g.sql("SELECT octet_length(body) AS n FROM Doc").to_pylist() == [{"n": 2}]


def test_integer_keys_become_string_ids(tmp_path) -> None:
    g = gl.Graph.init(tmp_path / "i", "node Item { sku: I64 @key  name: String? }")
    with g.write() as w:
        w.insert("Item", [{"sku": 42, "name": "x"}])
    assert g.get("Item", 42)["id"] == "42"
    with g.write() as w:
        w.delete("Item", [42])
    assert g.nodes("Item").num_rows == 0


def test_many_commits_on_one_table(graph: gl.Graph) -> None:
    for i in range(25):
        with graph.write(message=f"c{i}") as w:
            w.insert("Person", [{"name": f"p{i}", "age": i}])
            if i:
                w.update("Person", [{"name": f"p{i - 1}", "age": 100 + i}])
    assert graph.nodes("Person").num_rows == 25
    assert graph.get("Person", "p23")["age"] == 124
    assert len(graph.log()) == 26


def test_commit_meta_is_recorded_with_the_data(graph: gl.Graph) -> None:
    with graph.write(message="batch", meta={"offset": 10, "run": "r1"}) as w:
        w.insert("Person", [{"name": "m"}])
    assert dict(graph.head().meta) == {"offset": 10, "run": "r1"}
    with graph.write(message="progress only", meta={"offset": 10, "done": True}):
        pass
    assert graph.head().message == "progress only"
    assert graph.nodes("Person").num_rows == 1


def card_graph(tmp_path) -> gl.Graph:
    """P nodes A and B, each with its one At edge (a1, b1) to C X, under @card(1..2)."""
    g = gl.Graph.init(
        tmp_path / "g",
        """
        node P { name: String @key }
        node C { name: String @key }
        edge At: P -> C @card(1..2)
    """,
    )
    with g.write() as w:
        w.insert("P", [{"name": "A"}, {"name": "B"}])
        w.insert("C", [{"name": "X"}])
        w.insert("At", [{"id": "a1", "src": "A", "dst": "X"}, {"id": "b1", "src": "B", "dst": "X"}])
    return g


def test_moving_an_edge_away_counts_against_card_minimum(tmp_path) -> None:
    g = card_graph(tmp_path)
    head = g.head().id
    with pytest.raises(gl.CardinalityError, match="'A'"), g.write() as w:
        w.update("At", [{"id": "a1", "src": "B"}])  # A would keep no At edge
    assert g.head().id == head


def test_cascade_applies_in_call_order(people: gl.Graph) -> None:
    with people.write() as w:
        w.insert("Knows", [{"id": "k9", "src": "Carol", "dst": "Alice"}])  # earlier: removed
        w.update("Knows", [{"id": "k1", "dst": "Carol"}])  # now touches Carol: removed
        w.delete("Person", ["Carol"], cascade=True)
        w.insert("Knows", [{"id": "k2", "src": "Alice", "dst": "Bob"}])  # a new k2: fine
    assert sorted(people.edges("Knows", columns=["id"]).column("id").to_pylist()) == ["k2"]
    assert people.get("Knows", "k2")["src"] == "Alice"
    head = people.head().id
    with pytest.raises(gl.MissingEndpointError), people.write() as w:
        w.delete("Person", ["Bob"], cascade=True)
        w.insert("Knows", [{"id": "k5", "src": "Alice", "dst": "Bob"}])  # Bob is gone
    assert people.head().id == head


def test_card_counts_head_and_written_edges_exactly(tmp_path) -> None:
    g = card_graph(tmp_path)
    head = g.head().id
    new_without_edges = r"@card\(1..2\) per P violated: 'N' has 0"
    with pytest.raises(gl.CardinalityError, match=new_without_edges) as err, g.write() as w:
        w.insert("P", [{"name": "N"}])  # no At edge in this write, and N needs one
    assert "'A'" not in str(err.value)
    with pytest.raises(gl.CardinalityError, match=r"'A' has 3"), g.write() as w:
        w.insert("At", [{"id": "a2", "src": "A", "dst": "X"}, {"id": "a3", "src": "A", "dst": "X"}])
    assert g.head().id == head
    with g.write() as w:  # removed edges are not counted: A keeps 2
        w.insert("At", [{"id": "a2", "src": "A", "dst": "X"}])
        w.delete("At", ["a1"])
        w.insert("At", [{"id": "a3", "src": "A", "dst": "X"}])
    with g.write() as w:  # a deleted source is not counted (its edges go with it)
        w.delete("P", ["B"], cascade=True)
    assert sorted(g.edges("At", columns=["id"]).column("id").to_pylist()) == ["a2", "a3"]


def test_missing_endpoints_are_found_among_many(tmp_path) -> None:
    import pyarrow as pa

    g = gl.Graph.init(tmp_path / "g", "node P { name: String @key }\nedge E: P -> P")
    keys = [f"p{i:05d}" for i in range(30_000)]  # above the index-probe limit
    g.load(pa.table({"name": keys}), table="P")
    edges = pa.table({"src": keys, "dst": [*keys[1:], "ghost"]})
    with pytest.raises(gl.MissingEndpointError, match="'ghost'"):
        g.load(edges, table="E")
    with g.write() as w:
        w.delete("P", ["p00007"])
        w.insert("P", [{"name": "ghost"}])
    with pytest.raises(gl.MissingEndpointError, match="'p00007'"):
        g.load(edges, table="E")
