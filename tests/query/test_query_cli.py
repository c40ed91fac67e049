"""`graphlake query` as a real subprocess: JSON and table output, parameters, explain,
and one-line errors."""

from __future__ import annotations

import pytest

import graphlake as gl
from tests.cli.helpers import error, parsed, run_all, stdout

SCHEMA = """
node Person { name: String @key  age: I32? }
edge Knows: Person -> Person
"""


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> str:
    uri = str(tmp_path_factory.mktemp("cli") / "g")
    g = gl.Graph.init(uri, SCHEMA)
    with g.write(message="seed") as w:
        w.insert("Person", [{"name": "Ann", "age": 30}, {"name": "Ben", "age": 41}])
        w.insert("Knows", [{"id": "k1", "src": "Ann", "dst": "Ben"}])
    return uri


@pytest.mark.slow  # over 10 s: outside `make test-fast`
def test_query_command(root):
    as_json, as_text, explained, bad_syntax, bad_param = run_all(
        (
            "query",
            root,
            "MATCH (a:Person)-[:Knows]->(b) WHERE a.age < $max RETURN a.name, b.name AS friend",
            "--param",
            "max=35",
            "--json",
        ),
        ("query", root, "MATCH (p:Person) RETURN p.name ORDER BY p.name", "-b", "main"),
        (
            "query",
            root,
            "MATCH (p:Person {name: $who}) RETURN p.age",
            "-p",
            "who=Ben",
            "--explain",
            "--json",
        ),
        ("query", root, "MATCH (p:Person RETURN p"),
        ("query", root, "MATCH (p:Person) SET p.age = 1 RETURN p", "--param", "novalue"),
    )
    assert parsed(as_json) == [{"a.name": "Ann", "friend": "Ben"}]
    text = stdout(as_text)
    assert "Ann" in text and "Ben" in text and "2 rows @ main" in text
    plan = parsed(explained)
    assert plan["steps"][-1]["operation"] == "RETURN p.age" and plan["steps"][-1]["rows"] == 1
    assert plan["logical_plan"] == [
        "Project p.age  [sql]",
        "Lookup (p:Person) by name = $who  [csr]",
    ]
    assert "line 1, column 17: expected ')'" in error(bad_syntax)
    assert "write name=value" in error(bad_param)  # checked before the query runs
