"""Read-lease cost: what the gc handshake adds to taking a lease, side by side in one run.

    .venv/bin/python bench/lease_cost.py                # 300 rounds on a local folder
    .venv/bin/python bench/lease_cost.py --rounds 1000 --notices 1

Since leases joined gc's sweep handshake (catalog/leases.py), a reader that created its
lease object also lists gc's notices and checks its commit object exists
(`ReadLeases.check_kept`). Measured here, per read, in microseconds, alternating the two
variants round by round so both see the same machine load:

  * `lease, old`: create the lease object, start its renewal thread, release it (the
    check switched off: the code as it was);
  * `lease, new`: the same with the check (one listing of `_graphlake/reclaim/sweeps`,
    one existence check of the commit object);
  * `check alone`: `check_kept` by itself;
  * `scan, old` / `scan, new`: a whole `snapshot.scan(...)` of a small table, read to the
    end and closed: what a reader pays per read, lease included.

`--notices N` leaves N notices of a killed gc (naming other commits) in the folder: the
check reads each (usually there are none).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import load_average, machine, median, percentile, render_table

SCHEMA = "node Person { name: String @key\n age: I32? }\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--notices", type=int, default=0)
    args = ap.parse_args()

    import graphlake as gl
    from graphlake.catalog.leases import Lease, ReadLeases
    from graphlake.catalog.reclaim import Sweeps

    with tempfile.TemporaryDirectory(prefix="gl-lease-bench-") as tmp:
        g = gl.Graph.init(Path(tmp) / "g", SCHEMA)
        with g.write(message="rows") as w:
            w.insert("Person", [{"name": f"p{i}", "age": i} for i in range(args.rows)])
        commit = g.head().id
        store = g.repo.store
        for i in range(args.notices):
            Sweeps(store).announce([f"{i:040x}"])
        leases = ReadLeases(store)
        real_check = ReadLeases.check_kept

        def old(fn: Callable[[], None]) -> Callable[[], None]:
            def run() -> None:
                ReadLeases.check_kept = lambda self, commit_id: None  # type: ignore[method-assign]
                try:
                    fn()
                finally:
                    ReadLeases.check_kept = real_check  # type: ignore[method-assign]

            return run

        def lease() -> None:
            Lease(leases, commit, 120.0).release()

        def scan() -> None:
            with g.snapshot("main").scan("Person") as s:
                assert s.to_table().num_rows == args.rows

        cases: dict[str, Callable[[], None]] = {
            "lease, old": old(lease),
            "lease, new": lease,
            "check alone": lambda: leases.check_kept(commit),
            "scan, old": old(scan),
            "scan, new": scan,
        }
        for fn in cases.values():  # warm up: imports, first DuckDB/Lance calls
            for _ in range(5):
                fn()
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.rounds):
            for name, fn in cases.items():
                t0 = time.perf_counter()
                fn()
                times[name].append((time.perf_counter() - t0) * 1e6)

    print(f"machine: {machine()}; load average {load_average()}")
    print(f"rounds {args.rounds}, table rows {args.rows}, notices {args.notices}; local folder")
    rows = [
        [
            name,
            f"{median(ts):.0f}",
            f"{percentile(ts, 90):.0f}",
            f"{median(ts) - median(times[name.split(',')[0] + ', old']):+.0f}"
            if name.endswith("new")
            else "",
        ]
        for name, ts in times.items()
    ]
    print(render_table(["per read (us)", "median", "p90", "new - old"], rows))


if __name__ == "__main__":
    main()
