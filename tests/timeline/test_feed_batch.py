"""The change feed's batched read (`timeline/batch.py`) against the per-commit walk: the
same entries, cursors and pages on random histories (writes of inserts, updates,
deletes and upserts in two tables, a float32 column, merges, a schema change, an
optimize), on a history written before commits recorded their effects, and on commits
whose deleted keys exceed the record's bound; and the record itself (`Commit.effects`)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

import graphlake as gl
from graphlake import probes
from graphlake.catalog import commits as cm
from graphlake.catalog.commits import Commit, TableEffect
from graphlake.errors import GraphLakeError
from graphlake.timeline import feed

SCHEMA = """
node Person { name: String @key  age: I32?  score: F32?  city: String? }
node Tag { name: String @key  n: I64? }
"""
WIDER = SCHEMA.replace("city: String? }", "city: String?  note: String? }")
PEOPLE = [f"p{i:02d}" for i in range(30)]
TAGS = [f"t{i}" for i in range(8)]


def _write(g: gl.Graph, rng: random.Random, branch: str) -> None:
    have = {r["name"] for r in g.nodes("Person", branch=branch, columns=["name"]).to_pylist()}
    tags = {r["name"] for r in g.nodes("Tag", branch=branch, columns=["name"]).to_pylist()}
    with g.write(branch, message=f"write {branch}") as w:
        for key in rng.sample(sorted(have), min(len(have), rng.randint(0, 6))):
            roll = rng.random()
            if roll < 0.2:
                w.delete("Person", [key])
            elif roll < 0.3:  # an update that changes nothing
                w.update("Person", [{"name": key}])
            else:
                row: dict[str, Any] = {"name": key, "age": rng.randint(0, 9)}
                if rng.random() < 0.5:
                    row["score"] = rng.choice([0.1, 1.5, 2.7, None])
                w.update("Person", [row])
        missing = [k for k in PEOPLE if k not in have]
        for key in rng.sample(missing, min(len(missing), rng.randint(0, 4))):
            w.insert("Person", [{"name": key, "age": rng.randint(0, 9), "score": 0.3}])
        if rng.random() < 0.4:
            key = rng.choice(TAGS)
            if key in tags and rng.random() < 0.3:
                w.delete("Tag", [key])
            else:
                w.upsert("Tag", [{"name": key, "n": rng.randint(0, 3)}])


def build(root: Path, seed: int) -> gl.Graph:
    rng = random.Random(seed)
    g = gl.Graph.init(root, SCHEMA)
    with g.write(message="load") as w:
        w.insert("Person", [{"name": k, "age": 1} for k in PEOPLE[:12]])
    g.create_branch("dev")
    for step in range(24):
        roll = rng.random()
        try:
            if step == 12:
                g.apply_schema(WIDER, message="add note")
            elif step == 17:
                g.optimize()
            elif roll < 0.65:
                _write(g, rng, "main")
            elif roll < 0.85:
                _write(g, rng, "dev")
            else:
                g.merge("dev", strategy="theirs")
        except GraphLakeError:
            pass  # a refused step (nothing to merge)
    return g


def _pages(g: gl.Graph, since: str | None, limit: int, batched: bool) -> list[feed.ChangePage]:
    out = []
    while True:
        page = feed.changes(g.repo, "main", since, limit, batched=batched)
        out.append(page)
        if not page.entries:
            return out
        since = page.cursor


@pytest.fixture(scope="module", params=[11, 12])
def graph(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> gl.Graph:
    return build(tmp_path_factory.mktemp(f"fb{request.param}") / "g", request.param)


def test_batched_and_per_commit_feeds_are_identical(graph: gl.Graph) -> None:
    with probes.collect() as counts:
        whole = _pages(graph, None, 10_000, batched=True)
    assert counts["timeline_batched"] > 10  # most commits were read in runs
    assert [p.to_dict() for p in whole] == [
        p.to_dict() for p in _pages(graph, None, 10_000, batched=False)
    ]
    entries = [e for p in whole for e in p.entries]
    assert {e.op for e in entries} == {"insert", "update", "delete"}
    assert {e.table for e in entries} == {"Person", "Tag"}
    for limit in (1, 7):  # page boundaries inside runs and inside commits
        batched = _pages(graph, None, limit, batched=True)
        assert [p.to_dict() for p in batched] == [
            p.to_dict() for p in _pages(graph, None, limit, batched=False)
        ]
        assert [e for p in batched for e in p.entries] == entries


def test_every_commit_boundary_resumes_alike(graph: gl.Graph) -> None:
    chain = [graph.head()]
    while chain[-1].parents:
        chain.append(graph.repo.commits.get(chain[-1].parents[0]))
    for commit in chain[::-3]:
        cursor = feed.encode_cursor(graph.repo, "main", commit.id, -1)
        a = [p.to_dict() for p in _pages(graph, cursor, 25, batched=True)]
        assert a == [p.to_dict() for p in _pages(graph, cursor, 25, batched=False)], commit.id


def test_write_commits_record_their_effects(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    with g.write() as w:
        w.insert("Person", [{"name": k} for k in PEOPLE])
    assert g.head().effects == {"Person": TableEffect(30, 0, ())}
    with g.write() as w:
        w.update("Person", [{"name": "p01", "age": 3}])
        w.delete("Person", ["p03", "p02"])
        w.insert("Tag", [{"name": "t"}])
    assert g.head().effects == {
        "Person": TableEffect(1, 2, ("p02", "p03")),
        "Tag": TableEffect(1, 0, ()),
    }
    stored = g.repo.store.get(g.repo.commits.key(g.head().id))
    assert stored is not None
    assert Commit.from_json(stored) == g.head()
    g.optimize()
    assert g.head().effects is None  # only writes record effects; nothing carries over
    with g.write(message="meta only", meta={"k": 1}) as w:
        pass
    assert g.head().effects == {}


def test_the_record_is_bounded_and_a_big_delete_is_read_by_lineage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cm, "EFFECT_KEYS_PER_TABLE", 3)
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    with g.write() as w:
        w.insert("Person", [{"name": k, "age": 1} for k in PEOPLE])
    with g.write() as w:
        w.delete("Person", PEOPLE[:5])  # more keys than the record holds: a count
    assert g.head().effects == {"Person": TableEffect(0, 5, None)}
    with g.write() as w:
        w.delete("Person", PEOPLE[5:7])
    assert g.head().effects == {"Person": TableEffect(0, 2, ("p05", "p06"))}
    effects = cm.bounded_effects({"A": (0, ["x" * 10]), "B": (0, ["y" * (cm.EFFECT_KEY_CHARS)])})
    assert effects["A"].deleted == ("x" * 10,) and effects["B"].deleted is None
    with probes.collect() as counts:
        page = feed.changes(g.repo, limit=10_000)
    assert counts["timeline_batched"] == 2  # the load and the small delete
    assert page.to_dict() == feed.changes(g.repo, limit=10_000, batched=False).to_dict()
    assert [e.op for e in page.entries] == ["insert"] * 30 + ["delete"] * 7


def test_a_history_without_effects_reads_per_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Commits written before effects were recorded (none), then new ones: the old part
    is read commit by commit, the new part in runs, and the feed is the same."""
    from graphlake.write import publish

    monkeypatch.setattr(publish, "effects_of", lambda plans: None)
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    rng = random.Random(5)
    with g.write() as w:
        w.insert("Person", [{"name": k, "age": 1} for k in PEOPLE[:10]])
    for _ in range(6):
        _write(g, rng, "main")
    old = g.head()
    assert old.effects is None and "effects" not in old.to_json().decode()
    with probes.collect() as counts:
        page = feed.changes(g.repo, limit=10_000)
    assert counts["timeline_batched"] == 0
    assert page.to_dict() == feed.changes(g.repo, limit=10_000, batched=False).to_dict()
    monkeypatch.undo()
    for _ in range(6):
        _write(g, rng, "main")
    assert g.head().effects is not None
    for limit in (2, 10_000):
        mixed = _pages(g, None, limit, batched=True)
        assert [p.to_dict() for p in mixed] == [
            p.to_dict() for p in _pages(g, None, limit, batched=False)
        ]


def test_a_corrupt_record_is_refused(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    with g.write() as w:
        w.insert("Person", [{"name": "a"}])
    text = g.head().to_json().decode()
    bad = text.replace('"deleted_count":0', '"deleted_count":2')
    assert bad != text
    with pytest.raises(GraphLakeError, match="corrupt"):
        Commit.from_json(bad.encode())
    with pytest.raises(ValueError):
        TableEffect(1, 1, ())


@pytest.mark.parametrize("own_state", [True, False])
def test_a_commit_whose_fragment_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, own_state: bool
) -> None:
    """A later update replaces every row a commit appended, so Lance drops that
    fragment: the run's scan misses the commit's rows, which are read from the commit's
    own state; failing that, that one commit (only) is read by lineage inside the run,
    and the commits after it go on from what it changed."""
    from graphlake.timeline import batch

    if not own_state:
        monkeypatch.setattr(batch, "_emptied", lambda *a: [])
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    with g.write() as w:
        w.insert("Person", [{"name": k, "age": 1} for k in PEOPLE[:4]])
    with g.write() as w:
        w.insert("Person", [{"name": "p20", "age": 2}])  # a fragment of one row
    with g.write() as w:
        w.update("Person", [{"name": "p20", "age": 3}, {"name": "p01", "age": 4}])
    with g.write() as w:
        w.delete("Person", ["p02"])
        w.update("Person", [{"name": "p20", "age": 5}])  # after the lineage-read commit
    with probes.collect() as counts:
        page = feed.changes(g.repo, limit=10_000)
    if own_state:
        assert counts["timeline_batched"] == 4 and counts["timeline_commits"] == 0
    else:
        assert counts["timeline_batched"] == 3 and counts["timeline_commits"] == 1
    assert page.to_dict() == feed.changes(g.repo, limit=10_000, batched=False).to_dict()
    assert [(e.key, e.op, e.changes) for e in page.entries[4:]] == [
        ("p20", "insert", {"name": (None, "p20"), "age": (None, 2)}),
        ("p01", "update", {"age": (1, 4)}),
        ("p20", "update", {"age": (2, 3)}),
        ("p02", "delete", {"name": ("p02", None), "age": (1, None)}),
        ("p20", "update", {"age": (3, 5)}),
    ]
