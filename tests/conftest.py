"""Shared fixtures: a small typed graph on a local folder."""

from __future__ import annotations

import pytest

import graphlake as gl

SOCIAL = """
// A small social graph used across the tests.
node Person {
  name: String @key
  age: I32? @range(0..150)
  email: String? @unique @check("[^@]+@[^@]+")
  role: enum(eng, pm, exec)?
}
node Company { name: String @key  founded: Date? }
edge Knows: Person -> Person { since: Date? }
edge WorksAt: Person -> Company @card(0..1)
"""


@pytest.fixture
def schema_text() -> str:
    return SOCIAL


@pytest.fixture
def graph(tmp_path) -> gl.Graph:
    return gl.Graph.init(tmp_path / "g", SOCIAL)


@pytest.fixture
def people(graph: gl.Graph) -> gl.Graph:
    """The graph with Alice, Bob, Carol, Acme, Alice->Bob, Bob->Carol, Alice@Acme."""
    with graph.write(message="seed") as w:
        w.insert("Person", [
            {"name": "Alice", "age": 30, "email": "alice@x.org", "role": "eng"},
            {"name": "Bob", "age": 40},
            {"name": "Carol"},
        ])
        w.insert("Company", [{"name": "Acme", "founded": "1999-01-02"}])
        w.insert("Knows", [
            {"id": "k1", "src": "Alice", "dst": "Bob"},
            {"id": "k2", "src": "Bob", "dst": "Carol", "since": "2020-05-01"},
        ])
        w.insert("WorksAt", [{"id": "w1", "src": "Alice", "dst": "Acme"}])
    return graph


def state(g: gl.Graph, branch: str = "main") -> dict:
    """Everything a branch shows: the head commit id and every table's rows, sorted."""
    snap = g.snapshot(branch)
    out: dict = {"head": snap.commit.id}
    for name in g.schema.table_names:
        rows = snap.read(name).to_pylist()
        out[name] = sorted(rows, key=lambda r: r["id"])
    return out
