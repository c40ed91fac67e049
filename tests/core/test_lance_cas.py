"""Every Lance commit claims its version exclusively: racing writers never share one."""

from __future__ import annotations

import threading

import pyarrow as pa
import pytest

import graphlake as gl
from graphlake.storage.tables import LanceCasError


def test_a_claimed_version_refuses_the_commit(people: gl.Graph) -> None:
    g = people
    state = g.head().tables["Person"]
    lock = g.repo.tables.cas_lock(state.table_id, state.lance_branch)
    # Another writer claimed the next version first (and may be writing its manifest).
    assert lock._claim(state.version + 1)
    row = pa.Table.from_pylist(
        [{"id": "Zed", "name": "Zed", "age": None, "email": None, "role": None}],
        schema=g.repo.tables.open(state).schema,
    )
    with pytest.raises(LanceCasError):
        g.repo.tables.apply(state, None, False, row, ["id"])
    assert g.repo.tables.branch_head_version(state) == state.version
    # The graph write that meets the claim forks and still lands, exactly once.
    with g.write() as w:
        w.insert("Person", [{"name": "Zed"}])
    assert g.nodes("Person", where="id = 'Zed'").num_rows == 1


def test_threads_writing_one_branch_lose_nothing(graph: gl.Graph) -> None:
    errors: list[BaseException] = []
    n = 3 if graph.uri.startswith("s3://") else 6  # moto answers slowly

    def writer(prefix: str) -> None:
        try:
            for i in range(n):
                with graph.write(message=f"{prefix}{i}") as w:
                    w.insert("Person", [{"name": f"{prefix}{i}"}])
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(p,)) for p in "abc"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    ids = graph.nodes("Person", columns=["id"]).column("id").to_pylist()
    assert sorted(ids) == sorted(f"{p}{i}" for p in "abc" for i in range(n))
