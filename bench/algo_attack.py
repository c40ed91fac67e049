"""Graph algorithms against a running server's hard limits: peak RSS under attack.

    .venv/bin/python bench/algo_attack.py                     # 200k nodes / 2M edges
    .venv/bin/python bench/algo_attack.py --nodes 20000 --edges 200000 --root /tmp/g

Builds (or reuses, with `--root`) a graph of one node type and one edge type with a
float weight (uniform random endpoints), starts a real `graphlake serve` on 127.0.0.1
with the default `[limits]` (or `--reads`, `--query-mb`, `--adjacency-mb`, `--timeout`),
warms its query workers, then sends requests meant to blow memory or time: Louvain,
PageRank, Leiden, components, k-core and weighted shortest paths on the whole graph with
extreme parameters, more concurrent `/algo` calls than there are read slots, Cypher
`CALL`s that yield every node. For each: the HTTP status and error type, its seconds,
the peak RSS of the server's whole process tree (the server and its query workers,
sampled every 20 ms from /proc), the largest worker's peak RSS and thread count, and
whether `/health` answers after it. The documented bound (docs/server.md) is printed
next to them: the idle tree + max_concurrent_reads x (query_memory_mb +
adjacency_memory_mb) + algo_cache_mb + sql_max_result_bytes per read slot.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import load_average, machine, render_table

TOKEN = "bench-attack-token-0123456789"
PAGE = os.sysconf("SC_PAGE_SIZE")
SCHEMA = """
node Person { name: String @key }
edge Knows: Person -> Person { w: F64 }
"""


# --- the graph


def build(root: Path, nodes: int, edges: int, seed: int = 11) -> float:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    import graphlake as gl

    def keys(prefix: str, ints: Any, width: int) -> pa.Array:
        digits = pc.utf8_lpad(pc.cast(pa.array(ints), pa.string()), width, "0")
        return pc.binary_join_element_wise(pa.scalar(prefix), digits, "")

    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    g = gl.Graph.init(str(root), SCHEMA)
    g.load(pa.table({"name": keys("p", np.arange(nodes), 7)}), table="Person", message="people")
    knows = pa.table(
        {
            "id": keys("k", np.arange(edges), 8),
            "src": keys("p", rng.integers(0, nodes, edges), 7),
            "dst": keys("p", rng.integers(0, nodes, edges), 7),
            "w": pa.array(rng.random(edges) * 10),
        }
    )
    g.load(knows, table="Knows", message="knows")
    return time.perf_counter() - started


# --- the process tree


def _children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    return out


def tree(pid: int) -> list[int]:
    children, todo, out = _children(), [pid], []
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def rss(pid: int) -> int:
    with contextlib.suppress(OSError, IndexError, ValueError):
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    return 0


def threads(pid: int) -> int:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return 0


class Sampler:
    """Peaks of the tree's RSS, the server's, one worker's RSS and one worker's threads
    (all of its threads: Lance's and DuckDB's pools too), every 20 ms."""

    def __init__(self, pid: int):
        self.pid = pid
        self.tree_peak = self.server_peak = self.worker_peak = self.worker_threads = 0
        self._stop = threading.Event()

    def __enter__(self) -> Sampler:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            pids = tree(self.pid)
            sizes = [rss(p) for p in pids]
            self.tree_peak = max(self.tree_peak, sum(sizes))
            self.server_peak = max(self.server_peak, sizes[0])
            workers = pids[1:]
            if workers:
                self.worker_peak = max(self.worker_peak, max(sizes[1:]))
                self.worker_threads = max(self.worker_threads, *(threads(p) for p in workers))
            self._stop.wait(0.02)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


# --- the server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(root: Path, folder: Path, limits: dict[str, Any]) -> tuple[subprocess.Popen, str]:
    config = folder / "server.toml"
    lines = ["[[tokens]]", f'token = "{TOKEN}"', 'scope = "read"', "", "[limits]"]
    lines += [f"{k} = {v}" for k, v in limits.items()]
    config.write_text("\n".join(lines) + "\n")
    port = free_port()
    log = (folder / "server.log").open("ab")
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "graphlake.cli.app", "serve", str(root)),
            *("--host", "127.0.0.1", "--port", str(port)),
            *("--config", str(config), "--log-level", "warning"),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    import httpx

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return proc, url
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"the server did not start; see {folder / 'server.log'}")


def warm(proc: subprocess.Popen, client: Any, reads: int) -> None:
    """Every query worker started and ready (idle), so the baseline holds all of them."""

    def one() -> None:
        client.post("/branches/main/sql", json={"query": "SELECT 1 AS x"})

    for _ in range(3):
        ts = [threading.Thread(target=one) for _ in range(reads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    deadline = time.monotonic() + 120
    while len(tree(proc.pid)) < reads + 1 and time.monotonic() < deadline:
        time.sleep(0.5)
    time.sleep(1.0)


# --- the attacks


def algo(name: str, **params: Any) -> tuple[str, dict]:
    return f"/branches/main/algo/{name}", {"edge_type": "Knows", "params": params}


def cypher(text: str) -> tuple[str, dict]:
    return "/branches/main/query", {"query": text}


Request = tuple[str, dict]  # path, body
ATTACKS: list[tuple[str, list[Request]]] = [  # label, the requests sent at once
    ("pagerank", [algo("pagerank")]),
    ("pagerank damping 0.999999", [algo("pagerank", damping=0.999999)]),
    ("pagerank max_iterations 1e12", [algo("pagerank", max_iterations=10**12)]),
    ("pagerank max_memory_mb 1e6", [algo("pagerank", max_memory_mb=10**6)]),
    ("wcc", [algo("wcc")]),
    ("scc", [algo("scc")]),
    ("kcore", [algo("kcore")]),
    ("shortest_paths weighted", [algo("shortest_paths", source="p0000001", weight="w")]),
    ("louvain", [algo("louvain")]),
    ("louvain threads 2", [algo("louvain", threads=2)]),
    ("louvain threads 1024", [algo("louvain", threads=1024)]),
    ("louvain resolution 1e-9", [algo("louvain", resolution=1e-9)]),
    ("louvain resolution 1e9", [algo("louvain", resolution=1e9)]),
    ("leiden iterations 1000", [algo("leiden", iterations=1000)]),
    ("louvain x8 concurrent", [algo("louvain", resolution=0.5)] * 8),
    (
        "pagerank x4 concurrent",  # distinct parameters: none is a kept answer
        [algo("pagerank", damping=d) for d in (0.5, 0.6, 0.7, 0.8)],
    ),
    (
        "mixed x6 concurrent",
        [
            algo("kcore"),
            algo("scc"),
            algo("shortest_paths", source="p0000002", weight="w"),
            algo("leiden", iterations=3),
            cypher("CALL louvain('Knows') YIELD node, community RETURN count(*)"),
            algo("pagerank", damping=0.9),
        ],
    ),
    (
        "CALL pagerank YIELD all",
        [cypher("CALL pagerank('Knows') YIELD node, rank RETURN node, rank")],
    ),
    ("CALL louvain threads 1024", [cypher("CALL louvain('Knows', {threads: 1024})")]),
    (
        "CALL twice + YIELD all",
        [
            cypher(
                "CALL pagerank('Knows') YIELD node AS a, rank CALL wcc('Knows') YIELD node AS "
                "b, component WHERE a = b RETURN a.name, rank, component"
            )
        ],
    ),
    ("CALL leiden iterations 1000", [cypher("CALL leiden('Knows', {iterations: 1000})")]),
]

BIG_ANSWERS: list[tuple[str, list[Request]]] = [
    ("pagerank x4 concurrent", [algo("pagerank", damping=d) for d in (0.5, 0.6, 0.7, 0.8)]),
    (
        "wcc + pagerank x4 concurrent",
        [algo("wcc")] + [algo("pagerank", damping=d) for d in (0.55, 0.65, 0.75)],
    ),
    ("CALL wcc YIELD all", [cypher("CALL wcc('Knows') YIELD node, component RETURN count(*)")]),
]


def attack(url: str, pid: int, label: str, requests: list[Request]) -> dict[str, Any]:
    import httpx

    answers: list[tuple[int, str, float]] = []
    lock = threading.Lock()

    def one(path: str, body: dict) -> None:
        started = time.monotonic()
        with httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120
        ) as c:
            try:
                r = c.post(path, json=body)
                kind = "" if r.status_code == 200 else r.json().get("error", {}).get("type", "?")
                message = "" if r.status_code == 200 else r.json()["error"]["message"]
                status = r.status_code
            except httpx.TransportError as exc:
                status, kind, message = 0, type(exc).__name__, str(exc)
        with lock:
            answers.append(
                (status, f"{kind}: {message[:90]}" if kind else "", time.monotonic() - started)
            )

    with Sampler(pid) as sampler:
        ts = [threading.Thread(target=one, args=r) for r in requests]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    health = httpx.get(f"{url}/health", timeout=5).status_code
    statuses = sorted(a[0] for a in answers)
    errors = sorted({a[1] for a in answers if a[1]})
    return {
        "attack": label,
        "statuses": statuses,
        "errors": errors,
        "seconds": max(a[2] for a in answers),
        "tree_peak_mb": sampler.tree_peak / 2**20,
        "server_peak_mb": sampler.server_peak / 2**20,
        "worker_peak_mb": sampler.worker_peak / 2**20,
        "worker_threads": sampler.worker_threads,
        "health": health,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=200_000)
    p.add_argument("--edges", type=int, default=2_000_000)
    p.add_argument("--root", type=Path, help="the graph (built there when absent)")
    p.add_argument("--reads", type=int, default=4, help="max_concurrent_reads")
    p.add_argument("--query-mb", type=int, default=512, help="query_memory_mb")
    p.add_argument("--adjacency-mb", type=int, default=512, help="adjacency_memory_mb")
    p.add_argument("--timeout", type=float, default=10.0, help="sql_timeout_s")
    p.add_argument("--only", help="comma-separated attack labels (substring match)")
    p.add_argument(
        "--big-answers",
        action="store_true",
        help="only the attacks on answer size: x4 concurrent pagerank / wcc with distinct "
        "parameters (use a graph of many nodes, e.g. --nodes 1600000 --edges 1600000)",
    )
    p.add_argument("--json", action="store_true", help="also print the figures as JSON")
    args = p.parse_args(argv)

    import httpx

    folder = Path(tempfile.mkdtemp(prefix="graphlake-algo-attack-"))
    root = args.root or folder / "graph"
    if not (root / "_graphlake").exists():
        took = build(root, args.nodes, args.edges)
        print(f"built {args.nodes:,} nodes / {args.edges:,} edges in {took:.1f} s at {root}")
    limits = {
        "max_concurrent_reads": args.reads,
        "query_memory_mb": args.query_mb,
        "adjacency_memory_mb": args.adjacency_mb,
        "sql_timeout_s": args.timeout,
    }
    proc, url = start_server(root, folder, limits)
    results: list[dict[str, Any]] = []
    try:
        client = httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60
        )
        warm(proc, client, args.reads)
        idle = [rss(p) / 2**20 for p in tree(proc.pid)]
        base = sum(idle) * 2**20
        ready_workers = len(idle) - 1
        print(
            f"idle: server {idle[0]:.0f} MB, workers {', '.join(f'{w:.0f}' for w in idle[1:])} MB"
        )
        cache_mb, result_mb = 128, 32  # the defaults: algo_cache_mb, sql_max_result_bytes
        bound = base / 2**20 + args.reads * (args.query_mb + args.adjacency_mb)
        bound += cache_mb + args.reads * result_mb
        chosen = BIG_ANSWERS if args.big_answers else ATTACKS
        if args.only:
            wanted = args.only.split(",")
            chosen = [a for a in ATTACKS if any(w in a[0] for w in wanted)]
        for label, requests in chosen:
            # a worker killed by the attack before is replaced in the background
            warm(proc, client, 1)
            results.append(attack(url, proc.pid, label, requests))
            r = results[-1]
            print(
                f"  {label}: {r['statuses']} {r['seconds']:.1f} s tree {r['tree_peak_mb']:.0f} MB "
                f"{'; '.join(r['errors'])[:160]}",
                flush=True,
            )
        alive = proc.poll() is None and client.get("/health").status_code == 200
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(15)
        if proc.poll() is None:
            proc.kill()
    print()
    print(f"machine: {machine()}; load {load_average()} (1-min) at the end")
    print(
        f"graph: {args.nodes:,} nodes / {args.edges:,} edges; limits {json.dumps(limits)}; "
        f"idle tree (server + {ready_workers} ready workers) {base / 2**20:.0f} MB; "
        f"documented bound {bound:.0f} MB"
    )
    rows = [
        [
            r["attack"],
            ",".join(str(s) for s in r["statuses"]),
            f"{r['seconds']:.1f}",
            f"{r['tree_peak_mb']:.0f}",
            f"{r['server_peak_mb']:.0f}",
            f"{r['worker_peak_mb']:.0f}",
            str(r["worker_threads"]),
            "ok" if r["health"] == 200 else str(r["health"]),
            "; ".join(r["errors"])[:110],
        ]
        for r in results
    ]
    header = ["attack", "status", "s", "tree MB", "server MB", "worker MB", "thr", "health"]
    header.append("error")
    print(render_table(header, rows))
    worst = max(r["tree_peak_mb"] for r in results) if results else 0
    print(f"peak tree RSS {worst:.0f} MB of the bound {bound:.0f} MB; server alive after: {alive}")
    if args.json:
        print(json.dumps({"bound_mb": bound, "base_mb": base / 2**20, "results": results}))
    return 0 if alive and worst < bound else 1


if __name__ == "__main__":
    raise SystemExit(main())
