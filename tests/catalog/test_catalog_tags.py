"""Tags: immutable names of commits, one namespace with branches, revisions everywhere,
kept by gc, and typed errors that change nothing."""

from __future__ import annotations

import datetime as dt
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import graphlake as gl
from graphlake.catalog.authors import Author
from graphlake.errors import (
    BranchExistsError,
    InvalidNameError,
    NotABranchError,
    TagExistsError,
    TagNotFoundError,
    UnknownRevisionError,
)

SCHEMA = "node Person { name: String @key\n age: I32? }\n"


@pytest.fixture
def g(tmp_path: Path) -> gl.Graph:
    graph = gl.Graph.init(tmp_path / "g", SCHEMA)
    with graph.write() as w:
        w.insert("Person", [{"name": "a", "age": 1}])
    return graph


def test_a_tag_names_one_commit_forever(g: gl.Graph) -> None:
    first = g.head()
    tag = g.tag("v1", "main", "first release", author="Rel <rel@x.org>")
    assert (tag.name, tag.commit, tag.message) == ("v1", first.id, "first release")
    assert tag.author == Author("Rel", "rel@x.org")
    with g.write() as w:
        w.update("Person", [{"name": "a", "age": 2}])
    assert g.resolve("v1").id == first.id  # the branch moved, the tag did not
    assert g.resolve("v1~1").id == first.parents[0]
    assert [c.id for c in g.log("v1")] == [first.id, first.parents[0]]
    assert g.get("Person", "a", branch="v1")["age"] == 1
    assert list(g.tags()) == ["v1"]
    with pytest.raises(TagExistsError, match="exists already"):
        g.tag("v1", "main")
    assert g.resolve("v1").id == first.id


def test_tags_and_branches_share_one_namespace(g: gl.Graph) -> None:
    g.tag("v1")
    with pytest.raises(TagExistsError, match="is a branch"):
        g.tag("main")
    with pytest.raises(BranchExistsError, match="is a tag"):
        g.create_branch("v1")
    assert g.branches() == ["main"] and list(g.tags()) == ["v1"]
    with pytest.raises(NotABranchError):
        g.write("v1")


@pytest.mark.parametrize("bad", ["", "a b", "../x", "v1.lock", "x~1", "-" * 201])
def test_invalid_tag_names(g: gl.Graph, bad: str) -> None:
    with pytest.raises(InvalidNameError, match="tag name"):
        g.tag(bad)
    assert g.tags() == {}


def test_unknown_revisions_and_tags(g: gl.Graph) -> None:
    with pytest.raises(UnknownRevisionError):
        g.tag("v1", "nope")
    with pytest.raises(TagNotFoundError):
        g.delete_tag("v1")
    assert g.tags() == {}


def test_deleting_a_tag_frees_the_name(g: gl.Graph) -> None:
    g.tag("v1", "main~1")
    assert g.delete_tag("v1").commit == g.head().parents[0]
    assert g.tags() == {}
    assert g.tag("v1").commit == g.head().id


def test_concurrent_creates_of_one_tag_let_exactly_one_win(g: gl.Graph) -> None:
    def attempt(_: int) -> str:
        try:
            g.tag("race")
        except TagExistsError:
            return "lost"
        return "won"

    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(attempt, range(8)))
    assert outcomes.count("won") == 1


def test_gc_keeps_what_a_tag_reaches(g: gl.Graph) -> None:
    g.create_branch("dev")
    with g.write("dev") as w:
        w.insert("Person", [{"name": "only-on-dev"}])
    g.tag("kept", "dev")
    g.delete_branch("dev")
    g.create_branch("gone")
    with g.write("gone") as w:
        w.insert("Person", [{"name": "forgotten"}])
    gone = g.head("gone").id
    g.delete_branch("gone")
    g.gc(grace=dt.timedelta(0), reflog_keep=dt.timedelta(0))
    assert not gl.Graph.open(g.uri).repo.commits.exists(gone)  # gc removed what nothing reaches
    assert g.get("Person", "only-on-dev", branch="kept") is not None
    assert not g.fsck().problems
