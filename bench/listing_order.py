"""What key order costs a listing: `g.nodes` / `show` / `export` by `id` (the default)
against storage order (`order_by=None`, `--unordered`), side by side in one run.

    .venv/bin/python bench/listing_order.py                 # 1M rows, 3 reps
    .venv/bin/python bench/listing_order.py --rows 100000   # quicker

One node type (`Person { name: String @key  age: I32  city: String }`), loaded in one
commit in shuffled key order, then 1% of the rows updated (so storage order is not key
order). Per read: the median of `--reps` wall times, and ordered / unordered as a ratio:
  - first page: `g.nodes(limit=20)` (what `graphlake show` reads by default)
  - filtered page: `where="age > 50", limit=20`
  - full table: `g.nodes()` (all rows, every column)
  - export batches: the record batches `graphlake export` writes, all rows
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
import graphlake as gl
from _util import machine, peak_rss_mib

SCHEMA = "node Person { name: String @key  age: I32  city: String }"


def build(root: Path, rows: int) -> gl.Graph:
    rng = np.random.default_rng(7)
    names = pa.array([f"P{i:08d}" for i in rng.permutation(rows)])
    table = pa.table(
        {
            "name": names,
            "age": pa.array(rng.integers(0, 100, rows), pa.int32()),
            "city": pa.array([f"city-{i % 977}" for i in range(rows)]),
        }
    )
    g = gl.Graph.init(root, SCHEMA)
    with g.write(message="load") as w:
        w.insert("Person", table)
    touched = names.take(pa.array(rng.choice(rows, rows // 100, replace=False)))
    with g.write(message="update 1%") as w:
        w.update(
            "Person",
            pa.table({"name": touched, "age": pa.array(np.full(len(touched), 42), pa.int32())}),
        )
    return g


def median_s(fn: Callable[[], object], reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    from graphlake.cli.export_writers import table_batches

    tmp = Path(tempfile.mkdtemp(prefix="bench-order-"))
    try:
        t0 = time.perf_counter()
        g = build(tmp / "g", args.rows)
        print(
            f"{machine()}\n{args.rows:,} rows loaded + 1% updated in "
            f"{time.perf_counter() - t0:.1f} s; median of {args.reps}\n"
        )
        snapshot = g.snapshot("main")

        def export(order: str | None) -> int:
            return sum(b.num_rows for b in table_batches(snapshot, "Person", order)[1])

        cases: list[tuple[str, Callable[[str | None], object]]] = [
            ("first page (limit 20)", lambda o: g.nodes("Person", limit=20, order_by=o)),
            (
                "filtered page (age > 50, limit 20)",
                lambda o: g.nodes("Person", where="age > 50", limit=20, order_by=o),
            ),
            ("full table", lambda o: g.nodes("Person", order_by=o)),
            ("export batches", export),
        ]
        print(f"{'read':<36}{'by id (s)':>11}{'storage (s)':>13}{'ratio':>8}")
        for label, fn in cases:
            fn("id")  # warm the file cache for both
            unordered = median_s(lambda fn=fn: fn(None), args.reps)
            ordered = median_s(lambda fn=fn: fn("id"), args.reps)
            print(f"{label:<36}{ordered:>11.3f}{unordered:>13.3f}{ordered / unordered:>7.1f}x")
        print(f"\npeak RSS {peak_rss_mib():.0f} MiB")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
