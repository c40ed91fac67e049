"""Merge-request preview cost (issue 26): the preview of a request whose source changed 1%
of N rows, against a dry-run merge of the same branches plus the data checks' own query
time.

    .venv/bin/python bench/review.py                    # 100k rows
    .venv/bin/python bench/review.py --rows 1000000
    .venv/bin/python bench/review.py --quick            # 10k rows: seconds

Shape: a node table `Item {key, n, email}` of N rows on main, with two data checks (a
Cypher one: two items with one e-mail; a SQL one: negative `n`). Branch `dev` updates 1%
of the rows; main updates another 1% (so the merge is a real three-way merge, not a
fast-forward). Measured, each the median of `--runs` warm runs in this one process:

  * `dry run`: `g.merge("dev", dry_run=True)` (no checks);
  * `checks`: the two checks run on dev's head (their own query time on a state of the
    same size: what running them on the merged state costs beyond staging it);
  * `preview`: `Reviews.preview(request)` on a fresh `Reviews` (no cached preview): the
    dry run with the merged result staged on scratch branches, the checks run on it,
    plus the request's diff counts (from the dry run's own discovery, not a second one).

Bytes read are the process's `rchar` delta (/proc/self/io: every byte read through
read calls, page cache included). Target: preview <= 1.5x (dry run + checks).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _util import load_average, machine, median, render_table  # noqa: E402

TARGET = 1.5
SCHEMA = "node Item { key: String @key  n: I64  email: String? }\n"
CHECKS = {
    "dup_email": "MATCH (a:Item), (b:Item) WHERE a.email = b.email AND a.key < b.key "
    "RETURN a.key, b.key LIMIT 5",
    "negative_n": "SELECT key, n FROM Item WHERE n < 0",
}


def _rchar() -> int:
    try:
        with open("/proc/self/io") as f:
            for line in f:
                if line.startswith("rchar:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _timed(fn: Callable[[], object], runs: int) -> tuple[float, int]:
    """(median seconds, median bytes read) over `runs` calls."""
    times, reads = [], []
    for _ in range(runs):
        before, started = _rchar(), time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
        reads.append(_rchar() - before)
    return median(times), int(median(reads))


def _build(root: str, rows: int):
    import pyarrow as pa

    import graphlake as gl

    g = gl.Graph.init(root, SCHEMA)
    batch = 200_000
    for lo in range(0, rows, batch):
        hi = min(rows, lo + batch)
        keys = [f"k{i:08d}" for i in range(lo, hi)]
        table = pa.table(
            {
                "key": keys,
                "n": pa.array(range(lo, hi), pa.int64()),
                "email": [f"{k}@x" for k in keys],
            }
        )
        with g.write(message=f"load {lo}") as w:
            w.insert("Item", table)
    g.optimize()
    g.set_data_checks(CHECKS, message="checks")
    g.create_branch("dev")
    step = 100  # 1% of the rows on each side, different ones
    with g.write("dev", message="dev 1%") as w:
        w.update("Item", [{"key": f"k{i:08d}", "n": i + 1} for i in range(0, rows, step)])
    with g.write("main", message="main 1%") as w:
        w.update("Item", [{"key": f"k{i:08d}", "n": i + 2} for i in range(1, rows, step)])
    return g


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="10k rows")
    args = ap.parse_args()
    rows = 10_000 if args.quick else args.rows

    from graphlake.query.data_checks import run_checks
    from graphlake.review.workflow import Reviews

    print(f"machine: {machine()}")
    print(f"load average before: {load_average()}")
    with tempfile.TemporaryDirectory(prefix="graphlake-bench-review-") as d:
        started = time.perf_counter()
        g = _build(os.path.join(d, "g"), rows)
        print(f"built {rows:,} rows in {time.perf_counter() - started:.1f} s")
        mr = g.reviews.open("dev", "main", "1% of the rows", author="bench")
        preview = Reviews(g.repo).preview(mr)  # warm-up, and a sanity check
        assert preview["outcome"] == "merged", preview["outcome"]
        assert all(c["passed"] for c in preview["data_checks"]), preview["data_checks"]
        dry_s, dry_b = _timed(lambda: g.merge("dev", dry_run=True), args.runs)
        snap = g.snapshot("dev")
        checks = g.repo.data_checks.of(snap.commit)
        chk_s, chk_b = _timed(lambda: run_checks(snap, checks), args.runs)
        pre_s, pre_b = _timed(lambda: Reviews(g.repo).preview(mr), args.runs)
        head = g.head().id
        assert g.head().id == head  # previews publish nothing
    base_s, base_b = dry_s + chk_s, dry_b + chk_b
    ratio = pre_s / base_s
    print(
        render_table(
            ("measure", "time (s)", "bytes read"),
            [
                ("dry run", f"{dry_s:.3f}", f"{dry_b:,}"),
                ("checks on dev", f"{chk_s:.3f}", f"{chk_b:,}"),
                ("dry run + checks", f"{base_s:.3f}", f"{base_b:,}"),
                ("preview", f"{pre_s:.3f}", f"{pre_b:,}"),
            ],
        )
    )
    print(
        f"rows {rows:,}: preview / (dry run + checks) = {ratio:.2f}x "
        f"(target <= {TARGET}x: {'met' if ratio <= TARGET else 'MISSED'}); "
        f"load average after: {load_average()}"
    )


if __name__ == "__main__":
    main()
