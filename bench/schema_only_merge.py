"""Schema-only merges into the graphs `bench/schema.py --workdir DIR` left, in a fresh
process: 10k vs big, side by side, with and without `optimize` first.

    .venv/bin/python bench/schema.py --workdir /tmp/schema-bench   # builds DIR/small, DIR/big
    .venv/bin/python bench/schema_only_merge.py /tmp/schema-bench

Each merge: fork a branch at the base the benchmark's schema-only branches forked from,
add a nullable property there, move main by one row, merge the branch into main. Prints
the median wall time of REPEATS merges and the bytes the largest one wrote, per graph,
then the same after `g.optimize("main")`.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import schema as bench

REPEATS = 5


def merges(root: Path, tag: str) -> tuple[float, int]:
    import pyarrow as pa

    import graphlake as gl

    g = gl.Graph.open(str(root))
    base = g.head("so0").parents[0]  # main before it moved (bench/schema.py)
    times, most = [], 0
    for i in range(REPEATS + 1):  # the first merge of a process also warms it up
        name = f"{tag}{i}-{time.time_ns()}"
        g.create_branch(name, base)
        g.apply_schema(bench.schema(f"{tag}{i}x{time.time_ns()}: String?"), name)
        with g.write(message="one row") as w:
            w.update("Item", pa.table({"key": [f"k{i * 7:08d}"], "score": [float(i)]}))
        secs, written, _ = bench.measured(root, lambda n=name: g.merge(n, into="main"))
        if i:
            times.append(secs)
            most = max(most, written)
    return statistics.median(times), most


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    workdir = Path(argv[0])
    for label, do_optimize in (("as left", False), ("after optimize", True)):
        figures = {}
        for size in ("small", "big"):
            if do_optimize:
                import graphlake as gl

                gl.Graph.open(str(workdir / size)).optimize("main")
            figures[size] = merges(workdir / size, "o" if do_optimize else "p")
        (s_t, s_b), (b_t, b_b) = figures["small"], figures["big"]
        print(
            f"{label}: 10k {s_t * 1000:.0f} ms / {s_b:,} B; big {b_t * 1000:.0f} ms / "
            f"{b_b:,} B; big/10k {b_t / s_t:.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
