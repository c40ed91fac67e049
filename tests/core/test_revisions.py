"""Revisions in the Python API: reads take any revision, merge takes a commit as its
source, writes refuse anything but a branch name. (The grammar itself is tested over
hand-built commits in tests/catalog/test_catalog_revisions.py.)"""

from __future__ import annotations

import pytest

import graphlake as gl
from graphlake.errors import (
    AncestorNotFoundError,
    InvalidNameError,
    NotABranchError,
    RevisionSyntaxError,
    UnknownRevisionError,
)
from tests.conftest import state


def build_history(g: gl.Graph) -> dict[str, str]:
    """seed -> m1 on main; d1, d2 on dev; M = merge dev; O = merge_many f1, f2.

    Returns the commit ids by name; main ends at O (parents M, f1, f2).
    """
    ids = {"seed": g.head().id}
    g.create_branch("dev")
    with g.write("dev", "d1") as w:
        w.insert("Person", [{"name": "Dave"}])
    ids["d1"] = g.head("dev").id
    with g.write("dev", "d2") as w:
        w.update("Person", [{"name": "Bob", "age": 41}])
    ids["d2"] = g.head("dev").id
    with g.write("main", "m1") as w:
        w.insert("Person", [{"name": "Mia"}])
    ids["m1"] = g.head().id
    ids["M"] = g.merge("dev").commit
    for name in ("f1", "f2"):
        g.create_branch(name)
        with g.write(name, name) as w:
            w.insert("Company", [{"name": name.upper()}])
        ids[name] = g.head(name).id
    ids["O"] = g.merge_many(["f1", "f2"]).commit
    return ids


def people_at(g: gl.Graph, revision: str) -> set[str]:
    return set(g.nodes("Person", branch=revision).column("id").to_pylist())


def test_reads_take_any_revision(people: gl.Graph) -> None:
    g = people
    ids = build_history(g)
    expected = {
        "main": "O",
        "main~1": "M",
        "main^": "M",
        "main^2": "f1",
        "main^3": "f2",
        "main~1^2": "d2",
        "main~1^2~1": "d1",
        "main~2": "m1",
        "main~3": "seed",
        "main~1^1": "m1",
        "dev~1": "d1",
        ids["d2"][:8] + "^": "d1",
        ids["O"]: "O",
    }
    for revision, name in expected.items():
        assert g.resolve(revision).id == ids[name], revision
    assert people_at(g, "main~1^2~1") == {"Alice", "Bob", "Carol", "Dave"}
    assert people_at(g, ids["m1"][:7]) == {"Alice", "Bob", "Carol", "Mia"}
    assert g.get("Person", "Bob", branch="main~1^2~1")["age"] == 40
    assert g.get("Person", "Bob", branch="main~1^2")["age"] == 41
    assert g.edges("Knows", branch="main~3").num_rows == 2
    count = g.sql("SELECT count(*) AS n FROM Company", branch="main^3")
    assert count.column("n").to_pylist() == [2]  # Acme and F2
    assert [c.id for c in g.log("main~1", limit=2)] == [ids["M"], ids["m1"]]
    assert g.snapshot("main^2").commit.id == ids["f1"]


def test_ranges_in_log_and_diff(people: gl.Graph) -> None:
    g = people
    ids = build_history(g)
    # From the merge base of m1 and dev (the seed) to dev: dev's own commits only.
    assert [c.id for c in g.log("main~2...dev")] == [ids["d2"], ids["d1"]]
    assert [c.id for c in g.log("dev...main~2")] == [ids["m1"]]
    assert [c.id for c in g.log("main~2...dev", limit=1)] == [ids["d2"]]
    since_base = g.diff("main~2...dev")
    assert set(since_base) == {"Person"}
    assert since_base["Person"].inserted == ["Dave"]
    assert since_base["Person"].updated == {"Bob": ["age"]}
    assert since_base["Person"].deleted == []
    # The direct comparison also shows main's own insert, as a delete.
    assert g.diff("main~2", "dev")["Person"].deleted == ["Mia"]
    with pytest.raises(RevisionSyntaxError, match="not a range"):
        g.diff("main~2")
    with pytest.raises(gl.GraphLakeError, match="is a range"):
        g.diff("main~2...dev", "main")


def test_revision_errors_through_reads(people: gl.Graph) -> None:
    g = people
    with pytest.raises(AncestorNotFoundError, match="past the root"):
        g.nodes("Person", branch="main~2")
    with pytest.raises(UnknownRevisionError, match=r"did you mean main\?"):
        g.get("Person", "Bob", branch="mian")
    with pytest.raises(RevisionSyntaxError, match="position 5"):
        g.sql("SELECT 1", branch="main~x")
    with pytest.raises(UnknownRevisionError):
        g.log("nope...main")


def test_merge_takes_a_commit_as_its_source(people: gl.Graph) -> None:
    g = people
    g.create_branch("dev")
    with g.write("dev", "d1") as w:
        w.insert("Person", [{"name": "Dave"}])
    d1 = g.head("dev").id
    with g.write("dev", "d2") as w:
        w.update("Person", [{"name": "Bob", "age": 41}])
    with g.write("main", "m1") as w:
        w.insert("Person", [{"name": "Mia"}])
    m1 = g.head().id
    result = g.merge(d1[:10])
    assert result.outcome == "merged"
    head = g.head()
    assert head.parents == (m1, d1)  # the merged commit itself is the second parent
    assert people_at(g, "main") == {"Alice", "Bob", "Carol", "Dave", "Mia"}
    assert g.get("Person", "Bob")["age"] == 40  # d2 was not merged
    # The rest of dev merges on top, against d1 as the base.
    result = g.merge("dev")
    assert result.base == d1 and g.get("Person", "Bob")["age"] == 41
    # Merging an ancestor of the target changes nothing.
    assert g.merge("main~2").outcome == "already_up_to_date"


def test_merge_many_takes_revisions(people: gl.Graph) -> None:
    g = people
    for name in ("a", "b"):
        g.create_branch(name)
        with g.write(name, name) as w:
            w.insert("Company", [{"name": name.upper()}])
    with g.write("a", "a2") as w:
        w.insert("Company", [{"name": "A2"}])
    with g.write("main", "m1") as w:
        w.insert("Person", [{"name": "Mia"}])
    result = g.merge_many(["a~1", g.head("b").id[:9]])
    assert g.head().parents == (g.resolve("main~1").id, g.resolve("a~1").id, g.head("b").id)
    assert result.outcome == "merged"
    companies = set(g.nodes("Company").column("id").to_pylist())
    assert companies == {"Acme", "A", "B"}


def test_writes_refuse_commit_revisions(people: gl.Graph, tmp_path) -> None:
    g = people
    g.create_branch("dev")
    before = {b: state(g, b) for b in ("main", "dev")}
    head = g.head().id
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"type": "Person", "data": {"name": "Zed"}}\n')
    for revision in ("main~1", "main^", head, head[:7]):
        with pytest.raises(NotABranchError, match="not a branch"):
            g.write(revision)
        with pytest.raises(NotABranchError):
            g.load(rows, branch=revision)
        with pytest.raises(NotABranchError):
            g.optimize(revision)
        with pytest.raises(NotABranchError):
            g.merge("dev", into=revision)
        with pytest.raises(InvalidNameError):
            g.delete_branch(revision)
    with pytest.raises(InvalidNameError):
        g.create_branch("x~1")
    with pytest.raises(gl.BranchNotFoundError, match=r"did you mean main\?"):
        g.write("mainn")
    assert {b: state(g, b) for b in ("main", "dev")} == before
    assert g.branches() == ["dev", "main"]
    # A new branch at a revision is how to write there.
    g.create_branch("fix", from_="main~1")
    assert g.head("fix").id == g.resolve("main^").id
