"""Per-conflict resolutions on the merge_many paths of issue 26 item 4: sources forked
from different commits of the target (merge/across.py) are resolved like any conflict;
sources with differing schemas (merge/many_schema.py) refuse resolutions with a typed
error saying why, and change nothing."""

from __future__ import annotations

import pytest

import graphlake as gl
from graphlake.errors import ResolutionError
from tests.conftest import SOCIAL, seed_people, state


def _forked_apart(tmp_path) -> gl.Graph:
    """`a` forks before Dan is inserted on main, `b` after; both change Carol's age."""
    g = gl.Graph.init(tmp_path / "g", SOCIAL)
    seed_people(g)
    g.create_branch("a")
    with g.write() as w:
        w.insert("Person", [{"name": "Dan"}])
    g.create_branch("b")
    with g.write("a") as w:
        w.update("Person", [{"name": "Carol", "age": 7}])
    with g.write("b") as w:
        w.update("Person", [{"name": "Carol", "age": 8}])
    return g


def _carol(take: str, value: object = None, prop: str | None = "age") -> dict:
    out = {"table": "Person", "key": "Carol", "property": prop, "take": take}
    if take == "value":
        out["value"] = value
    return out


@pytest.mark.parametrize(
    ("resolution", "age"),
    [
        (_carol("a"), 7),
        (_carol("base"), None),
        (_carol("value", 9), 9),
        (_carol("b", prop=None), 8),  # the whole row of one source
    ],
)
def test_sources_from_different_bases_resolve(tmp_path, resolution: dict, age) -> None:
    g = _forked_apart(tmp_path)
    dry = g.merge_many(["a", "b"], dry_run=True)
    [conflict] = dry.conflicts
    assert conflict.between_sources and set(conflict.sides or ()) == {"a", "b"}
    r = g.merge_many(["a", "b"], resolutions=[resolution])
    assert r.outcome == "merged" and [c.resolution for c in r.resolved] == ["manual"]
    assert g.get("Person", "Carol")["age"] == age
    assert g.get("Person", "Dan") is not None  # the target's own change stays
    assert len(g.head().parents) == 3 and g.head().meta["resolutions"]


def test_bad_resolutions_across_bases_change_nothing(tmp_path) -> None:
    g = _forked_apart(tmp_path)
    before = state(g)
    for resolution, error in (
        (_carol("ours"), ResolutionError),  # a conflict between sources: name one
        (_carol("value", "old"), gl.errors.ResolutionTypeError),
        ({**_carol("a"), "key": "Bob"}, ResolutionError),  # no such conflict
    ):
        with pytest.raises(error):
            g.merge_many(["a", "b"], resolutions=[resolution])
        assert state(g) == before


def test_sources_with_differing_schemas_refuse_resolutions(tmp_path) -> None:
    g = gl.Graph.init(tmp_path / "g", SOCIAL)
    seed_people(g)
    g.create_branch("s0")
    g.create_branch("s1")
    g.apply_schema(
        SOCIAL.replace("role: enum(eng, pm, exec)?", "role: enum(eng, pm, exec)?\n  nick: String?"),
        "s0",
    )
    with g.write("s0") as w:
        w.update("Person", [{"name": "Bob", "age": 1}])
    with g.write("s1") as w:
        w.update("Person", [{"name": "Bob", "age": 2}])
    before = state(g)
    resolution = {"table": "Person", "key": "Bob", "property": "age", "take": "s1"}
    with pytest.raises(ResolutionError, match="different schemas"):
        g.merge_many(["s0", "s1"], resolutions=[resolution])
    assert state(g) == before
    with pytest.raises(gl.MergeConflictError):
        g.merge_many(["s0", "s1"])
