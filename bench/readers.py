"""Readers benchmark: the PyTorch loader over a pinned revision, side by side in one run.

    .venv/bin/python bench/readers.py                 # 1M rows, 4 DataLoader workers
    .venv/bin/python bench/readers.py --rows 200000   # smaller machines
    .venv/bin/python bench/readers.py --workers 0     # in-process loaders (no spawn cost)

Targets (issue 29; a table with a Vector(128) and a text column):
  * `to_torch` throughput >= 80% of Lance's own `lance.torch` dataset on the same Lance
    table (rows/s, `--workers` spawned DataLoader workers, same batch size and columns),
    and >= 20x `g.nodes()` + a Python loop that builds the same batches;
  * memory bounded by batch size, not table size: peak PSS summed over the loader's
    processes for an epoch of `--rows` rows <= 1.5x that of `--rows / 10` rows (each
    epoch in a fresh subprocess);
  * rank/world_size 0/2 and 1/2: each row exactly once across both, the same order for
    the same seed, a different order for another epoch.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

SCHEMA = "node Sample { k: I64 @key  emb: Vector(128)  text: String  label: I32 }"
COLUMNS = ["k", "emb", "text", "label"]


def build(path: Path, rows: int, chunk: int = 100_000) -> None:
    import numpy as np
    import pyarrow as pa

    import graphlake as gl

    g = gl.Graph.init(path, SCHEMA)
    rng = np.random.default_rng(0)
    for start in range(0, rows, chunk):
        n = min(chunk, rows - start)
        keys = np.arange(start, start + n, dtype=np.int64)
        emb = rng.standard_normal((n, 128), dtype=np.float32)
        table = pa.table(
            {
                "id": pa.array([str(k) for k in keys]),
                "k": keys,
                "emb": pa.FixedSizeListArray.from_arrays(pa.array(emb.ravel()), 128),
                "text": pa.array([f"sample text number {k}" for k in keys]),
                "label": pa.array(keys % 10, pa.int32()),
            }
        )
        g.load(table, table="Sample", message=f"rows {start}..")


def _epoch(loader, steady: list[float] | None = None) -> tuple[int, float]:
    """Rows and seconds of one epoch, worker start-up included; `steady` gets the rows/s
    after the first batch (the workers have started and imported torch by then)."""
    started = time.perf_counter()
    rows = 0
    first: float | None = None
    first_rows = 0
    for batch in loader:
        rows += len(batch["k"])
        if first is None:
            first, first_rows = time.perf_counter(), rows
    end = time.perf_counter()
    if steady is not None and first is not None and end > first:
        steady.append((rows - first_rows) / (end - first))
    return rows, end - started


def _batch_tensors(batch, **_: object) -> dict:
    import pyarrow as pa

    from graphlake.readers.pytorch import to_tensors

    return to_tensors(pa.Table.from_batches([batch]))


def loader_of(kind: str, path: Path, workers: int, batch_size: int):
    import torch.utils.data as tud

    import graphlake as gl

    g = gl.Graph.open(path)
    if kind == "graphlake":
        ds = g.to_torch("Sample", columns=COLUMNS, batch_size=batch_size)
    else:
        from lance.torch.data import LanceDataset

        state = g.head().tables["Sample"]
        lance_ds = g.repo.tables.open(state)
        # lance.torch's own converter refuses strings: give it graphlake's (same output).
        ds = LanceDataset(
            lance_ds, batch_size=batch_size, columns=COLUMNS, to_tensor_fn=_batch_tensors
        )
    kwargs = {"multiprocessing_context": "spawn"} if workers else {}
    return tud.DataLoader(ds, batch_size=None, num_workers=workers, **kwargs)


def python_loop(path: Path, batch_size: int) -> tuple[int, float]:
    """The baseline: `g.nodes()` into memory, then batches built row by row."""
    import torch

    import graphlake as gl

    g = gl.Graph.open(path)
    started = time.perf_counter()
    rows = 0
    table = g.nodes("Sample", columns=COLUMNS)
    records = table.to_pylist()
    for i in range(0, len(records), batch_size):
        chunk = records[i : i + batch_size]
        batch = {
            "k": torch.tensor([r["k"] for r in chunk]),
            "emb": torch.tensor([r["emb"] for r in chunk]),
            "label": torch.tensor([r["label"] for r in chunk]),
            "text": [r["text"] for r in chunk],
        }
        rows += len(batch["k"])
    return rows, time.perf_counter() - started


# --- memory: PSS of a process and its descendants (Linux /proc) -------------------------


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == pid:
            out.append(int(entry))
    return out


def _pss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_pss_mib(root: int) -> float:
    todo, total = [root], 0
    while todo:
        pid = todo.pop()
        total += _pss_kib(pid)
        todo.extend(_children(pid))
    return total / 1024


def memory_child(path: Path, workers: int, batch_size: int) -> None:
    """One epoch in this fresh process, sampling the tree's PSS; prints JSON."""
    peak = [0.0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.05):
            peak[0] = max(peak[0], tree_pss_mib(os.getpid()))

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    rows, seconds = _epoch(loader_of("graphlake", path, workers, batch_size))
    stop.set()
    thread.join()
    print(json.dumps({"rows": rows, "seconds": seconds, "peak_pss_mib": peak[0]}))


def epoch_memory(path: Path, workers: int, batch_size: int) -> dict:
    out = subprocess.run(
        [
            sys.executable,
            __file__,
            "--memory-child",
            str(path),
            "--workers",
            str(workers),
            "--batch-size",
            str(batch_size),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def ranks(path: Path) -> dict:
    import graphlake as gl

    g = gl.Graph.open(path)

    def keys(rank: int, epoch: int) -> list[int]:
        ds = g.to_torch(
            "Sample", columns=["k"], batch_size=512, shuffle=42, rank=rank, world_size=2
        )
        ds.set_epoch(epoch)
        out = [k for b in ds for k in b["k"].tolist()]
        ds.close()
        return out

    r0, r1 = keys(0, 0), keys(1, 0)
    total = g.nodes("Sample", columns=["k"]).num_rows
    return {
        "exactly_once": sorted(r0 + r1) == list(range(total)),
        "same_order_same_seed": keys(0, 0) == r0,
        "other_order_other_epoch": keys(0, 1) != r0,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument(
        "--loop-rows",
        type=int,
        default=100_000,
        help="rows for the g.nodes() + Python loop baseline (it is slow)",
    )
    parser.add_argument("--memory-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.memory_child, args.workers, args.batch_size)
        return

    from _util import machine

    print(machine())
    tmp = Path(tempfile.mkdtemp(prefix="glreaders-"))
    try:
        big, small, loop = tmp / "big", tmp / "small", tmp / "loop"
        t0 = time.perf_counter()
        build(big, args.rows)
        build(small, args.rows // 10)
        build(loop, min(args.loop_rows, args.rows))
        print(
            f"built {args.rows:,} + {args.rows // 10:,} + {min(args.loop_rows, args.rows):,}"
            f" rows in {time.perf_counter() - t0:.1f} s"
        )

        results: dict[str, list[float]] = {}
        steady: dict[str, list[float]] = {}
        for kind in ("lance.torch", "graphlake", "lance.torch", "graphlake"):  # alternate
            rows, s = _epoch(
                loader_of(kind, big, args.workers, args.batch_size), steady.setdefault(kind, [])
            )
            assert rows == args.rows, (kind, rows)
            results.setdefault(kind, []).append(rows / s)
        in_process = []
        for _ in range(2):
            rows, s = _epoch(loader_of("graphlake", big, 0, args.batch_size))
            in_process.append(rows / s)
        ours, theirs = max(results["graphlake"]), max(results["lance.torch"])
        ours_steady, theirs_steady = max(steady["graphlake"]), max(steady["lance.torch"])
        loop_rows, loop_s = python_loop(loop, args.batch_size)
        baseline = loop_rows / loop_s
        print(
            f"to_torch:    {ours:12,.0f} rows/s per epoch, {ours_steady:,.0f} after the "
            f"first batch (best of 2, {args.workers} workers, batch {args.batch_size})"
        )
        print(
            f"lance.torch: {theirs:12,.0f} rows/s per epoch, {theirs_steady:,.0f} after the "
            f"first batch -> to_torch is {ours / theirs:.2f}x / "
            f"{ours_steady / theirs_steady:.2f}x (target >= 0.80)"
        )
        print(f"to_torch in process (0 workers): {max(in_process):,.0f} rows/s")
        print(
            f"nodes+loop:  {baseline:12,.0f} rows/s ({loop_rows:,} rows) -> to_torch is "
            f"{ours / baseline:.1f}x per epoch with {args.workers} workers, "
            f"{ours_steady / baseline:.1f}x after the first batch, "
            f"{max(in_process) / baseline:.1f}x in process (target >= 20)"
        )

        m_big = epoch_memory(big, args.workers, args.batch_size)
        m_small = epoch_memory(small, args.workers, args.batch_size)
        ratio = m_big["peak_pss_mib"] / m_small["peak_pss_mib"]
        print(
            f"peak PSS, loader + workers: {m_big['peak_pss_mib']:.0f} MiB for "
            f"{m_big['rows']:,} rows, {m_small['peak_pss_mib']:.0f} MiB for "
            f"{m_small['rows']:,} rows -> {ratio:.2f}x (target <= 1.5)"
        )
        print("ranks 0/2 and 1/2:", ranks(small))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
