"""The schema merge oracle with `gc` at random points of its histories (issue 23, item 1).

Each example builds, on a fresh copy of the oracle's base graph, a source and a target
branch with random data histories and schema steps (as `test_oracle_schema.py`), then
runs `gc(grace=0)` after the sides were written, after their merge, or both. gc must
change nothing any reachable commit reads, diffs or merges to:

- every commit reachable from a branch reads the same rows, and diffs against each of
  its parents (schema steps, counts and rows; `log --stat` is those counts) exactly as
  before the gc;
- a merge run after a gc equals the model's merge (as in the schema oracle), and the
  same merge run again after a gc of the merged history, into a fresh copy of the
  target, gives the same outcome and rows;
- `fsck(deep=True)` finds nothing (in the examples that gc twice).

Budget: 50 examples (GRAPHLAKE_ORACLE_GC_EXAMPLES), about 90 CPU-seconds.
"""

from __future__ import annotations

import datetime as dt
import itertools
import os
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphlake as gl
from tests.conftest import SOCIAL
from tests.merge import model as M
from tests.merge.oracle import BASE, SUPPRESS, World, histories, strategies
from tests.merge.test_oracle_schema import evolve, make_side, schema_steps

EXAMPLES = int(os.environ.get("GRAPHLAKE_ORACLE_GC_EXAMPLES", "50"))
ZERO = dt.timedelta(0)
GC_POINTS = st.sets(st.sampled_from(["sides", "merged"]), min_size=1)


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("oracle-gc") / "base"
    g = gl.Graph.init(root, SOCIAL)
    with g.write(message="base") as w:
        for table in ("Person", "Company", "Knows", "WorksAt"):
            w.insert(table, list(BASE[table].values()))
    return root


def observe(g: gl.Graph) -> dict[Any, Any]:
    """Every reachable commit's rows and diffs against its parents (`log --stat` prints
    the first parent's diff counts: `merge.diff.commit_stat`)."""
    out: dict[Any, Any] = {}
    for branch in g.branches():
        out[branch] = g.head(branch).id
        for c in g.log(branch):
            if c.id in out:
                continue
            snap = g.snapshot(c.id)
            out[c.id] = {
                t: sorted(snap.read(t).to_pylist(), key=lambda r: r["id"])
                for t in g.schema_at(c.id).table_names
            }
            for p in c.parents:
                d = g.diff(p, c.id)
                out[(p, c.id)] = (
                    [s.describe() for s in d.schema_changes],
                    {n: t.to_dict() for n, t in d.items()},
                )
    return out


def collect(g: gl.Graph) -> None:
    before = observe(g)
    g.gc(grace=ZERO, reflog_keep=ZERO)
    g.repo.tables._cache.clear()  # read what is on disk now, not cached datasets
    assert observe(g) == before


def merge_outcome(g: gl.Graph, source: str, into: str, strategy: str | None) -> tuple:
    try:
        r = g.merge(source, into=into, strategy=strategy)
    except gl.MergeConflictError as exc:
        return ("conflict", sorted((c.kind, c.table, c.entity_id) for c in exc.conflicts))
    return (r.outcome, M.rows(g, into))


@pytest.mark.slow
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=SUPPRESS,
)
@given(
    src=histories(intents_per_commit=3),
    tgt=histories(flip=True, intents_per_commit=3),
    s_ops=schema_steps,
    t_ops=schema_steps,
    s_first=st.booleans(),
    t_first=st.booleans(),
    strategy=strategies,
    points=GC_POINTS,
)
def test_gc_changes_no_log_diff_or_merge(
    template: Path, tmp_path_factory, src, tgt, s_ops, t_ops, s_first, t_first, strategy, points
) -> None:
    root = tmp_path_factory.mktemp("gc-example") / "g"
    shutil.copytree(template, root)
    world = World(gl.Graph.open(root), itertools.count())
    g = world.g
    source = make_side(world, "s", "main", BASE, src, s_ops, s_first)
    target = make_side(world, "t", "main", BASE, tgt, t_ops, t_first)
    merged = set(s_ops) | set(t_ops)
    exp = M.merge(
        evolve(BASE, merged),
        [evolve(source.model, merged)],
        evolve(target.model, merged),
        source_moved=[source.moved],
        target_moved=target.moved,
        strategy=strategy,
    )
    if exp.outcome == "already_up_to_date":
        exp.result = evolve(target.model, set(t_ops))
    target = replace(target, model=evolve(target.model, set(t_ops)))
    if "sides" in points:
        collect(g)
    g.create_branch("into", from_=target.name)
    first = merge_outcome(g, source.name, "into", strategy)
    assert first[0] == exp.outcome
    if exp.outcome != "conflict":
        assert first[1] == exp.result
    if "merged" in points:
        collect(g)
        g.create_branch("again", from_=target.name)
        assert merge_outcome(g, source.name, "again", strategy) == first
    if len(points) == 2:  # a third of the examples: fsck repeats every diff
        report = g.fsck(deep=True)
        assert report.ok, report.problems
