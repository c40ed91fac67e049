"""Full build of a CSR adjacency (`adjacency.csr.from_edges`), before and after the
build stopped sorting every edge id string, side by side in one run.

The input is what `adjacency.load` hands the build after reading Lance: the node keys
and the edge table's `src`, `dst` and `id` columns as Arrow string arrays (the bench's
graph shape: keys `p0000123`, edge ids `k00000042`, 10 edges per node, random targets,
edges in random order, a few parallel edges). Each build runs in a fresh process that
first makes the input (so each peak RSS is its own), variants interleaved rep by rep:
wall and CPU seconds of the build, the process's peak RSS after making the input and
after the build, and the adjacency's integer bytes per edge per direction. The two
builds' arrays are checked equal once per size.

    python bench/adjacency_build.py --sizes 100000 1000000 --reps 3
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

EDGES_PER_NODE = 10


def make_input(n: int, m: int, seed: int = 7):
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    def keys(prefix: str, ints, width: int) -> pa.Array:
        digits = pc.utf8_lpad(pc.cast(pa.array(ints), pa.string()), width, "0")
        return pc.binary_join_element_wise(pa.scalar(prefix), digits, "")

    rng = np.random.default_rng(seed)
    nodes = keys("p", rng.permutation(n), 7)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    dup = rng.integers(0, m, m // 1000)  # 0.1% parallel edges
    dst[dup[1:]] = dst[dup[:-1]]
    src[dup[1:]] = src[dup[:-1]]
    return nodes, keys("p", src, 7), keys("p", dst, 7), keys("k", rng.permutation(m), 8)


def before(src_nodes, dst_nodes, src, dst, ids):
    """`from_edges` as it was: a rank of every edge id string, then one stable sort of
    an int64 (src, dst) key over the rank order."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from graphlake.adjacency.csr import ID32, INDEX, Csr, group_offsets, sorted_keys

    def dense(keys, values):
        found = pc.index_in(values, value_set=keys)
        return found.to_numpy(zero_copy_only=False).astype(INDEX)

    src_keys = sorted_keys(src_nodes)
    dst_keys = src_keys if dst_nodes is None else sorted_keys(dst_nodes)
    ids_type = np.int32 if max(len(src_keys), len(dst_keys), len(src)) < ID32 else INDEX
    s = dense(src_keys, src).astype(ids_type, copy=False)
    d = dense(dst_keys, dst).astype(ids_type, copy=False)
    rank = pc.rank(ids, sort_keys="ascending", tiebreaker="first").to_numpy().astype(INDEX)
    by_rank = np.empty_like(rank)
    by_rank[rank - 1] = np.arange(len(rank), dtype=rank.dtype)
    key = s.astype(INDEX) * max(len(dst_keys), 1) + d
    order = by_rank[np.argsort(key[by_rank], kind="stable")]
    s, d = s[order], d[order]
    edge_ids = ids.take(pa.array(order))
    by_dst = np.argsort(d, kind="stable")
    return Csr(
        src_keys=src_keys,
        dst_keys=dst_keys,
        edge_ids=edge_ids,
        out_offsets=group_offsets(s, len(src_keys)),
        out_targets=d,
        out_edges=np.arange(len(s), dtype=ids_type),
        in_offsets=group_offsets(d[by_dst], len(dst_keys)),
        in_sources=s[by_dst],
        in_edges=by_dst.astype(ids_type),
    )


def child(variant: str, n: int, m: int, check: bool) -> dict:
    from graphlake.adjacency.csr import from_edges

    build = from_edges if variant == "after" else before
    inputs = make_input(n, m)
    rss_input = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t, c = time.perf_counter(), time.process_time()
    csr = build(inputs[0], None, *inputs[1:])
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ints = csr.out_targets.nbytes + csr.out_edges.nbytes + csr.out_offsets.nbytes
    out = {"wall": wall, "cpu": cpu, "rss_input_mb": rss_input, "rss_mb": rss}
    out["bytes_per_edge_dir"] = ints / max(m, 1)
    if check:
        out["equal"] = csr.equals(before(inputs[0], None, *inputs[1:]))
    return out


def run(variant: str, n: int, m: int, check: bool = False) -> dict:
    args = [sys.executable, __file__, "--child", variant, str(n), str(m)]
    done = subprocess.run(args + (["--check"] if check else []), capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    p.add_argument("--check", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        print(json.dumps(child(a.child[0], int(a.child[1]), int(a.child[2]), a.check)))
        return
    with open("/proc/loadavg") as f:
        print(f"load average at start: {f.read().split()[0]}")
    for n in a.sizes:
        m = n * EDGES_PER_NODE
        assert run("after", n, m, check=True)["equal"], "the new build must equal the old"
        got: dict[str, list[dict]] = {"before": [], "after": []}
        for _ in range(a.reps):
            for variant in ("before", "after"):
                got[variant].append(run(variant, n, m))
        print(f"\n{n:,} nodes, {m:,} edges (median of {a.reps}, one process each):")
        for variant, rows in got.items():

            def med(field: str, rows: list[dict] = rows) -> float:
                return statistics.median(r[field] for r in rows)

            print(
                f"  {variant:6s} wall {med('wall'):6.2f} s  CPU {med('cpu'):6.2f} s  "
                f"peak RSS {med('rss_mb'):6.0f} MB (input alone {med('rss_input_mb'):.0f})  "
                f"{med('bytes_per_edge_dir'):.1f} bytes/edge/direction"
            )
        ratio = statistics.median(r["cpu"] for r in got["before"]) / statistics.median(
            r["cpu"] for r in got["after"]
        )
        print(f"  CPU before / after: {ratio:.2f}x")
    with open("/proc/loadavg") as f:
        print(f"load average at end: {f.read().split()[0]}")


if __name__ == "__main__":
    main()
