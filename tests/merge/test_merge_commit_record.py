"""What the caller gives a merge-engine operation reaches the commit it publishes, on
every path: a two-way merge, an N-way `merge_many`, a `merge_many` folded across schemas
(`merge/many_schema.py`), a revert and a cherry-pick. The caller's extra meta (a merge
request records its id there), the message, the author and the merged data checks are
recorded alike; a dry run reports no commit on every path."""

from __future__ import annotations

import itertools

import pytest

import graphlake as gl
from graphlake.catalog.authors import Author, acting_as
from graphlake.merge import engine
from graphlake.merge import result as R

BASE = """
node Person { name: String @key  age: I32? }
node Company { name: String @key }
"""
WIDER = BASE.replace("age: I32?", "age: I32?  email: String?")
CHECK = "MATCH (p:Person) WHERE p.age < 0 RETURN p.name AS name"
EXTRA = {"merge_request": 7, "source_branch": "feature", "nested": {"ticket": ["A-1"]}}
_names = itertools.count()

# merge_many's paths: every source on the target's schema (one N-way step), or one of
# them on another schema (the fold); plus the two-way merge.
PATHS = ("two_way", "n_way", "fold")


@pytest.fixture(scope="module")
def g(tmp_path_factory: pytest.TempPathFactory) -> gl.Graph:
    graph = gl.Graph.init(str(tmp_path_factory.mktemp("record") / "g"), BASE)
    with graph.write(message="seed") as w:
        w.insert("Person", [{"name": "Ann", "age": 30}, {"name": "Bob", "age": 40}])
        w.insert("Company", [{"name": "Acme"}])
    return graph


def _sources(g: gl.Graph, path: str) -> tuple[str, list[str]]:
    """A target that moved and the sources of `path`; the first source adds a data
    check (so the merge commit's data checks are the merged ones, not the target's)."""
    n = next(_names)
    t, s0, s1 = f"t{n}", f"s{n}-0", f"s{n}-1"
    for b in (t, s0, s1):
        g.create_branch(b, "main")
    g.set_data_checks({"negative_age": CHECK}, branch=s0, message="a check")
    with g.write(s0) as w:
        w.insert("Person", [{"name": f"P{n}", "age": 1}])
    if path == "fold":
        g.apply_schema(WIDER, s1)
    with g.write(s1) as w:
        w.insert("Company", [{"name": f"C{n}"}])
    with g.write(t) as w:
        w.update("Person", [{"name": "Bob", "age": 41}])
    return t, ([s0] if path == "two_way" else [s0, s1])


def _merge(g: gl.Graph, path: str, sources: list[str], into: str, **kw: object) -> R.MergeResult:
    with acting_as("Lander <lander@example.com>"):
        if path == "two_way":
            return engine.merge(g.repo, sources[0], into, **kw)  # type: ignore[arg-type]
        return engine.merge_many(g.repo, sources, into, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("path", PATHS)
def test_the_merge_commit_records_what_the_caller_gave(g: gl.Graph, path: str) -> None:
    t, sources = _sources(g, path)
    target = g.head(t)
    heads = [g.head(s) for s in sources]
    r = _merge(g, path, sources, t, meta=EXTRA, message="land it", checks=True)
    assert r.outcome == R.MERGED and r.checks_passed
    commit = g.head(t)
    assert r.commit == commit.id
    assert commit.parents == (target.id, *(h.id for h in heads))
    assert commit.message == "land it"
    assert commit.author == Author("Lander", "lander@example.com")
    assert {k: commit.meta[k] for k in EXTRA} == {
        "merge_request": 7,
        "source_branch": "feature",
        "nested": {"ticket": ("A-1",)},
    }
    assert commit.meta["sources"] == tuple(sources) and commit.meta["merge_base"] == r.base
    assert commit.checks_id == heads[0].checks_id != target.checks_id
    assert "email" in g.schema_text(t) if path == "fold" else "email" not in g.schema_text(t)


@pytest.mark.parametrize("path", PATHS)
def test_meta_cannot_overwrite_the_merge_record(g: gl.Graph, path: str) -> None:
    """`meta` adds entries; one the merge itself records is refused (every path alike)
    and nothing is published."""
    t, sources = _sources(g, path)
    head = g.head(t).id
    for key in ("sources", "merge_base", "source_bases", "resolutions"):
        with pytest.raises(gl.MergeError, match=repr(key)):
            _merge(g, path, sources, t, meta={key: ["forged"], "k": 1})
        assert g.head(t).id == head


@pytest.mark.parametrize("path", PATHS)
def test_a_dry_run_reports_no_commit(g: gl.Graph, path: str) -> None:
    t, sources = _sources(g, path)
    head = g.head(t).id
    dry = _merge(g, path, sources, t, meta=EXTRA, dry_run=True, checks=True)
    assert dry.outcome == R.MERGED and dry.dry_run and dry.checks_passed
    assert dry.commit is None and g.head(t).id == head


@pytest.mark.parametrize("kind", ["revert", "cherry_pick"])
def test_revert_and_cherry_pick_record_message_and_author(g: gl.Graph, kind: str) -> None:
    n = next(_names)
    b, other = f"h{n}", f"o{n}"
    g.create_branch(b, "main")
    g.create_branch(other, "main")
    on = b if kind == "revert" else other
    with g.write(on, message="the change") as w:
        w.insert("Person", [{"name": f"X{n}", "age": 3}])
    change = g.head(on)
    op = g.revert if kind == "revert" else g.cherry_pick
    r = op(change.id, b, message="by hand", author="Fixer <f@example.com>")
    assert r.outcome == R.MERGED
    commit = g.head(b)
    assert commit.message == "by hand" and commit.author == Author("Fixer", "f@example.com")
    key = "reverted" if kind == "revert" else "cherry_picked_from"
    assert commit.meta[key] == change.id and commit.checks_id == change.checks_id
