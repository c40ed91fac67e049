"""Shared fixtures: a small typed graph, on a local folder and on S3 (moto on loopback).

Tests that take `graph` (or `people`) run once per backend; `-m "not s3"` skips the S3
runs locally. Use `reopen(g)` rather than `Graph.open(g.uri)` so storage options follow.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

import graphlake as gl
from graphlake import faults
from tests.s3server import S3Server, run_s3_server

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


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    yield from run_s3_server()


@pytest.fixture(params=["local", pytest.param("s3", marks=pytest.mark.s3)])
def backend(request: pytest.FixtureRequest, tmp_path) -> tuple[str, dict[str, str] | None]:
    """(root uri, storage options) of a fresh, empty graph root."""
    if request.param == "local":
        return str(tmp_path / "g"), None
    server: S3Server = request.getfixturevalue("s3_server")
    return server.fresh_uri(), server.options


@pytest.fixture
def graph(backend) -> gl.Graph:
    uri, options = backend
    return gl.Graph.init(uri, SOCIAL, storage_options=options)


def reopen(g: gl.Graph) -> gl.Graph:
    return gl.Graph.open(g.uri, storage_options=g.storage_options)


def seed_people(g: gl.Graph) -> None:
    """One commit: Alice, Bob, Carol, Acme, Alice->Bob, Bob->Carol, Alice@Acme."""
    with g.write(message="seed") as w:
        w.insert(
            "Person",
            [
                {"name": "Alice", "age": 30, "email": "alice@x.org", "role": "eng"},
                {"name": "Bob", "age": 40},
                {"name": "Carol"},
            ],
        )
        w.insert("Company", [{"name": "Acme", "founded": "1999-01-02"}])
        w.insert(
            "Knows",
            [
                {"id": "k1", "src": "Alice", "dst": "Bob"},
                {"id": "k2", "src": "Bob", "dst": "Carol", "since": "2020-05-01"},
            ],
        )
        w.insert("WorksAt", [{"id": "w1", "src": "Alice", "dst": "Acme"}])


@pytest.fixture
def people(graph: gl.Graph) -> gl.Graph:
    """The graph with Alice, Bob, Carol, Acme, Alice->Bob, Bob->Carol, Alice@Acme."""
    seed_people(graph)
    return graph


def state(g: gl.Graph, branch: str = "main") -> dict:
    """Everything a branch shows: the head commit id and every table's rows, sorted."""
    snap = g.snapshot(branch)
    out: dict = {"head": snap.commit.id}
    for name in g.schema.table_names:
        rows = snap.read(name).to_pylist()
        out[name] = sorted(rows, key=lambda r: r["id"])
    return out


def fault_at(monkeypatch: pytest.MonkeyPatch, point: str, action: Callable[[], Any]) -> list[Any]:
    """Run `action` the first time the fault point `point` is reached (graphlake.faults),
    then go on; its outcome (a value or the exception it raised) lands in the list. The
    gc race tests interleave a reader or ref writer with gc this way."""
    real = faults.hit
    outcome: list[Any] = []

    def hit(name: str) -> None:
        if name == point and not outcome:
            try:
                outcome.append(action())
            except Exception as exc:  # the test reads it
                outcome.append(exc)
        real(name)

    monkeypatch.setattr(faults, "hit", hit)
    return outcome
