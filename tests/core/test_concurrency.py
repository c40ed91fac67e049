"""Two processes writing one branch: nothing lost, no duplicate key, readers see snapshots."""

from __future__ import annotations

import multiprocessing as mp

import graphlake as gl


def _writer(uri: str, options, prefix: str, n: int, shared_key: str, out: mp.Queue) -> None:
    g = gl.Graph.open(uri, options)
    acked: list[str] = []
    shared = "lost"
    for i in range(n):
        with g.write(message=f"{prefix}{i}") as w:
            w.insert("Person", [{"name": f"{prefix}{i}", "age": i}])
        acked.append(f"{prefix}{i}")
    try:
        with g.write(message=f"{prefix}-shared") as w:
            w.insert("Person", [{"name": shared_key}])
        shared = "won"
    except gl.DuplicateKeyError:
        shared = "duplicate"
    out.put((prefix, acked, shared))


def test_two_processes_one_branch(graph: gl.Graph) -> None:
    ctx = mp.get_context("spawn")  # lance is not fork-safe
    q: mp.Queue = ctx.Queue()
    args = (graph.uri, graph.storage_options)
    n = 4 if graph.uri.startswith("s3://") else 12  # moto answers slowly
    procs = [ctx.Process(target=_writer, args=(*args, p, n, "both", q)) for p in "ab"]
    for p in procs:
        p.start()
    results = [q.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    ids = graph.nodes("Person", columns=["id"]).column("id").to_pylist()
    assert len(ids) == len(set(ids)), "duplicate keys"
    for _, acked, _ in results:
        assert set(acked) <= set(ids), "an acknowledged commit was lost"
    assert sorted(r[2] for r in results) == ["duplicate", "won"]
    assert len(ids) == 2 * n + 1
    # One commit per acknowledged write, all on one line of history.
    assert len(graph.log()) == 1 + 2 * n + 1


def test_reader_sees_one_snapshot(people: gl.Graph) -> None:
    snap = people.snapshot("main")
    with people.write() as w:
        w.insert("Person", [{"name": "New"}])
        w.delete("Knows", ["k1"])
    assert snap.read("Person").num_rows == 3
    assert snap.read("Knows").num_rows == 2
    assert people.snapshot("main").read("Person").num_rows == 4
