"""Schema conflicts settled one by one (issue 26, item 4): a resolution without a `key`
names a schema conflict by its table (and property) and settles it as `strategy` would
settle it alone; the other schema conflicts still block; bad ones are typed errors and
change nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import graphlake as gl
from graphlake.cli.app import app
from graphlake.errors import MergeConflictError, ResolutionError
from graphlake.merge import result as R
from graphlake.server.app import create_app
from graphlake.server.config import Scope, ServerConfig

BASE = """
node Person { name: String @key  age: I32? }
node Company { name: String @key }
edge WorksAt: Person -> Company
"""
TOKEN = "schema-resolutions-token-123"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("schema-res") / "g"
    g = gl.Graph.init(str(root), BASE)
    with g.write(message="seed") as w:
        w.insert(
            "Person",
            [{"name": "Ann", "age": 30}, {"name": "Bob", "age": 40}, {"name": "Cy", "age": 50}],
        )
        w.insert("Company", [{"name": "Acme"}])
        w.insert("WorksAt", [{"id": "w1", "src": "Ann", "dst": "Acme"}])
    return str(root)


@pytest.fixture(scope="module")
def g(template: str) -> gl.Graph:
    return gl.Graph.open(template)


_n = iter(range(10_000))


def _fork(g: gl.Graph) -> tuple[str, str]:
    n = next(_n)
    g.create_branch(f"s{n}", "main")
    g.create_branch(f"t{n}", "main")
    return f"s{n}", f"t{n}"


def _set(g: gl.Graph, branch: str, table: str, rows: list[dict[str, Any]]) -> None:
    with g.write(branch) as w:
        w.update(table, rows)


def _drop_vs_rename(g: gl.Graph, s: str, t: str) -> None:
    g.apply_schema(BASE.replace("age: I32?", ""), s, allow_drop=True)
    g.apply_schema(BASE.replace("age: I32?", "years: I32? @renamed_from(age)"), t)
    _set(g, t, "Person", [{"name": "Bob", "years": 41}])


def _retype_vs_drop(g: gl.Graph, s: str, t: str) -> None:
    """The source retypes age and updates a value; the target drops age."""
    g.apply_schema(BASE.replace("age: I32?", "age: I64?"), s)
    _set(g, s, "Person", [{"name": "Cy", "age": 51}])
    g.apply_schema(BASE.replace("age: I32?", ""), t, allow_drop=True)


def _added_differently(g: gl.Graph, s: str, t: str) -> None:
    g.apply_schema(BASE.replace("age: I32?", "age: I32?  x: String?"), s)
    _set(g, s, "Person", [{"name": "Ann", "x": "ann"}])
    g.apply_schema(BASE.replace("age: I32?", "age: I32?  x: I64?"), t)
    _set(g, t, "Person", [{"name": "Bob", "x": 7}])


def _range_differently(g: gl.Graph, s: str, t: str) -> None:
    g.apply_schema(BASE.replace("age: I32?", "age: I32? @range(0..100)"), s)
    g.apply_schema(BASE.replace("age: I32?", "age: I32? @range(0..150)"), t)


def _type_dropped_vs_inserted(g: gl.Graph, s: str, t: str) -> None:
    g.apply_schema("node Person { name: String @key  age: I32? }", t, allow_drop=True)
    with g.write(s) as w:
        w.insert("Company", [{"name": "Initech"}])


def _type_renamed_differently(g: gl.Graph, s: str, t: str) -> None:
    for branch, name in ((s, "Firm"), (t, "Business")):
        text = BASE.replace("node Company {", f"node {name} @renamed_from(Company) {{")
        g.apply_schema(text.replace("-> Company", f"-> {name}"), branch)


# Each schema conflict kind the truth tables produce: (make it, the conflict's name).
CASES: dict[str, tuple[Callable[[gl.Graph, str, str], None], tuple[str, str | None]]] = {
    "drop-vs-rename": (_drop_vs_rename, ("Person", "age")),
    "retype-vs-drop": (_retype_vs_drop, ("Person", "age")),
    "added-differently": (_added_differently, ("Person", "x")),
    "range-differently": (_range_differently, ("Person", "age")),
    "type-dropped-vs-rows": (_type_dropped_vs_inserted, ("Company", None)),
    "type-renamed-differently": (_type_renamed_differently, ("Company", None)),
}


def _res(table: str, prop: str | None, take: str) -> dict[str, Any]:
    return {"table": table, "property": prop, "take": take}


def _tables(g: gl.Graph, branch: str) -> dict[str, list[dict[str, Any]]]:
    snap = g.snapshot(branch)
    return {
        name: sorted(snap.read(name).to_pylist(), key=lambda r: r["id"])
        for name in g.schema_at(branch).table_names
    }


def _x_type(g: gl.Graph, branch: str) -> str:
    x = g.schema_at(branch).nodes["Person"].property("x")
    assert x is not None
    return str(x.type)


def _state(g: gl.Graph, branch: str) -> dict[str, Any]:
    """The branch's head, schema and rows."""
    return {"head": g.head(branch).id, "schema": g.schema_text(branch), **_tables(g, branch)}


@pytest.mark.parametrize("side", ["ours", "theirs"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_resolution_settles_a_schema_conflict_as_the_strategy_would(
    g: gl.Graph, case: str, side: str
) -> None:
    make, (table, prop) = CASES[case]
    s1, t1 = _fork(g)
    make(g, s1, t1)
    s2, t2 = _fork(g)
    make(g, s2, t2)
    # The merge conflicts on exactly this schema conflict.
    dry = g.merge(s2, into=t2, dry_run=True)
    assert dry.outcome == R.CONFLICT
    assert {(c.kind, c.table, c.entity_id or None) for c in dry.conflicts} == {
        ("schema_conflict", table, prop)
    }
    by_strategy = g.merge(s1, into=t1, strategy=side)
    before = _state(g, t2)
    resolution = [_res(table, prop, side)]
    dry = g.merge(s2, into=t2, resolutions=resolution, dry_run=True)
    assert dry.outcome == R.MERGED and _state(g, t2) == before
    by_resolution = g.merge(s2, into=t2, resolutions=resolution)
    assert by_resolution.outcome == R.MERGED
    assert g.schema_text(t2) == g.schema_text(t1)
    assert _tables(g, t2) == _tables(g, t1)
    assert {n: st.dropped_values for n, st in by_resolution.stats.items()} == {
        n: st.dropped_values for n, st in by_strategy.stats.items()
    }
    schema_resolved = [c for c in by_resolution.resolved if c.kind == "schema_conflict"]
    assert [(c.table, c.resolution) for c in schema_resolved] == [(table, "manual")]
    assert [c.resolution for c in by_strategy.resolved if c.kind == "schema_conflict"] == [side]
    [recorded] = g.head(t2).meta["resolutions"]
    assert (recorded["table"], recorded["key"], recorded["property"], recorded["take"]) == (
        table,
        None,
        prop,
        side,
    )


def test_a_dropped_type_restored_by_the_keeper_keeps_its_rows(g: gl.Graph) -> None:
    """The source kept Company and inserted a row, the target dropped it: taking the
    source restores the type with every row and column (found here: the restored type
    had no column mapping, so its key column was dropped and the merge failed)."""
    for how in ({"strategy": "theirs"}, {"resolutions": [_res("Company", None, "theirs")]}):
        s, t = _fork(g)
        _type_dropped_vs_inserted(g, s, t)
        g.merge(s, into=t, **how)
        assert g.schema_at(t).table_names == ("Person", "Company", "WorksAt")
        rows = g.snapshot(t).read("Company").to_pylist()
        assert sorted(r["name"] for r in rows) == ["Acme", "Initech"]
        assert [e["id"] for e in g.snapshot(t).read("WorksAt").to_pylist()] == ["w1"]


def _two_conflicts(g: gl.Graph) -> tuple[str, str]:
    s, t = _fork(g)
    g.apply_schema(BASE.replace("age: I32?", "age: I32? @range(0..100)  x: String?"), s)
    g.apply_schema(BASE.replace("age: I32?", "age: I32? @range(0..150)  x: I64?"), t)
    return s, t


def test_resolving_one_of_two_schema_conflicts_leaves_the_other_blocking(g: gl.Graph) -> None:
    s, t = _two_conflicts(g)
    before = _state(g, t)
    with pytest.raises(MergeConflictError) as err:
        g.merge(s, into=t, resolutions=[_res("Person", "x", "theirs")])
    assert [(c.table, c.entity_id) for c in err.value.conflicts] == [("Person", "age")]
    assert _state(g, t) == before
    dry = g.merge(s, into=t, resolutions=[_res("Person", "x", "theirs")], dry_run=True)
    assert dry.outcome == R.CONFLICT and [c.entity_id for c in dry.conflicts] == ["age"]
    # A row resolution waits while schema conflicts stop the merge before its rows.
    row = {"table": "Person", "key": "Ann", "property": "age", "take": "ours"}
    with pytest.raises(MergeConflictError):
        g.merge(s, into=t, resolutions=[_res("Person", "x", "theirs"), row])
    # The strategy settles what no resolution names; the resolution wins where it does.
    r = g.merge(s, into=t, resolutions=[_res("Person", "x", "theirs")], strategy="ours")
    assert sorted((c.entity_id, c.resolution) for c in r.resolved) == [
        ("age", "ours"),
        ("x", "manual"),
    ]
    person = g.schema_at(t).nodes["Person"]
    assert _x_type(g, t) == "String" and person.ranges["age"].max == 150


def test_both_resolved_merges(g: gl.Graph) -> None:
    s, t = _two_conflicts(g)
    g.merge(s, into=t, resolutions=[_res("Person", "x", "ours"), _res("Person", "age", "theirs")])
    person = g.schema_at(t).nodes["Person"]
    assert _x_type(g, t) == "I64" and person.ranges["age"].max == 100


def test_schema_and_row_resolutions_in_one_merge(g: gl.Graph) -> None:
    """Both sides add x differently and update Bob's age differently: one resolution
    settles the schema conflict, another the row conflict it lets the rows reach."""
    s, t = _fork(g)
    _added_differently(g, s, t)
    _set(g, s, "Person", [{"name": "Bob", "age": 44}])
    _set(g, t, "Person", [{"name": "Bob", "age": 45}])
    schema_only = [_res("Person", "x", "theirs")]
    dry = g.merge(s, into=t, resolutions=schema_only, dry_run=True)
    assert [(c.kind, c.entity_id) for c in dry.conflicts] == [("divergent_update", "Bob")]
    row = {"table": "Person", "key": "Bob", "property": "age", "take": "value", "value": 46}
    r = g.merge(s, into=t, resolutions=[*schema_only, row])
    assert sorted((c.kind, c.resolution) for c in r.resolved) == [
        ("divergent_update", "manual"),
        ("schema_conflict", "manual"),
    ]
    people = {p["name"]: p for p in g.snapshot(t).read("Person").to_pylist()}
    assert (people["Bob"]["age"], people["Ann"]["x"], people["Bob"]["x"]) == (46, "ann", None)
    assert len(g.head(t).meta["resolutions"]) == 2


@pytest.mark.parametrize(
    ("resolutions", "message"),
    [
        ([_res("Person", "name", "ours")], "no such schema conflict"),
        ([_res("Company", None, "ours")], "no such schema conflict"),
        ([_res("Nobody", "x", "theirs")], "no such schema conflict"),
        ([_res("Person", "x", "base")], "takes ours or theirs"),
        ([{**_res("Person", "x", "value"), "value": "I64"}], "takes ours or theirs"),
        ([_res("Person", "x", "ours"), _res("Person", "x", "theirs")], "resolved twice"),
    ],
)
def test_bad_schema_resolutions_are_typed_and_change_nothing(
    g: gl.Graph, resolutions: list[dict[str, Any]], message: str
) -> None:
    s, t = _fork(g)
    _added_differently(g, s, t)
    before = _state(g, t)
    for dry_run in (True, False):
        with pytest.raises(ResolutionError, match=message):
            g.merge(s, into=t, resolutions=resolutions, dry_run=dry_run)
    assert _state(g, t) == before


def test_a_schema_resolution_without_a_schema_merge_is_refused(g: gl.Graph) -> None:
    s, t = _fork(g)
    _set(g, s, "Person", [{"name": "Ann", "age": 31}])
    _set(g, t, "Person", [{"name": "Bob", "age": 41}])
    before = _state(g, t)
    with pytest.raises(ResolutionError, match="no such schema conflict"):
        g.merge(s, into=t, resolutions=[_res("Person", "age", "ours")])
    with pytest.raises(ResolutionError, match="no such schema conflict"):
        g.merge_many([s], into=t, resolutions=[_res("Person", "age", "ours")])
    assert _state(g, t) == before


def test_over_http_and_the_cli(g: gl.Graph, template: str, tmp_path: Path) -> None:
    s, t = _fork(g)
    _added_differently(g, s, t)
    config = ServerConfig(tokens={TOKEN: Scope.write}, protected_branches=frozenset())
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with TestClient(create_app(g, config), base_url="http://127.0.0.1") as client:
        bad = client.post(
            "/merge",
            headers=auth,
            json={"source": s, "into": t, "resolutions": [_res("Person", "age", "ours")]},
        )
        assert bad.status_code == 400 and "no such schema conflict" in bad.text
        r = client.post(
            "/merge",
            headers=auth,
            json={"source": s, "into": t, "resolutions": [_res("Person", "x", "theirs")]},
        )
        assert r.status_code == 200, r.text
    assert _x_type(g, t) == "String"

    s, t = _fork(g)
    _added_differently(g, s, t)
    path = tmp_path / "r.json"
    path.write_text(json.dumps([_res("Person", "x", "ours")]))
    runner = CliRunner()
    done = runner.invoke(app, ["merge", template, s, "--into", t, "--resolve", str(path)])
    assert done.exit_code == 0, done.output
    reopened = gl.Graph.open(template)
    assert _x_type(reopened, t) == "I64"
    assert reopened.head(t).meta["resolutions"][0]["property"] == "x"
