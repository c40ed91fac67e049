"""A query sees its branch's latest committed head, also when another process moved it.

The graph remembers the newest ref entry it read of each branch and confirms it with one
existence check per query (catalog/refs.py): these tests move branches from a real
second process between two queries of the first, on a local root and on S3.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import graphlake as gl

ONE_HOP = "MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN count(b)"  # the adjacency
PEOPLE = "MATCH (p:Person) RETURN count(p)"  # DuckDB over the node table

# Run in the second process: a write on main, then dev deleted and created again at main.
OTHER_PROCESS = textwrap.dedent(
    """
    import json, sys
    import graphlake as gl
    g = gl.Graph.open(sys.argv[1], storage_options=json.loads(sys.argv[2]))
    with g.write(message="from another process") as w:
        w.insert("Person", [{"name": "Dan"}])
        w.insert("Knows", [{"id": "k9", "src": "Alice", "dst": "Dan"}])
    g.delete_branch("dev")
    g.create_branch("dev")
    """
)


def _count(g: gl.Graph, text: str, branch: str, **params: str) -> int:
    return g.query(text, params, branch=branch).column(0)[0].as_py()


def test_the_next_query_sees_a_write_by_another_process(people: gl.Graph) -> None:
    g = people
    g.create_branch("dev")
    for _ in range(2):  # the second run: the plan cached, the heads remembered
        for branch in ("main", "dev"):
            assert _count(g, ONE_HOP, branch, s="Alice") == 1
            assert _count(g, PEOPLE, branch) == 3
    subprocess.run(
        [sys.executable, "-c", OTHER_PROCESS, g.uri, json.dumps(g.storage_options or {})],
        check=True,
        timeout=300,
    )
    for branch in ("main", "dev"):  # dev: a tombstone and a new life at main's new head
        assert _count(g, ONE_HOP, branch, s="Alice") == 2
        assert _count(g, PEOPLE, branch) == 4
    assert g.snapshot("dev").commit.id == g.snapshot("main").commit.id
