"""Cypher query benchmark: graphlake next to LadybugDB on the same generated graph.

    .venv/bin/python bench/query.py                    # 100k and 1M Person nodes
    .venv/bin/python bench/query.py --sizes 100000     # one size
    .venv/bin/python bench/query.py --quick            # 1k nodes, for the smoke test

`Person` nodes with 10 random `Knows` edges each. For each size: 1-, 2- and 3-hop
neighbourhoods of one start node (count and return), a filtered 2-hop, a shortest path
between two nodes and a global aggregate; median latency over several start nodes.
LadybugDB must import the data first (its import time is reported separately; graphlake
reads its own tables and needs none) and runs in a subprocess.

Targets: anchored 1-2 hop queries <= 50 ms at 1M nodes and flat from 100k to 1M
(<= 1.5x); every query within 3x of LadybugDB's latency.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import load_average, machine, median, render_table

EDGES_PER_NODE = 10
SCHEMA = """
node Person { name: String @key  age: I32?  city: String? }
edge Knows: Person -> Person
"""
CITIES = ["Oslo", "Rome", "Lima", "Kyiv", "Pune", "Nara"]
# name: (graphlake text, LadybugDB text); $s is the start node, $t a target.
QUERIES = {
    "1-hop count": (
        "MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN count(b)",
        "MATCH (a:Person {id: $s})-[:Knows]->(b) RETURN count(b)",
    ),
    "1-hop return": (
        "MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN b.name",
        "MATCH (a:Person {id: $s})-[:Knows]->(b) RETURN b.name",
    ),
    "2-hop count": (
        "MATCH (a:Person {name: $s})-[:Knows]->()-[:Knows]->(c) RETURN count(c)",
        "MATCH (a:Person {id: $s})-[:Knows]->()-[:Knows]->(c) RETURN count(c)",
    ),
    "2-hop return": (
        "MATCH (a:Person {name: $s})-[:Knows]->()-[:Knows]->(c) RETURN c.name",
        "MATCH (a:Person {id: $s})-[:Knows]->()-[:Knows]->(c) RETURN c.name",
    ),
    "3-hop count": (
        "MATCH (a:Person {name: $s})-[:Knows]->()-[:Knows]->()-[:Knows]->(d) RETURN count(d)",
        "MATCH (a:Person {id: $s})-[:Knows]->()-[:Knows]->()-[:Knows]->(d) RETURN count(d)",
    ),
    "3-hop return": (
        "MATCH (a:Person {name: $s})-[:Knows]->()-[:Knows]->()-[:Knows]->(d) RETURN d.name",
        "MATCH (a:Person {id: $s})-[:Knows]->()-[:Knows]->()-[:Knows]->(d) RETURN d.name",
    ),
    "filtered 2-hop": (
        "MATCH (a:Person {name: $s})-[:Knows]->()-[:Knows]->(c) WHERE c.age > 60 RETURN count(c)",
        "MATCH (a:Person {id: $s})-[:Knows]->()-[:Knows]->(c) WHERE c.age > 60 RETURN count(c)",
    ),
    "shortest path": (
        "MATCH p = shortestPath((a:Person {name: $s})-[:Knows*..8]->"
        "(b:Person {name: $t})) RETURN length(p)",
        "MATCH p = (a:Person {id: $s})-[:Knows* SHORTEST 1..8]->"
        "(b:Person {id: $t}) RETURN length(p)",
    ),
    "count by city": (
        "MATCH (p:Person) RETURN p.city, count(*)",
        "MATCH (p:Person) RETURN p.city, count(*)",
    ),
}
ANCHORED = ("1-hop count", "1-hop return", "2-hop count", "2-hop return", "filtered 2-hop")
LATENCY_TARGET_MS = 50.0
FLAT_TARGET = 1.5
LADYBUG_TARGET = 3.0


def write_parquet(folder: Path, n: int, seed: int = 11) -> tuple[Path, Path]:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    names = pa.array([f"p{i:07d}" for i in range(n)])
    ages = rng.integers(18, 80, n).astype("int32")
    person = pa.table(
        {
            "id": names,
            "name": names,
            "age": ages,
            "city": pa.array(np.array(CITIES)[rng.integers(0, len(CITIES), n)]),
        }
    )
    m = n * EDGES_PER_NODE
    src = np.repeat(np.arange(n), EDGES_PER_NODE)
    dst = rng.integers(0, n, m)
    knows = pa.table(
        {
            "src": pa.array(np.char.add("p", np.char.zfill(src.astype(str), 7))),
            "dst": pa.array(np.char.add("p", np.char.zfill(dst.astype(str), 7))),
            "id": pa.array([f"k{i:08d}" for i in range(m)]),
        }
    )
    paths = folder / "person.parquet", folder / "knows.parquet"
    pq.write_table(person, paths[0])
    pq.write_table(knows, paths[1])
    return paths


def build_graph(root: Path, person: Path, knows: Path) -> float:
    import pyarrow.parquet as pq

    import graphlake as gl

    started = time.perf_counter()
    g = gl.Graph.init(str(root), SCHEMA)
    g.load(pq.read_table(person).drop_columns(["id"]), table="Person", message="people")
    g.load(pq.read_table(knows), table="Knows", message="knows")
    g.optimize()
    return time.perf_counter() - started


def run_graphlake(root: Path, params: list[dict], warmup: int) -> dict[str, list[float]]:
    import graphlake as gl

    g = gl.Graph.open(str(root))
    out: dict[str, list[float]] = {}
    for name, (text, _) in QUERIES.items():
        for p in params[:warmup]:
            g.query(text, p)
        out[name] = []
        for p in params:
            t = time.perf_counter()
            g.query(text, p, max_rows=1_000_000)
            out[name].append((time.perf_counter() - t) * 1000)
    return out


def run_ladybug(folder: Path, person: Path, knows: Path, params: list[dict], warmup: int) -> dict:
    job = folder / "ladybug-job.json"
    job.write_text(
        json.dumps(
            {
                "person": str(person),
                "knows": str(knows),
                "warmup": warmup,
                "queries": {k: lb for k, (_, lb) in QUERIES.items()},
                "params": params,
            }
        )
    )
    script = Path(__file__).with_name("_ladybug_query.py")
    done = subprocess.run(
        [sys.executable, str(script), str(job)],
        capture_output=True,
        text=True,
        check=True,
        timeout=3600,
    )
    return json.loads(done.stdout)


def one_size(n: int, reps: int, warmup: int) -> dict:
    import random

    folder = Path(tempfile.mkdtemp(prefix=f"bench-query-{n}-"))
    try:
        person, knows = write_parquet(folder, n)
        build_s = build_graph(folder / "g", person, knows)
        rng = random.Random(n)
        params = [
            {"s": f"p{rng.randrange(n):07d}", "t": f"p{rng.randrange(n):07d}"} for _ in range(reps)
        ]
        gl_ms = run_graphlake(folder / "g", params, warmup)
        lb = run_ladybug(folder, person, knows, params, warmup)
        return {
            "n": n,
            "build_s": build_s,
            "graphlake": {k: median(v) for k, v in gl_ms.items()},
            "ladybug": {k: median(v) for k, v in lb["ms"].items()},
            "ladybug_import_s": lb["import_s"],
        }
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def report(results: list[dict]) -> str:
    header = (
        ["query"]
        + [f"{who} {r['n']:,} ms" for r in results for who in ("graphlake", "ladybug")]
        + ["graphlake/ladybug"]
    )
    rows = []
    for name in QUERIES:
        cells = [name]
        for r in results:
            cells += [f"{r['graphlake'][name]:.1f}", f"{r['ladybug'][name]:.1f}"]
        last = results[-1]
        cells.append(f"{last['graphlake'][name] / last['ladybug'][name]:.1f}x")
        rows.append(cells)
    lines = [render_table(header, rows), ""]
    for r in results:
        lines.append(
            f"{r['n']:,} nodes, {r['n'] * EDGES_PER_NODE:,} edges: graphlake load + "
            f"optimize {r['build_s']:.1f} s (not needed to query; shown for "
            f"scale), LadybugDB import {r['ladybug_import_s']:.1f} s"
        )
    lines += ["", "targets (from this run):"]
    big = results[-1]
    worst = max(big["graphlake"][q] for q in ANCHORED)
    lines.append(
        f"  anchored 1-2 hop <= {LATENCY_TARGET_MS:.0f} ms at {big['n']:,}: worst "
        f"{worst:.1f} ms -> {'met' if worst <= LATENCY_TARGET_MS else 'NOT met'}"
    )
    if len(results) > 1:
        flat = max(big["graphlake"][q] / results[0]["graphlake"][q] for q in ANCHORED)
        lines.append(
            f"  flat from {results[0]['n']:,} to {big['n']:,} (<= {FLAT_TARGET}x): "
            f"worst {flat:.2f}x -> {'met' if flat <= FLAT_TARGET else 'NOT met'}"
        )
    ratio = max(big["graphlake"][q] / big["ladybug"][q] for q in QUERIES)
    lines.append(
        f"  within {LADYBUG_TARGET:.0f}x of LadybugDB: worst {ratio:.1f}x -> "
        f"{'met' if ratio <= LADYBUG_TARGET else 'NOT met'}"
    )
    import duckdb

    lines.append(f"machine: {machine()}, duckdb {duckdb.__version__}, load {load_average()}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000", help="Comma-separated Person counts.")
    parser.add_argument("--reps", type=int, default=7, help="Start nodes timed per query.")
    parser.add_argument("--quick", action="store_true", help="1k nodes, 1 rep.")
    args = parser.parse_args()
    sizes = [1000] if args.quick else [int(s) for s in args.sizes.split(",")]
    reps = 1 if args.quick else args.reps
    results = [one_size(n, reps, warmup=1) for n in sizes]
    print(report(results))


if __name__ == "__main__":
    main()
