"""Cost of a merge where BOTH sides changed a table's rows while its columns differ.

    .venv/bin/python bench/schema_rows.py                 # 100k rows
    .venv/bin/python bench/schema_rows.py --rows 1000000

On a node table of `--rows` rows, two branches fork from main; the target adds a
property (`email: String?`) and updates 1% of the rows, the source updates another 1%.
The merge evolves the base, target and source states to the merged layout on forks and
finds the changes by the walk (every row hashed and joined in DuckDB); the same merge
without the schema change (lineage discovery, O(changed rows)) is the reference. Prints
wall time and the rows the discovery read; no target (a measurement, not a gate).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import load_average, machine, render_table

SCHEMA = "node Item {{ key: String @key  score: F64?  age: I32?{extra} }}"
HEADER = ("merge", "wall time", "discovery", "rows scanned", "changes", "conflicts")


def build(root: Path, n: int, with_schema_change: bool):
    import pyarrow as pa

    import graphlake as gl

    shutil.rmtree(root, ignore_errors=True)
    g = gl.Graph.init(str(root), SCHEMA.format(extra=""))
    keys = pa.array([f"k{i:08d}" for i in range(n)])
    with g.write(message="load") as w:
        w.insert(
            "Item",
            pa.table(
                {
                    "key": keys,
                    "score": pa.array([float(i) for i in range(n)]),
                    "age": pa.array(list(range(n)), pa.int32()),
                }
            ),
        )
    g.create_branch("source")
    g.create_branch("target")
    if with_schema_change:
        g.apply_schema(SCHEMA.format(extra="  email: String?"), "target")
    step = 100
    for branch, offset in (("target", 0), ("source", step // 2)):
        picked = keys.take(pa.array(range(offset, n, step)))
        with g.write(branch, message="1% of rows") as w:
            w.update("Item", pa.table({"key": picked, "score": pa.array([-1.0] * len(picked))}))
    return g


def measure(root: Path, n: int, with_schema_change: bool) -> tuple[str, ...]:
    g = build(root, n, with_schema_change)
    start = time.perf_counter()
    r = g.merge("source", into="target")
    secs = time.perf_counter() - start
    st = r.stats["Item"]
    label = "columns differ (walk)" if with_schema_change else "same columns (reference)"
    return (
        label,
        f"{secs:.2f} s",
        str(st.discovery),
        f"{st.rows_scanned:,}",
        f"{st.source_changes:,} + {st.target_changes:,}",
        str(len(r.conflicts)),
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=100_000, help="rows of the table (100k)")
    p.add_argument("--workdir", type=Path, default=None, help="keep data here (temp dir)")
    args = p.parse_args(argv)
    load = load_average()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="graphlake-schema-rows-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        rows = [
            measure(work / f"g{i}", args.rows, change) for i, change in enumerate((False, True))
        ]
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    print(
        f"graphlake schema-rows benchmark: {args.rows:,} rows, 1% updated on each side; "
        f"{machine()}; load {load}"
    )
    print(render_table(HEADER, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
