"""A tag, reset or branch create naming a commit a running gc is about to remove.

The commits in question, `parent` and `tip`, were written on a branch since deleted and
are older than gc's cutoff, so nothing reaches them (`reflog_keep=0`): gc removes them
unless the handshake of catalog/reclaim.py makes it keep them. Each test interleaves
the ref write with gc at one of their fault points, in one process and one thread:
`faults.hit` is wrapped to run the other side at the chosen point, so the order is
exact, not a matter of timing. Either the ref lands and gc keeps `tip` and its history
(rows readable, `fsck --deep` clean), or the ref write is refused with
`CommitNotFoundError` and nothing names `tip`: never a ref to a removed commit.
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from typing import Any

import pytest

import graphlake as gl
from graphlake import faults
from graphlake.catalog.reclaim import PINS_DIR, SWEEPS_DIR
from graphlake.errors import CommitNotFoundError
from tests.conftest import fault_at as at

ZERO = dt.timedelta(0)
SCHEMA = "node Person { name: String @key\n age: I32? }\n"
OPS = ("tag", "reset", "branch")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """main with one commit; `parent` -> `tip` on a deleted branch: (root, parent, tip)."""
    root = tmp_path_factory.mktemp("gc-race") / "g"
    g = gl.Graph.init(root, SCHEMA)
    with g.write(message="main") as w:
        w.insert("Person", [{"name": "a", "age": 1}])
    g.create_branch("side")
    with g.write("side", message="parent") as w:
        w.insert("Person", [{"name": "p", "age": 2}])
    with g.write("side", message="tip") as w:
        w.update("Person", [{"name": "a", "age": 3}])
    tip = g.head("side")
    g.delete_branch("side")
    return root, tip.parents[0], tip.id


@pytest.fixture
def graph(template: tuple[Path, str, str], tmp_path: Path) -> tuple[gl.Graph, str, str]:
    root, parent, tip = template
    shutil.copytree(root, tmp_path / "g")
    return gl.Graph.open(tmp_path / "g"), parent, tip


def name_commit(g: gl.Graph, op: str, commit: str) -> None:
    if op == "tag":
        g.tag("late", commit)
    elif op == "reset":
        g.reset_branch("main", commit)
    else:
        g.create_branch("late", commit)


def named(g: gl.Graph, op: str) -> str | None:
    """The commit the op's ref names now (None: it made none)."""
    if op == "tag":
        tag = g.tags().get("late")
        return tag.commit if tag else None
    if op == "reset":
        return g.head("main").id
    return g.head("late").id if "late" in g.branches() else None


def gc(g: gl.Graph) -> Any:
    return g.gc(grace=ZERO, reflog_keep=ZERO)


def kept(g: gl.Graph, parent: str, tip: str) -> None:
    fresh = gl.Graph.open(g.uri)
    assert fresh.repo.store.exists(fresh.repo.commits.key(parent))
    assert fresh.repo.store.exists(fresh.repo.commits.key(tip))
    rows = fresh.snapshot(tip).read("Person").to_pylist()
    assert sorted((r["name"], r["age"]) for r in rows) == [("a", 3), ("p", 2)]
    assert not fresh.fsck(deep=True).problems


def settled(g: gl.Graph) -> None:
    """No pin and no notice left behind."""
    assert g.repo.store.list(PINS_DIR) == []
    assert g.repo.store.list(SWEEPS_DIR) == []


def test_unreached_commits_go_when_nothing_names_them(graph: tuple[gl.Graph, str, str]) -> None:
    g, _parent, tip = graph
    report = gc(g)
    assert report.commit_objects == 2
    assert not g.repo.store.exists(g.repo.commits.key(tip))
    with pytest.raises(CommitNotFoundError):
        name_commit(gl.Graph.open(g.uri), "tag", tip)
    settled(g)


@pytest.mark.parametrize("op", OPS)
def test_a_ref_landing_after_gc_read_its_roots_keeps_the_commit(
    graph: tuple[gl.Graph, str, str], monkeypatch: pytest.MonkeyPatch, op: str
) -> None:
    g, parent, tip = graph
    outcome = at(monkeypatch, "gc.after_roots", lambda: name_commit(g, op, tip))
    report = gc(g)
    assert outcome == [None]  # the ref landed
    assert report.commit_objects == 0
    assert named(g, op) == tip
    kept(g, parent, tip)
    settled(g)
    gc(g)  # and the next gc finds it among its roots
    kept(g, parent, tip)


@pytest.mark.parametrize("op", OPS)
def test_a_ref_after_gc_announced_the_removal_is_refused(
    graph: tuple[gl.Graph, str, str], monkeypatch: pytest.MonkeyPatch, op: str
) -> None:
    g, _parent, tip = graph
    before = named(g, op)
    outcome = at(monkeypatch, "gc.after_notice", lambda: name_commit(g, op, tip))
    report = gc(g)
    assert len(outcome) == 1 and isinstance(outcome[0], CommitNotFoundError), outcome
    assert "running gc is removing it" in str(outcome[0])
    assert named(g, op) == before  # nothing written
    assert report.commit_objects == 2
    assert not g.repo.store.exists(g.repo.commits.key(tip))
    assert not gl.Graph.open(g.uri).fsck(deep=True).problems
    settled(g)


@pytest.mark.parametrize("point", faults.REF_TARGET_POINTS)
def test_a_whole_gc_inside_a_tag_keeps_the_pinned_commit(
    graph: tuple[gl.Graph, str, str], monkeypatch: pytest.MonkeyPatch, point: str
) -> None:
    g, parent, tip = graph
    other = gl.Graph.open(g.uri)  # another process's gc, in effect
    outcome = at(monkeypatch, point, lambda: gc(other))
    g.tag("late", tip)
    assert len(outcome) == 1 and outcome[0].commit_objects == 0  # gc saw the pin
    assert g.tags()["late"].commit == tip
    kept(g, parent, tip)
    settled(g)


def test_a_killed_gc_keeps_refusing_until_the_next_one_completes(
    graph: tuple[gl.Graph, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    g, _parent, tip = graph

    def die() -> None:
        raise SystemExit("killed")  # not an Exception: `at` does not catch it

    at(monkeypatch, "gc.after_notice", die)
    with pytest.raises(SystemExit):
        gc(g)
    monkeypatch.undo()
    assert len(g.repo.store.list(SWEEPS_DIR)) == 1  # its notice stays...
    with pytest.raises(CommitNotFoundError, match="running gc"):
        g.tag("late", tip)  # ...and refuses the commits it named
    assert gc(g).commit_objects == 2  # the next gc removes them and both notices
    settled(g)
    with pytest.raises(CommitNotFoundError):
        g.tag("late", tip)
    assert "late" not in g.tags()


def test_a_dry_run_announces_nothing(graph: tuple[gl.Graph, str, str]) -> None:
    g, parent, tip = graph
    assert g.gc(grace=ZERO, reflog_keep=ZERO, dry_run=True).commit_objects == 2
    settled(g)
    g.tag("late", tip)
    kept(g, parent, tip)
