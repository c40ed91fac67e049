"""Data checks (issue 26 item 3) through the library: set, version, run, merge three-way,
and run on the would-be merged state (dry run and `merge(checks=True)`), in a request's
preview and under the `require_checks` rule."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

import graphlake as gl
from graphlake.catalog.authors import Author
from graphlake.catalog.commits import Commit, TableState
from graphlake.errors import DataCheckError, DataCheckFailedError
from graphlake.review.rules import BranchRules

PEOPLE = """
node Person { name: String @key  email: String? }
node Company { name: String @key }
edge WorksAt: Person -> Company
"""
# Two people with one e-mail: the schema has no @unique, so only a data check sees it.
DUP_CYPHER = (
    "MATCH (a:Person), (b:Person) WHERE a.email = b.email AND a.name < b.name "
    "RETURN a.name AS first, b.name AS second, a.email AS email"
)
DUP_SQL = (
    "SELECT email, count(*) AS n FROM Person WHERE email IS NOT NULL "
    "GROUP BY email HAVING count(*) > 1"
)


def files(root: Path) -> dict[str, int]:
    out = {}
    for folder, _, names in os.walk(root):
        for n in names:
            p = Path(folder, n)
            out[str(p.relative_to(root))] = p.stat().st_size
    return out


@pytest.fixture
def g(tmp_path: Path) -> gl.Graph:
    g = gl.Graph.init(tmp_path / "g", PEOPLE)
    with g.write(message="seed") as w:
        w.insert("Person", [{"name": "Ann", "email": "ann@x"}, {"name": "Ben"}])
    g.set_data_checks({"dup_email": DUP_CYPHER, "dup_email_sql": DUP_SQL}, message="checks")
    return g


def _two_sides(g: gl.Graph) -> None:
    g.create_branch("a")
    g.create_branch("b")
    with g.write("a") as w:
        w.insert("Person", [{"name": "Cid", "email": "same@x"}])
    with g.write("b") as w:
        w.insert("Person", [{"name": "Dee", "email": "same@x"}])


def test_set_list_run_and_versioned_per_commit(g: gl.Graph) -> None:
    head = g.head()
    assert head.meta["data_checks"] == {"set": ("dup_email", "dup_email_sql"), "removed": ()}
    assert g.data_checks() == {
        "dup_email": {"language": "cypher", "query": DUP_CYPHER},
        "dup_email_sql": {"language": "sql", "query": DUP_SQL},
    }
    assert g.data_checks("main~1") == {}  # the seed commit had none
    assert [(r.name, r.passed, r.rows) for r in g.run_data_checks()] == [
        ("dup_email", True, []),
        ("dup_email_sql", True, []),
    ]
    # Carried forward by writes, schema changes and optimize; a no-op set publishes nothing.
    with g.write() as w:
        w.insert("Person", [{"name": "Eve", "email": "ann@x"}])
    assert g.head().checks_id == head.checks_id
    assert g.set_data_checks(g.data_checks()).id == g.head().id
    g.apply_schema(PEOPLE + "node Team { name: String @key }\n")
    g.optimize()
    assert g.head().checks_id == head.checks_id
    results = {r.name: r for r in g.run_data_checks()}
    assert not results["dup_email"].passed
    assert results["dup_email"].rows == [{"first": "Ann", "second": "Eve", "email": "ann@x"}]
    assert results["dup_email_sql"].rows == [{"email": "ann@x", "n": 2}]
    # An explicit language; removing one; the old commit keeps its set.
    g.set_data_checks({"dup_email_sql": {"language": "sql", "query": DUP_SQL}})
    assert list(g.data_checks()) == ["dup_email_sql"]
    assert g.head().meta["data_checks"] == {"set": (), "removed": ("dup_email",)}
    assert list(g.data_checks(head.id)) == ["dup_email", "dup_email_sql"]
    g.set_data_checks({})
    assert g.head().checks_id is None and g.run_data_checks() == []
    g.create_branch("x", "main~1")
    with g.write("x") as w:
        w.insert("Person", [{"name": "Xan"}])
    dry = g.merge("x", dry_run=True, checks=True)
    assert dry.data_checks == [] and "stage" not in dry.timings  # nothing to stage


def test_more_than_twenty_rows_and_a_check_that_cannot_run(g: gl.Graph) -> None:
    with g.write() as w:
        w.insert("Person", [{"name": f"p{i:02d}"} for i in range(30)])
    g.set_data_checks(
        {
            "no_email": "MATCH (p:Person) WHERE p.email IS NULL RETURN p.name",
            "sql_no_email": "SELECT name FROM Person WHERE email IS NULL ORDER BY name",
            "gone": "SELECT * FROM Team",
            "commented": "SELECT name FROM Person WHERE email IS NULL -- no e-mail;",
        }
    )
    by = {r.name: r for r in g.run_data_checks()}
    assert len(by["no_email"].rows) == 20 and by["no_email"].more
    assert len(by["sql_no_email"].rows) == 20 and by["sql_no_email"].more
    assert by["sql_no_email"].rows[0] == {"name": "Ben"}
    assert not by["gone"].passed and "Team" in (by["gone"].error or "")
    assert len(by["commented"].rows) == 20 and by["commented"].more


def test_commit_ids_without_checks_are_unchanged() -> None:
    state = TableState("t1", "main", 3, "owner")
    who = Author("a")
    plain = Commit.create([], "m", "s" * 40, {"T": state}, time="2025-01-01T00:00:00Z", author=who)
    content = {
        "format": 1,
        "parents": [],
        "message": "m",
        "time": plain.time,
        "schema_id": "s" * 40,
        "tables": {"T": state.to_dict()},
        "meta": {},
        "author": who.to_dict(),
    }
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert plain.id == hashlib.sha256(text.encode()).hexdigest()[:40]
    assert b"checks_id" not in plain.to_json()
    checked = Commit.create(
        [], "m", "s" * 40, {"T": state}, time=plain.time, author=who, checks_id="c" * 40
    )
    assert checked.id != plain.id
    assert Commit.from_json(checked.to_json()).checks_id == "c" * 40


BAD_CHECKS = [
    {"bad name!": "MATCH (p:Person) RETURN p"},
    {"": "MATCH (p:Person) RETURN p"},
    {"c": "CREATE (p:Person {name: 'x'})"},  # a Cypher write
    {"c": "DELETE FROM Person"},  # a SQL write
    {"c": "SELECT 1; SELECT 2"},
    {"c": "MATCH (p:Person RETURN p"},  # parses as neither
    {"c": "SELEC name FROM Person"},
    {"c": ""},
    {"c": 5},
    {"c": {"language": "sql", "query": "MATCH (p:Person) RETURN p"}},
    {"c": {"language": "gremlin", "query": "g.V()"}},
    ["MATCH (p:Person) RETURN p"],
]


def test_bad_checks_are_refused_and_change_nothing(g: gl.Graph) -> None:
    before_head, before_files = g.head().id, files(Path(g.repo.uri))
    for checks in BAD_CHECKS:
        with pytest.raises(DataCheckError):
            g.set_data_checks(checks)  # type: ignore[arg-type]
        assert g.head().id == before_head
        assert files(Path(g.repo.uri)) == before_files, checks


def test_each_side_passes_alone_the_merged_result_fails(g: gl.Graph) -> None:
    """The key test: two people given one e-mail on two branches, no @unique."""
    _two_sides(g)
    for side in ("a", "b"):
        assert all(r.passed for r in g.run_data_checks(side))
    g.merge("a")
    head, before = g.head().id, files(Path(g.repo.uri))
    dry = g.merge("b", dry_run=True, checks=True)
    assert dry.outcome == "merged" and dry.checks_passed is False
    by = {r.name: r for r in dry.data_checks or []}
    assert by["dup_email"].rows == [{"first": "Cid", "second": "Dee", "email": "same@x"}]
    assert by["dup_email_sql"].rows == [{"email": "same@x", "n": 2}]
    assert files(Path(g.repo.uri)) == before  # the staged state was discarded
    assert g.merge("b", dry_run=True).data_checks is None  # not asked: not run
    with pytest.raises(DataCheckFailedError) as err:
        g.merge("b", checks=True)
    assert [r.name for r in err.value.results if not r.passed] == ["dup_email", "dup_email_sql"]
    assert g.head().id == head
    assert sorted(g.nodes("Person").column("name").to_pylist()) == ["Ann", "Ben", "Cid"]
    assert g.fsck().problems == []
    # Without checks the merge goes through, and the checks then fail on main itself.
    g.merge("b")
    assert not any(r.passed for r in g.run_data_checks())


def test_checks_pass_then_merge_publishes_and_fast_forward_is_checked(g: gl.Graph) -> None:
    g.create_branch("a")
    with g.write("a") as w:
        w.insert("Person", [{"name": "Cid", "email": "cid@x"}])
    r = g.merge("a", checks=True)  # a fast-forward: checked on the source's head
    assert r.outcome == "fast_forward" and r.checks_passed
    g.create_branch("b", "main~1")
    with g.write("b") as w:
        w.insert("Person", [{"name": "Dee", "email": "ann@x"}])
    g.create_branch("c")
    with g.write("c") as w:
        w.insert("Person", [{"name": "Fay", "email": "fay@x"}])
    assert g.merge("c", checks=True).checks_passed
    with pytest.raises(DataCheckFailedError):
        g.merge("b", checks=True)
    with pytest.raises(DataCheckFailedError):
        g.merge_many(["b"], checks=True)


def test_merge_many_checks(g: gl.Graph) -> None:
    _two_sides(g)
    head = g.head().id
    dry = g.merge_many(["a", "b"], dry_run=True, checks=True)
    assert dry.outcome == "merged" and dry.checks_passed is False
    with pytest.raises(DataCheckFailedError):
        g.merge_many(["a", "b"], checks=True)
    assert g.head().id == head


def test_checks_merge_three_way_by_name(g: gl.Graph) -> None:
    base = g.data_checks()
    g.create_branch("a")
    g.create_branch("b")
    q1 = "MATCH (p:Person) WHERE p.name = 'x' RETURN p.name"
    q2 = "SELECT name FROM Person WHERE name = 'y'"
    g.set_data_checks({**base, "only_a": q1}, "a")
    g.set_data_checks({k: v for k, v in base.items() if k != "dup_email_sql"}, "b")
    g.set_data_checks({**g.data_checks("b"), "only_b": q2}, "b")
    g.merge("a")
    g.merge("b")
    assert sorted(g.data_checks()) == ["dup_email", "only_a", "only_b"]
    assert g.data_checks()["only_b"] == {"language": "sql", "query": q2}
    # Both change one check differently: a conflict; ours / theirs resolve it.
    for b in ("c", "d"):
        g.create_branch(b)
    g.set_data_checks({**g.data_checks(), "only_a": q2}, "c")
    g.set_data_checks({**g.data_checks(), "only_a": "SELECT 1 WHERE false"}, "d")
    g.merge("c")
    dry = g.merge("d", dry_run=True)
    assert dry.outcome == "conflict"
    [c] = dry.conflicts
    assert (c.kind, c.entity_id) == ("data_check_conflict", "only_a")
    assert c.target == {"language": "sql", "query": q2}
    with pytest.raises(gl.MergeConflictError):
        g.merge("d")
    assert g.merge("d", dry_run=True, strategy="ours").outcome == "merged"
    r = g.merge("d", strategy="theirs")
    assert [x.kind for x in r.resolved] == ["data_check_conflict"]
    assert g.data_checks()["only_a"]["query"] == "SELECT 1 WHERE false"


def test_request_preview_shows_checks_and_require_checks_blocks(g: gl.Graph) -> None:
    _two_sides(g)
    g.merge("a")
    mr = g.reviews.open("b", "main", "Dee", author="dee")
    preview = g.reviews.preview(mr.id)
    assert [c["passed"] for c in preview["data_checks"]] == [False, False]
    assert preview["mergeable"]  # no rules: the checks only inform
    rules = BranchRules(require_checks=True)
    blocked = g.reviews.preview(mr.id, rules)
    assert not blocked["mergeable"]
    assert any("require_checks" in b for b in blocked["blocked_by"])
    head = g.head().id
    with pytest.raises(DataCheckFailedError, match="require_checks"):
        g.reviews.merge(mr.id, rules=rules)
    assert g.head().id == head and g.reviews.get(mr.id).state == "open"
    with g.write("b") as w:
        w.update("Person", [{"name": "Dee", "email": "dee@x"}])
    assert g.reviews.preview(mr.id, rules)["mergeable"]
    assert g.reviews.merge(mr.id, rules=rules).state == "merged"
