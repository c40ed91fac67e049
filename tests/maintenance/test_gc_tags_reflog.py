"""Tags and the reflog survive `gc`, crash points included (issue 25).

The graph holds: a tag on main's history, a tag on a deleted branch's commit, a commit a
reset abandoned (only the reflog reaches it), a deleted branch (its reflog reaches its
commits), and garbage gc must remove (a publication crashed before its ref moved: an
unreachable commit object and Lance versions).

- A `gc` killed at each of its fault points (a real process, `GRAPHLAKE_FAULT`) leaves
  every tag resolving and every commit a tag, a live branch or the reflog reaches
  reading the same rows; `fsck(deep=True)` finds nothing; a second gc then completes,
  keeps the same and removes the garbage.
- A tag created, a tag deleted and a reset landing while a gc runs (after it read its
  roots, before it removed anything) lose nothing either: the new tag and the reset's
  target were reachable when gc read its roots (a tag or reset naming a commit nothing
  reached then: test_gc_ref_race.py).

A tag create or delete and a reset are each one object operation (a conditional create,
a delete, a ref entry's conditional create), so they have no crash point of their own.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import graphlake as gl
from graphlake import faults
from graphlake.maintenance import gc as gc_module

ZERO = dt.timedelta(0)
REPO = Path(__file__).resolve().parents[2]
SCHEMA = "node Person { name: String @key\n age: I32? }\nedge Knows: Person -> Person\n"
CRASHING_WRITE = """
import sys
import graphlake as gl
with gl.Graph.open(sys.argv[1]).write() as w:
    w.insert("Person", [{"name": "crashed"}])
"""
GC = """
import datetime as dt, sys
import graphlake as gl
gl.Graph.open(sys.argv[1]).gc(grace=dt.timedelta(0))
"""


def _python(code: str, root: Path, fault: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != faults.ENV}
    if fault:
        env[faults.ENV] = fault
    return subprocess.run(
        [sys.executable, "-c", code, str(root)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def _build(root: Path) -> str:
    """The graph described above; returns the crashed publication's commit id."""
    g = gl.Graph.init(root, SCHEMA)
    with g.write(message="a") as w:
        w.insert("Person", [{"name": "a", "age": 1}, {"name": "b", "age": 2}])
        w.insert("Knows", [{"id": "k1", "src": "a", "dst": "b"}])
    g.tag("v1", message="release")
    g.create_branch("dev")
    with g.write("dev", message="dev only") as w:
        w.insert("Person", [{"name": "only-on-dev"}])
    g.tag("dev-tag", "dev")
    g.delete_branch("dev")
    g.create_branch("gone")
    with g.write("gone", message="gone") as w:
        w.update("Person", [{"name": "a", "age": 5}])
    g.delete_branch("gone")
    with g.write(message="to abandon") as w:
        w.update("Person", [{"name": "b", "age": 20}])
    g.reset_branch("main", "main~1")
    with g.write(message="after the reset") as w:
        w.insert("Person", [{"name": "c"}])
    done = _python(CRASHING_WRITE, root, "write.before_ref_cas")
    assert done.returncode == faults.EXIT_CODE, done.stderr
    records = list((root / "_graphlake" / "recovery").rglob("*.json"))
    assert records, "the crashed write left its recovery record"
    return _crashed_commit(root)


def _crashed_commit(root: Path) -> str:
    """The commit object no ref, tag or reflog entry reaches (the crashed write's)."""
    g = gl.Graph.open(root)
    reached = _reached(g)
    ids = {p.stem for p in (root / "_graphlake" / "commits").rglob("*.json")}
    (crashed,) = ids - reached
    return crashed


def _reached(g: gl.Graph) -> set[str]:
    starts = [t.commit for t in g.tags().values()] + [g.head(b).id for b in g.branches()]
    for branch in ("main", "dev", "gone"):
        starts += [c for e in g.reflog(branch) for c in (e.old, e.new) if c]
    out: set[str] = set()
    todo = list(starts)
    while todo:
        cid = todo.pop()
        if cid not in out:
            out.add(cid)
            todo += list(g.repo.commits.get(cid).parents)
    return out


def _rows(g: gl.Graph, rev: str) -> dict[str, Any]:
    snap = g.snapshot(rev)
    return {t: sorted(snap.read(t).to_pylist(), key=lambda r: r["id"]) for t in ("Person", "Knows")}


def observe(g: gl.Graph) -> dict[str, Any]:
    """What must survive: every tag (name -> commit and rows), every branch head and
    every commit the reflog or a tag reaches (rows)."""
    out: dict[str, Any] = {f"tag {n}": (t.commit, _rows(g, n)) for n, t in g.tags().items()}
    out |= {f"head {b}": g.head(b).id for b in g.branches()}
    out |= {cid: _rows(g, cid) for cid in sorted(_reached(g))}
    return out


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict[str, Any]]:
    root = tmp_path_factory.mktemp("gc-refs") / "template"
    crashed = _build(root)
    # Opening settles the crashed publication (rolled back): observe a copy, so the
    # template keeps its record for every case.
    copy = root.parent / "observed"
    shutil.copytree(root, copy)
    return root, crashed, observe(gl.Graph.open(copy))


def _copy(template: Path, tmp_path: Path) -> Path:
    root = tmp_path / "g"
    shutil.copytree(template, root)
    return root


def _check(root: Path, expected: dict[str, Any]) -> gl.Graph:
    g = gl.Graph.open(root)
    g.repo.tables._cache.clear()
    assert observe(g) == expected
    assert g.get("Person", "only-on-dev", branch="dev-tag") is not None
    report = g.fsck(deep=True)
    assert not report.problems, report.problems
    return g


@pytest.mark.slow
@pytest.mark.parametrize(
    "point",
    [*faults.GC_POINTS, "gc.after_table_sweep:2"],
)
def test_a_gc_killed_at_any_point_loses_no_tag_and_no_reflog_commit(
    template: tuple[Path, str, dict[str, Any]], tmp_path: Path, point: str
) -> None:
    source, crashed, expected = template
    root = _copy(source, tmp_path)
    done = _python(GC, root, point)
    assert done.returncode == faults.EXIT_CODE, done.stderr
    _check(root, expected)
    done = _python(GC, root, None)  # the next gc completes
    assert done.returncode == 0, done.stderr
    g = _check(root, expected)
    assert not g.repo.commits.exists(crashed)  # and removed the garbage


def test_tag_and_reset_landing_while_gc_runs_lose_nothing(
    template: tuple[Path, str, dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, crashed, _ = template
    root = _copy(source, tmp_path)
    g = gl.Graph.open(root)
    abandoned = next(e.old for e in g.reflog("main") if e.action == "reset")
    v1 = g.tags()["v1"].commit
    late_target = g.head().parents[0]
    real = gc_module.find_roots

    def racing(*args: Any, **kwargs: Any) -> Any:
        roots = real(*args, **kwargs)
        g.tag("late", late_target)  # lands after gc read its roots
        g.delete_tag("v1")
        g.reset_branch("main", abandoned)
        return roots

    monkeypatch.setattr(gc_module, "find_roots", racing)
    g.gc(grace=ZERO)
    monkeypatch.undo()
    fresh = gl.Graph.open(root)
    fresh.repo.tables._cache.clear()
    assert fresh.resolve("late").id == late_target
    assert fresh.head().id == abandoned
    assert fresh.get("Person", "b")["age"] == 20  # the abandoned commit's rows, now main's
    assert _rows(fresh, "late")["Person"]  # readable
    assert _rows(fresh, v1) == _rows(gl.Graph.open(source), v1)  # still reflog-reached
    assert not fresh.repo.commits.exists(crashed)
    assert not fresh.fsck(deep=True).problems
    fresh.gc(grace=ZERO)  # and a second gc, with the moves in its roots
    again = gl.Graph.open(root)
    again.repo.tables._cache.clear()
    assert observe(again) == observe(fresh)
    assert not again.fsck(deep=True).problems


def _damage(g: gl.Graph, commit: str) -> None:
    """Remove the Lance manifest `commit`'s Person state pins."""
    state = g.repo.commits.get(commit).tables["Person"]
    uri = Path(g.repo.tables.uri(state.table_id))
    branch_dir = uri / "tree" / state.lance_branch if state.lance_branch != "main" else uri
    # Lance names manifests by u64::MAX - version (newest sorts first).
    (branch_dir / "_versions" / f"{2**64 - 1 - state.version}.manifest").unlink()


@pytest.mark.parametrize("reached_by", ["tag", "reflog"])
def test_fsck_checks_what_only_a_tag_or_the_reflog_reaches(tmp_path: Path, reached_by: str) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    with g.write() as w:
        w.insert("Person", [{"name": "a"}])
    g.create_branch("dev")
    with g.write("dev") as w:
        w.insert("Person", [{"name": "only-on-dev"}])
    only = g.head("dev").id
    if reached_by == "tag":
        g.tag("t", "dev")
    g.delete_branch("dev")  # `only` is reached by the tag, or by dev's reflog alone
    assert not g.fsck(deep=True).problems
    _damage(g, only)
    g = gl.Graph.open(g.uri)  # no cached dataset
    report = g.fsck()
    assert any(p.check == "table" for p in report.problems), report.problems
    deep = g.fsck(deep=True)
    assert any(p.check == "diff" and only[:12] in p.where for p in deep.problems), deep.problems
    if reached_by == "reflog":  # outside the window the reflog keeps, nothing is checked
        assert not g.fsck(deep=True, reflog_keep=ZERO).problems


def test_fsck_reports_a_tag_naming_a_missing_commit(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    with g.write() as w:
        w.insert("Person", [{"name": "a"}])
    g.tag("t")
    head = g.head().id
    with g.write() as w:
        w.insert("Person", [{"name": "b"}])
    g.reset_branch("main", "main~1")  # only the tag and the reflog reach the old head...
    g.reset_branch("main", g.head().parents[0])
    g.repo.store.delete(g.repo.commits.key(head))  # ...and then it is gone
    report = gl.Graph.open(g.uri).fsck()
    assert any(p.where == "tag t" and head in p.message for p in report.problems)
