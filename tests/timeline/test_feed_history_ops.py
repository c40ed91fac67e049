"""Reverts and cherry-picks record their row effects (`Commit.effects`) as writes do when
they applied plans alone (merge/effects.py `row_effects`), so the change feed reads them
in runs (`timeline/batch.py`); the batched feed against the per-commit walk
(`batched=False`) over histories with reverts and cherry-picks: the same pages."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import graphlake as gl
from graphlake import probes
from graphlake.catalog.commits import TableEffect
from graphlake.errors import GraphLakeError
from graphlake.timeline import feed
from tests.timeline.test_feed_batch import PEOPLE, SCHEMA, _pages, _write


def _same_feed(g: gl.Graph, limits: tuple[int, ...] = (10_000,)) -> None:
    for limit in limits:
        batched = [p.to_dict() for p in _pages(g, None, limit, batched=True)]
        assert batched == [p.to_dict() for p in _pages(g, None, limit, batched=False)]


def test_reverts_and_picks_record_their_effects_and_are_read_in_runs(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    with g.write(message="load") as w:
        w.insert("Person", [{"name": k, "age": 1} for k in PEOPLE[:10]])
    g.create_branch("dev")
    with g.write(message="w1") as w:
        w.update("Person", [{"name": "p01", "age": 5}])
        w.delete("Person", ["p02"])
        w.insert("Person", [{"name": "p20", "age": 2}])
    w1 = g.head()
    with g.write(message="w2") as w:
        w.update("Person", [{"name": "p03", "age": 7}])
    assert g.revert(w1.id).outcome == "merged"
    # p01 and p02 come back (two rows written), p20 goes (deleted outright)
    assert g.head().effects == {"Person": TableEffect(2, 1, ("p20",))}
    with g.write("dev") as w:
        w.update("Person", [{"name": "p04", "age": 8}])
        w.delete("Person", ["p05"])
    assert g.cherry_pick(g.head("dev").id).outcome == "merged"
    assert g.head().effects == {"Person": TableEffect(1, 1, ("p05",))}
    with probes.collect() as counts:
        page = feed.changes(g.repo, limit=10_000)
    # load, w1, w2, the revert and the pick: one run, no commit read on its own
    assert counts["timeline_batched"] == 5 and counts["timeline_commits"] == 0
    assert page.to_dict() == feed.changes(g.repo, limit=10_000, batched=False).to_dict()
    assert [(e.key, e.op) for e in page.entries[-5:]] == [
        ("p01", "update"),
        ("p02", "insert"),
        ("p20", "delete"),
        ("p04", "update"),
        ("p05", "delete"),
    ]
    _same_feed(g, (1, 3))


def test_an_adopted_state_is_not_recorded(tmp_path: Path) -> None:
    """A revert that takes back a table's earlier state (pointer adoption) or a pick
    that adopts another branch's state records no effects: its rows are not appends
    on the target's Lance branch. The feed reads it on its own, the same either way."""
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    with g.write(message="load") as w:
        w.insert("Person", [{"name": k, "age": 1} for k in PEOPLE[:4]])
    g.create_branch("dev")
    with g.write("dev") as w:
        w.insert("Tag", [{"name": "t1", "n": 1}])
    r = g.cherry_pick(g.head("dev").id)
    assert r.routes["Tag"] == "pointer_adoption" and g.head().effects is None
    r = g.revert(g.head().id)
    assert r.routes["Tag"] == "pointer_adoption" and g.head().effects is None
    with g.write() as w:
        w.update("Person", [{"name": "p01", "age": 2}])
    _same_feed(g, (10_000, 1))


def _history(root: Path, seed: int) -> gl.Graph:
    """Writes on main and dev, reverts of recent main commits, cherry-picks of dev's
    commits, a merge now and then (a refused step is skipped)."""
    rng = random.Random(seed)
    g = gl.Graph.init(root, SCHEMA)
    with g.write(message="load") as w:
        w.insert("Person", [{"name": k, "age": 1} for k in PEOPLE[:12]])
    g.create_branch("dev")
    for _ in range(26):
        roll = rng.random()
        try:
            if roll < 0.35:
                _write(g, rng, "main")
            elif roll < 0.55:
                _write(g, rng, "dev")
            elif roll < 0.75:
                recent = [g.head()]
                while len(recent) < 5 and recent[-1].parents:
                    recent.append(g.repo.commits.get(recent[-1].parents[0]))
                g.revert(
                    rng.choice(recent[:-1] or recent).id, strategy=rng.choice([None, "theirs"])
                )
            elif roll < 0.95:
                g.cherry_pick(g.head("dev").id, strategy=rng.choice([None, "theirs"]))
            else:
                g.merge("dev", strategy="theirs")
        except GraphLakeError:
            pass  # a conflict, a root commit, nothing to merge
    return g


@pytest.mark.parametrize("seed", [3, 4])
def test_batched_and_per_commit_feeds_agree_with_reverts_and_picks(
    tmp_path: Path, seed: int
) -> None:
    g = _history(tmp_path / "g", seed)
    chain = [g.head()]
    while chain[-1].parents:
        chain.append(g.repo.commits.get(chain[-1].parents[0]))
    ops = [c for c in chain if "reverted" in c.meta or "cherry_picked_from" in c.meta]
    assert any("reverted" in c.meta and c.effects for c in ops)
    assert any("cherry_picked_from" in c.meta and c.effects for c in ops)
    _same_feed(g, (10_000, 1, 7))
