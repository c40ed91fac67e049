"""Issue 13: `merge_many` of sources whose schemas differ folds them into the target one
by one (`merge/many_schema.py`): schemas merge three-way, tables evolve as in a two-way
merge, sources on the target's schema keep zero-copy adoption, and a conflict in any
step publishes nothing."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import graphlake as gl
from graphlake import faults
from graphlake.errors import MergeConflictError
from graphlake.merge import result as R
from graphlake.merge.conflicts import SCHEMA_CONFLICT
from tests.conftest import state

BASE = """
node Person { name: String @key  age: I32? }
node Company { name: String @key }
edge WorksAt: Person -> Company
"""
PERSON = "age: I32?"
COMPANY = "node Company { name: String @key }"
REPO = Path(__file__).resolve().parents[2]
_names = itertools.count()


@pytest.fixture(scope="module")
def g(tmp_path_factory: pytest.TempPathFactory) -> gl.Graph:
    graph = gl.Graph.init(str(tmp_path_factory.mktemp("mms") / "g"), BASE)
    with graph.write(message="seed") as w:
        w.insert("Person", [{"name": "Ann", "age": 30}, {"name": "Bob", "age": 40}])
        w.insert("Company", [{"name": "Acme"}])
    return graph


def _branches(g: gl.Graph, k: int) -> tuple[str, list[str]]:
    n = next(_names)
    g.create_branch(f"t{n}", "main")
    for i in range(k):
        g.create_branch(f"s{n}-{i}", "main")
    return f"t{n}", [f"s{n}-{i}" for i in range(k)]


def _rows(g: gl.Graph, branch: str, table: str) -> dict[str, dict]:
    return {r["id"]: r for r in g.snapshot(branch).read(table).to_pylist()}


def test_shards_that_each_add_a_property_merge_in_one_commit(g: gl.Graph) -> None:
    t, (s0, s1, s2) = _branches(g, 3)
    g.apply_schema(BASE.replace(PERSON, f"{PERSON}  email: String?"), s0)
    with g.write(s0) as w:
        w.update("Person", [{"name": "Ann", "email": "ann@x"}])
    g.apply_schema(BASE.replace(COMPANY, "node Company { name: String @key  url: String? }"), s1)
    with g.write(s1) as w:
        w.insert("Company", [{"name": "Initech", "url": "initech.example"}])
    with g.write(s2) as w:  # on the target's schema: merged with zero-copy adoption
        w.insert("WorksAt", [{"id": "w1", "src": "Ann", "dst": "Acme"}])
        w.insert("Person", [{"name": "Cy", "age": 5}])
    with g.write(t) as w:
        w.update("Person", [{"name": "Bob", "age": 41}])
        w.insert("WorksAt", [{"id": "w0", "src": "Bob", "dst": "Acme"}])
    head = g.head(t).id
    dry = g.merge_many([s0, s1, s2], into=t, dry_run=True)
    assert dry.outcome == R.MERGED and g.head(t).id == head

    r = g.merge_many([s0, s1, s2], into=t)
    assert r.outcome == R.MERGED and not r.conflicts
    commit = g.head(t)
    assert commit.parents == (head, *(g.head(s).id for s in (s0, s1, s2)))
    schema = g.schema_at(t)
    assert schema.nodes["Person"].property("email") is not None
    assert schema.nodes["Company"].property("url") is not None
    people = _rows(g, t, "Person")
    assert {k: (p["age"], p["email"]) for k, p in people.items()} == {
        "Ann": (30, "ann@x"),
        "Bob": (41, None),
        "Cy": (5, None),
    }
    companies = _rows(g, t, "Company")
    assert companies["Initech"]["url"] == "initech.example"
    assert companies["Acme"]["url"] is None
    assert set(_rows(g, t, "WorksAt")) == {"w0", "w1"}
    assert r.routes["WorksAt"] == R.INSERTION_REPLAY and r.stats["WorksAt"].adopted_rows == 1
    # The merge's history holds every source: merging them again adds nothing.
    assert g.merge_many([s0, s1, s2], into=t).outcome == R.ALREADY_UP_TO_DATE
    assert g.fsck().ok


def test_rows_of_shards_without_the_new_property_get_its_default(g: gl.Graph) -> None:
    t, (s0, s1, s2) = _branches(g, 3)
    g.apply_schema(BASE.replace(PERSON, f"{PERSON}  score: I64 @default(7)"), s1)
    with g.write(s1) as w:
        w.insert("Person", [{"name": "Dee", "score": 1}])
    for i, s in enumerate((s0, s2)):
        with g.write(s) as w:
            w.insert("Person", [{"name": f"P{i}"}])
            w.update("Person", [{"name": "Ann", "age": 31}] if i == 0 else [])
    r = g.merge_many([s0, s1, s2], into=t)
    assert r.outcome == R.MERGED
    people = _rows(g, t, "Person")
    assert {k: (p["age"], p["score"]) for k, p in people.items()} == {
        "Ann": (31, 7),
        "Bob": (40, 7),
        "Dee": (None, 1),
        "P0": (None, 7),
        "P1": (None, 7),
    }


def test_a_rename_folded_first_keeps_later_sources_updates(g: gl.Graph) -> None:
    t, (s0, s1) = _branches(g, 2)
    g.apply_schema(BASE.replace(PERSON, "years: I32? @renamed_from(age)"), s0)
    g.apply_schema(BASE.replace(COMPANY, "node Company { name: String @key  url: String? }"), s1)
    with g.write(s1) as w:
        w.update("Person", [{"name": "Ann", "age": 31}])
    r = g.merge_many([s0, s1], into=t)
    assert r.outcome == R.MERGED and not r.stats["Person"].dropped_values
    assert {k: p["years"] for k, p in _rows(g, t, "Person").items()} == {"Ann": 31, "Bob": 40}
    assert "url" in g.schema_text(t)


def test_conflicting_schema_changes_publish_nothing(g: gl.Graph) -> None:
    t, (s0, s1, s2) = _branches(g, 3)
    g.apply_schema(BASE.replace(PERSON, f"{PERSON}  email: String?"), s0)
    g.apply_schema(BASE.replace(PERSON, f"{PERSON}  email: I64?"), s1)
    with g.write(s2) as w:
        w.insert("Person", [{"name": "Cy"}])
    before = state(g, t)
    dry = g.merge_many([s0, s1, s2], into=t, dry_run=True)
    assert dry.outcome == R.CONFLICT
    assert [c.kind for c in dry.conflicts] == [SCHEMA_CONFLICT]
    with pytest.raises(MergeConflictError) as err:
        g.merge_many([s0, s1, s2], into=t)
    assert [c.kind for c in err.value.conflicts] == [SCHEMA_CONFLICT]
    assert err.value.conflicts[0].table == "Person"
    assert state(g, t) == before
    # strategy resolves it, as in a two-way merge: the target's side (s0's, folded) wins.
    r = g.merge_many([s0, s1, s2], into=t, strategy="ours")
    assert r.outcome == R.MERGED and [c.kind for c in r.resolved] == [SCHEMA_CONFLICT]
    assert str(g.schema_at(t).nodes["Person"].property("email").type) == "String"


def test_conflicting_rows_across_steps_publish_nothing(g: gl.Graph) -> None:
    t, (s0, s1) = _branches(g, 2)
    g.apply_schema(BASE.replace(PERSON, f"{PERSON}  email: String?"), s0)
    with g.write(s0) as w:
        w.update("Person", [{"name": "Ann", "age": 1}])
    with g.write(s1) as w:
        w.update("Person", [{"name": "Ann", "age": 2}])
    before = state(g, t)
    with pytest.raises(MergeConflictError) as err:
        g.merge_many([s0, s1], into=t)
    assert {c.entity_id for c in err.value.conflicts} == {"Ann"}
    assert state(g, t) == before


def test_strict_disjoint_with_differing_schemas_is_refused(g: gl.Graph) -> None:
    t, (s0, s1) = _branches(g, 2)
    g.apply_schema(BASE.replace(PERSON, f"{PERSON}  email: String?"), s0)
    with g.write(s1) as w:
        w.insert("Person", [{"name": "Cy"}])
    before = state(g, t)
    with pytest.raises(gl.MergeError, match=f"strict_disjoint.*'{s0}'"):
        g.merge_many([s0, s1], into=t, strict_disjoint=True)
    assert state(g, t) == before


# --- crashes: the fault points of one publication, as in tests/recovery ---------------

_SCRIPT = """
import sys, graphlake as gl
g = gl.Graph.open(sys.argv[1])
g.merge_many(["s0", "s1", "s2"], into="main")
"""


@pytest.fixture(scope="module")
def crash_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, dict]:
    root = tmp_path_factory.mktemp("mms-crash")
    template = root / "template"
    g = gl.Graph.init(str(template), BASE)
    with g.write(message="seed") as w:
        w.insert("Person", [{"name": "Ann"}])
    for i in range(3):
        g.create_branch(f"s{i}")
    g.apply_schema(BASE.replace(PERSON, f"{PERSON}  email: String?"), "s0")
    with g.write("s0") as w:
        w.update("Person", [{"name": "Ann", "email": "a@x"}])
    with g.write("s1") as w:
        w.insert("Company", [{"name": "Acme"}])
    g.apply_schema(BASE.replace(COMPANY, "node Company { name: String @key  url: String? }"), "s2")
    with g.write("main") as w:
        w.insert("Person", [{"name": "Bob"}])
    reference = root / "reference"
    shutil.copytree(template, reference)
    gl.Graph.open(reference).merge_many(["s0", "s1", "s2"], into="main")
    return template, _all_rows(gl.Graph.open(template)), _all_rows(gl.Graph.open(reference))


def _all_rows(g: gl.Graph) -> dict:
    snap = g.snapshot("main")
    return {
        "schema": g.schema_text("main"),
        **{
            t: sorted(snap.read(t).to_pylist(), key=lambda r: r["id"])
            for t in g.schema_at("main").table_names
        },
    }


@pytest.mark.parametrize("point", ["merge_many.after_table_effect:2", "merge_many.after_ref_cas"])
def test_a_crash_shows_the_before_or_the_after_state(crash_template, tmp_path, point: str) -> None:
    from graphlake.recovery.recover import COMPLETED, ROLLED_BACK

    template, before, after = crash_template
    uri = tmp_path / "g"
    shutil.copytree(template, uri)
    env = {**os.environ, faults.ENV: point}
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(uri)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == faults.EXIT_CODE, proc.stderr[-2000:]
    g = gl.Graph.open(uri, recover=False)
    published = point.endswith("after_ref_cas")
    report = g.recover()
    assert [x.outcome for x in report.recovered] == [COMPLETED if published else ROLLED_BACK]
    g = gl.Graph.open(uri)
    assert _all_rows(g) == (after if published else before)
    assert g.fsck().ok, g.fsck().problems
    if not published:  # re-running the merge reaches the after state
        g.merge_many(["s0", "s1", "s2"], into="main")
        assert _all_rows(gl.Graph.open(uri)) == after
