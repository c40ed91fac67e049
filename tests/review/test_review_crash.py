"""A request merge whose process dies mid-publication recovers like any merge: before the
ref moves, nothing is published and the request stays open (merging again publishes it
once); after the ref moved, the next merge of the request records the commit that
landed instead of merging again (the request's "merged" event was never written)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import graphlake as gl
from graphlake import faults

REPO = Path(__file__).resolve().parents[2]
SCHEMA = "node Person { name: String @key  age: I32? }"
MERGE = """
import sys
import graphlake as gl
gl.Graph.open(sys.argv[1]).reviews.merge(int(sys.argv[2]), by="merger")
"""


def _graph(root: Path) -> tuple[gl.Graph, int]:
    g = gl.Graph.init(root, SCHEMA)
    with g.write(message="seed") as w:
        w.insert("Person", [{"name": "a", "age": 1}, {"name": "b", "age": 2}])
    g.create_branch("dev")
    with g.write("dev", message="dev: b is 20, c joins") as w:
        w.update("Person", [{"name": "b", "age": 20}])
        w.insert("Person", [{"name": "c", "age": 3}])
    with g.write(message="main: a is 10") as w:  # a real three-way merge
        w.update("Person", [{"name": "a", "age": 10}])
    mr = g.reviews.open("dev", "main", "b and c", author="author")
    return g, mr.id


def _crash(root: Path, rid: int, point: str) -> None:
    env = {**os.environ, faults.ENV: point}
    done = subprocess.run(
        [sys.executable, "-c", MERGE, str(root), str(rid)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == faults.EXIT_CODE, done.stderr


def _ages(g: gl.Graph) -> dict[str, int]:
    return {r["name"]: r["age"] for r in g.nodes("Person").to_pylist()}


@pytest.mark.parametrize("point", ["merge.after_table_effect", "merge.before_ref_cas"])
def test_a_crash_before_the_ref_moves_publishes_nothing_and_the_request_stays_open(
    tmp_path: Path, point: str
) -> None:
    g, rid = _graph(tmp_path / "g")
    head = g.head().id
    _crash(tmp_path / "g", rid, point)
    g = gl.Graph.open(tmp_path / "g")  # recovery settles the crashed publication
    assert g.head().id == head and _ages(g) == {"a": 10, "b": 2}
    assert g.reviews.get(rid).state == "open"
    assert g.fsck().ok
    merged = g.reviews.merge(rid, by="merger")
    assert merged.state == "merged" and merged.merge_commit == g.head().id
    assert g.head().meta["merge_request"] == rid
    assert _ages(g) == {"a": 10, "b": 20, "c": 3}


def test_a_crash_after_the_ref_moved_is_recorded_by_the_next_merge_of_the_request(
    tmp_path: Path,
) -> None:
    g, rid = _graph(tmp_path / "g")
    _crash(tmp_path / "g", rid, "merge.after_ref_cas")
    g = gl.Graph.open(tmp_path / "g")
    landed = g.head()
    assert landed.meta["merge_request"] == rid and len(landed.parents) == 2
    assert _ages(g) == {"a": 10, "b": 20, "c": 3}
    assert g.reviews.get(rid).state == "open"  # its "merged" event was never written
    assert g.fsck().ok
    with g.write(message="main moves on") as w:  # the walk looks past later commits
        w.update("Person", [{"name": "a", "age": 11}])
    merged = g.reviews.merge(rid, by="merger")
    assert merged.state == "merged" and merged.merge_commit == landed.id
    assert merged.events[-1]["recovered"] is True
    assert g.head().parents[0] == landed.id  # no second merge commit
    assert _ages(g) == {"a": 11, "b": 20, "c": 3}
