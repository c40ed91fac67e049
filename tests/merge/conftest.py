"""Fixtures of tests/merge: the oracle's graph, one per test module (see
`tests/merge/oracle.py`), and the schema truth tables' template graph (one Person table,
three rows) with its helpers."""

from __future__ import annotations

import itertools
import shutil
from typing import Any

import pytest

import graphlake as gl
from tests.conftest import SOCIAL
from tests.merge import model as M
from tests.merge.oracle import BASE, World


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> World:
    g = gl.Graph.init(tmp_path_factory.mktemp("oracle") / "g", SOCIAL)
    with g.write(message="base") as w:
        for table in ("Person", "Company", "Knows", "WorksAt"):
            w.insert(table, list(BASE[table].values()))
    assert M.rows(g, "main") == BASE
    return World(g, itertools.count())


# The schema truth tables (test_schema_truth_table.py, test_schema_rows_both.py).
SCHEMA_BASE_PG = """
node Person { name: String @key  age: I32?  email: String? }
"""
Rows = dict[str, dict[str, Any]]


@pytest.fixture(scope="module")
def schema_template(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("schema") / "base"
    g = gl.Graph.init(root, SCHEMA_BASE_PG)
    with g.write(message="base") as w:
        w.insert("Person", [{"name": n} for n in "ABC"])
    return str(root)


def schema_graph(template: str, tmp_path) -> gl.Graph:
    """A copy of the template with branches "source" and "target" off main."""
    root = tmp_path / "g"
    shutil.copytree(template, root)
    g = gl.Graph.open(root)
    g.create_branch("source")
    g.create_branch("target")
    return g


def person_rows(g: gl.Graph, branch: str) -> Rows:
    return {r["id"]: r for r in g.snapshot(branch).read("Person").to_pylist()}
