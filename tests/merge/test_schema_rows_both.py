"""Issue 13: a table whose rows BOTH sides changed while its columns differ merges like
any table: base, target and source are evolved to the merged layout, then the usual
three-way row merge runs (conflicts, constraint checks, strategies, dry runs)."""

from __future__ import annotations

import copy
import itertools

import pytest

import graphlake as gl
from tests.conftest import state
from tests.merge.conftest import person_rows, schema_graph
from tests.merge.test_schema_truth_table import AGE, BASE, BASE_PG, DATA, SCHEMA, Rows


def _schema_side_rows(g: gl.Graph, branch: str) -> None:
    """What the side that changed the schema also does to rows: a new person and an
    update of a column every layout keeps."""
    with g.write(branch) as w:
        w.insert("Person", [{"name": "D"}])
        w.update("Person", [{"name": "A", "email": "a@x"}])


def _schema_side_model(m: Rows) -> None:
    m["D"] = {"id": "D", "name": "D", "age": None, "email": None}
    m["A"]["email"] = "a@x"


def _props(g: gl.Graph, rev: str) -> list[tuple[str, object]]:
    person = g.schema_at(rev).table("Person")
    assert person is not None
    return [(p.name, p.type) for p in person.properties]


# Schema operations that change the layout (an added constraint keeps it: the same-layout
# route, covered by the truth table and by the @unique test below).
LAYOUT_OPS = [op for op in SCHEMA if op != "addConstraint"]
CASES = list(itertools.product(LAYOUT_OPS, DATA, ("source", "target")))


@pytest.mark.parametrize(
    ("schema_op", "data_op", "schema_side"),
    CASES,
    ids=[f"{s}-{d}-schema-on-{side}" for s, d, side in CASES],
)
def test_rows_on_both_sides(
    schema_template: str, tmp_path, schema_op: str, data_op: str, schema_side: str
) -> None:
    g = schema_graph(schema_template, tmp_path)
    other = "target" if schema_side == "source" else "source"
    g.apply_schema(SCHEMA[schema_op][0], schema_side)
    _schema_side_rows(g, schema_side)
    DATA[data_op][0](g, other, other)
    model = copy.deepcopy(BASE)
    _schema_side_model(model)
    DATA[data_op][1](model, other)
    SCHEMA[schema_op][1](model)
    dry = g.merge("source", into="target", dry_run=True)
    assert dry.outcome == "merged" and not dry.conflicts
    r = g.merge("source", into="target")
    assert r.outcome == "merged"
    assert person_rows(g, "target") == model
    assert _props(g, "target") == _props(g, schema_side)
    if schema_op == "dropProp" and data_op == "setProperty":
        assert r.stats["Person"].dropped_values["age"]["values"] == {"C": AGE[other]}
        assert dry.stats["Person"].dropped_values["age"]["values"] == {"C": AGE[other]}


def test_a_new_default_fills_the_other_sides_rows(schema_template: str, tmp_path) -> None:
    """A non-null property with @default added on one side: the other side's rows (old
    and newly inserted) get the default, the side's own values stay."""
    g = schema_graph(schema_template, tmp_path)
    g.apply_schema(
        BASE_PG.replace("email: String?", 'email: String? tier: String @default("x")'), "target"
    )
    with g.write("target") as w:
        w.update("Person", [{"name": "A", "tier": "gold"}])
    with g.write("source") as w:
        w.insert("Person", [{"name": "E", "age": 5}])
        w.update("Person", [{"name": "B", "age": 7}])
    g.merge("source", into="target")
    rows = person_rows(g, "target")
    assert {k: (r["tier"], r["age"]) for k, r in rows.items()} == {
        "A": ("gold", None),
        "B": ("x", 7),
        "C": ("x", None),
        "E": ("x", 5),
    }


def _both_set_c(g: gl.Graph) -> None:
    g.apply_schema(SCHEMA["retypeProp"][0], "target")
    with g.write("target") as w:
        w.update("Person", [{"name": "C", "age": AGE["target"]}])
    with g.write("source") as w:
        w.update("Person", [{"name": "C", "age": AGE["source"]}])


def test_divergent_update_across_a_retype_conflicts(schema_template: str, tmp_path) -> None:
    g = schema_graph(schema_template, tmp_path)
    _both_set_c(g)
    before = state(g, "target")
    dry = g.merge("source", into="target", dry_run=True)
    assert dry.outcome == "conflict"
    assert [(c.kind, c.entity_id) for c in dry.conflicts] == [("divergent_update", "C")]
    with pytest.raises(gl.MergeConflictError) as err:
        g.merge("source", into="target")
    assert [(c.kind, c.entity_id) for c in err.value.conflicts] == [("divergent_update", "C")]
    assert state(g, "target") == before


def test_a_strategy_resolves_across_a_retype(schema_template: str, tmp_path) -> None:
    g = schema_graph(schema_template, tmp_path)
    _both_set_c(g)
    g.merge("source", into="target", strategy="theirs")
    assert person_rows(g, "target")["C"]["age"] == AGE["source"]


def test_an_added_unique_is_checked_against_the_merged_rows(schema_template: str, tmp_path) -> None:
    """Target adds @unique(email) and sets A's email; source sets B's to the same."""
    g = schema_graph(schema_template, tmp_path)
    g.apply_schema(SCHEMA["addConstraint"][0], "target")
    with g.write("target") as w:
        w.update("Person", [{"name": "A", "email": "same"}])
    with g.write("source") as w:
        w.update("Person", [{"name": "B", "email": "same", "age": 3}])
    before = state(g, "target")
    dry = g.merge("source", into="target", dry_run=True)
    assert {c.kind for c in dry.conflicts} == {"unique_violation"}
    with pytest.raises(gl.MergeConflictError) as err:
        g.merge("source", into="target")
    assert {c.kind for c in err.value.conflicts} == {"unique_violation"}
    assert state(g, "target") == before


@pytest.mark.s3
def test_rename_with_rows_on_both_sides_on_s3(s3_server) -> None:
    g = gl.Graph.init(s3_server.fresh_uri(), BASE_PG, storage_options=s3_server.options)
    with g.write(message="base") as w:
        w.insert("Person", [{"name": n} for n in "ABC"])
    g.create_branch("source")
    g.create_branch("target")
    g.apply_schema(SCHEMA["renameProp"][0], "source")
    _schema_side_rows(g, "source")
    DATA["setProperty"][0](g, "target", "target")
    g.merge("source", into="target")
    model = copy.deepcopy(BASE)
    _schema_side_model(model)
    DATA["setProperty"][1](model, "target")
    SCHEMA["renameProp"][1](model)
    assert person_rows(g, "target") == model


def test_merge_many_folds_a_source_whose_schema_differs(schema_template: str, tmp_path) -> None:
    """(It was refused until merge_many learnt to fold: tests/merge/test_merge_many_schemas.)"""
    g = schema_graph(schema_template, tmp_path)
    g.create_branch("other")
    g.apply_schema(SCHEMA["addProp"][0], "source")
    with g.write("other") as w:
        w.insert("Person", [{"name": "F"}])
    with g.write("target") as w:
        w.insert("Person", [{"name": "G"}])
    assert g.merge_many(["source", "other"], into="target").outcome == "merged"
    assert set(person_rows(g, "target")) == {"A", "B", "C", "F", "G"}


def test_a_dry_run_leaves_no_scratch_branches(schema_template: str, tmp_path) -> None:
    from tests.maintenance.test_gc import ZERO, lance_branches, objects

    g = schema_graph(schema_template, tmp_path)
    g.apply_schema(SCHEMA["renameProp"][0], "source")
    _schema_side_rows(g, "source")
    DATA["setProperty"][0](g, "target", "target")
    tid = g.head("target").tables["Person"].table_id
    before = lance_branches(g, tid)
    files = objects(g)
    # Base, target and source are evolved on forks while the dry run classifies; the
    # forks are deleted when it ends (storage/scratch.py), so it leaves nothing behind.
    assert g.merge("source", into="target", dry_run=True).outcome == "merged"
    assert lance_branches(g, tid) == before
    assert objects(g) == files  # not one file added, changed or removed
    report = g.gc(grace=ZERO, reflog_keep=ZERO)
    assert not report.warnings, report.warnings
    assert report.lance_branches == 0
    g.merge("source", into="target")
    assert person_rows(g, "target")["A"]["email"] == "a@x"


PAIRS = [("renameProp", "retypeProp"), ("addProp", "renameProp"), ("dropProp", "addProp")]


@pytest.mark.parametrize(("s_op", "t_op"), PAIRS, ids=[f"{s}-{t}" for s, t in PAIRS])
def test_schema_changes_on_both_sides_with_rows_on_both(
    schema_template: str, tmp_path, s_op: str, t_op: str
) -> None:
    g = schema_graph(schema_template, tmp_path)
    g.apply_schema(SCHEMA[s_op][0], "source")
    g.apply_schema(SCHEMA[t_op][0], "target")
    for branch, key, row in (("source", "S", "A"), ("target", "T", "B")):
        with g.write(branch) as w:
            w.insert("Person", [{"name": key}])
            w.update("Person", [{"name": row, "email": branch}])
    model = copy.deepcopy(BASE)
    for key in "ST":
        model[key] = {"id": key, "name": key, "age": None, "email": None}
    model["A"]["email"], model["B"]["email"] = "source", "target"
    SCHEMA[t_op][1](model)
    SCHEMA[s_op][1](model)
    g.merge("source", into="target")
    assert person_rows(g, "target") == model


@pytest.mark.slow
def test_a_crash_before_the_ref_cas_rolls_back(schema_template: str, tmp_path) -> None:
    """A process killed after the evolved forks and the merged rows exist, before the
    ref moves: recovery rolls back, the target reads as before, a re-run merges."""
    import os
    import subprocess
    import sys

    from graphlake import faults
    from graphlake.recovery.recover import ROLLED_BACK

    g = schema_graph(schema_template, tmp_path)
    g.apply_schema(SCHEMA["renameProp"][0], "source")
    _schema_side_rows(g, "source")
    DATA["removeNode"][0](g, "target", "target")
    before = state(g, "target")
    script = "import sys, graphlake as gl; gl.Graph.open(sys.argv[1]).merge('source', 'target')"
    env = {**os.environ, faults.ENV: "merge.before_ref_cas"}
    proc = subprocess.run(
        [sys.executable, "-c", script, str(g.uri)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == faults.EXIT_CODE, proc.stderr[-2000:]
    g = gl.Graph.open(g.uri, recover=False)
    report = g.recover()
    assert [r.outcome for r in report.recovered] == [ROLLED_BACK]
    g = gl.Graph.open(g.uri)
    assert state(g, "target") == before
    assert g.fsck().ok
    g.merge("source", into="target")
    model = copy.deepcopy(BASE)
    _schema_side_model(model)
    DATA["removeNode"][1](model, "target")
    SCHEMA["renameProp"][1](model)
    assert person_rows(g, "target") == model


def test_a_backfill_merges_into_a_target_that_changed_its_layout_and_rows(
    schema_template: str, tmp_path
) -> None:
    """Source adds `nick` and backfills it; target renames `age` and updates rows: the
    column route runs on the evolved states."""
    g = schema_graph(schema_template, tmp_path)
    g.apply_schema(SCHEMA["addProp"][0], "source")
    with g.write("source") as w:
        w.set_property("Person", "nick", [{"name": n, "nick": n.lower()} for n in "AB"])
    g.apply_schema(SCHEMA["renameProp"][0], "target")
    with g.write("target") as w:
        w.update("Person", [{"name": "C", "years": 5}])
        w.insert("Person", [{"name": "T"}])
    g.merge("source", into="target")
    rows = person_rows(g, "target")
    assert {k: (r["years"], r["nick"]) for k, r in rows.items()} == {
        "A": (None, "a"),
        "B": (None, "b"),
        "C": (5, None),
        "T": (None, None),
    }


EDGE_PG = "node P { name: String @key }\nedge Knows: P -> P { since: I32? }\n"


def test_an_edge_table_merges_across_a_rename_and_an_add(tmp_path) -> None:
    g = gl.Graph.init(tmp_path / "e", EDGE_PG)
    with g.write() as w:
        w.insert("P", [{"name": n} for n in "ABC"])
        w.insert(
            "Knows", [{"id": "k1", "src": "A", "dst": "B"}, {"id": "k2", "src": "B", "dst": "C"}]
        )
    g.create_branch("source")
    g.create_branch("target")
    g.apply_schema(EDGE_PG.replace("since: I32?", "year: I32? @renamed_from(since)"), "source")
    with g.write("source") as w:
        w.insert("Knows", [{"id": "k3", "src": "C", "dst": "A", "year": 7}])
        w.update("Knows", [{"id": "k1", "year": 1}])
    g.apply_schema(EDGE_PG.replace("since: I32?", "since: I32?  w: F64?"), "target")
    with g.write("target") as w:
        w.update("Knows", [{"id": "k2", "since": 2, "w": 0.5}])
    g.merge("source", into="target")
    edges = sorted(g.snapshot("target").read("Knows").to_pylist(), key=lambda r: r["id"])
    assert edges == [
        {"id": "k1", "src": "A", "dst": "B", "year": 1, "w": None},
        {"id": "k2", "src": "B", "dst": "C", "year": 2, "w": 0.5},
        {"id": "k3", "src": "C", "dst": "A", "year": 7, "w": None},
    ]
