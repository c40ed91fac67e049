"""Crash matrix: every fault point of every publishing operation, in a real process.

Each case copies a prepared graph, runs the operation in a subprocess with
GRAPHLAKE_FAULT set (the process `os._exit`s at that point), then reopens the graph and
asserts: recovery settles exactly one record with the expected outcome; the graph shows
exactly the before or the after state (before until the ref CAS, after from it on);
fsck finds nothing; the next write builds on the visible state only (no leaked rows
from the crashed publication); re-running the operation reaches the after state.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import graphlake as gl
from graphlake import faults
from graphlake.recovery.recover import COMPLETED, ROLLED_BACK
from tests.recovery import crash_ops

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
# Points after which the publication is visible.
PUBLISHED_STEPS = ("after_ref_cas", "during_cleanup")


def _cases() -> list:
    cases = []
    for op in crash_ops.OPS:
        points = [f"{op}.{step}" for step in faults.STEPS]
        points.append(f"{op}.after_table_effect:2")
        if op == "write":
            points += ["table.after_delete", "table.after_append"]
        cases += [pytest.param(op, p, id=f"{op}-{p}") for p in points]
    return cases


def _run(
    action: str, op: str, uri: str, options: dict | None = None, fault: str | None = None
) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != faults.ENV}
    if fault:
        env[faults.ENV] = fault
    args = [sys.executable, "-m", "tests.recovery.crash_ops", action, op, uri]
    if options:
        args.append(json.dumps(options))
    return subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def templates(tmp_path_factory) -> dict[str, tuple[Path, dict, dict]]:
    """Per operation: (prepared graph, rows before, rows after a clean run)."""
    out = {}
    for op in crash_ops.OPS:
        root = tmp_path_factory.mktemp(op)
        template = root / "template"
        crash_ops.setup(op, str(template), None)
        reference = root / "reference"
        shutil.copytree(template, reference)
        crash_ops.run(op, str(reference), None)
        before = crash_ops.rows(gl.Graph.open(template))
        after = crash_ops.rows(gl.Graph.open(reference))
        if op != "optimize":  # optimize changes no rows, only their layout
            assert before != after
        out[op] = (template, before, after)
    return out


def _outcome(point: str) -> str:
    step = point.split(":")[0].rsplit(".", 1)[-1]
    return COMPLETED if step in PUBLISHED_STEPS else ROLLED_BACK


@pytest.mark.parametrize(("op", "point"), _cases())
def test_crash_at_every_point(templates, tmp_path, op: str, point: str) -> None:
    template, before, after = templates[op]
    uri = tmp_path / "g"
    shutil.copytree(template, uri)
    head_before = gl.Graph.open(uri).head().id
    branches_before = gl.Graph.open(uri).branches()

    proc = _run("run", op, str(uri), fault=point)
    assert proc.returncode == faults.EXIT_CODE, (
        f"the process did not stop at {point}: rc={proc.returncode}\n{proc.stderr[-2000:]}"
    )

    g = gl.Graph.open(uri, recover=False)
    assert not g.fsck().ok, "fsck must notice the unfinished publication"
    report = g.recover()
    assert [r.outcome for r in report.recovered] == [_outcome(point)], report
    assert not report.in_flight and not report.corrupt
    g = gl.Graph.open(uri)
    visible = crash_ops.rows(g)
    if _outcome(point) == COMPLETED:
        assert visible == after
        assert g.head().id == report.recovered[0].commit
    else:
        assert visible == before
        assert g.head().id == head_before
    assert g.branches() == branches_before
    fsck = g.fsck()
    assert fsck.ok, fsck.problems

    # The next write sees exactly the visible state: nothing of the crashed publication.
    with g.write(message="next") as w:
        w.insert("Person", [{"name": "Next"}])
    expected = {
        **visible,
        "Person": sorted([*visible["Person"], _person("Next")], key=lambda r: r["id"]),
    }
    assert crash_ops.rows(gl.Graph.open(uri)) == expected
    # Re-running the operation reaches the after state (a completed write is not redone).
    if op != "write":
        crash_ops.run(op, str(uri), None)
        final = crash_ops.rows(gl.Graph.open(uri))
        assert final == {
            **after,
            "Person": sorted([*after["Person"], _person("Next")], key=lambda r: r["id"]),
        }
    assert gl.Graph.open(uri).fsck().ok


def _person(name: str) -> dict:
    return {"id": name, "name": name, "age": None, "email": None, "role": None}


@pytest.mark.s3
@pytest.mark.parametrize(
    "point", ["write.after_table_effect", "write.before_ref_cas", "write.after_ref_cas"]
)
def test_crash_on_object_storage(s3_server, point: str) -> None:
    uri, options = s3_server.fresh_uri(), s3_server.options
    crash_ops.setup("write", uri, options)
    before = crash_ops.rows(gl.Graph.open(uri, options))
    proc = _run("run", "write", uri, options, fault=point)
    assert proc.returncode == faults.EXIT_CODE, proc.stderr[-2000:]
    g = gl.Graph.open(uri, options, recover=False)
    assert [r.outcome for r in g.recover().recovered] == [_outcome(point)]
    g = gl.Graph.open(uri, options)
    visible = crash_ops.rows(g)
    if _outcome(point) == COMPLETED:
        assert visible != before and any(r["id"] == "Z" for r in visible["Person"])
    else:
        assert visible == before
    assert g.fsck().ok
    with g.write() as w:
        w.insert("Person", [{"name": "Next"}])
    assert gl.Graph.open(uri, options).get("Person", "Next") is not None


def test_every_point_is_listed_and_a_bad_setting_is_refused(tmp_path) -> None:
    assert len(set(faults.POINTS)) == len(faults.POINTS)
    crash_ops.setup("write", str(tmp_path / "g"), None)
    proc = _run("run", "write", str(tmp_path / "g"), fault="write.no_such_point")
    assert proc.returncode == 1
    assert "unknown fault point" in proc.stderr
    assert gl.Graph.open(tmp_path / "g").fsck().ok
