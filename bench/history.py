"""Row history and blame cost: one row over many small commits, 10k vs 1M rows.

    .venv/bin/python bench/history.py                      # 10k and 1M rows, 1,000 commits
    .venv/bin/python bench/history.py --quick              # 2k and 20k rows, 100 commits
    .venv/bin/python bench/history.py --keep /tmp/hist     # keep (and reuse) the graphs

Shape: a node table `Item { key @key, n: I64, tag: String? }` bulk-loaded in one
`g.load` of an Arrow table (N rows), then `--commits` commits on main of `--per-commit`
updated rows each. The same commits (keys drawn from the first 10k rows, one seed) run on
both sizes. The target row `k0000000` is updated by every `--every`-th commit (its `n`,
and every other time its `tag` as well), so its history has commits/every entries and
its blame names two different commits.

Each measurement runs in a fresh process that imports the modules the call needs, opens
the graph and times the first call (cold: it reads the commits and opens the table
versions; the OS page cache stays warm), then repeats it (warm); times are medians over
`--runs` processes. "commits read" is how many commits' `Item` state the call compared
for the row (the rest were skipped from row version metadata, see timeline/skip.py),
"rows read" the rows it read (probes: discovery and lookup rows).

Targets, as ratios from one run: row history at the largest size <= 1 s (cold) and
<= 1.5x the smallest size's time; blame likewise.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _util import load_average, machine, median, render_table  # noqa: E402

SCHEMA = "node Item { key: String @key  n: I64  tag: String? }\n"
TARGET_KEY = "k0000000"
TARGET_SECONDS = 1.0
TARGET_RATIO = 1.5
DEFAULT_SIZES = (10_000, 1_000_000)
QUICK_SIZES = (2_000, 20_000)


def key(i: int) -> str:
    return f"k{i:07d}"


def build(folder: Path, n: int, commits: int, per_commit: int, every: int) -> float:
    """The graph in `folder`: n rows loaded, then `commits` commits. Returns seconds."""
    import numpy as np
    import pyarrow as pa

    import graphlake as gl

    t0 = time.perf_counter()
    g = gl.Graph.init(folder, SCHEMA, author="bench")
    items = pa.table(
        {
            "key": pa.array([key(i) for i in range(n)], type=pa.string()),
            "n": pa.array(np.arange(n, dtype=np.int64)),
            "tag": pa.array([f"t{i}" for i in range(n)], type=pa.string()),
        }
    )
    g.load(items, table="Item", message="bulk load", author="loader")
    del items
    rng = random.Random(7)
    pool = min(n, 10_000)
    for c in range(commits):
        picked = set(rng.sample(range(1, pool), per_commit))
        rows: list[dict[str, object]] = [
            {"key": key(i), "n": rng.randint(0, 1 << 30)} for i in sorted(picked)
        ]
        if c % every == 0:
            target: dict[str, object] = {"key": TARGET_KEY, "n": c}
            if c % (2 * every) == 0:
                target["tag"] = f"tag-{c}"
            rows[0] = target
        with g.write(message=f"commit {c}", author=f"writer{c % 3}") as w:
            w.update("Item", rows)
    return time.perf_counter() - t0


def measure(folder: Path, op: str, warm_runs: int) -> dict[str, float]:
    """In this (fresh) process: the first call (cold) and the median of warm repeats."""
    import importlib

    import graphlake as gl
    from graphlake import probes

    # Modules the call imports lazily: imported first, so "cold" is the first call's
    # reads (commits, manifests, index pages), not Python start-up.
    for module in ("graphlake.timeline.rows", "graphlake.merge.delta", "graphlake.merge.diff"):
        importlib.import_module(module)
    g = gl.Graph.open(folder)
    call = (
        (lambda: g.row_history("Item", TARGET_KEY))
        if op == "history"
        else (lambda: g.blame("Item", TARGET_KEY))
    )
    with probes.collect() as counts:
        t0 = time.perf_counter()
        out = call()
        cold = time.perf_counter() - t0
    warm = []
    for _ in range(warm_runs):
        t0 = time.perf_counter()
        call()
        warm.append(time.perf_counter() - t0)
    return {
        "cold": cold,
        "warm": median(warm),
        "entries": len(out),
        "commits": counts["timeline_commits"],
        "rows": counts["discovery_rows"] + counts["lookup_rows"] + counts["timeline_rows"],
    }


def run_child(folder: Path, op: str, warm_runs: int) -> dict[str, float]:
    env = dict(os.environ)
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(folder), "--op", op, "--runs", str(warm_runs)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sizes", default=None, help="comma-separated row counts")
    p.add_argument("--commits", type=int, default=None)
    p.add_argument("--per-commit", type=int, default=10)
    p.add_argument(
        "--every", type=int, default=None, help="the target row changes every Nth (commits/10)"
    )
    p.add_argument("--runs", type=int, default=3, help="processes per measurement")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--keep", default=None, help="build (or reuse) the graphs in this folder")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    p.add_argument("--op", default="history", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        print(json.dumps(measure(Path(args.child), args.op, args.runs)))
        return
    sizes = (
        [int(s) for s in args.sizes.split(",")]
        if args.sizes
        else list(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    )
    commits = args.commits or (100 if args.quick else 1000)
    every = args.every or max(1, commits // 10)
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="gl-history-bench-"))
    print(f"machine: {machine()}; load average {load_average()}")
    print(f"{commits} commits of {args.per_commit} updated rows; target row changed every {every}")
    results: dict[tuple[int, str], dict[str, float]] = {}
    try:
        for n in sizes:
            folder = base / f"g{n}-{commits}-{args.per_commit}-{every}"
            if not (folder / "_graphlake").exists():
                shutil.rmtree(folder, ignore_errors=True)
                took = build(folder, n, commits, args.per_commit, every)
                print(f"built {n:,} rows + {commits} commits in {took:.1f} s", flush=True)
            for op in ("history", "blame"):
                runs = [run_child(folder, op, 3) for _ in range(args.runs)]
                results[(n, op)] = {
                    k: median([r[k] for r in runs]) for k in ("cold", "warm", "entries")
                } | {"commits": runs[0]["commits"], "rows": runs[0]["rows"]}
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    header = ("rows", "op", "cold s", "warm s", "entries", "commits read", "rows read")
    table = [
        (
            f"{n:,}",
            op,
            f"{r['cold']:.3f}",
            f"{r['warm']:.3f}",
            f"{int(r['entries'])}",
            f"{int(r['commits'])}",
            f"{int(r['rows'])}",
        )
        for (n, op), r in results.items()
    ]
    print(render_table(header, table))
    small, large = min(sizes), max(sizes)
    print(f"load average {load_average()}")
    ok = True
    for op in ("history", "blame"):
        a, b = results[(small, op)]["cold"], results[(large, op)]["cold"]
        ratio = b / a if a else float("inf")
        met = b <= TARGET_SECONDS and ratio <= TARGET_RATIO
        ok = ok and met
        print(
            f"{op}: {b:.3f} s at {large:,} rows (target <= {TARGET_SECONDS} s), "
            f"{ratio:.2f}x the {small:,}-row time (target <= {TARGET_RATIO}x): "
            f"{'met' if met else 'NOT met'}"
        )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
