"""A reader taking its read lease on a commit a running gc is about to remove.

`parent` -> `tip` were written on branch `side`, older than gc's cutoff (`grace=0`). A
test makes `tip` unreachable (`side` deleted, or reset to main's head) after a snapshot
resolved it, then interleaves the reader's `Snapshot.scan` (which takes the lease) with
gc at one of their fault points, in one process and one thread: `faults.hit` is wrapped
to run the other side at the chosen point, so the order is exact, not a matter of
timing. The handshake of catalog/reclaim.py and catalog/leases.py must leave only these
outcomes: gc keeps `tip` and the scan reads its rows; or the scan is refused with
`CommitNotFoundError` (a revision naming a commit) or re-resolves its branch once and
reads the branch's head. Never a scan whose files gc removed.
"""

from __future__ import annotations

import datetime as dt
import logging
import shutil
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

import graphlake as gl
from graphlake import faults
from graphlake.catalog.leases import LEASES_DIR, Lease, ReadLeases
from graphlake.catalog.reclaim import SWEEPS_DIR
from graphlake.errors import CommitNotFoundError
from graphlake.read.scan import Scan
from tests.conftest import fault_at as at

ZERO = dt.timedelta(0)
SCHEMA = "node Person { name: String @key\n age: I32? }\n"
TIP_ROWS = [("a", 3), ("p", 2)]
MAIN_ROWS = [("a", 1)]
# gc's points from its notice on: the reader comes after the notice was published.
AFTER_NOTICE = ("gc.after_notice", "gc.after_table_sweep", "gc.before_commit_removal")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """main with one commit; `parent` -> `tip` on branch `side`: (root, parent, tip)."""
    root = tmp_path_factory.mktemp("gc-lease-race") / "g"
    g = gl.Graph.init(root, SCHEMA)
    with g.write(message="main") as w:
        w.insert("Person", [{"name": "a", "age": 1}])
    g.create_branch("side")
    with g.write("side", message="parent") as w:
        w.insert("Person", [{"name": "p", "age": 2}])
    with g.write("side", message="tip") as w:
        w.update("Person", [{"name": "a", "age": 3}])
    tip = g.head("side")
    return root, tip.parents[0], tip.id


@pytest.fixture
def graph(template: tuple[Path, str, str], tmp_path: Path) -> tuple[gl.Graph, str, str]:
    root, parent, tip = template
    shutil.copytree(root, tmp_path / "g")
    return gl.Graph.open(tmp_path / "g"), parent, tip


def gc(g: gl.Graph) -> Any:
    return g.gc(grace=ZERO, reflog_keep=ZERO)


def read(scan: Scan) -> list[tuple[str, int]]:
    """Every row of the scan, read now (after gc): a removed file fails here."""
    with scan:
        return sorted((r["name"], r["age"]) for r in scan.to_table().to_pylist())


def settled(g: gl.Graph) -> None:
    """No lease and no notice left behind; the graph is whole."""
    assert g.repo.store.list(LEASES_DIR) == []
    assert g.repo.store.list(SWEEPS_DIR) == []
    assert not gl.Graph.open(g.uri).fsck(deep=True).problems


def test_a_lease_taken_after_gc_read_its_roots_keeps_the_commit(
    graph: tuple[gl.Graph, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    g, parent, tip = graph
    snap = g.snapshot(tip)
    g.delete_branch("side")
    outcome = at(monkeypatch, "gc.after_roots", lambda: snap.scan("Person"))
    report = gc(g)
    assert len(outcome) == 1 and isinstance(outcome[0], Scan), outcome
    assert outcome[0].commit_id == tip
    assert read(outcome[0]) == TIP_ROWS  # no file of it is gone
    assert report.commit_objects == 0  # gc re-read the leases after its notice
    assert g.repo.store.exists(g.repo.commits.key(parent))
    settled(g)
    assert gc(g).commit_objects == 2  # released: the next gc removes them


@pytest.mark.parametrize("point", AFTER_NOTICE)
def test_a_lease_on_a_commit_after_gc_announced_it_is_refused(
    graph: tuple[gl.Graph, str, str], monkeypatch: pytest.MonkeyPatch, point: str
) -> None:
    g, _parent, tip = graph
    snap = g.snapshot(tip)
    g.delete_branch("side")
    outcome = at(monkeypatch, point, lambda: snap.scan("Person"))
    report = gc(g)
    assert len(outcome) == 1 and isinstance(outcome[0], CommitNotFoundError), outcome
    assert "running gc is removing it" in str(outcome[0])
    assert tip[:12] in str(outcome[0])
    assert report.commit_objects == 2
    settled(g)  # the refused lease was deleted at once


@pytest.mark.parametrize("point", AFTER_NOTICE)
def test_a_scan_of_a_branch_re_resolves_once_when_its_commit_is_refused(
    graph: tuple[gl.Graph, str, str], monkeypatch: pytest.MonkeyPatch, point: str
) -> None:
    g, _parent, tip = graph
    snap = g.snapshot("side")
    assert snap.commit.id == tip
    g.reset_branch("side", g.head("main").id)  # tip: now unreachable
    outcome = at(monkeypatch, point, lambda: snap.scan("Person"))
    report = gc(g)
    assert len(outcome) == 1 and isinstance(outcome[0], Scan), outcome
    assert outcome[0].commit_id == g.head("side").id != tip  # the branch's head now
    assert read(outcome[0]) == MAIN_ROWS
    assert report.commit_objects == 2
    settled(g)


def test_a_scan_of_a_branch_gc_did_not_announce_reads_the_resolved_commit(
    graph: tuple[gl.Graph, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    g, _parent, tip = graph
    snap = g.snapshot("side")
    g.reset_branch("side", g.head("main").id)
    outcome = at(monkeypatch, "gc.after_roots", lambda: snap.scan("Person"))
    assert gc(g).commit_objects == 0
    assert outcome[0].commit_id == tip  # no retry needed: gc kept it
    assert read(outcome[0]) == TIP_ROWS
    settled(g)


@pytest.mark.parametrize("by", ["branch", "commit"])
def test_a_leased_snapshot_is_kept_re_resolved_or_refused(
    graph: tuple[gl.Graph, str, str], monkeypatch: pytest.MonkeyPatch, by: str
) -> None:
    """`Snapshot.leased` (what `graphlake export` holds) follows the same rules."""
    g, _parent, tip = graph
    snap = g.snapshot("side" if by == "branch" else tip)
    g.reset_branch("side", g.head("main").id)
    with ExitStack() as held:
        outcome = at(monkeypatch, "gc.after_notice", lambda: held.enter_context(snap.leased()))
        assert gc(g).commit_objects == 2
        if by == "commit":
            assert len(outcome) == 1 and isinstance(outcome[0], CommitNotFoundError), outcome
            assert f"revision {tip!r}" in str(outcome[0])
        else:
            assert outcome[0].commit.id == g.head("side").id != tip
            assert g.repo.store.list(LEASES_DIR) != []  # held until the block ends
            rows = outcome[0].read("Person").to_pylist()
            assert sorted((r["name"], r["age"]) for r in rows) == MAIN_ROWS
    settled(g)


def test_an_export_of_a_commit_gc_announced_is_refused_and_writes_nothing(
    graph: tuple[gl.Graph, str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from graphlake.cli.app import app

    g, _parent, tip = graph
    g.delete_branch("side")
    out = tmp_path / "out.jsonl"
    argv = ["export", str(g.uri), "Person", "-o", str(out), "--branch", tip]
    outcome = at(monkeypatch, "gc.after_notice", lambda: CliRunner().invoke(app, argv))
    assert gc(g).commit_objects == 2
    assert outcome[0].exit_code == 1, outcome[0].output
    assert "running gc is removing it" in " ".join(outcome[0].output.split())
    assert not out.exists()
    settled(g)


def test_a_deleted_branch_cannot_be_re_resolved(
    graph: tuple[gl.Graph, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    g, _parent, tip = graph
    snap = g.snapshot("side")
    g.delete_branch("side")
    outcome = at(monkeypatch, "gc.after_notice", lambda: snap.scan("Person"))
    gc(g)
    assert len(outcome) == 1 and isinstance(outcome[0], CommitNotFoundError), outcome
    assert "'side'" in str(outcome[0]) and tip[:12] in str(outcome[0])
    settled(g)


@pytest.mark.parametrize("point", faults.READ_LEASE_POINTS)
def test_a_whole_gc_while_the_lease_is_taken_keeps_the_commit(
    graph: tuple[gl.Graph, str, str], monkeypatch: pytest.MonkeyPatch, point: str
) -> None:
    g, parent, tip = graph
    snap = g.snapshot(tip)
    g.delete_branch("side")
    other = gl.Graph.open(g.uri)  # another process's gc, in effect
    outcome = at(monkeypatch, point, lambda: gc(other))
    scan = snap.scan("Person")
    assert len(outcome) == 1 and outcome[0].commit_objects == 0  # gc saw the lease
    assert read(scan) == TIP_ROWS
    assert g.repo.store.exists(g.repo.commits.key(parent))
    settled(g)


def test_a_commit_gc_removed_before_the_scan_is_refused(graph: tuple[gl.Graph, str, str]) -> None:
    g, _parent, tip = graph
    snap = g.snapshot(tip)
    g.delete_branch("side")
    assert gc(g).commit_objects == 2
    with pytest.raises(CommitNotFoundError, match="removed by gc"):
        snap.scan("Person")
    settled(g)


def test_a_killed_gc_keeps_refusing_leases_until_the_next_one_completes(
    graph: tuple[gl.Graph, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    g, _parent, tip = graph
    snap = g.snapshot(tip)
    g.delete_branch("side")

    def die() -> None:
        raise SystemExit("killed")  # not an Exception: `at` does not catch it

    at(monkeypatch, "gc.after_notice", die)
    with pytest.raises(SystemExit):
        gc(g)
    monkeypatch.undo()
    with pytest.raises(CommitNotFoundError, match="running gc"):
        snap.scan("Person")  # its files may be half gone: refused
    assert g.repo.store.list(LEASES_DIR) == []
    assert gc(g).commit_objects == 2
    settled(g)


def test_a_lease_that_ran_out_and_lost_its_commit_says_so_at_renewal(
    graph: tuple[gl.Graph, str, str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    g, _parent, tip = graph
    g.delete_branch("side")
    monkeypatch.setattr(Lease, "_run", lambda self: None)  # as if the process were stopped
    lease = ReadLeases(g.repo.store).take(tip, lease_s=0.2)
    time.sleep(0.3)
    assert gc(g).commit_objects == 2  # the lease had run out: it protected nothing
    with caplog.at_level(logging.ERROR, logger="graphlake.catalog.leases"):
        lease.renew()
    assert f"read lease on {tip} ran out before its renewal" in caplog.text
    assert "removed by gc" in caplog.text
    lease.release()
    settled(g)
