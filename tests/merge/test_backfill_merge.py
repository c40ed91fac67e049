"""Merging a branch that only backfilled columns: the column route (merge.columns)."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphlake as gl
from graphlake.errors import MergeConflictError
from graphlake.merge import result as R

SCHEMA = """
node Item { key: String @key  score: I32?  mail: String? @unique  emb: Vector(64)? }
"""
N = 1000


@pytest.fixture(scope="module")
def g(tmp_path_factory: pytest.TempPathFactory) -> gl.Graph:
    graph = gl.Graph.init(str(tmp_path_factory.mktemp("bfm") / "g"), SCHEMA)
    with graph.write(message="seed") as w:
        w.insert(
            "Item", [{"key": f"i{i:04d}", "score": i, "emb": [float(i)] * 64} for i in range(N)]
        )
    return graph


def _fork(g: gl.Graph, name: str) -> tuple[str, str]:
    g.create_branch(f"{name}-bf", "main")
    g.create_branch(f"{name}-t", "main")
    return f"{name}-bf", f"{name}-t"


def _backfill(g: gl.Graph, branch: str, prop: str, values: dict[str, object]) -> None:
    with g.write(branch, message=f"backfill {prop}") as w:
        w.set_property("Item", prop, [{"key": k, prop: v} for k, v in values.items()])


def _rows(g: gl.Graph, branch: str) -> dict[str, dict]:
    return {r["key"]: r for r in g.snapshot(branch).read("Item").to_pylist()}


def _data_bytes(g: gl.Graph) -> dict[str, int]:
    root = Path(g.uri) / "tables"
    return {
        str(p): p.stat().st_size
        for p in root.rglob("*.lance")
        if p.is_file() and "/data/" in str(p)
    }


def test_backfill_merges_column_wise_into_a_target_that_changed_other_rows(g: gl.Graph) -> None:
    bf, t = _fork(g, "a")
    _backfill(g, bf, "score", {f"i{i:04d}": -i for i in range(N)})
    with g.write(t) as w:
        w.update("Item", [{"key": "i0001", "emb": [9.0] * 64}])  # another column
        w.insert("Item", [{"key": "new", "score": 5}])
        w.delete("Item", ["i0002"])  # the source backfilled it: delete_vs_update
    before = _data_bytes(g)
    with pytest.raises(MergeConflictError) as e:
        g.merge(bf, into=t)
    assert [(c.kind, c.entity_id) for c in e.value.conflicts] == [("delete_vs_update", "i0002")]
    r = g.merge(bf, into=t, strategy="ours")
    assert r.routes["Item"] == R.COLUMN_WRITE and r.stats["Item"].discovery == "backfill"
    rows = _rows(g, t)
    assert rows["i0001"]["score"] == -1 and rows["i0001"]["emb"] == [9.0] * 64
    assert rows["i0500"]["score"] == -500 and rows["i0500"]["emb"] == [500.0] * 64
    assert rows["new"]["score"] == 5 and "i0002" not in rows
    assert len(rows) == N
    # Only the score column (4 KB) and the one merged row were written: a copy of the
    # unchanged rows would write their vectors (256 KB).
    written = sum(s for p, s in _data_bytes(g).items() if p not in before)
    assert written < 30_000, written


def test_a_target_that_left_the_table_alone_adopts_the_source_state(g: gl.Graph) -> None:
    bf, t = _fork(g, "b")
    _backfill(g, bf, "score", {"i0003": 33})
    with g.write(t, meta={"note": "no data"}):
        pass  # a commit on the target that leaves Item alone: no fast-forward
    r = g.merge(bf, into=t)
    assert r.outcome == R.MERGED and r.routes["Item"] == R.POINTER_ADOPTION
    assert r.stats["Item"].discovery == "backfill"
    assert _rows(g, t)["i0003"]["score"] == 33


def test_the_same_cell_changed_on_both_sides_conflicts_and_strategies_resolve(g: gl.Graph) -> None:
    bf, t = _fork(g, "c")
    _backfill(g, bf, "score", {"i0004": 40, "i0005": 50})
    with g.write(t) as w:
        w.update("Item", [{"key": "i0004", "score": 41}, {"key": "i0006", "score": 66}])
    with pytest.raises(MergeConflictError) as e:
        g.merge(bf, into=t)
    [c] = e.value.conflicts
    assert (c.kind, c.entity_id, c.properties) == ("divergent_update", "i0004", ("score",))
    dry = g.merge(bf, into=t, dry_run=True)
    assert dry.outcome == R.CONFLICT and len(dry.conflicts) == 1
    r = g.merge(bf, into=t, strategy="theirs")
    assert [c.resolution for c in r.resolved] == ["theirs"]
    rows = _rows(g, t)
    assert (rows["i0004"]["score"], rows["i0005"]["score"], rows["i0006"]["score"]) == (40, 50, 66)


def test_a_backfill_that_breaks_unique_in_the_merged_result_conflicts(g: gl.Graph) -> None:
    bf, t = _fork(g, "d")
    _backfill(g, bf, "mail", {"i0007": "x@y"})
    with g.write(t) as w:
        w.update("Item", [{"key": "i0008", "mail": "x@y"}])
    with pytest.raises(MergeConflictError) as e:
        g.merge(bf, into=t)
    assert {c.kind for c in e.value.conflicts} == {"unique_violation"}
    assert _rows(g, t)["i0007"]["mail"] is None


def test_a_source_that_also_changed_rows_takes_the_row_routes(g: gl.Graph) -> None:
    bf, t = _fork(g, "e")
    _backfill(g, bf, "score", {"i0009": 90})
    with g.write(bf) as w:
        w.update("Item", [{"key": "i0010", "score": 100}])
    with g.write(t) as w:
        w.update("Item", [{"key": "i0011", "score": 110}])
    r = g.merge(bf, into=t)
    assert r.routes["Item"] == R.THREE_WAY
    rows = _rows(g, t)
    assert (rows["i0009"]["score"], rows["i0010"]["score"], rows["i0011"]["score"]) == (
        90,
        100,
        110,
    )
