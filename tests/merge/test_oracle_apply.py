"""The merge oracle's revert, cherry-pick and reset steps (issue 25): on random histories
(`tests/merge/oracle.py`), a target branch takes 1-3 random steps, and each must do
exactly what the plain-Python model says (`tests.merge.model.merge`, the merge rules):

- revert of a single-parent commit C (any commit of the example: the trunk's, a feature
  branch's, the target's own, an earlier step's): the three-way merge with base C's
  rows, source C's parent's rows, target the branch head's rows;
- cherry-pick of C: base C's parent's rows, source C's rows; a C the target already
  contains is `already_up_to_date` without a merge;
- reset to any commit of the example: the branch shows that commit's rows, and the
  reflog's newest entry records the move.

An apply that the model merges to the target's own rows publishes nothing
(`already_up_to_date`); otherwise the outcome, the rows of every table or exactly the
model's conflicts (kind, table, key) with the branch unmoved, and with a strategy the
model's resolved conflicts, must match; a published apply has one parent, the head.

Budget: 30 examples by default (about 15 s on the idle 2-core machine);
GRAPHLAKE_ORACLE_APPLY_EXAMPLES sets more.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from hypothesis import event, given, settings
from hypothesis import strategies as st

import graphlake as gl
from tests.merge import model as M
from tests.merge.oracle import (
    BASE,
    OPTIMIZE,
    SUPPRESS,
    World,
    apply_history,
    histories,
    observed_keys,
    strategies,
)

EXAMPLES = int(os.environ.get("GRAPHLAKE_ORACLE_APPLY_EXAMPLES", "30"))


@dataclass(frozen=True)
class Point:
    """A commit of the example: its rows, its (first) parent's rows, and the points it
    contains (itself included)."""

    commit: str
    model: M.Model
    parent_model: M.Model | None  # None: not a single-parent commit of the example
    contains: frozenset[str]


def write_points(w: World, branch: str, start: Point, commits: list) -> tuple[Point, list[Point]]:
    """Write `commits` on `branch` (as the oracle does) one by one; the head afterwards
    and a point for every commit that moved the branch."""
    head, out = start, []
    for commit in commits:
        m = apply_history(w.g, branch, head.model, [commit])
        now = w.g.head(branch).id
        if now == head.commit:
            continue
        if commit == OPTIMIZE:
            event("an optimize commit")
        head = Point(now, m, head.model, head.contains | {now})
        out.append(head)
    return head, out


STEPS = st.lists(
    st.tuples(st.sampled_from(["pick", "revert", "reset"]), st.integers(0, 99), strategies),
    min_size=1,
    max_size=3,
)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=SUPPRESS,
)
@given(prefix=histories(), feature=histories(), own=histories(flip=True), steps=STEPS)
def test_revert_pick_and_reset_match_the_model(world: World, prefix, feature, own, steps) -> None:
    g, name = world.g, world.fresh()
    g.create_branch(name, from_="main")
    root = Point(g.head(name).id, BASE, None, frozenset({g.head(name).id}))
    trunk, points = write_points(world, name, root, prefix)
    g.create_branch(f"{name}-f", from_=name)
    _, more = write_points(world, f"{name}-f", trunk, feature)
    points += more
    target = f"{name}-t"
    g.create_branch(target, from_=name)
    head, more = write_points(world, target, trunk, own)
    points += more
    known = [root, *points]
    for verb, index, strategy in steps:
        # Hypothesis leans to small indexes: they name the likeliest interesting commit
        # (newest first; for a pick, commits the target lacks; for a revert, its own).
        if verb == "reset":
            to = known[::-1][index % len(known)]
            old = g.head(target).id
            g.reset_branch(target, to.commit)
            assert M.rows(g, target) == to.model
            entry = g.reflog(target, limit=1)[0]
            assert (entry.action, entry.old, entry.new) == ("reset", old, to.commit)
            head = to
            event("reset")
            continue
        newest = [p for p in known[::-1] if p.parent_model is not None]
        mine = [p for p in newest if p.commit in head.contains]
        others = [p for p in newest if p.commit not in head.contains]
        applicable = others + mine if verb == "pick" else mine + others
        if not applicable:
            continue
        c = applicable[index % len(applicable)]
        assert c.parent_model is not None
        if verb == "pick" and c.commit in head.contains:
            r = g.cherry_pick(c.commit, into=target, strategy=strategy)
            assert (r.outcome, g.head(target).id) == ("already_up_to_date", head.commit)
            event("pick of a contained commit")
            continue
        base, source = (c.model, c.parent_model) if verb == "revert" else (c.parent_model, c.model)
        exp = M.merge(
            base, [source], head.model, source_moved=[True], target_moved=True, strategy=strategy
        )
        head = check_apply(g, verb, c.commit, target, head, exp, strategy)
        if head.commit not in {p.commit for p in known}:
            known.append(head)


def check_apply(
    g: gl.Graph,
    verb: str,
    rev: str,
    target: str,
    head: Point,
    exp: M.Expected,
    strategy: str | None,
) -> Point:
    """Run one revert or cherry-pick and check it against the model; the head after."""
    run = g.revert if verb == "revert" else g.cherry_pick
    kw = {"branch": target} if verb == "revert" else {"into": target}
    try:
        r = run(rev, strategy=strategy, **kw)
    except gl.MergeConflictError as exc:
        got = observed_keys(exc.conflicts, exp.provisional)
        assert exp.outcome == "conflict", f"{verb}: unexpected conflicts {sorted(got)}"
        assert got == exp.conflicts
        assert g.head(target).id == head.commit, f"a conflicting {verb} moved the branch"
        event(f"{verb}: conflict")
        return head
    assert exp.outcome == "merged", (verb, exp.outcome, sorted(exp.conflicts))
    assert observed_keys(r.resolved, exp.provisional) == exp.resolved
    now = g.head(target)
    if exp.result == head.model:
        assert (r.outcome, now.id) == ("already_up_to_date", head.commit), verb
        event(f"{verb}: nothing to do")
        return head
    assert r.outcome == "merged" and r.commit == now.id
    assert now.parents == (head.commit,)
    assert M.rows(g, target) == exp.result
    event(f"{verb}: applied")
    return Point(now.id, exp.result, head.model, head.contains | {now.id})
