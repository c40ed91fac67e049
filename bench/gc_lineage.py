"""What gc keeps for lineage, and what that buys: bytes on disk after gc, the fork-version
manifests kept, and the merges after gc (route and time).

    .venv/bin/python bench/gc_lineage.py                     # 100k rows, 8 branches
    .venv/bin/python bench/gc_lineage.py --rows 5000 --branches 3

Shape: a node table `Item` (`key`, `n`, `tag`) of N rows on main. B branches off main,
each with W small writes (an update, an insert, a delete each), every second one with a
nested branch off it with W more writes (and one more write on its parent); main moves
on by W writes. Then `gc(grace=0, reflog_keep=0)`, then each nested branch merges into
its parent and each branch into main. Printed: the graph's bytes before and after gc,
what gc removed, the fork-version manifests it kept (count, bytes), and per merge the
discovery route and its time. Run it with an older graphlake first on PYTHONPATH to
compare (before the fork versions were kept, every merge after gc took the walk:
`lineage+walk`, `history_cleaned`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import tempfile
import time
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _util import machine  # noqa: E402

SCHEMA = "node Item { key: String @key  n: I64  tag: String? }\n"


def _bytes(root: Path) -> int:
    return sum(f.stat().st_size for f in root.rglob("*") if f.is_file())


def _fork_manifests(g) -> tuple[int, int]:
    """Kept fork-version manifests of every Lance branch: (count, bytes)."""
    import lance

    count = size = 0
    for state in {s.table_id: s for s in g.head("main").tables.values()}.values():
        uri = Path(g.repo.tables.uri(state.table_id))
        ds = lance.dataset(str(uri))
        for name, info in ds.branches.list().items():
            fork = int(info["parent_version"])
            path = uri / "tree" / name / "_versions" / f"{2**64 - 1 - fork}.manifest"
            if path.exists():
                count += 1
                size += path.stat().st_size
    return count, size


def _pick(tag: str, i: int, rows: int) -> int:
    return zlib.crc32(f"{tag}:{i}".encode()) % rows


def _writes(g, branch: str, tag: str, w_count: int, rows: int) -> None:
    for i in range(w_count):
        with g.write(branch) as w:
            w.update("Item", [{"key": f"k{_pick(tag, i, rows):07d}", "tag": tag}])
            w.insert("Item", [{"key": f"{tag}-{i}", "n": i}])
            w.delete("Item", [f"k{_pick(tag + '-d', i, rows):07d}"])


def run(rows: int, branches: int, writes: int, root: Path) -> None:
    import pyarrow as pa

    import graphlake as gl

    g = gl.Graph.init(str(root), SCHEMA)
    g.load(
        pa.table(
            {"key": [f"k{i:07d}" for i in range(rows)], "n": pa.array(range(rows), pa.int64())}
        ),
        table="Item",
    )
    merges: list[tuple[str, str]] = []
    for b in range(branches):
        g.create_branch(f"b{b}")
        _writes(g, f"b{b}", f"b{b}", writes, rows)
        if b % 2 == 0:
            g.create_branch(f"b{b}/sub", from_=f"b{b}")
            _writes(g, f"b{b}/sub", f"b{b}s", writes, rows)
            _writes(g, f"b{b}", f"b{b}x", 1, rows)  # the parent moves on too
            merges.append((f"b{b}/sub", f"b{b}"))
        merges.append((f"b{b}", "main"))
    _writes(g, "main", "main", writes, rows)
    before = _bytes(root)
    report = g.gc(grace=dt.timedelta(0), reflog_keep=dt.timedelta(0))
    after = _bytes(root)
    kept, kept_bytes = _fork_manifests(g)
    print(
        f"{rows:,} rows, {branches} branches (+{(branches + 1) // 2} nested), {writes} writes each"
    )
    print(
        f"bytes before gc {before:,}, after {after:,}; gc removed {report.bytes:,} bytes "
        f"({report.versions} versions, {report.files} files)"
    )
    print(
        f"fork-version manifests present after gc: {kept} ({kept_bytes:,} bytes, "
        f"{100 * kept_bytes / max(after, 1):.3f}% of the graph)"
    )
    g = gl.Graph.open(str(root))
    for source, into in merges:
        start = time.perf_counter()
        r = g.merge(source, into=into, strategy="theirs")
        took = time.perf_counter() - start
        st = r.stats["Item"]
        print(
            f"  merge {source:>8} -> {into:<5} {r.outcome:<7} discovery={st.discovery:<13}"
            f" fallback={st.fallback!s:<16} rows_scanned={st.rows_scanned:>9,}"
            f" {took * 1000:7.1f} ms"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--branches", type=int, default=8)
    ap.add_argument("--writes", type=int, default=3)
    args = ap.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp:
        run(args.rows, args.branches, args.writes, Path(tmp) / "g")


if __name__ == "__main__":
    main()
