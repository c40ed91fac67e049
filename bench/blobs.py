"""Blob reads benchmark: a scan of a table with one 64 KiB blob per row, lazy vs eager.

    .venv/bin/python bench/blobs.py                  # 2,000 rows (125 MiB of blobs)
    .venv/bin/python bench/blobs.py --rows 8000 --blob-kib 64

Side by side in one run, on one graph (`node Doc { k: I64 @key  label: I32  raw: Blob }`),
each read twice (the second is reported; each from a fresh graph object) as wall time and
bytes read (this process's `rchar` from /proc/self/io: every byte Lance pread from the
table files, page cache or not):

  * eager: `scan(["k", "raw"], blobs="bytes")`, every blob's bytes in every batch;
  * lazy:  `scan(["k", "raw"], blobs="lazy")` + `blob_refs`: handles only;
  * lazy + read 1% / all: the handles of 1% (every 100th row) or of every row resolved
    with `read_blobs`, one batch of handles (one Lance take) per scan batch;
  * Lance's own blob encoding (`lance.blob_field`, pylance 14) on a plain Lance dataset of
    the same rows: what DuckDB and a row rewrite (read rows, `merge_insert` them back) do
    with it, and a `read_blobs` of every row for comparison.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import load_average, machine

SCHEMA = "node Doc { k: I64 @key  label: I32  raw: Blob }"


def rchar() -> int:
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    return 0


def measure(fn: Callable[[], object]) -> tuple[float, int, object]:
    before, t0 = rchar(), time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, rchar() - before, out


def build(path: Path, rows: int, blob: int) -> object:
    import numpy as np
    import pyarrow as pa

    import graphlake as gl

    g = gl.Graph.init(path, SCHEMA)
    rng = np.random.default_rng(0)  # random bytes: Lance cannot compress them away
    chunk = 500
    for start in range(0, rows, chunk):
        keys = list(range(start, min(rows, start + chunk)))
        table = pa.table(
            {
                "id": pa.array([str(k) for k in keys]),
                "k": pa.array(keys, pa.int64()),
                "label": pa.array([k % 10 for k in keys], pa.int32()),
                "raw": pa.array([rng.bytes(blob) for _ in keys], pa.large_binary()),
            }
        )
        g.load(table, table="Doc", message=f"rows {start}..")
    return g


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--blob-kib", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=256)
    args = ap.parse_args()
    import graphlake as gl
    from graphlake.read import blobs as blob_module

    blob = args.blob_kib * 1024
    print(f"# {machine()}; load {load_average()}")
    print(f"# {args.rows} rows x {args.blob_kib} KiB blob = {args.rows * blob / 2**20:.0f} MiB")
    with tempfile.TemporaryDirectory(prefix="glblobs-") as tmp:
        g = build(Path(tmp) / "g", args.rows, blob)
        assert isinstance(g, gl.Graph)

        def fresh() -> object:  # a new Repo: no dataset cached from an earlier read
            blob_module._repos.clear()
            return gl.Graph.open(Path(tmp) / "g").snapshot()

        def eager() -> tuple[int, int]:
            rows = total = 0
            with fresh().scan("Doc", ["k", "raw"], blobs="bytes", batch_size=args.batch_size) as s:
                for b in s:
                    rows += b.num_rows
                    total += sum(len(x) for x in b.column("raw").to_pylist())
            return rows, total

        def lazy(every: int | None) -> tuple[int, int]:
            rows = total = 0
            with fresh().scan("Doc", ["k", "raw"], blobs="lazy", batch_size=args.batch_size) as s:
                for b in s:
                    refs = s.blob_refs(b, "raw")
                    rows += len(refs)
                    if every is not None:
                        total += sum(len(x or b"") for x in gl.read_blobs(refs[::every]))
            return rows, total

        runs = [
            ("eager: blobs='bytes'", eager),
            ("lazy: handles only", lambda: lazy(None)),
            ("lazy + read 1% (every 100th row)", lambda: lazy(100)),
            ("lazy + read all (read_blobs per batch)", lambda: lazy(1)),
        ]
        print(
            f"{'scan of k + raw':40} {'seconds':>8} {'blob MiB':>9} {'MiB read':>9} {'x eager':>8}"
        )
        base = None
        for name, fn in runs:
            measure(fn)  # once to warm caches, then the figure
            secs, nbytes, got = measure(fn)
            rows, payload = got  # type: ignore[misc]
            assert rows == args.rows and payload % blob == 0, (name, got)
            base = base or (secs, nbytes)
            print(
                f"{name:40} {secs:8.3f} {payload / 2**20:9.1f} {nbytes / 2**20:9.1f} "
                f"{secs / base[0]:7.3f}t {nbytes / base[1]:7.4f}b"
            )
        lance_blob_encoding(Path(tmp) / "blobenc.lance", args.rows, blob)


def lance_blob_encoding(path: Path, rows: int, blob: int) -> None:
    """Lance's blob encoding: can DuckDB read it, can a row rewrite write it back?"""
    import duckdb
    import lance
    import pyarrow as pa

    schema = pa.schema(
        [pa.field("id", pa.string()), pa.field("k", pa.int64()), lance.blob_field("raw")]
    )
    table = pa.table(
        {
            "id": [str(k) for k in range(rows)],
            "k": list(range(rows)),
            "raw": lance.blob_array([os.urandom(blob) for _ in range(rows)]),
        },
        schema=schema,
    )
    ds = lance.write_dataset(table, str(path), enable_stable_row_ids=True)
    print(f"\n# Lance blob encoding (lance.blob_field), storage version {ds.data_storage_version}")
    print(
        f"  scanned type of 'raw': {ds.to_table(columns=['raw'], limit=1).schema.field('raw').type}"
    )
    secs, nbytes, _ = measure(
        lambda: sum(len(b or b"") for _, b in ds.read_blobs("raw", indices=list(range(rows))))
    )
    print(f"  read_blobs of every row: {secs:.3f} s, {nbytes / 2**20:.1f} MiB read")
    con = duckdb.connect()
    con.register("Doc", ds)
    for sql in (
        "SELECT count(*), sum(k) FROM Doc",
        "SELECT k, raw FROM Doc LIMIT 1",
        "SELECT * FROM Doc LIMIT 1",
    ):
        try:
            con.sql(sql).fetchall()
            print(f"  DuckDB {sql!r}: ok")
        except duckdb.Error as exc:
            print(f"  DuckDB {sql!r}: {type(exc).__name__}: {str(exc).splitlines()[0][:150]}")
    rows_back = ds.to_table(filter="k < 2")
    try:
        ds.merge_insert("id").when_matched_update_all().execute(rows_back)
        print("  row rewrite (rows read back through merge_insert): ok")
    except (OSError, ValueError) as exc:
        print(
            f"  row rewrite (rows read back through merge_insert): {str(exc).splitlines()[0][:150]}"
        )
    files = sorted({p.suffix for p in path.rglob("*") if p.is_file() and "data" in p.parts})
    print(f"  file kinds under data/: {files}")


if __name__ == "__main__":
    main()
