"""The cost of running queries in worker processes (graphlake.isolation), per request.

    .venv/bin/python bench/query_isolation.py              # 200 queries of each kind
    .venv/bin/python bench/query_isolation.py --n 50

A small graph (1,000 `Person` nodes, 3 `Knows` edges each). Each small query (`SELECT 1`,
an anchored 1-hop Cypher query, a Cypher count) runs `--n` times in-process
(`read.sql.run_sql` / `query.executor.run_query`, the server's path before isolation) and
`--n` times through a warm worker pool (`query.isolated.run_isolated`, the server's path
now), alternating, so both see the same machine load. Prints the median latency of each
path and the difference: the isolation's overhead per request (pickling the job and the
snapshot's commit, the round trip over the socket, the worker's DuckDB connection and the
result's Arrow IPC bytes). Worker start-up (once per worker, in the background) is
printed separately.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import graphlake as gl
from _util import load_average, machine, median, render_table
from graphlake.isolation import Workers
from graphlake.query.executor import run_query
from graphlake.query.isolated import WARM, run_isolated
from graphlake.read.sql import SqlLimits, run_sql

SCHEMA = "node Person { name: String @key  age: I32? }\nedge Knows: Person -> Person"
QUERIES = {
    "sql SELECT 1": ("sql", "SELECT 1 AS x", None),
    "cypher 1-hop": (
        "cypher",
        "MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN b.name",
        {"s": "p7"},
    ),
    "cypher count": ("cypher", "MATCH (p:Person) RETURN count(*) AS n", None),
}


def build(root: str, nodes: int = 1000) -> gl.Graph:
    g = gl.Graph.init(root, SCHEMA)
    with g.write(message="seed") as w:
        w.insert("Person", [{"name": f"p{i}", "age": i % 90} for i in range(nodes)])
        w.insert(
            "Knows",
            [
                {"id": f"k{i}-{j}", "src": f"p{i}", "dst": f"p{(i * 7 + j) % nodes}"}
                for i in range(nodes)
                for j in range(3)
            ],
        )
    return g


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200)
    args = ap.parse_args()
    limits = SqlLimits(timeout_s=10, memory_limit_mb=256, threads=2, max_rows=10_000)
    with tempfile.TemporaryDirectory() as d:
        g = build(str(Path(d) / "g"))
        snap = g.snapshot("main")
        workers = Workers(1, 512, WARM)
        started = time.monotonic()
        run_isolated(workers, "sql", snap, "SELECT 1", limits=limits, memory_name="m")
        startup = time.monotonic() - started
        rows = []
        for name, (kind, text, params) in QUERIES.items():
            inproc, isolated = [], []
            for _ in range(args.n):
                t = time.perf_counter()
                if kind == "sql":
                    run_sql(snap, text, limits=limits)
                else:
                    run_query(snap, text, params, limits=limits)
                inproc.append(time.perf_counter() - t)
                t = time.perf_counter()
                run_isolated(
                    workers, kind, snap, text, params=params, limits=limits, memory_name="m"
                )
                isolated.append(time.perf_counter() - t)
            a, b = median(inproc) * 1000, median(isolated) * 1000
            rows.append([name, f"{a:.1f}", f"{b:.1f}", f"{b - a:+.1f}", f"{b / a:.2f}x"])
        workers.close()
    print(f"{machine()}; load {load_average()}; {args.n} queries of each kind, median")
    print(f"worker start-up (once per worker, in the background): {startup:.2f} s")
    print(render_table(["query", "in-process ms", "isolated ms", "overhead ms", "ratio"], rows))


if __name__ == "__main__":
    main()
