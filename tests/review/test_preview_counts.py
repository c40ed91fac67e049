"""A merge request's preview counts the source's changes from the dry run's own
discovery, and those counts are exactly `diff(base, source)`'s (the independent
answer), in every shape: updates, inserts only (lineage keeps them columnar), deletes,
edges, a change that nets to nothing, a backfill, a schema change on the source."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import graphlake as gl
from graphlake import probes
from graphlake.review.workflow import Reviews
from tests.conftest import SOCIAL, seed_people


def _updates(g: gl.Graph) -> None:
    with g.write("dev") as w:
        w.update("Person", [{"name": "Bob", "age": 41}, {"name": "Carol", "age": 7}])


def _inserts(g: gl.Graph) -> None:
    with g.write("dev") as w:
        w.insert("Person", [{"name": f"p{i}"} for i in range(30)])


def _mixed(g: gl.Graph) -> None:
    with g.write("dev") as w:
        w.insert("Person", [{"name": "Dan"}])
        w.delete("Person", ["Carol"], cascade=True)
        w.update("Company", [{"name": "Acme", "founded": "2001-01-01"}])
        w.insert("Knows", [{"id": "k3", "src": "Dan", "dst": "Alice"}])


def _nets_to_nothing(g: gl.Graph) -> None:
    for age in (99, 40):  # Bob is 40 at the base
        with g.write("dev") as w:
            w.update("Person", [{"name": "Bob", "age": age}])
    _updates_main(g)


def _backfill(g: gl.Graph) -> None:
    with g.write("dev") as w:  # only the column: the merge's backfill route
        w.set_property("Person", "age", [{"name": "Carol", "age": 9}])


def _schema(g: gl.Graph) -> None:
    g.apply_schema(SOCIAL.replace("founded: Date?", "founded: Date?  city: String?"), "dev")
    with g.write("dev") as w:
        w.update("Company", [{"name": "Acme", "city": "Oslo"}])
        w.update("Person", [{"name": "Bob", "age": 41}])


def _updates_main(g: gl.Graph) -> None:
    with g.write("main") as w:  # the target moves too: a real three-way merge
        w.update("Person", [{"name": "Alice", "age": 31}])


SHAPES: dict[str, Callable[[gl.Graph], None]] = {
    "updates": _updates,
    "inserts": _inserts,
    "mixed": _mixed,
    "nets-to-nothing": _nets_to_nothing,
    "backfill": _backfill,
    "schema": _schema,
}


@pytest.mark.parametrize("shape", SHAPES)
def test_preview_counts_are_the_diffs(tmp_path, shape: str) -> None:
    g = gl.Graph.init(tmp_path / "g", SOCIAL)
    seed_people(g)
    g.create_branch("dev")
    SHAPES[shape](g)
    if shape != "nets-to-nothing":
        _updates_main(g)
    mr = g.reviews.open("dev", "main", shape, author="ann")
    preview = Reviews(g.repo).preview(mr)
    base = preview["base"] or preview["target_head"]
    expected = {t: dict(c.counts) for t, c in g.diff(base, "dev", limit=0).items()}
    assert preview["diff"] == expected
    if shape == "nets-to-nothing":
        assert "Person" not in expected


def test_the_preview_discovers_the_changes_once(tmp_path) -> None:
    g = gl.Graph.init(tmp_path / "g", SOCIAL)
    seed_people(g)
    g.create_branch("dev")
    _mixed(g)
    _updates_main(g)
    mr = g.reviews.open("dev", "main", "once", author="ann")
    with probes.collect() as dry:
        g.merge("dev", dry_run=True, checks=True)
    with probes.collect() as preview:
        Reviews(g.repo).preview(mr)
    assert dry["discovery_rows"] > 0
    assert preview["discovery_rows"] == dry["discovery_rows"]
