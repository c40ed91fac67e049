"""Search indexes are schema constraints like any other: a schema change on a branch
declares them (metadata only), and `optimize` on that branch builds them from the
schema of the branch's head, not the default branch's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import graphlake as gl
from graphlake.schema.changes import AddConstraint, Cost, DropConstraint

BEFORE = "node Doc { name: String @key  title: String?  v: Vector(2)? }"
AFTER = """node Doc {
    name: String @key  title: String?  v: Vector(2)?
    @index(v, metric="l2")  @search(title)
}"""


def test_declaring_search_indexes_on_a_branch(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", BEFORE)
    with g.write() as w:
        w.insert(
            "Doc",
            [
                {"name": "a", "title": "alpha beta", "v": [0.0, 1.0]},
                {"name": "b", "title": "gamma", "v": [1.0, 0.0]},
            ],
        )
    g.create_branch("dev")

    plan = g.apply_schema(AFTER, branch="dev", message="search indexes")
    assert sorted(str(s.constraint) for s in plan.steps) == [
        '@index(v, metric="l2")',
        "@search(title)",
    ]
    assert all(isinstance(s, AddConstraint) for s in plan.steps)
    assert plan.cost == Cost.METADATA
    assert g.schema_text("dev").count("@search(title)") == 1  # printed, so it round-trips
    assert g.schema_at("main").table("Doc").search == ()  # main is untouched

    g.optimize("dev")  # builds the full-text index the dev head's schema declares
    hits = g.search("Doc", text="alpha", branch="dev")
    assert hits.column("name").to_pylist() == ["a"]
    near = g.search("Doc", vector=np.array([0.9, 0.1], dtype="float32"), k=1, branch="dev")
    assert near.column("name").to_pylist() == ["b"]
    with pytest.raises(gl.GraphLakeError):
        g.search("Doc", text="alpha", branch="main")  # main declares no @search

    back = g.apply_schema(BEFORE, branch="dev", dry_run=True)
    assert sorted(type(s).__name__ for s in back.steps) == [DropConstraint.__name__] * 2
