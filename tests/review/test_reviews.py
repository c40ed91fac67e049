"""Merge requests (library) and per-conflict resolutions; the HTTP lifecycle with two
tokens (author and approver) and the branch rules."""

from __future__ import annotations

import threading

import pytest

import graphlake as gl
from graphlake.catalog.reviews import REVIEWS_DIR
from graphlake.errors import (
    ResolutionError,
    ResolutionTypeError,
    ReviewNotFoundError,
    ReviewPermissionError,
    ReviewStateError,
)
from graphlake.review.rules import BranchRules
from tests.conftest import SOCIAL, seed_people


def _conflicted(tmp_path) -> gl.Graph:
    g = gl.Graph.init(tmp_path / "g", SOCIAL)
    seed_people(g)
    g.create_branch("dev")
    with g.write("dev") as w:
        w.update("Person", [{"name": "Alice", "age": 31, "email": "a@x.org"}])
    with g.write("main") as w:
        w.update("Person", [{"name": "Alice", "age": 40, "email": "b@x.org"}])
    return g


def res(prop, take, value=None, key="Alice"):
    out = {"table": "Person", "key": key, "property": prop, "take": take}
    if take == "value":
        out["value"] = value
    return out


def test_resolutions_applied_validated_and_recorded(tmp_path) -> None:
    g = _conflicted(tmp_path)
    head = g.head("main").id
    bad = [
        ([res(None, "ours", key="Bob")], ResolutionError),  # not in conflict
        ([res("age", "value", "x"), res("email", "ours")], ResolutionTypeError),
        ([res("name", "ours")], ResolutionError),  # property not in conflict
        ([res(None, "nobody")], ResolutionError),  # no such side
        ([res("age", "ours")], gl.MergeConflictError),  # email still unresolved
        ([res("age", "value", 500), res("email", "ours")], gl.MergeConflictError),  # @range
    ]
    for resolutions, error in bad:
        with pytest.raises(error):
            g.merge("dev", into="main", resolutions=resolutions)
        assert g.head("main").id == head  # nothing changed
    result = g.merge(
        "dev", into="main", resolutions=[res("age", "value", 35), res("email", "theirs")]
    )
    assert result.outcome == "merged"
    assert [c.resolution for c in result.resolved] == ["manual"]
    alice = g.get("Person", "Alice")
    assert (alice["age"], alice["email"]) == (35, "a@x.org")
    recorded = g.head("main").meta["resolutions"]
    assert [r["take"] for r in recorded] == ["value", "theirs"]


def test_whole_row_resolution_takes_the_base(tmp_path) -> None:
    g = _conflicted(tmp_path)
    base_age = g.get("Person", "Alice", branch="main~1")["age"]
    g.merge("dev", into="main", resolutions=[res(None, "base")])
    assert g.get("Person", "Alice")["age"] == base_age


def test_lifecycle_library(tmp_path) -> None:
    g = _conflicted(tmp_path)
    mr = g.reviews.open("dev", "main", "Alice's age", author="ann")
    assert (mr.id, mr.state, mr.author) == (1, "open", "ann")
    before = sorted(g.repo.store.list(REVIEWS_DIR))
    preview = g.reviews.preview(mr.id)
    assert preview["outcome"] == "conflict" and not preview["mergeable"]
    assert preview["diff"]["Person"]["updated"] == 1
    assert sorted(g.repo.store.list(REVIEWS_DIR)) == before  # a read writes nothing
    with pytest.raises(ReviewPermissionError):
        g.reviews.approve(mr.id, by="ann")
    with pytest.raises(ReviewNotFoundError):
        g.reviews.get(99)
    g.reviews.approve(mr.id, by="bob")
    assert len(g.reviews.preview(mr.id)["approvals"]) == 1
    with g.write("dev") as w:  # a new source commit resets approvals
        w.update("Person", [{"name": "Bob", "age": 41}])
    assert g.reviews.preview(mr.id)["approvals"] == []
    rules = BranchRules(required_approvals=1)
    with pytest.raises(ReviewPermissionError):
        g.reviews.merge(mr.id, resolutions=[res(None, "theirs")], rules=rules)
    g.reviews.approve(mr.id, by="bob")
    with pytest.raises(gl.MergeConflictError):
        g.reviews.merge(mr.id, rules=rules)  # unresolved conflicts block
    done = g.reviews.merge(mr.id, resolutions=[res(None, "theirs")], by="bob", rules=rules)
    assert done.state == "merged" and done.merge_commit == g.head("main").id
    assert g.head("main").meta["merge_request"] == 1
    assert [e["kind"] for e in done.events] == ["opened", "approved", "approved", "merged"]
    for change in (
        lambda: g.reviews.merge(1),
        lambda: g.reviews.close(1),
        lambda: g.reviews.comment(1, "late", by="x"),
    ):
        with pytest.raises(ReviewStateError):
            change()
    again = gl.Graph.open(tmp_path / "g")  # kept across restarts
    assert [m.state for m in again.reviews.list()] == ["merged"]
    assert again.reviews.list(state="open") == []


def test_concurrent_events_are_never_lost(tmp_path) -> None:
    g = gl.Graph.init(tmp_path / "g", SOCIAL)
    seed_people(g)
    g.create_branch("dev")
    rid = g.reviews.open("dev", "main", "t", author="ann").id
    others = [gl.Graph.open(tmp_path / "g") for _ in range(4)]

    def work(n: int) -> None:
        for i in range(5):
            r = others[n].reviews
            r.comment(rid, f"{n}-{i}", by=f"u{n}") if i % 2 else r.approve(rid, by=f"u{n}")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    events = g.reviews.get(rid).events
    assert len(events) == 1 + 4 * 5
    assert [e["seq"] for e in events] == list(range(1, 22))
    assert {a.by for a in g.reviews.get(rid).approvals} == {"u0", "u1", "u2", "u3"}
