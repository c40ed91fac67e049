"""Read-modify-write: reads through the transaction are re-checked at publish, so an
update computed from a stale read is refused (never silently overwrites), and
`Graph.transact` retries it on fresh reads until every increment lands."""

from __future__ import annotations

import multiprocessing as mp
import threading

import pytest

import graphlake as gl
from graphlake.write.transaction import Transaction
from tests.conftest import reopen


def test_a_stale_read_refuses_to_publish(people: gl.Graph) -> None:
    w = people.write()
    age = w.get("Person", "Bob")["age"]
    with people.write() as other:  # another writer changes Bob after our read
        other.update("Person", [{"name": "Bob", "age": 50}])
    w.update("Person", [{"name": "Bob", "age": age + 1}])
    head = people.head().id
    with pytest.raises(gl.StaleReadError, match="'Bob' changed"):
        w.commit_now()
    assert people.head().id == head
    assert people.get("Person", "Bob")["age"] == 50


def test_changes_to_other_rows_do_not_conflict(people: gl.Graph) -> None:
    w = people.write()
    age = w.get("Person", "Bob")["age"]
    with people.write() as other:
        other.update("Person", [{"name": "Carol", "age": 7}])
        other.insert("Person", [{"name": "Dan"}])
    w.update("Person", [{"name": "Bob", "age": age + 1}])
    w.commit_now()
    assert people.get("Person", "Bob")["age"] == 41
    assert people.get("Person", "Carol")["age"] == 7


def test_reads_are_pinned_to_the_first_read(people: gl.Graph) -> None:
    w = people.write()
    assert w.get("Person", "Dan") is None  # absent is read too
    with people.write() as other:
        other.insert("Person", [{"name": "Dan"}])
    assert w.get("Person", "Dan") is None  # same snapshot
    w.insert("Person", [{"name": "Eve"}])
    with pytest.raises(gl.StaleReadError):
        w.commit_now()
    assert people.get("Person", "Eve") is None


def test_expect_head(people: gl.Graph) -> None:
    head = people.head().id
    with people.write(expect_head=head) as w:
        w.insert("Person", [{"name": "Dan"}])
    with pytest.raises(gl.StaleReadError, match="moved"), people.write(expect_head=head) as w:
        w.insert("Person", [{"name": "Eve"}])
    assert people.get("Person", "Eve") is None
    with pytest.raises(gl.CommitNotFoundError):
        people.write(expect_head="0" * 40)


def _increment(w: Transaction) -> int:
    n = w.get("Person", "Bob")["age"] + 1
    w.update("Person", [{"name": "Bob", "age": n}])
    return n


def test_transact_never_loses_an_increment_across_threads(people: gl.Graph) -> None:
    errors: list[BaseException] = []

    def worker() -> None:
        g = reopen(people)
        try:
            for _ in range(5):
                g.transact(_increment, attempts=50)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert people.get("Person", "Bob")["age"] == 40 + 15


def _process_increments(uri: str, options, n: int) -> None:
    g = gl.Graph.open(uri, options)
    for _ in range(n):
        g.transact(_increment, attempts=100)


def test_transact_never_loses_an_increment_across_processes(people: gl.Graph) -> None:
    if people.uri.startswith("s3://"):
        pytest.skip("covered locally; moto is slow")
    ctx = mp.get_context("spawn")
    procs = [
        ctx.Process(target=_process_increments, args=(people.uri, people.storage_options, 6))
        for _ in range(2)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
        assert p.exitcode == 0
    assert people.get("Person", "Bob")["age"] == 40 + 12
