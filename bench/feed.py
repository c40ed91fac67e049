"""Reading the change feed: 1,000 commits of 10 changed rows each, on a 1M-row table and
on a 10k-row table with the same commits, side by side in one run.

    .venv/bin/python bench/feed.py                          # 1M and 10k rows, 1,000 commits
    .venv/bin/python bench/feed.py --rows 100000 --commits 200   # quicker

One node type (`Person { name: String @key  age: I32  city: String }`), loaded in one
commit (one Arrow table, one bulk insert), then `--commits` commits that each update
`age` of 10 random rows. The timed read is the whole feed after the load commit
(`g.changes(since=cursor, limit=10000)` page by page until a page is empty), the median
of `--reps` runs; every run must return exactly commits x 10 entries. Goals (issue 27):
the big table <= 1 s, and <= 1.5x the small one. The feed reads the run of commits at
once (`timeline/batch.py`, from the effects each write commit records); `--compare` also
times one read commit by commit (lineage per commit, what commits without a record get).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
import graphlake as gl
from _util import load_average, machine, render_table

SCHEMA = "node Person { name: String @key  age: I32  city: String }"
CHANGED = 10


def build(root: Path, rows: int, commits: int) -> tuple[gl.Graph, str, float]:
    """The graph, a cursor right after its load commit, and the build time (a graph
    kept in `--workdir` by an earlier run is opened again, not rebuilt)."""
    from graphlake.timeline.feed import encode_cursor

    t0 = time.perf_counter()
    saved = root / "cursor.txt"
    if saved.exists():
        return gl.Graph.open(root), saved.read_text(), time.perf_counter() - t0
    g = gl.Graph.init(root, SCHEMA)
    table = pa.table(
        {
            "name": pa.array([f"P{i:08d}" for i in range(rows)]),
            "age": pa.array(np.arange(rows) % 100, pa.int32()),
            "city": pa.array([f"city-{i % 977}" for i in range(rows)]),
        }
    )
    with g.write(message="load") as w:
        w.insert("Person", table)
    _, loaded = g.repo.branch_head("main")
    cursor = encode_cursor(g.repo, "main", loaded.id, -1)
    rng = np.random.default_rng(7)  # the same commits whatever the table size
    for c in range(commits):
        picked = rng.choice(min(rows, 10_000), CHANGED, replace=False)
        with g.write(message=f"update {c}") as w:
            w.update(
                "Person",
                pa.table(
                    {
                        "name": pa.array([f"P{i:08d}" for i in picked]),
                        "age": pa.array(np.full(CHANGED, 100 + c), pa.int32()),
                    }
                ),
            )
    saved.write_text(cursor)
    return g, cursor, time.perf_counter() - t0


def read_feed(g: gl.Graph, cursor: str, batched: bool = True) -> int:
    from graphlake.timeline.feed import changes

    n = 0
    while True:
        page = changes(g.repo, "main", since=cursor, limit=10_000, batched=batched)
        if not page.entries:
            return n
        n += len(page.entries)
        cursor = page.cursor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument(
        "--workdir", type=Path, default=None, help="keep the graphs here and reuse them"
    )
    parser.add_argument("--profile", action="store_true", help="cProfile one big read")
    parser.add_argument(
        "--compare",
        action="store_true",
        help="also time one read of each size commit by commit (batched=False), the "
        "path commits without recorded effects take",
    )
    args = parser.parse_args()
    print(machine())
    tmp = args.workdir or Path(tempfile.mkdtemp(prefix="bench-feed-"))
    try:
        built = {}
        for rows in (args.small, args.rows):
            g, cursor, secs = build(tmp / f"g{rows}-{args.commits}", rows, args.commits)
            print(f"{rows:,} rows + {args.commits:,} commits built in {secs:.1f} s")
            built[rows] = (g, cursor)
        times: dict[int, list[float]] = {args.small: [], args.rows: []}
        cpu: dict[int, list[float]] = {args.small: [], args.rows: []}
        for _ in range(args.reps):  # interleaved, so load shifts hit both sizes alike
            for rows, (g, cursor) in built.items():
                t0, c0 = time.perf_counter(), time.process_time()
                n = read_feed(g, cursor)
                times[rows].append(time.perf_counter() - t0)
                cpu[rows].append(time.process_time() - c0)  # every thread of the process
                assert n == args.commits * CHANGED, (rows, n)
        walked: dict[int, float] = {}
        if args.compare:
            for rows, (g, cursor) in built.items():
                t0 = time.perf_counter()
                assert read_feed(g, cursor, batched=False) == args.commits * CHANGED
                walked[rows] = time.perf_counter() - t0
        small = statistics.median(times[args.small])
        out = []
        for rows in (args.small, args.rows):
            s = statistics.median(times[rows])
            out.append(
                [
                    f"{rows:,}",
                    f"{args.commits:,}",
                    f"{args.commits * CHANGED:,}",
                    f"{s:.2f}",
                    f"{s / args.commits * 1000:.2f}",
                    f"{s / small:.2f}x",
                    f"{statistics.median(cpu[rows]):.2f}",
                    f"{walked[rows]:.2f}" if walked else "-",
                ]
            )
        header = [
            "rows",
            "commits",
            "entries",
            "feed s",
            "ms/commit",
            "vs small",
            "cpu s",
            "per-commit s",
        ]
        print(render_table(header, out))
        for rows in (args.small, args.rows):
            print(f"{rows:,} rows, each run (s): " + ", ".join(f"{t:.2f}" for t in times[rows]))
        big = statistics.median(times[args.rows])
        print(
            f"goal: big <= 1 s: {'met' if big <= 1 else 'MISSED'} ({big:.2f} s); "
            f"big <= 1.5x small: {'met' if big <= 1.5 * small else 'MISSED'} "
            f"({big / small:.2f}x); load average {load_average()}"
        )
        if args.profile:
            import cProfile
            import pstats

            g, cursor = built[args.rows]
            prof = cProfile.Profile()
            prof.runcall(read_feed, g, cursor)
            pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
    finally:
        if args.workdir is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
