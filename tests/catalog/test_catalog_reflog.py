"""Reset and the reflog: every ref move is recorded (who, when, old -> new, by what), a
reset moves a branch anywhere and can itself be undone, entries survive concurrent
writers, and gc keeps what the reflog reached within `reflog_keep`."""

from __future__ import annotations

import datetime as dt
import itertools
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import graphlake as gl
from graphlake.errors import BranchNotFoundError, UnknownRevisionError

SCHEMA = "node Person { name: String @key\n age: I32? }\n"


@pytest.fixture
def g(tmp_path: Path) -> gl.Graph:
    graph = gl.Graph.init(tmp_path / "g", SCHEMA, author="Init")
    with graph.write(author="W") as w:
        w.insert("Person", [{"name": "a", "age": 1}])
    return graph


def test_every_move_is_in_the_reflog(g: gl.Graph) -> None:
    g.create_branch("dev")
    with g.write("dev", author="D") as w:
        w.update("Person", [{"name": "a", "age": 2}])
    g.merge("dev", author="M")  # a fast-forward
    with g.write(author="W2") as w:
        w.update("Person", [{"name": "a", "age": 3}])
    g.revert("main", author="R")
    g.reset_branch("main", "main~2", author="Reset")
    log = g.reflog("main")
    assert [(e.action, e.author) for e in log] == [
        ("reset", "Reset"),
        ("revert", "R"),
        ("write", "W2"),
        ("merge (fast-forward)", "M"),
        ("write", "W"),
        ("create", "Init"),
    ]
    assert all(e.old == older.new for e, older in itertools.pairwise(log))
    assert log[-1].old is None and log[0].new == g.head().id
    assert [e.action for e in g.reflog("main", limit=2)] == ["reset", "revert"]
    g.delete_branch("dev")
    assert [e.action for e in g.reflog("dev")] == ["delete", "write", "create"]


def test_a_reset_moves_anywhere_and_can_be_undone(g: gl.Graph) -> None:
    before = g.head().id
    with g.write() as w:
        w.update("Person", [{"name": "a", "age": 9}])
    bad = g.head().id
    g.reset_branch("main", before)
    assert g.get("Person", "a")["age"] == 1
    with g.write() as w:  # writing after a reset forks away from the abandoned versions
        w.update("Person", [{"name": "a", "age": 5}])
    assert g.get("Person", "a")["age"] == 5
    assert g.get("Person", "a", branch=bad)["age"] == 9
    g.reset_branch("main", g.reflog("main")[2].new)  # undo the reset: back to `bad`
    assert g.head().id == bad and g.get("Person", "a")["age"] == 9


def test_reset_errors_change_nothing(g: gl.Graph) -> None:
    head = g.head().id
    with pytest.raises(BranchNotFoundError):
        g.reset_branch("nope", "main")
    with pytest.raises(UnknownRevisionError):
        g.reset_branch("main", "nope")
    with pytest.raises(BranchNotFoundError):
        g.reflog("never")
    assert g.head().id == head and len(g.reflog("main")) == 2


def test_concurrent_writers_lose_no_entry(g: gl.Graph) -> None:
    def write(i: int) -> None:
        g.transact(lambda w: w.upsert("Person", [{"name": f"p{i}", "age": i}]), author=f"w{i}")

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(write, range(8)))
    authors = [e.author for e in g.reflog("main")[:8]]
    assert sorted(authors) == sorted(f"w{i}" for i in range(8))


def test_gc_keeps_what_the_reflog_reaches(g: gl.Graph) -> None:
    with g.write() as w:
        w.update("Person", [{"name": "a", "age": 7}])
    abandoned = g.head().id
    g.reset_branch("main", "main~1")
    g.gc(grace=dt.timedelta(0))
    assert gl.Graph.open(g.uri).get("Person", "a", branch=abandoned)["age"] == 7
    g.gc(grace=dt.timedelta(0), reflog_keep=dt.timedelta(0))
    assert not gl.Graph.open(g.uri).repo.commits.exists(abandoned)
    assert not g.fsck().problems


CRASHING_REVERT = """
import sys
import graphlake as gl
gl.Graph.open(sys.argv[1]).revert("main", author="crasher")
"""


@pytest.mark.parametrize(
    "point", ["merge.after_table_effect", "merge.before_ref_cas", "merge.after_ref_cas"]
)
def test_tags_and_the_reflog_survive_a_crash_and_gc(tmp_path: Path, point: str) -> None:
    import os
    import subprocess
    import sys

    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    with g.write() as w:
        w.insert("Person", [{"name": "a", "age": 1}])
    g.tag("v1")
    g.create_branch("gone")
    with g.write("gone") as w:
        w.insert("Person", [{"name": "b"}])
    g.delete_branch("gone")
    env = {**os.environ, "GRAPHLAKE_FAULT": point}
    done = subprocess.run(
        [sys.executable, "-c", CRASHING_REVERT, str(tmp_path / "g")],
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 86, done.stderr
    fresh = gl.Graph.open(g.uri)  # recovers the crashed publication
    fresh.gc(grace=dt.timedelta(0))
    fresh = gl.Graph.open(g.uri)
    assert fresh.resolve("v1").id == g.tags()["v1"].commit
    for branch in ("main", "gone"):
        for entry in fresh.reflog(branch):
            for cid in (entry.old, entry.new):
                assert cid is None or fresh.repo.commits.exists(cid)
    assert fresh.reflog("main")[0].new == fresh.head().id
    assert fresh.get("Person", "b", branch=fresh.reflog("gone")[0].old) is not None
    assert not fresh.fsck().problems
