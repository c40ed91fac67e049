"""The merge oracle with schema changes in its histories (issue 13): random histories on
two branches (see `tests/merge/oracle.py`), where either side may also change Person's
schema (add a nullable property, drop one, rename one) in one schema commit, before or
after its data commits. Writes after a side's schema commit use its layout (the renamed
name, no dropped property).

The expectation: the model's merge (`tests.merge.model`) of base, source and target rows,
each first evolved to the merged schema (the union of both sides' steps, which touch
different properties, so they never conflict): rows gain the added property as null,
lose the dropped one, and carry the renamed one under its new name. This is the rule of
`merge/schema_merge.py` (a dropped property's changed values are dropped with it, which
also means they cannot conflict). A second test does the same for merge_many of 2-3
sources (each with its own schema steps, folded: `merge/many_schema.py`), without a
strategy. Fewer examples than the data-only oracle (10 and 4): each schema commit and
schema merge evolves Lance tables. GRAPHLAKE_ORACLE_SCHEMA_EXAMPLES sets the first (the
second runs 2/5 of it); 100 + 80 and 20 + 40 examples (two seeds each) ran clean when
this was written.
"""

from __future__ import annotations

import copy
import os
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphlake as gl
from tests.conftest import SOCIAL
from tests.merge import model as M
from tests.merge.oracle import (
    BASE,
    OPTIMIZE,
    SUPPRESS,
    Branch,
    Intent,
    World,
    Write,
    apply_intent,
    histories,
    merge_all_modes,
    modes_for,
    observed_keys,
    stage,
    strategies,
)

EXAMPLES = int(os.environ.get("GRAPHLAKE_ORACLE_SCHEMA_EXAMPLES", "10"))

AGE = "age: I32? @range(0..150)"
ROLE = "role: enum(eng, pm, exec)?"
# Schema steps on Person: the .pg edit, and the same change to a row in the base layout.
OPS = {
    "addNick": (
        lambda pg: pg.replace(ROLE, f"{ROLE}\n  nick: String?"),
        lambda r: r.__setitem__("nick", None),
    ),
    "dropRole": (lambda pg: pg.replace(ROLE, ""), lambda r: r.pop("role")),
    "renameAge": (
        lambda pg: pg.replace(AGE, "years: I32? @range(0..150) @renamed_from(age)"),
        lambda r: r.__setitem__("years", r.pop("age")),
    ),
}
schema_steps = st.lists(st.sampled_from(sorted(OPS)), max_size=2, unique=True)


def schema_text(ops: list[str]) -> str:
    pg = SOCIAL
    for op in sorted(ops):
        pg = OPS[op][0](pg)
    return pg


def evolve(m: M.Model, ops: set[str]) -> M.Model:
    """The model's rows in the layout after `ops` (Person only)."""
    m = copy.deepcopy(m)
    for row in m["Person"].values():
        for op in sorted(ops):
            OPS[op][1](row)
    return m


def _fit(intent: Intent, ops: list[str]) -> Intent | None:
    """The intent as a branch whose schema commit came first can write it: without the
    dropped property (None if nothing is left to write)."""
    verb, table, key, props, flag = intent
    if table != "Person" or "dropRole" not in ops or "role" not in props:
        return intent
    props = {p: v for p, v in props.items() if p != "role"}
    if not props and verb == "put":
        return None
    return verb, table, key, props, flag


def _translate(write: Write, ops: list[str]) -> Write:
    kind, table, key, props = write
    if table == "Person" and "renameAge" in ops and "age" in props:
        props = {("years" if p == "age" else p): v for p, v in props.items()}
    return kind, table, key, props


def make_side(
    w: World, name: str, from_: str, base: M.Model, commits, ops: list[str], first: bool
) -> Branch:
    """A branch with a data history and, if `ops`, one schema commit (first or last).
    Its model stays in the base layout (the caller evolves it)."""
    g = w.g
    g.create_branch(name, from_=from_)
    start = g.head(name).id
    if ops and first:
        g.apply_schema(schema_text(ops), branch=name, allow_drop=True)
    live = ops if first else []
    m = base
    for intents in commits:
        if intents == OPTIMIZE:
            g.optimize(name)
            continue
        cascaded: set[tuple[str, str]] = set()
        writes: list[Write] = []
        for intent in intents:
            fitted = _fit(intent, live)
            done = apply_intent(m, fitted, cascaded) if fitted is not None else None
            if done is not None:
                m, more = done
                writes += [_translate(wr, live) for wr in more]
        if writes:
            with g.write(name) as tx:
                for write in writes:
                    stage(tx, write)
    if ops and not first:
        g.apply_schema(schema_text(ops), branch=name, allow_drop=True)
    head = g.head(name).id
    return Branch(name, m, head != start, head)


@pytest.mark.slow
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=SUPPRESS,
)
@given(
    src=histories(),
    tgt=histories(flip=True),
    s_ops=schema_steps,
    t_ops=schema_steps,
    s_first=st.booleans(),
    t_first=st.booleans(),
    strategy=strategies,
)
def test_two_branch_merge_with_schema_changes_matches_the_model(
    world: World, src, tgt, s_ops, t_ops, s_first, t_first, strategy
) -> None:
    name = world.fresh()
    source = make_side(world, f"{name}-s", "main", BASE, src, s_ops, s_first)
    target = make_side(world, f"{name}-t", "main", BASE, tgt, t_ops, t_first)
    merged = set(s_ops) | set(t_ops)
    exp = M.merge(
        evolve(BASE, merged),
        [evolve(source.model, merged)],
        evolve(target.model, merged),
        source_moved=[source.moved],
        target_moved=target.moved,
        strategy=strategy,
    )
    # The branches as they show (each in its own layout): what the writes must have done.
    source = replace(source, model=evolve(source.model, set(s_ops)))
    target = replace(target, model=evolve(target.model, set(t_ops)))
    for b in (source, target):
        assert M.rows(world.g, b.name) == b.model
    if exp.outcome == "already_up_to_date":  # the target keeps its own layout
        exp.result = target.model
    merge_all_modes(world, target, [source], exp, modes_for(name, 4), strategy=strategy)
    into = f"{target.name}-on"
    if exp.outcome not in ("conflict", "already_up_to_date"):
        person = world.g.schema_at(into).nodes["Person"]
        assert {p.name for p in person.properties} == {
            "name",
            "email",
            *({"years"} if "renameAge" in merged else {"age"}),
            *(() if "dropRole" in merged else ("role",)),
            *(("nick",) if "addNick" in merged else ()),
        }


@pytest.mark.slow
@settings(
    max_examples=max(1, EXAMPLES * 2 // 5),
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=SUPPRESS,
)
@given(
    srcs=st.lists(
        st.tuples(histories(intents_per_commit=3), schema_steps, st.booleans()),
        min_size=2,
        max_size=3,
    ),
    tgt=histories(flip=True, intents_per_commit=3),
    t_ops=schema_steps,
)
def test_merge_many_with_schema_changes_matches_the_model(world: World, srcs, tgt, t_ops) -> None:
    """merge_many folds sources whose schemas differ (`merge/many_schema.py`): without a
    strategy, a clean model merge is the same merge; a conflicting one raises conflicts
    the model has too (the fold reports the first conflicting step's) and publishes
    nothing."""
    name = world.fresh()
    sources = [
        make_side(world, f"{name}-s{i}", "main", BASE, h, ops, first)
        for i, (h, ops, first) in enumerate(srcs)
    ]
    target = make_side(world, f"{name}-t", "main", BASE, tgt, t_ops, True)
    merged = set(t_ops).union(*(ops for _, ops, _ in srcs))
    exp = M.merge(
        evolve(BASE, merged),
        [evolve(s.model, merged) for s in sources],
        evolve(target.model, merged),
        source_moved=[s.moved for s in sources],
        target_moved=target.moved,
    )
    head = world.g.head(target.name).id
    try:
        r = world.g.merge_many([s.name for s in sources], into=target.name)
    except gl.MergeConflictError as exc:
        assert exp.outcome == "conflict", [c.to_dict() for c in exc.conflicts]
        assert observed_keys(exc.conflicts, exp.provisional) <= exp.conflicts
        assert world.g.head(target.name).id == head
        return
    assert r.outcome == exp.outcome, (sorted(exp.conflicts), r.to_dict()["outcome"])
    if exp.outcome == "merged":
        assert M.rows(world.g, target.name) == exp.result
