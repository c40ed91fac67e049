"""`w.set_property`: a backfill writes only that column, keys not given keep their value,
bad input is a typed error that changes nothing."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import graphlake as gl
from graphlake.errors import (
    DataError,
    DuplicateKeyError,
    KeyNotFoundError,
    TypeMismatchError,
    UniqueViolationError,
    UnknownPropertyError,
    ValueConstraintError,
)
from tests.conftest import state

WIDE = """
node Item { key: String @key  score: I32?  tag: String? @index  emb: Vector(64)? }
"""
N = 2000


def _files(root: Path) -> dict[str, int]:
    return {str(p): p.stat().st_size for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> gl.Graph:
    """2,000 items with a Vector(64) each (512 KB of vectors), score set on even keys."""
    g = gl.Graph.init(str(tmp_path_factory.mktemp("wide") / "g"), WIDE)
    rows = [
        {
            "key": f"i{i:04d}",
            "score": i if i % 2 == 0 else None,
            "tag": None,
            "emb": [float(i)] * 64,
        }
        for i in range(N)
    ]
    with g.write(message="seed") as w:
        w.insert("Item", rows)
    return g


def _written(g: gl.Graph, fn) -> int:
    root = Path(g.uri) / "tables"
    before = _files(root)
    fn()
    after = _files(root)
    return sum(
        size
        for path, size in after.items()
        if path not in before and "/data/" in path and path.endswith(".lance")
    )


def test_backfill_writes_only_that_column_and_keeps_keys_not_given(wide: gl.Graph) -> None:
    g = wide
    g.create_branch("bf1", "main")
    before = g.head("bf1").id
    given = {f"i{i:04d}": 10_000 + i for i in range(1, N, 3)}

    def run() -> None:
        with g.write("bf1", message="backfill score") as w:
            w.set_property("Item", "score", [{"key": k, "score": v} for k, v in given.items()])

    written = _written(g, run)
    rows = {r["key"]: r for r in g.snapshot("bf1").read("Item").to_pylist()}
    for i in range(N):
        k = f"i{i:04d}"
        want = given.get(k, i if i % 2 == 0 else None)
        assert rows[k]["score"] == want, k
        assert rows[k]["emb"] == [float(i)] * 64
    # One I32 column of 2,000 rows is 8 KB; the vectors alone are 512 KB. A row rewrite
    # of the ~667 given rows would write >170 KB of vectors.
    assert 0 < written < 40_000, written
    # The same change through the row path rewrites whole rows: the bound discriminates.
    g.create_branch("rows1", "main")

    def by_rows() -> None:
        with g.write("rows1") as w:
            w.update("Item", [{"key": k, "score": v} for k, v in given.items()])

    assert _written(g, by_rows) > 150_000
    # The old commit reads exactly as before.
    old = {r["key"]: r["score"] for r in g.snapshot(before).read("Item").to_pylist()}
    assert old == {f"i{i:04d}": (i if i % 2 == 0 else None) for i in range(N)}


def test_backfill_a_vector_from_arrow_and_an_indexed_column(wide: gl.Graph) -> None:
    g = wide
    g.create_branch("bf2", "main")
    keys = [f"i{i:04d}" for i in range(0, N, 2)]
    vecs = pa.array([[1.5] * 64 for _ in keys], type=pa.list_(pa.float32()))
    with g.write("bf2") as w:
        w.set_property("Item", "emb", pa.table({"key": keys, "emb": vecs}))
    with g.write("bf2") as w:
        w.set_property("Item", "tag", [{"key": "i0007", "tag": "seven"}])
    rows = {r["key"]: r for r in g.snapshot("bf2").read("Item").to_pylist()}
    assert rows["i0002"]["emb"] == [1.5] * 64 and rows["i0003"]["emb"] == [3.0] * 64
    assert rows["i0007"]["tag"] == "seven"
    assert g.get("Item", "i0007", branch="bf2")["tag"] == "seven"
    found = g.snapshot("bf2").read("Item", where="tag = 'seven'").to_pylist()
    assert [r["key"] for r in found] == ["i0007"]


@pytest.mark.parametrize(
    "rows, error",
    [
        ([{"key": "nope", "score": 1}, {"key": "i0001", "score": 2}], KeyNotFoundError),
        ([{"key": "i0001", "score": "x"}], TypeMismatchError),
        ([{"key": "i0001", "score": 1}, {"key": "i0001", "score": 2}], DuplicateKeyError),
        ([{"key": "i0001", "score": 1, "tag": "t"}], DataError),
        ([{"score": 1}], DataError),
    ],
)
def test_bad_backfills_are_typed_errors_and_change_nothing(
    wide: gl.Graph, rows: list[dict], error: type[Exception]
) -> None:
    g = wide
    before = state(g)
    with pytest.raises(error), g.write() as w:
        w.set_property("Item", "score", rows)
    assert state(g) == before


def test_unknown_property_key_and_mixing_are_refused(wide: gl.Graph) -> None:
    g = wide
    before = state(g)
    with pytest.raises(UnknownPropertyError), g.write() as w:
        w.set_property("Item", "nope", [{"key": "i0001", "nope": 1}])
    with pytest.raises(DataError, match="is the key"), g.write() as w:
        w.set_property("Item", "key", [{"key": "i0001"}])
    with pytest.raises(DataError, match="changes no rows of that type"), g.write() as w:
        w.insert("Item", [{"key": "new"}])
        w.set_property("Item", "score", [{"key": "i0001", "score": 1}])
    assert state(g) == before


def test_many_missing_keys_are_listed_up_to_20(wide: gl.Graph) -> None:
    with pytest.raises(KeyNotFoundError, match=r"\(and 5 more\)") as e, wide.write() as w:
        w.set_property("Item", "score", [{"key": f"x{i}", "score": 1} for i in range(25)])
    assert "'x0'" in str(e.value)


def test_backfill_checks_constraints_on_the_resulting_column(people: gl.Graph) -> None:
    g = people
    before = state(g)
    with pytest.raises(UniqueViolationError, match=r"alice@x\.org"), g.write() as w:
        w.set_property("Person", "email", [{"name": "Bob", "email": "alice@x.org"}])
    with pytest.raises(ValueConstraintError), g.write() as w:
        w.set_property("Person", "age", [{"name": "Bob", "age": 200}])
    assert state(g) == before
    # Swapping two unique values in one backfill is fine: the result is unique.
    with g.write() as w:
        w.set_property(
            "Person",
            "email",
            [{"name": "Alice", "email": "bob@x.org"}, {"name": "Bob", "email": "alice@x.org"}],
        )
        w.set_property("Knows", "since", [{"id": "k1", "since": "2021-01-01"}])
    assert g.get("Person", "Bob")["email"] == "alice@x.org"
    assert g.get("Person", "Carol")["email"] is None
    assert str(g.get("Knows", "k1")["since"]) == "2021-01-01"
    assert str(g.get("Knows", "k2")["since"]) == "2020-05-01"


def test_a_backfill_branch_merges_into_a_main_that_changed_other_rows(wide: gl.Graph) -> None:
    g = wide
    g.create_branch("bf3", "main")
    g.create_branch("m3", "main")
    with g.write("bf3") as w:
        w.set_property("Item", "score", [{"key": f"i{i:04d}", "score": -i} for i in range(0, 20)])
    with g.write("m3") as w:
        w.update("Item", [{"key": "i0100", "tag": "changed"}])
    r = g.merge("bf3", into="m3")
    assert not r.conflicts
    rows = {r["key"]: r for r in g.snapshot("m3").read("Item").to_pylist()}
    assert rows["i0005"]["score"] == -5 and rows["i0100"]["tag"] == "changed"
    assert rows["i0100"]["score"] == 100 and rows["i0021"]["score"] is None


def test_the_columns_keep_their_order(wide: gl.Graph) -> None:
    # A backfill that re-created the column would move it to the end.
    wide.create_branch("bf5", "main")
    with wide.write("bf5") as w:
        w.set_property("Item", "score", [{"key": "i0001", "score": 5}])
    assert wide.snapshot("bf5").read("Item").column_names == ["id", "key", "score", "tag", "emb"]


def test_rows_another_branch_wrote_keep_the_column_after_a_merge(wide: gl.Graph) -> None:
    # A backfill that re-created the column (add + drop + rename) gave it a new Lance
    # field id: rows written on a branch forked earlier, adopted by the merge, then read
    # as null. update_columns keeps the field id.
    g = wide
    g.create_branch("bf4", "main")
    g.create_branch("side4", "main")
    with g.write("side4") as w:
        w.insert("Item", [{"key": "new4", "score": 44, "tag": "t4", "emb": [4.0] * 64}])
    with g.write("bf4") as w:
        w.set_property("Item", "score", [{"key": "i0001", "score": 1}])
    g.merge("side4", into="bf4")
    got = g.get("Item", "new4", branch="bf4")
    assert (got["score"], got["tag"], got["emb"][0]) == (44, "t4", 4.0)
    assert g.get("Item", "i0001", branch="bf4")["score"] == 1
