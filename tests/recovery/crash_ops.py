"""The operations of the crash matrix, each run in its own process.

    python -m tests.recovery.crash_ops <setup|run> <op> <uri> [<storage options json>]

`setup` prepares a graph for `op`; `run` performs `op` once (the test sets
GRAPHLAKE_FAULT so the process dies at one fault point).
"""

from __future__ import annotations

import contextlib
import json
import sys

import pyarrow as pa

import graphlake as gl
from graphlake.errors import SchemaUnchangedError
from tests.conftest import SOCIAL

OPS = ("write", "merge", "merge_many", "optimize", "schema")
# The schema change of op "schema": three table effects (a column add on Company, a
# rename on Knows, a new table for Place); Person keeps its layout.
SCHEMA_CHANGE = (
    SOCIAL.replace("founded: Date?", "founded: Date? url: String?").replace(
        "since: Date?", "met: Date? @renamed_from(since)"
    )
    + "\nnode Place { p: String @key }"
)


def setup(op: str, uri: str, options: dict | None) -> None:
    g = gl.Graph.init(uri, SOCIAL, storage_options=options)
    with g.write(message="seed") as w:
        w.insert("Person", [{"name": n, "age": 20 + i} for i, n in enumerate("ABCDE")])
        w.insert("Company", [{"name": "Acme"}])
        w.insert(
            "Knows", [{"id": "k1", "src": "A", "dst": "B"}, {"id": "k2", "src": "B", "dst": "C"}]
        )
    if op == "merge":
        g.create_branch("dev")
        with g.write("dev") as w:
            w.insert("Person", [{"name": "F"}])
            w.update("Person", [{"name": "A", "age": 99}])
            w.delete("Knows", ["k2"])
        with g.write() as w:  # main moves too: a real three-way merge
            w.insert("Company", [{"name": "Initech"}])
    elif op == "merge_many":
        for i in range(3):
            g.create_branch(f"w{i}")
            with g.write(f"w{i}") as w:
                w.insert("Person", [{"name": f"P{i}-{j}"} for j in range(3)])
                w.insert("Knows", [{"id": f"kw{i}", "src": "A", "dst": f"P{i}-0"}])
        with g.write("w2") as w:  # one shard also updates: a copied effect too
            w.update("Person", [{"name": "B", "age": 41}])
    elif op == "optimize":
        for i in range(4):
            with g.write(message=f"small {i}") as w:
                w.insert("Person", [{"name": f"S{i}"}])
                w.insert("Knows", [{"id": f"ks{i}", "src": "A", "dst": f"S{i}"}])


def run(op: str, uri: str, options: dict | None) -> None:
    g = gl.Graph.open(uri, storage_options=options)
    if op == "write":
        with g.write(message="crash me") as w:
            w.insert("Person", [{"name": "Z", "age": 1}])
            w.update("Person", [{"name": "A", "age": 31}])
            w.delete("Knows", ["k2"])
            w.insert("Knows", [{"id": "kz", "src": "Z", "dst": "A"}])
    elif op == "merge":
        g.merge("dev", "main")
    elif op == "merge_many":
        g.merge_many(["w0", "w1", "w2"], "main")
    elif op == "optimize":
        g.optimize("main")
    elif op == "schema":
        # A re-run after a crash that published it finds it already in force.
        with contextlib.suppress(SchemaUnchangedError):
            g.apply_schema(SCHEMA_CHANGE, "main")
    else:
        raise SystemExit(f"unknown op {op}")


def rows(g: gl.Graph, branch: str = "main") -> dict[str, list[dict]]:
    """Every table's rows on `branch`, sorted by key (no commit ids: those differ)."""
    snap = g.snapshot(branch)
    out = {}
    for name in g.schema.table_names:
        table: pa.Table = snap.read(name)
        out[name] = sorted(table.to_pylist(), key=lambda r: r["id"])
    return out


if __name__ == "__main__":
    action, op, uri = sys.argv[1:4]
    opts = json.loads(sys.argv[4]) if len(sys.argv) > 4 else None
    {"setup": setup, "run": run}[action](op, uri, opts)
