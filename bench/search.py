"""Search benchmark: graphlake's `g.search` side by side with LanceDB on the same vectors.

    .venv/bin/python bench/search.py                    # 100k x Vector(128), 1k queries
    .venv/bin/python bench/search.py --quick            # 20k rows, 100 queries: ~1 min
    .venv/bin/python bench/search.py --rows 1000000     # the issue's scale (see below)

Clustered synthetic vectors (fixed seed), cosine. In one run, per phase:
  1. optimized: graphlake after `optimize` (the ANN index it builds) and LanceDB with an
     index of the same kind, partition count and metric, both queried with the same
     refine factor; recall@10 against exact (numpy) and p50/p95 latency, alternating the
     two so machine noise hits both alike. Targets: recall >= 0.95, p50 and p95 <= 1.3x.
  2. merged: the same rows ingested as `--shards` branches and joined by one `merge_many`
     with no optimize: the adopted rows are searched exactly (latency reported), then
     after `optimize` again within 1.3x of LanceDB.
  3. merge time of those shards with and without `@index` declared (target: equal within
     noise: a merge does no index work; its stats' `vector_index_calls` are printed).

LanceDB (PyPI `lancedb`, 0.40) installs into the project's venv without changing pylance
or pyarrow (checked with `pip install --dry-run lancedb`); it is in the `dev` extra.
At 1M rows the two IVF_HNSW_SQ builds and the post-merge optimize take ~10 minutes each
on the 2-core machine (100k: ~40 s each), so the default is 100k; `--rows` scales it.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))

import graphlake as gl
from _util import load_average, machine, percentile, render_table
from graphlake.search.query import REFINE_FACTOR
from graphlake.storage import search_indexes as indexes

RATIO_TARGET = 1.3
RECALL_TARGET = 0.95


def make_vectors(rows: int, dim: int, seed: int = 42) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(256, dim))
    out = np.empty((rows, dim), dtype=np.float32)
    for lo in range(0, rows, 100_000):  # chunked: 1M x 128 of float64 noise is 1 GiB
        n = min(100_000, rows - lo)
        out[lo : lo + n] = centres[rng.integers(0, 256, n)] + 0.5 * rng.normal(size=(n, dim))
    return out


def exact_top10(vectors: np.ndarray, queries: np.ndarray) -> list[set[int]]:
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    qs = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    out = []
    for lo in range(0, len(qs), 64):
        sims = qs[lo : lo + 64] @ unit.T
        out += [set(np.argpartition(-s, 10)[:10].tolist()) for s in sims]
    return out


def arrow(vectors: np.ndarray, lo: int = 0) -> pa.Table:
    n, dim = vectors.shape
    return pa.table(
        {
            "name": pa.array([f"v{i}" for i in range(lo, lo + n)]),
            "e": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), dim),
        }
    )


def schema(dim: int, indexed: bool) -> str:
    return f"node V {{ name: String @key, e: Vector({dim}){' @index' if indexed else ''} }}"


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


# --- the two systems ----------------------------------------------------------------------


def graphlake_query(g: gl.Graph) -> Callable[[np.ndarray], list[int]]:
    def run(q: np.ndarray) -> list[int]:
        t = g.search("V", vector=q, k=10, columns=["name"])
        return [int(n[1:]) for n in t["name"].to_pylist()]

    return run


def lancedb_table(root: Path, vectors: np.ndarray) -> tuple[object, float]:
    import lancedb

    db = lancedb.connect(str(root))
    tbl = db.create_table("v", arrow(vectors))
    plan = indexes.ann_plan(len(vectors), vectors.shape[1])
    from lancedb.index import HnswSq, IvfPq

    kind = HnswSq if plan.index_type == "IVF_HNSW_SQ" else IvfPq
    config = kind(distance_type="cosine", num_partitions=plan.num_partitions, **plan.params)
    build = timed(lambda: tbl.create_index("e", config=config))
    return tbl, build


def lancedb_query(tbl: object) -> Callable[[np.ndarray], list[int]]:
    def run(q: np.ndarray) -> list[int]:
        query = tbl.search(q, vector_column_name="e")  # type: ignore[attr-defined]
        t = (
            query.distance_type("cosine")
            .limit(10)
            .refine_factor(REFINE_FACTOR)
            .select(["name"])
            .to_arrow()
        )
        return [int(n[1:]) for n in t["name"].to_pylist()]

    return run


def measure(
    systems: dict[str, Callable[[np.ndarray], list[int]]],
    queries: np.ndarray,
    truth: list[set[int]],
) -> dict[str, tuple[float, float, float]]:
    """Per system: (recall@10, p50 ms, p95 ms), the systems alternating per query."""
    lat: dict[str, list[float]] = {s: [] for s in systems}
    hits: dict[str, int] = dict.fromkeys(systems, 0)
    for run in systems.values():  # warm caches once
        run(queries[0])
    for q, want in zip(queries, truth, strict=True):
        for name, run in systems.items():
            t0 = time.perf_counter()
            got = run(q)
            lat[name].append((time.perf_counter() - t0) * 1000)
            hits[name] += len(want & set(got))
    return {
        s: (hits[s] / (10 * len(queries)), percentile(lat[s], 50), percentile(lat[s], 95))
        for s in systems
    }


# --- phases -------------------------------------------------------------------------------


def sharded(
    root: Path, vectors: np.ndarray, shards: int, indexed: bool
) -> tuple[gl.Graph, float, int]:
    """A graph whose rows arrive as `shards` branches joined by one merge_many."""
    g = gl.Graph.init(root, schema(vectors.shape[1], indexed))
    step = -(-len(vectors) // shards)
    names = []
    for i in range(shards):
        name = f"shard{i}"
        g.create_branch(name)
        lo = i * step
        g.load(arrow(vectors[lo : lo + step], lo), branch=name, table="V")
        names.append(name)
    t0 = time.perf_counter()
    r = g.merge_many(names)
    took = time.perf_counter() - t0
    return g, took, sum(s.vector_index_calls for s in r.stats.values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--quick", action="store_true", help="20k rows, 100 queries")
    ap.add_argument(
        "--no-merge",
        action="store_true",
        help="phase 1 only (the optimized index): a 1M run that fits an hour",
    )
    args = ap.parse_args()
    if args.quick:
        args.rows, args.queries = 20_000, 100
    print(
        f"# search bench: {args.rows} x Vector({args.dim}), {args.queries} queries, "
        f"{args.shards} shards\n# {machine()}\n# load {load_average()}"
    )
    vectors = make_vectors(args.rows, args.dim)
    rng = np.random.default_rng(1)
    queries = vectors[rng.integers(0, args.rows, args.queries)] + 0.2 * rng.normal(
        size=(args.queries, args.dim)
    ).astype(np.float32)
    truth = exact_top10(vectors, queries)
    tmp = Path(tempfile.mkdtemp(prefix="gl-search-bench-"))
    rows: list[list[str]] = []
    try:
        g = gl.Graph.init(tmp / "g", schema(args.dim, True))
        g.load(arrow(vectors), table="V")
        build_gl = timed(lambda: g.optimize())
        rows += progress([["index build, graphlake optimize (s)", f"{build_gl:.1f}", "", ""]])
        tbl, build_ldb = lancedb_table(tmp / "ldb", vectors)
        rows += progress([["index build, LanceDB create_index (s)", f"{build_ldb:.1f}", "", ""]])
        ldb = lancedb_query(tbl)
        res = measure({"graphlake": graphlake_query(g), "lancedb": ldb}, queries, truth)
        rows += progress(report("optimized", res))
        if args.no_merge:
            print(render_table(("figure", "value", "target", "verdict"), rows))
            return

        # A warm-up merge first pays the one-time costs (imports, caches) for neither side.
        sharded(tmp / "warm", vectors[:1000], 2, indexed=False)
        _, merge_plain, _ = sharded(tmp / "m2", vectors, args.shards, indexed=False)
        merged, merge_idx, calls = sharded(tmp / "m1", vectors, args.shards, indexed=True)
        (cov,) = merged.search("V", vector=queries[0], explain=True).coverage
        res = measure({"graphlake": graphlake_query(merged), "lancedb": ldb}, queries, truth)
        rows += progress(
            report(f"after merge_many, {cov.exact_rows} rows exact", res, target=False)
        )
        build_merged = timed(lambda: merged.optimize())
        res = measure({"graphlake": graphlake_query(merged), "lancedb": ldb}, queries, truth)
        rows += report("after merge_many + optimize", res)
        rows += [
            ["optimize after merge_many (s)", f"{build_merged:.1f}", "", ""],
            ["merge_many, @index declared (s)", f"{merge_idx:.2f}", "", ""],
            ["merge_many, no @index (s)", f"{merge_plain:.2f}", "", ""],
            ["merge_many vector_index_calls", str(calls), "0", verdict(calls == 0)],
        ]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(render_table(("figure", "value", "target", "verdict"), rows))


def progress(rows: list[list[str]]) -> list[list[str]]:
    """Print figures as they come (a long run stopped early still reports them)."""
    for row in rows:
        print("# " + " | ".join(c for c in row if c), flush=True)
    return rows


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def report(
    phase: str, res: dict[str, tuple[float, float, float]], target: bool = True
) -> list[list[str]]:
    (r_gl, p50, p95), (r_ldb, l50, l95) = res["graphlake"], res["lancedb"]
    out = [
        [
            f"{phase}: recall@10 graphlake / LanceDB",
            f"{r_gl:.3f} / {r_ldb:.3f}",
            f">= {RECALL_TARGET}",
            verdict(r_gl >= RECALL_TARGET),
        ],
        [
            f"{phase}: p50 ms graphlake / LanceDB",
            f"{p50:.1f} / {l50:.1f} ({p50 / l50:.2f}x)",
            f"<= {RATIO_TARGET}x" if target else "",
            verdict(p50 <= RATIO_TARGET * l50) if target else "",
        ],
        [
            f"{phase}: p95 ms graphlake / LanceDB",
            f"{p95:.1f} / {l95:.1f} ({p95 / l95:.2f}x)",
            f"<= {RATIO_TARGET}x" if target else "",
            verdict(p95 <= RATIO_TARGET * l95) if target else "",
        ],
    ]
    return out


if __name__ == "__main__":
    main()
