"""What the plan cache saves on a repeated query text (query.plancache).

    .venv/bin/python bench/plan_cache.py            # 2,000 Person nodes, 15 reps
    .venv/bin/python bench/plan_cache.py --quick    # 200 nodes, 3 reps

For each query, timed side by side in one run, median over `--reps` start nodes (a new
`$s` value each time, so a cached plan is rebound, not reused as is):

- compile: `executor.compile_query` with the cache (a hit: rebinding) against
  compiling afresh (the parse cache still on, as before the plan cache: planning only)
  and against parsing and planning from scratch (parse cache cleared too);
- query: `g.query` warm, with the plan cache against with it cleared before each call.

The ratio column is the time without the cache over the time with it.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import graphlake as gl
from _util import load_average, machine, render_table
from graphlake.query import executor, parser
from graphlake.read.sql import SqlLimits

SCHEMA = """
node Person { name: String @key  age: I32?  city: String? }
edge Knows: Person -> Person
"""
QUERIES = {
    "1-hop return (csr)": "MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN b.name",
    "2-hop filtered (csr)": (
        "MATCH (a:Person {name: $s})-[:Knows]->()-[:Knows]->(c) WHERE c.age > 30 RETURN count(c)"
    ),
    "1-hop ordered (sql)": (
        "MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN b.name AS n, b.age AS age "
        "ORDER BY age DESC, n LIMIT 5"
    ),
    "with + aggregate (sql)": (
        "MATCH (a:Person {name: $s})-[:Knows]->(b)-[:Knows]->(c) WITH c.city AS city, "
        "count(*) AS n WHERE n > 0 RETURN city, n ORDER BY n DESC, city"
    ),
}


def build(root: str, n: int) -> gl.Graph:
    rng = random.Random(5)
    g = gl.Graph.init(root, SCHEMA)
    names = [f"p{i:06d}" for i in range(n)]
    with g.write(message="bench") as w:
        w.insert(
            "Person",
            [
                {"name": x, "age": rng.randrange(18, 80), "city": rng.choice(["Oslo", "Rome"])}
                for x in names
            ],
        )
        w.insert(
            "Knows",
            [
                {"id": f"k{i}_{j}", "src": x, "dst": rng.choice(names)}
                for i, x in enumerate(names)
                for j in range(5)
            ],
        )
    return g


def _ms(fs, runs: list[dict]) -> list[float]:
    """Median milliseconds of each of `fs`, interleaved run by run (the same load)."""
    times: list[list[float]] = [[] for _ in fs]
    for params in runs:
        for f, out in zip(fs, times, strict=True):
            started = time.perf_counter()
            f(params)
            out.append((time.perf_counter() - started) * 1000)
    return [statistics.median(t) for t in times]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--quick", action="store_true", help="200 nodes, 3 reps")
    args = ap.parse_args()
    n, reps = (200, 3) if args.quick else (args.nodes, args.reps)
    with tempfile.TemporaryDirectory() as tmp:
        g = build(str(Path(tmp) / "g"), n)
        snap = g.snapshot()
        limits = SqlLimits()
        rng = random.Random(9)
        rows = []
        for name, q in QUERIES.items():
            runs = [{"s": f"p{rng.randrange(n):06d}"} for _ in range(reps)]
            g.query(q, runs[0])  # warm: adjacency, pools, caches

            def hit(p, q=q):
                executor.compile_query(snap, q, p, limits)

            def plan_only(p, q=q):
                executor.PLANS.clear()
                executor.compile_query(snap, q, p, limits)

            def parse_and_plan(p, q=q):
                executor.PLANS.clear()
                parser._parse_cached.cache_clear()
                executor.compile_query(snap, q, p, limits)

            def cached_query(p, q=q):
                g.query(q, p)

            def uncached_query(p, q=q):
                executor.PLANS.clear()
                g.query(q, p)

            c_hit, c_plan, c_full = _ms([hit, plan_only, parse_and_plan], runs)
            q_hit, q_miss = _ms([cached_query, uncached_query], runs)
            rows.append(
                [
                    name,
                    f"{c_hit:.3f}",
                    f"{c_plan:.3f}",
                    f"{c_full:.3f}",
                    f"{c_plan / c_hit:.0f}x / {c_full / c_hit:.0f}x",
                    f"{q_hit:.2f}",
                    f"{q_miss:.2f}",
                    f"{q_miss / q_hit:.2f}x",
                ]
            )
    print("graphlake plan cache benchmark")
    print(f"{machine()}; load {load_average()}; {n} Person nodes, {5 * n} Knows, {reps} reps")
    print(
        render_table(
            [
                "query",
                "compile hit ms",
                "plan ms",
                "parse+plan ms",
                "compile ratio",
                "query ms",
                "query uncached ms",
                "query ratio",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    main()
