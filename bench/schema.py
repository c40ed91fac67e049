"""Schema-evolution benchmark: schema steps, a backfill and merges, 10k vs big, one run.

    .venv/bin/python bench/schema.py                  # 1M rows
    .venv/bin/python bench/schema.py --rows 200000    # a smaller big table
    .venv/bin/python bench/schema.py --quick          # 20k rows: a smoke run

On a node table of `--rows` rows with a `Vector(128)` property (and the same table at 10k
rows, measured side by side because a small machine is noisy):
  * add a nullable property, rename it, drop it: bytes written <= 0.01% of the table,
    wall time big / 10k <= 1.5x;
  * backfill a new Vector(128) property for every row: bytes written <= 1.2x the new
    column's encoded size;
  * merge that backfill branch into a main that updated 1% of the rows meanwhile: no
    conflict, bytes written <= 1.2x (the new column + the 1% rows);
  * merge a schema-only branch into a main that moved: wall time big / 10k <= 1.5x.
Bytes written: the sizes of the files that appear under the graph root during the step.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import load_average, machine, render_table

SCHEMA = "node Item {{ key: String @key  score: F64?  emb: Vector(128)?{extra} }}"
DIM = 128
SMALL_ROWS = 10_000
META_FRACTION = 0.0001  # metadata steps: bytes <= 0.01% of the table
RATIO = 1.5
COLUMN_SLACK = 1.2
REPEATS = 5  # schema steps and schema-only merges: median wall time
HEADER = ("figure", "10k", "big", "target", "verdict")


def schema(extra: str = "") -> str:
    return SCHEMA.format(extra=f"  {extra}" if extra else "")


def _files(root: Path) -> dict[str, int]:
    return {str(p): p.stat().st_size for p in root.rglob("*") if p.is_file()}


def measured(root: Path, fn: Callable[[], object]) -> tuple[float, int, object]:
    """(seconds, bytes of the files that appeared, fn's result)."""
    before = _files(root)
    start = time.perf_counter()
    out = fn()
    seconds = time.perf_counter() - start
    after = _files(root)
    return seconds, sum(s for p, s in after.items() if p not in before), out


def vectors(n: int, seed: int):
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    flat = pa.array(rng.random(n * DIM, dtype=np.float32))
    return pa.FixedSizeListArray.from_arrays(flat, DIM)


def build(root: Path, n: int):
    """A graph of `n` items, loaded in slices of 100k rows (one commit)."""
    import pyarrow as pa

    import graphlake as gl

    shutil.rmtree(root, ignore_errors=True)
    g = gl.Graph.init(str(root), schema())
    with g.write(message="load") as w:
        for lo in range(0, n, 100_000):
            hi = min(n, lo + 100_000)
            w.insert(
                "Item",
                pa.table(
                    {
                        "key": pa.array([f"k{i:08d}" for i in range(lo, hi)]),
                        "score": pa.array([float(i) for i in range(lo, hi)]),
                        "emb": vectors(hi - lo, lo),
                    }
                ),
            )
    return g


def run(root: Path, n: int) -> dict[str, float]:
    import pyarrow as pa

    g = build(root, n)
    table_bytes = sum(_files(root / "tables").values())
    fig: dict = {"rows": n, "table_bytes": table_bytes}
    g.create_branch("ops", "main")
    for label in ("add", "rename", "drop"):
        fig[f"{label}_s"], fig[f"{label}_bytes"] = float("inf"), 0
    for i in range(REPEATS):  # the median of the wall times, the largest byte count
        steps = [
            ("add", schema(f"note{i}: String?")),
            ("rename", schema(f"memo{i}: String? @renamed_from(note{i})")),
            ("drop", schema()),
        ]
        for label, text in steps:
            secs, written, _ = measured(root, lambda t=text: g.apply_schema(t, "ops"))
            fig.setdefault(f"{label}_all", []).append(secs)
            fig[f"{label}_bytes"] = max(fig[f"{label}_bytes"], written)
    for label in ("add", "rename", "drop"):
        fig[f"{label}_s"] = statistics.median(fig.pop(f"{label}_all"))
    # Backfill a new Vector(128) on a branch.
    g.create_branch("bf", "main")
    g.apply_schema(schema("emb2: Vector(128)?"), "bf")
    keys = pa.array([f"k{i:08d}" for i in range(n)])
    rows = pa.table({"key": keys, "emb2": vectors(n, 99)})

    def backfill() -> None:
        with g.write("bf", message="backfill emb2") as w:
            w.set_property("Item", "emb2", rows)

    fig["backfill_s"], fig["backfill_bytes"], _ = measured(root, backfill)
    fig["column_bytes"] = n * DIM * 4
    # Schema-only branches, forked before main moves.
    for i in range(REPEATS):
        g.create_branch(f"so{i}", "main")
        g.apply_schema(schema(f"tag{i}: String?"), f"so{i}")
    # Main updates 1% of the rows (whole rows: the update path writes them).
    step = 100
    changed = pa.table(
        {
            "key": keys.take(pa.array(range(0, n, step))),
            "score": pa.array([-1.0] * len(range(0, n, step))),
        }
    )
    secs, one_pct, _ = measured(root, lambda: _update(g, changed))
    fig["one_pct_bytes"] = one_pct
    secs, written, r = measured(root, lambda: g.merge("bf", into="main"))
    fig["merge_bf_s"], fig["merge_bf_bytes"] = secs, written
    fig["merge_bf_conflicts"] = len(r.conflicts)
    fig["merge_bf_route"] = r.routes.get("Item")
    times, most = [], 0
    for i in range(REPEATS):  # main moves (one row), then a schema-only merge
        _update(g, changed.slice(i, 1))
        secs, written, r = measured(root, lambda i=i: g.merge(f"so{i}", into="main"))
        times.append(secs)
        most = max(most, written)
    fig["merge_so_s"], fig["merge_so_bytes"] = statistics.median(times), most
    return fig


def _update(g, rows) -> None:
    with g.write(message="1% of rows") as w:
        w.update("Item", rows)


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def report(small: dict, big: dict) -> str:
    rows = []
    meta_cap = big["table_bytes"] * META_FRACTION
    for label in ("add", "rename", "drop"):
        rows.append(
            (
                f"{label} property: bytes written",
                f"{small[f'{label}_bytes']:,}",
                f"{big[f'{label}_bytes']:,}",
                f"<= {meta_cap:,.0f}",
                verdict(big[f"{label}_bytes"] <= meta_cap),
            )
        )
        ratio = big[f"{label}_s"] / small[f"{label}_s"]
        rows.append(
            (
                f"{label} property: wall time",
                f"{small[f'{label}_s'] * 1000:.0f} ms",
                f"{big[f'{label}_s'] * 1000:.0f} ms",
                f"big/10k <= {RATIO}x",
                f"{ratio:.2f}x {verdict(ratio <= RATIO)}",
            )
        )
    cap = COLUMN_SLACK * big["column_bytes"]
    rows.append(
        (
            "backfill Vector(128): bytes written",
            f"{small['backfill_bytes']:,}",
            f"{big['backfill_bytes']:,}",
            f"<= {cap:,.0f}",
            verdict(big["backfill_bytes"] <= cap),
        )
    )
    rows.append(
        (
            "backfill Vector(128): wall time",
            f"{small['backfill_s']:.2f} s",
            f"{big['backfill_s']:.2f} s",
            "-",
            "-",
        )
    )
    cap = COLUMN_SLACK * (big["column_bytes"] + big["one_pct_bytes"])
    rows.append(
        (
            "merge backfill into main (1% updated): bytes",
            f"{small['merge_bf_bytes']:,}",
            f"{big['merge_bf_bytes']:,}",
            f"<= {cap:,.0f}",
            verdict(big["merge_bf_bytes"] <= cap and not big["merge_bf_conflicts"]),
        )
    )
    rows.append(
        (
            "merge backfill: route / conflicts",
            f"{small['merge_bf_route']} / {small['merge_bf_conflicts']}",
            f"{big['merge_bf_route']} / {big['merge_bf_conflicts']}",
            "no conflict",
            "-",
        )
    )
    rows.append(
        (
            "merge backfill: wall time",
            f"{small['merge_bf_s']:.2f} s",
            f"{big['merge_bf_s']:.2f} s",
            "-",
            "-",
        )
    )
    ratio = big["merge_so_s"] / small["merge_so_s"]
    rows.append(
        (
            "merge schema-only branch: wall time",
            f"{small['merge_so_s'] * 1000:.0f} ms",
            f"{big['merge_so_s'] * 1000:.0f} ms",
            f"big/10k <= {RATIO}x",
            f"{ratio:.2f}x {verdict(ratio <= RATIO)}",
        )
    )
    rows.append(
        (
            "merge schema-only branch: bytes written",
            f"{small['merge_so_bytes']:,}",
            f"{big['merge_so_bytes']:,}",
            f"<= {meta_cap:,.0f}",
            verdict(big["merge_so_bytes"] <= meta_cap),
        )
    )
    return render_table(HEADER, rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=None, help="rows of the big table (1M)")
    p.add_argument("--quick", action="store_true", help="20k rows: a smoke run")
    p.add_argument("--workdir", type=Path, default=None, help="keep data here (temp dir)")
    args = p.parse_args(argv)
    rows = args.rows or (20_000 if args.quick else 1_000_000)
    small_rows = min(SMALL_ROWS, rows)
    load = load_average()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="graphlake-schema-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        print(f"10k table ({small_rows:,} rows) ...", file=sys.stderr, flush=True)
        small = run(work / "small", small_rows)
        print(f"big table ({rows:,} rows) ...", file=sys.stderr, flush=True)
        big = run(work / "big", rows)
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    print(
        f"graphlake schema benchmark: {rows:,} rows with a Vector({DIM}) vs "
        f"{small_rows:,}; {machine()}; load {load}"
    )
    print(
        f"table size: {small['table_bytes']:,} / {big['table_bytes']:,} bytes; "
        f"new column {big['column_bytes']:,} bytes; 1% update wrote "
        f"{big['one_pct_bytes']:,} bytes"
    )
    print(report(small, big))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
