"""Row history, blame and the change feed against brute force, on random small
histories with merges, merge_many, reverts and a schema change: history and blame
agree with a replay that reads the row at every commit (`g.get` at each revision);
feed pages concatenated from any commit boundary equal `diff` between the commits, and
pages of any size concatenate to the same feed."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

import graphlake as gl
from graphlake.errors import GraphLakeError, RowNotFoundError
from graphlake.timeline.feed import encode_cursor

SCHEMA = "node Person { name: String @key\n age: I32?\n city: String? }\n"
WIDER = "node Person { name: String @key\n age: I32?\n city: String?\n score: I64? }\n"
KEYS = [f"k{i}" for i in range(6)]
CITIES = ["x", "y", None]


def _write(g: gl.Graph, rng: random.Random, branch: str) -> None:
    have = {r["name"] for r in g.nodes("Person", branch=branch).to_pylist()}
    missing = [k for k in KEYS if k not in have]
    wide = "score" in g.schema_at(branch).table("Person").property_names
    with g.write(branch, message=f"write {branch}", author=f"a-{branch}") as w:
        for key in rng.sample(sorted(have), min(len(have), rng.randint(0, 2))):
            if rng.random() < 0.25:
                w.delete("Person", [key])
            else:
                row: dict[str, Any] = {"name": key, "age": rng.randint(0, 5)}
                if rng.random() < 0.5:
                    row["city"] = rng.choice(CITIES)
                if wide and rng.random() < 0.5:
                    row["score"] = rng.randint(0, 3)
                w.update("Person", [row])
        for key in rng.sample(missing, min(len(missing), rng.randint(0, 2))):
            w.insert(
                "Person", [{"name": key, "age": rng.randint(0, 5), "city": rng.choice(CITIES)}]
            )


def build(root: Path, seed: int) -> gl.Graph:
    rng = random.Random(seed)
    g = gl.Graph.init(root, SCHEMA, author="init")
    _write(g, rng, "main")
    for b in ("d1", "d2"):
        g.create_branch(b)
    schema_at = rng.randint(4, 9)
    for step in range(14):
        kind = rng.choice(["write", "write", "dev", "dev", "merge", "many", "revert"])
        if step == schema_at:
            g.apply_schema(WIDER, message="add score")
            continue
        try:
            if kind == "write":
                _write(g, rng, "main")
            elif kind == "dev":
                _write(g, rng, rng.choice(["d1", "d2"]))
            elif kind == "merge":
                g.merge(rng.choice(["d1", "d2"]), strategy="theirs", author="merger")
            elif kind == "many":
                g.merge_many(["d1", "d2"], strategy="theirs", author="merger")
            else:
                chain = [c for c in g.log("main") if len(c.parents) == 1]
                if chain:
                    g.revert(rng.choice(chain).id, strategy="theirs", author="reverter")
        except GraphLakeError:
            pass  # a refused step (nothing to merge, a conflict kind no strategy takes)
    return g


def first_parents(g: gl.Graph) -> list[gl.Commit]:
    out = [g.head()]
    while out[-1].parents:
        out.append(g.repo.commits.get(out[-1].parents[0]))
    return out


def row(g: gl.Graph, key: str, commit: str, layout: list[str] | None = None) -> dict | None:
    found = g.get("Person", key, branch=commit)
    if found is None or layout is None:
        return found
    return {p: found.get(p) for p in layout}  # a property the layout lacks: null


def replay_history(g: gl.Graph, key: str) -> list[tuple[str, str, dict]]:
    out = []
    for c in first_parents(g)[:-1]:
        layout = ["id", *g.schema_at(c.id).table("Person").property_names]
        new, old = row(g, key, c.id), row(g, key, c.parents[0], layout)
        if new == old:
            continue
        op = "insert" if old is None else "delete" if new is None else "update"
        a, b = old or {}, new or {}
        changes = {
            p: (a.get(p), b.get(p))
            for p in dict.fromkeys([*b, *a])
            if p != "id" and a.get(p) != b.get(p)
        }
        out.append((c.id, op, changes))
    return out


def replay_blame(g: gl.Graph, key: str) -> dict[str, str]:
    current = row(g, key, g.head().id)
    assert current is not None
    found: dict[str, str] = {}
    todo = [(g.head(), {p for p in current if p != "id"})]
    while todo:
        c, pending = todo.pop()
        while pending:
            old = row(g, key, c.parents[0]) if c.parents else None
            changed = {p for p in pending if old is None or p not in old or old[p] != current[p]}
            for other in c.parents[1:]:
                there = row(g, key, other)
                same = {
                    p
                    for p in changed
                    if there is not None and p in there and there[p] == current[p]
                }
                if same:
                    todo.append((g.repo.commits.get(other), same))
                    changed -= same
                    pending = pending - same
            found.update(dict.fromkeys(changed, c.id))
            pending = pending - changed
            if not c.parents:
                break
            c = g.repo.commits.get(c.parents[0])
    return found


@pytest.fixture(scope="module", params=[1, 2, 3])
def graph(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> gl.Graph:
    return build(tmp_path_factory.mktemp(f"tl{request.param}") / "g", request.param)


def test_history_agrees_with_a_replay_of_every_commit(graph: gl.Graph) -> None:
    assert any(len(c.parents) > 1 for c in first_parents(graph))  # merges happened
    for key in KEYS:
        expected = replay_history(graph, key)
        if not expected:
            with pytest.raises(RowNotFoundError):
                graph.row_history("Person", key)
            continue
        got = [(e.commit, e.op, e.changes) for e in graph.row_history("Person", key)]
        assert got == expected, key
        assert [e.commit for e in graph.row_history("Person", key, limit=1)] == [expected[0][0]]


def test_blame_agrees_with_a_replay(graph: gl.Graph) -> None:
    for key in KEYS:
        if graph.get("Person", key) is None:
            with pytest.raises(RowNotFoundError):
                graph.blame("Person", key)
            continue
        got = {b.property: b.commit for b in graph.blame("Person", key)}
        assert got == replay_blame(graph, key), key
        for b in graph.blame("Person", key):
            assert b.value == graph.get("Person", key)[b.property]


def _net(entries: list) -> dict[str, tuple[str, dict]]:
    """Per key, the net change of a run of feed entries: (kind, property -> new) or,
    for an update, property -> (old, new)."""
    first: dict[str, Any] = {}
    last: dict[str, Any] = {}
    olds: dict[str, dict] = {}
    news: dict[str, dict] = {}
    for e in entries:
        first.setdefault(e.key, e.op)
        last[e.key] = e.op
        o, n = olds.setdefault(e.key, {}), news.setdefault(e.key, {})
        if e.op == "insert":
            n.clear()  # a new row: earlier values are gone
        for p, (old, new) in e.changes.items():
            o.setdefault(p, old)
            n[p] = new
    out = {}
    for k in first:
        before, after = first[k] != "insert", last[k] != "delete"
        if before and after:
            changed = {p: (olds[k][p], news[k][p]) for p in news[k] if olds[k].get(p) != news[k][p]}
            if changed:
                out[k] = ("updated", changed)
        elif after:
            out[k] = ("inserted", {p: v for p, v in news[k].items() if v is not None})
        elif before:
            out[k] = ("deleted", {})
    return out


def _diff_net(g: gl.Graph, a: str, b: str) -> dict[str, tuple[str, dict]]:
    d = g.diff(a, b).get("Person")
    if d is None:
        return {}
    out: dict[str, tuple[str, dict]] = {}
    for k, r in d.inserted_rows.items():
        out[k] = ("inserted", {p: v for p, v in r.items() if p != "id" and v is not None})
    for k in d.deleted:
        out[k] = ("deleted", {})
    for k, props in d.changes.items():
        out[k] = ("updated", dict(props))
    return out


def _all(g: gl.Graph, since: str | None, limit: int) -> list:
    out = []
    while True:
        page = g.changes(since=since, limit=limit)
        out += page.entries
        if not page.entries:
            return out
        since = page.cursor


def test_feed_from_any_commit_equals_diff(graph: gl.Graph) -> None:
    chain = first_parents(graph)[::-1]  # oldest first
    head = chain[-1].id
    for start in chain[:-1]:
        cursor = encode_cursor(graph.repo, "main", start.id, -1)
        entries = _all(graph, cursor, 1000)
        assert _net(entries) == _diff_net(graph, start.id, head), start.id
    assert _net(_all(graph, None, 1000)) == _diff_net(graph, chain[0].id, head)


def test_pages_of_any_size_concatenate_to_the_feed(graph: gl.Graph) -> None:
    whole = _all(graph, None, 10_000)
    assert whole and [e.commit for e in whole] == sorted(
        (e.commit for e in whole), key=[c.id for c in first_parents(graph)[::-1]].index
    )
    for limit in (1, 2, 5):
        assert _all(graph, None, limit) == whole
    page = graph.changes(limit=10_000)
    assert graph.changes(since=page.cursor).entries == []  # nothing new: empty page
