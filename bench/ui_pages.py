"""Web UI page times on a big graph: every page is paged, none reads a whole table.

    .venv/bin/python bench/ui_pages.py                  # 1M Person rows + 1M Knows edges
    .venv/bin/python bench/ui_pages.py --rows 100000    # seconds

Builds the graph (untimed): Persons and Knows edges loaded from Arrow, then branch `dev`
updates 100 Persons and adds 10 with edges while `main` updates one of the same Persons
(a conflict). Serves it with `graphlake serve` on 127.0.0.1 and times each page with a
logged-in HTTP client: the first request (cold: e.g. history computes and caches the
row counts of its commits) and the median of --runs more (wall seconds), with the
page's size. Target (issue 17): pages load fast on a 1M-row graph.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _util import load_average, machine  # noqa: E402
from tests.server.harness import Server  # noqa: E402
from tests.ui.harness import SCHEMA, WRITE_TOKEN, config_text  # noqa: E402


def build(root: Path, n: int) -> str:
    """The graph; returns the id of the bulk-load commit of the Persons."""
    import pyarrow as pa

    import graphlake as gl

    g = gl.Graph.init(root, SCHEMA)
    names = [f"p{i:07d}" for i in range(n)]
    persons = pa.table(
        {
            "name": names,
            "age": pa.array([i % 90 for i in range(n)], pa.int32()),
            "city": [("Oslo", "Rome", "Paris", "Lima")[i % 4] for i in range(n)],
        }
    )
    loaded = g.load(persons, table="Person", message=f"load {n} persons")
    edges = pa.table(
        {
            "id": [f"k{i}" for i in range(n)],
            "src": names,
            "dst": names[1:] + names[:1],
            "since": pa.array([2000 + i % 25 for i in range(n)], pa.int32()),
        }
    )
    g.load(edges, table="Knows", message=f"load {n} edges")
    g.create_branch("dev", from_="main")
    with g.write("dev", message="dev: 100 birthdays, 10 newcomers") as w:
        w.update("Person", [{"name": names[i], "age": 91} for i in range(0, n, n // 100)])
        new = [f"new{i}" for i in range(10)]
        w.insert("Person", [{"name": x, "age": 20} for x in new])
        w.insert("Knows", [{"id": f"kn{i}", "src": x, "dst": names[0]} for i, x in enumerate(new)])
    with g.write("main", message="main: one birthday") as w:
        w.update("Person", [{"name": names[0], "age": 92}])
    return loaded.id


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    import httpx

    with tempfile.TemporaryDirectory(prefix="graphlake-ui-bench-") as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        load_commit = build(work / "graph", args.rows)
        print(
            f"built {args.rows:,} persons + {args.rows:,} edges in "
            f"{time.perf_counter() - t0:.1f} s; {machine()}"
        )
        (work / "server.toml").write_text(config_text())
        server = Server(work / "graph", work, ["--config", str(work / "server.toml")]).start()
        try:
            with httpx.Client(base_url=server.url, follow_redirects=True, timeout=600) as c:
                form = c.get("/ui/login").text
                csrf = re.search(r'name="csrf" value="([^"]+)"', form).group(1)  # type: ignore[union-attr]
                c.post("/ui/login", data={"csrf": csrf, "token": WRITE_TOKEN})
                browse = c.get("/ui/browse?table=Person").text
                cursor = re.search(r'cursor=([^"&]+)', browse).group(1)  # type: ignore[union-attr]
                pages = [
                    "/ui/branches",
                    "/ui/history?ref=main",
                    "/ui/history?ref=dev",
                    f"/ui/commit/{load_commit}",
                    "/ui/diff?a=main...dev",
                    "/ui/merge?source=dev&into=main",
                    "/ui/browse?table=Person",
                    f"/ui/browse?table=Person&cursor={cursor}",
                    "/ui/browse?table=Person&where=age%20%3E%2089&columns=id,age",
                    "/ui/browse?table=Knows",
                    "/ui/node?table=Person&id=p0000000",
                    "/ui/ingest",
                ]
                print(f"{'page':58} {'first s':>8} {'median s':>9} {'KiB':>6}")
                for url in pages:
                    start = time.perf_counter()
                    r = c.get(url)
                    first = time.perf_counter() - start
                    assert r.status_code == 200, (url, r.status_code, r.text[:500])
                    times = []
                    for _ in range(args.runs):
                        start = time.perf_counter()
                        c.get(url)
                        times.append(time.perf_counter() - start)
                    shown = url if len(url) <= 58 else url[:55] + "..."
                    print(
                        f"{shown:58} {first:8.3f} {statistics.median(times):9.3f} "
                        f"{len(r.content) / 1024:6.1f}"
                    )
        finally:
            server.stop()
    print(f"load average {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
