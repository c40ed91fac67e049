"""The randomized merge oracle, shared by `test_oracle*.py`: random histories on 2 and on N
branches, merged by graphlake, must equal the plain-Python model of the merge rules
(`tests.merge.model`).

One graph per module; every example forks fresh branches from a fixed base (O(1)). Each
branch gets a random history: commits of random writes over a small key space (inserts,
updates of some properties, upserts, deletes with and without cascade, re-inserts of
deleted keys, edges added, updated and removed, bulk inserts of new keys), so overlaps
and conflicts are frequent; some commits are `g.optimize` instead (compaction: the
fragments lineage's insert-only shortcut relies on are rewritten). Some merge_many
sources only insert, as ingest shards do. Writes that would break a constraint are left
out of the history (the model decides).

Then the merge runs with `lineage="on"` (the default) and, on every 4th (two-branch) or
5th (N-branch) example, also with "off" and "verify", each into its own O(1) copy of the
target branch. Every run must match the model exactly: the outcome and the merged rows of
every table, or exactly the model's set of conflicts (kind, table, key) with the target
unchanged (a strict_disjoint refusal likewise); with a strategy, exactly the model's
resolved conflicts; and the modes must agree with each other.

A third test merges N sources forked from different commits of the target: the target
branch moves in two segments, each source forks from one of the three checkpoints and
some then merge a later checkpoint (with a strategy) and write again, so each source has
its own merge base; the model merges each against its own base.

`test_oracle_apply.py` takes these histories through revert, cherry-pick and reset
steps, each checked against the same model (a revert or pick is a three-way merge with
a chosen base).

Budget: 300 two-branch examples (two modules of 150, run side by side:
`EXAMPLES_HALVES`) and 100 N-branch examples of each N-branch test, about 6 CPU-minutes
in all (the walk that "off"/"verify" run costs a DuckDB connection, ~0.15 s, per changed
table and side; 100 examples of different fork points took ~2 minutes).
GRAPHLAKE_ORACLE_EXAMPLES sets the number of examples of all three (the two-branch one's
in all, split between its halves).
"""

from __future__ import annotations

import copy
import datetime as dt
import functools
import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import HealthCheck, event
from hypothesis import strategies as st

import graphlake as gl
from graphlake.write.transaction import Transaction
from tests.merge import model as M
from tests.merge import test_truth_table as TT

# Examples per test: the N-branch ones cost about three times as much (more branches to
# write, N+1 deltas to discover). GRAPHLAKE_ORACLE_EXAMPLES sets both.
EXAMPLES = int(os.environ.get("GRAPHLAKE_ORACLE_EXAMPLES", "300"))
EXAMPLES_N = int(os.environ.get("GRAPHLAKE_ORACLE_EXAMPLES", "100"))
MODES = ("on", "off", "verify")

PERSONS = ["A", "B", "C", "D"]
BULK = ["E", "F", "G", "H"]  # Person keys that only bulk intents insert (see "bulk")
COMPANIES = ["X", "Y"]
KNOWS = ["k0", "k1", "k2", "k3"]
WORKS = ["w0", "w1", "w2"]
D1, D2 = dt.date(2020, 1, 1), dt.date(2021, 6, 1)

BASE: M.Model = {
    "Person": {
        "A": M.person("A", age=1, email="a@x.org", role="eng"),
        "B": M.person("B", age=2),
        "C": M.person("C"),
    },
    "Company": {"X": M.node_row("Company", "X", {"founded": D1})},
    "Knows": {
        "k0": M.edge_row("Knows", "k0", {"src": "A", "dst": "B"}),
        "k1": M.edge_row("Knows", "k1", {"src": "B", "dst": "C"}),
    },
    "WorksAt": {"w0": M.edge_row("WorksAt", "w0", {"src": "A", "dst": "X"})},
}

# --- histories ------------------------------------------------------------------------------

# An intent: (verb, table, key, props, flag). "put" inserts an absent key and updates a
# present one (flag: through `upsert` instead of insert/update); "delete" deletes a present
# key (flag: with cascade); "bulk" inserts every absent BULK key from `key` on (up to 3),
# so insert-only branches with overlapping key ranges are common. The model turns intents
# into the writes that fit the branch.
Intent = tuple[str, str, str, dict, bool]
Write = tuple[str, str, str, dict]  # (insert|update|upsert|delete, table, key, props)
# A commit of a history is a list of intents, or OPTIMIZE: `g.optimize(branch)`, which
# compacts the branch's fragments (base and new ones together) and changes no content,
# so lineage's new-fragment shortcut must see it cannot apply.
OPTIMIZE = "optimize"


def intents(flip: bool, inserts_only: bool = False) -> st.SearchStrategy:
    """One intent. Hypothesis leans to the first choices, so those are changes, not
    no-ops; `flip` reverses every choice list, so that two branches drawn with opposite
    `flip` do not mostly make the very same (converging) change. `inserts_only`: intents
    that only add rows to the base (bulk Persons, new Knows edges), as ingest shards do."""

    def pick(choices: list) -> st.SearchStrategy:
        return st.sampled_from(choices[::-1] if flip else choices)

    def intent(verb: str, table: str, keys: list[str], **props) -> st.SearchStrategy:
        required = {p: v for p, v in props.items() if not p.startswith("opt_")}
        optional = {p[4:]: v for p, v in props.items() if p.startswith("opt_")}
        return st.tuples(
            st.just(verb),
            st.just(table),
            pick(keys),
            st.fixed_dictionaries(required, optional=optional),
            st.booleans(),
        )

    ages, emails = pick([2, None, 1]), pick(["b@x.org", None, "a@x.org"])
    roles, dates = pick(["pm", None, "eng"]), pick([D2, None, D1])
    persons, companies = pick(PERSONS), pick(COMPANIES)
    # Persons without a WorksAt edge first: two branches giving one a job is a @card
    # clash.
    employees = pick(["B", "C", "A", "D"])
    person_put = intent("put", "Person", PERSONS, age=ages, opt_email=emails, opt_role=roles)
    knows_put = intent("put", "Knows", KNOWS, src=persons, dst=persons, since=dates)
    works_put = intent("put", "WorksAt", WORKS, src=employees, dst=companies)
    bulk = intent("bulk", "Person", BULK, age=ages)
    if inserts_only:  # k2, k3 are not in the base; a second put updates the new edge
        return st.one_of(
            bulk,
            bulk,
            intent("put", "Knows", KNOWS[2:], src=persons, dst=pick(PERSONS + BULK), since=dates),
        )
    return st.one_of(
        person_put,
        person_put,
        intent("put", "Person", PERSONS, email=emails),  # @unique clashes
        intent("delete", "Person", PERSONS),
        intent("put", "Company", COMPANIES, founded=dates),
        intent("delete", "Company", COMPANIES),
        knows_put,
        knows_put,
        intent("delete", "Knows", KNOWS),
        works_put,
        works_put,
        intent("delete", "WorksAt", WORKS),
        bulk,
        intent("delete", "Person", BULK),
    )


def histories(
    flip: bool = False, intents_per_commit: int = 4, inserts_only: bool = False
) -> st.SearchStrategy:
    """A branch's history: 1-2 commits of 1-4 intents, some an optimize instead. (Some
    net to no change, and then the branch has no commit unless it optimized: a merge
    from it is up to date, into it a fast-forward.)"""
    commit = st.lists(intents(flip, inserts_only), min_size=1, max_size=intents_per_commit)
    # Hypothesis leans to the first choice: most commits write.
    optimize = st.sampled_from([None, None, None, None, None, OPTIMIZE])
    return st.lists(st.tuples(commit, optimize).map(lambda c: c[1] or c[0]), min_size=1, max_size=2)


KEYS = {"Person": PERSONS + BULK, "Company": COMPANIES, "Knows": KNOWS, "WorksAt": WORKS}


def apply_intent(
    m: M.Model, intent: Intent, cascaded: set[tuple[str, str]]
) -> tuple[M.Model, list[Write]] | None:
    """The state after `intent` and the writes that do it, or None if it does not fit
    (nothing to delete, or a broken constraint).

    A delete takes the first present key from the intent's key on (in KEYS order); a
    node with edges deleted without cascade has its edges deleted first, explicitly.
    `cascaded`: the (table, key)s a cascading delete removed earlier in this write (the
    node and its edges); they are not written again in the same write (cascades apply
    in call order, see the cascade tests below; the model keeps histories simple)."""
    verb, table, key, props, flag = intent
    m = copy.deepcopy(m)
    removed: set[tuple[str, str]] = set()
    rows = m[table]
    is_node = table in M.NODE_KEY
    if verb == "delete":
        keys = KEYS[table]
        i = keys.index(key)
        present = [k for k in keys[i:] + keys[:i] if k in rows]
        if not present:
            return None
        key = present[0]
        writes: list[Write] = []
        if is_node:
            edges = M.touching(m, table, key)
            for et, eid in edges:
                del m[et][eid]
            if flag:
                removed = {(table, key), *edges}
            else:
                writes += [("delete", et, eid, {}) for et, eid in edges]
            writes.append(("delete", table, key, {"cascade": flag}))
        else:
            writes.append(("delete", table, key, {}))
        del rows[key]
    elif verb == "bulk":
        fresh = [k for k in BULK[BULK.index(key) :] if k not in rows][:3]
        if not fresh or any((table, k) in cascaded for k in fresh):
            return None
        writes = []
        for k in fresh:
            rows[k] = M.node_row(table, k, props)
            writes.append(("insert", table, k, props))
    elif (table, key) in cascaded:
        return None  # see test_cascade_delete_then_rewrite_in_one_write
    elif key in rows:
        if not is_node:  # edges keep their endpoints; Knows.since may change
            props = {p: v for p, v in props.items() if p not in ("src", "dst")}
            if not props:
                return None
        rows[key].update(props)
        writes = [("upsert" if flag else "update", table, key, props)]
    else:
        rows[key] = (M.node_row if is_node else M.edge_row)(table, key, props)
        writes = [("upsert" if flag else "insert", table, key, props)]
    if M.violations(m):
        return None
    cascaded |= removed
    return m, writes


def stage(w: Transaction, write: Write) -> None:
    kind, table, key, props = write
    if kind == "delete":
        w.delete(table, [key], **props)
    else:
        getattr(w, kind)(table, [{M.NODE_KEY.get(table, "id"): key, **props}])


def apply_history(g: gl.Graph, branch: str, m: M.Model, commits: list[list[Intent]]) -> M.Model:
    """Write `commits` on `branch` (intents that do not fit are left out); the model after."""
    for intents in commits:
        if intents == OPTIMIZE:  # moves the branch (or not); the content stays
            g.optimize(branch)
            assert M.rows(g, branch) == m, "optimize changed the content"
            continue
        before, head = m, g.head(branch).id
        cascaded: set[tuple[str, str]] = set()
        writes: list[Write] = []
        for intent in intents:
            done = apply_intent(m, intent, cascaded)
            if done is not None:
                m, more = done
                writes += more
        if writes:
            with g.write(branch) as w:
                for write in writes:
                    stage(w, write)
        moved = g.head(branch).id != head
        assert moved == (m != before), f"writes {writes}: moved={moved}, the model disagrees"
    return m


# --- the graph and the checks -----------------------------------------------------------------


@dataclass
class World:
    g: gl.Graph
    names: itertools.count

    def fresh(self) -> str:
        return f"o{next(self.names)}"


@dataclass
class Branch:
    name: str
    model: M.Model
    moved: bool
    head: str


def make_branch(w: World, name: str, from_: str, base: M.Model, commits) -> Branch:
    w.g.create_branch(name, from_=from_)
    if OPTIMIZE in commits:
        event("a branch optimized")
    start = w.g.head(name).id
    m = apply_history(w.g, name, base, commits)
    head = w.g.head(name).id
    return Branch(name, m, head != start, head)


def observed_keys(conflicts, provisional: M.Model) -> set[tuple[str, str, str]]:
    """(kind, table, key) of reported conflicts; a unique clash is named by its values
    (which of the clashing keys graphlake names is its choice)."""
    out = set()
    for c in conflicts:
        key = c.entity_id
        if c.kind == "unique_violation":
            row = provisional[c.table].get(c.entity_id)
            cols = M.UNIQUE[c.table]
            key = M.unique_name(cols, tuple(row[k] for k in cols)) if row else c.entity_id
        out.add((c.kind, c.table, key))
    return out


def check_merge(
    g: gl.Graph,
    into: str,
    exp: M.Expected,
    target: Branch,
    sources: list[Branch],
    run: Callable[[], gl.MergeResult],
) -> tuple:
    """Run one merge into `into` (a copy of the target) and check it against the model."""
    assert g.head(into).id == target.head
    try:
        r = run()
        for route in set(r.routes.values()):
            event(f"route: {route}")
    except gl.MergeConflictError as exc:
        got = observed_keys(exc.conflicts, exp.provisional)
        assert exp.outcome == "conflict", f"unexpected conflicts {sorted(got)}"
        assert got == exp.conflicts
        assert g.head(into).id == target.head, "a conflicting merge moved the target"
        return ("conflict", frozenset(got))
    except gl.MergeError as exc:
        if exp.outcome != "refused" or "strict_disjoint" not in str(exc):
            raise
        assert g.head(into).id == target.head, "a refused merge moved the target"
        return ("refused",)
    assert r.outcome == exp.outcome, (r.outcome, sorted(exp.conflicts), sorted(exp.overlap))
    assert observed_keys(r.resolved, exp.provisional) == exp.resolved
    head = g.head(into)
    assert r.commit == head.id
    if exp.outcome == "already_up_to_date":
        assert head.id == target.head
    elif exp.outcome == "fast_forward":
        (moved,) = [s for s in sources if s.moved]
        assert head.id == moved.head
    else:
        assert head.parents == (target.head, *(s.head for s in sources if s.moved))
    assert M.rows(g, into) == exp.result
    return (r.outcome, frozenset(observed_keys(r.resolved, exp.provisional)))


def merge_all_modes(
    w: World, target: Branch, sources: list[Branch], exp: M.Expected, modes: tuple[str, ...], **kw
) -> None:
    event(f"outcome: {exp.outcome}")
    for kind in {k for k, _, _ in exp.conflicts} | {f"resolved {k}" for k, _, _ in exp.resolved}:
        event(kind)
    results = {}
    for mode in modes:
        into = f"{target.name}-{mode}"
        w.g.create_branch(into, from_=target.name)
        if len(sources) == 1:
            run = functools.partial(w.g.merge, sources[0].name, into=into, lineage=mode, **kw)
        else:
            run = functools.partial(
                w.g.merge_many, [s.name for s in sources], into=into, lineage=mode, **kw
            )
        try:
            results[mode] = check_merge(w.g, into, exp, target, sources, run)
        except AssertionError:
            for b in (target, *sources):  # first rule out the writes
                assert M.rows(w.g, b.name) == b.model, f"{b.name} shows other rows"
            raise
    assert len(set(results.values())) == 1, results


def modes_for(name: str, every: int) -> tuple[str, ...]:
    """The lineage modes an example runs: "on" (the default) always; "verify" (lineage
    and the walk both run and must agree) and "off" (walk only) on every `every`-th
    example, as the walk costs a DuckDB connection per changed table and side."""
    n = int(name[1:])
    return MODES if n % every == 0 else ("on",)


SUPPRESS = [HealthCheck.too_slow, HealthCheck.data_too_large]
# On failure Hypothesis prints the falsifying histories (explicit, replayable) and, with
# print_blob, a @reproduce_failure line.
strategies = st.sampled_from([None, None, "ours", "theirs"])

# The two-branch oracle is the suite's longest test, so it runs as two halves in two
# modules (test_oracle.py, test_oracle_two_branch.py) that pytest-xdist hands to two
# workers side by side: the same draws (TWO_BRANCH) and EXAMPLES examples in all. Its
# `--dist loadfile` hands out the files with the most tests first, so each module also
# checks half of the model against the truth table (81 quick cases): both halves start
# early instead of one waiting among the one-test files at the end.
EXAMPLES_HALVES = (max(1, EXAMPLES // 2), max(1, EXAMPLES - EXAMPLES // 2))
PAIRS_HALVES = (TT.PAIRS[: len(TT.PAIRS) // 2], TT.PAIRS[len(TT.PAIRS) // 2 :])
TWO_BRANCH = {
    "prefix": st.one_of(st.just([]), histories()),
    "src": histories(),
    "tgt": histories(flip=True),
    "strategy": strategies,
}


def model_agrees_with_the_truth_table(s_op: str, t_op: str) -> None:
    """The oracle's model, on one of the truth table's 81 pairs, gives the table's
    expectations: its conflict kinds, else "both sides applied"."""
    sides = {}
    for side, op in (("source", s_op), ("target", t_op)):
        sides[side] = copy.deepcopy(TT.BASE)
        TT.OPS[op][1](sides[side], side)
    exp = M.merge(
        TT.BASE,
        [sides["source"]],
        sides["target"],
        source_moved=[sides["source"] != TT.BASE],
        target_moved=sides["target"] != TT.BASE,
    )
    kinds = TT.CONFLICTS.get(frozenset({s_op, t_op}), set())
    if kinds:
        assert exp.outcome == "conflict"
        assert {kind for kind, _, _ in exp.conflicts} == kinds
        return
    both = copy.deepcopy(TT.BASE)
    TT.OPS[s_op][1](both, "source")
    TT.OPS[t_op][1](both, "target")
    assert exp.outcome != "conflict" and exp.result == both


def two_branch_example(w: World, prefix, src, tgt, strategy) -> None:
    """One example of the two-branch oracle: a trunk from the base with history
    `prefix`, a source and a target forked from it, merged in every mode the example
    runs, against the model."""
    name = w.fresh()
    trunk = make_branch(w, name, "main", BASE, prefix)
    source = make_branch(w, f"{name}-s", name, trunk.model, src)
    target = make_branch(w, f"{name}-t", name, trunk.model, tgt)
    exp = M.merge(
        trunk.model,
        [source.model],
        target.model,
        source_moved=[source.moved],
        target_moved=target.moved,
        strategy=strategy,
    )
    merge_all_modes(w, target, [source], exp, modes_for(name, 4), strategy=strategy)


# Sources forked from different commits of the target: the target's history is a trunk of
# 1-2 segments, each source forks from one of its checkpoints (0 = before the trunk moved),
# writes, and may then merge a later checkpoint (with a strategy, so it mostly lands)
# and write again. Each source is merged against its own base.
# Hypothesis leans to the first choice: sources fork from every checkpoint alike, a
# sync goes one checkpoint further (or two), and many sources only insert (shards).
_CHECKPOINT = st.sampled_from([0, 1, 2])
_SYNC = st.tuples(
    st.sampled_from([1, 2]),
    st.sampled_from(["ours", "theirs"]),
    st.one_of(st.just([]), histories(intents_per_commit=2)),
)
_STAGGERED = st.tuples(
    _CHECKPOINT,
    st.one_of(
        histories(flip=True, intents_per_commit=3, inserts_only=True),
        histories(intents_per_commit=3),
        histories(flip=True, intents_per_commit=3),
        histories(intents_per_commit=3, inserts_only=True),
    ),
    st.one_of(st.none(), _SYNC),
)


@dataclass
class Checkpoint:
    head: str
    model: M.Model
    rank: int  # the first checkpoint with this head (a segment may make no commit)


def make_trunk(w: World, name: str, segments) -> tuple[Branch, list[Checkpoint]]:
    w.g.create_branch(name, from_="main")
    m = BASE
    points = [Checkpoint(w.g.head(name).id, m, 0)]
    for segment in segments:
        m = apply_history(w.g, name, m, segment)
        head = w.g.head(name).id
        rank = next((p.rank for p in points if p.head == head), len(points))
        points.append(Checkpoint(head, m, rank))
    return Branch(name, m, points[-1].head != points[0].head, points[-1].head), points


def make_staggered_source(
    w: World, name: str, points: list[Checkpoint], spec
) -> tuple[Branch, Checkpoint]:
    """The source and its base: the checkpoint it forked from or last merged."""
    fork, commits, sync = spec
    base = points[min(fork, len(points) - 1)]
    src = make_branch(w, name, base.head, base.model, commits)
    own = src.moved  # commits the trunk does not have
    if sync is not None:
        ahead, strategy, after = sync
        later = points[min(fork + ahead, len(points) - 1)]
        if later.rank > base.rank:
            event("a source merged a later target commit")
            exp = M.merge(
                base.model,
                [later.model],
                src.model,
                source_moved=[True],
                target_moved=own,
                strategy=strategy,
            )
            if exp.outcome != "conflict":  # a constraint clash no strategy resolves
                w.g.create_branch(f"{name}-sync", from_=later.head)
                r = w.g.merge(f"{name}-sync", into=name, strategy=strategy)
                assert r.outcome == exp.outcome
                assert M.rows(w.g, name) == exp.result
                if r.outcome != "already_up_to_date":  # a commit records the merge
                    base, own = later, own or r.outcome == "merged"
                src = Branch(name, exp.result, own, w.g.head(name).id)
        if after:
            start = src.head
            m = apply_history(w.g, name, src.model, after)
            head = w.g.head(name).id
            own = own or head != start
            src = Branch(name, m, own, head)
    return Branch(src.name, src.model, own, src.head), base
