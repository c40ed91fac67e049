"""Loading JSONL, Parquet and Arrow in one commit, with modes append / merge / overwrite."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import graphlake as gl


def write_jsonl(path, records) -> None:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")


def test_load_jsonl_nodes_and_edges(graph: gl.Graph, tmp_path) -> None:
    f = tmp_path / "g.jsonl"
    write_jsonl(
        f,
        [
            {"type": "Person", "data": {"name": "Alice", "age": 30}},
            {"type": "Person", "data": {"name": "Bob"}},
            {"edge": "Knows", "from": "Alice", "to": "Bob", "data": {"since": "2021-01-01"}},
            {"edge": "Knows", "id": "kx", "from": "Bob", "to": "Alice"},
        ],
    )
    seen: list[int] = []
    commit = graph.load(f, progress=seen.append)
    assert sum(seen) == 4
    assert graph.head().id == commit.id
    assert len(graph.log()) == 2  # one commit for the whole file
    assert graph.nodes("Person").num_rows == 2
    edges = {(e["src"], e["dst"]) for e in graph.edges("Knows").to_pylist()}
    assert edges == {("Alice", "Bob"), ("Bob", "Alice")}
    assert graph.edges("Knows", where="id = 'kx'").num_rows == 1


def test_load_modes(graph: gl.Graph) -> None:
    graph.load([{"type": "Person", "data": {"name": "A", "age": 1}}])
    with pytest.raises(gl.DuplicateKeyError):
        graph.load([{"type": "Person", "data": {"name": "A", "age": 2}}])
    graph.load(
        [
            {"type": "Person", "data": {"name": "A", "age": 2}},
            {"type": "Person", "data": {"name": "B"}},
        ],
        mode="merge",
    )
    assert graph.get("Person", "A")["age"] == 2
    graph.load([{"type": "Person", "data": {"name": "C"}}], mode="overwrite")
    assert graph.nodes("Person").column("id").to_pylist() == ["C"]


def test_overwrite_refuses_to_strand_edges(graph: gl.Graph) -> None:
    graph.load(
        [
            {"type": "Person", "data": {"name": "A"}},
            {"type": "Person", "data": {"name": "B"}},
            {"edge": "Knows", "from": "A", "to": "B"},
        ]
    )
    with pytest.raises(gl.NodeHasEdgesError):
        graph.load([{"type": "Person", "data": {"name": "A"}}], mode="overwrite")
    assert graph.nodes("Person").num_rows == 2


def test_load_parquet_and_arrow(graph: gl.Graph, tmp_path) -> None:
    t = pa.table({"name": [f"p{i}" for i in range(1000)], "age": list(range(1000))})
    t = t.set_column(1, "age", t.column("age").cast(pa.int32()).combine_chunks().slice(0))
    f = tmp_path / "people.parquet"
    pq.write_table(t.set_column(1, "age", pa.array([i % 100 for i in range(1000)], pa.int32())), f)
    graph.load(f, table="Person")
    assert graph.nodes("Person").num_rows == 1000
    graph.load(pa.table({"name": ["extra"]}), table="Person")
    assert graph.nodes("Person").num_rows == 1001
    with pytest.raises(gl.DataError, match="table="):
        graph.load(f)


def test_load_parquet_validates(graph: gl.Graph, tmp_path) -> None:
    f = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"name": ["a", "b"], "age": pa.array([1, 500], pa.int32())}), f)
    with pytest.raises(gl.ValueConstraintError, match="range"):
        graph.load(f, table="Person")
    assert graph.nodes("Person").num_rows == 0


def test_unknown_type_in_jsonl_names_the_line(graph: gl.Graph, tmp_path) -> None:
    f = tmp_path / "g.jsonl"
    write_jsonl(f, [{"type": "Person", "data": {"name": "A"}}, {"type": "Pet", "data": {}}])
    with pytest.raises(gl.UnknownTableError, match=r"g\.jsonl:2.*Pet"):
        graph.load(f)


def test_load_merge_mode_edges_without_id_are_new(graph: gl.Graph) -> None:
    graph.load(
        [
            {"type": "Person", "data": {"name": "A"}},
            {"type": "Person", "data": {"name": "B"}},
            {"edge": "Knows", "id": "e1", "from": "A", "to": "B"},
        ]
    )
    graph.load(
        [
            {"edge": "Knows", "from": "B", "to": "A"},
            {"edge": "Knows", "id": "e1", "from": "A", "to": "B", "data": {"since": "2020-01-01"}},
        ],
        mode="merge",
    )
    edges = {(e["src"], e["dst"]): e for e in graph.edges("Knows").to_pylist()}
    assert set(edges) == {("A", "B"), ("B", "A")}
    assert str(edges[("A", "B")]["since"]) == "2020-01-01"


def test_load_refuses_directories_and_misplaced_table(graph: gl.Graph, tmp_path) -> None:
    with pytest.raises(gl.LoadFormatError, match="not a file"):
        graph.load(tmp_path)
    f = tmp_path / "g.jsonl"
    write_jsonl(f, [{"type": "Person", "data": {"name": "A"}}])
    with pytest.raises(gl.DataError, match="Parquet or Arrow input only"):
        graph.load(f, table="Person")
    assert graph.nodes("Person").num_rows == 0


# --- JSONL becomes Arrow in bounded chunks (issue 12, item 10) --------------------------


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Chunks of 3 rows; returns the row count of every chunk turned into Arrow."""
    import graphlake.write.load as load_module

    sizes: list[int] = []
    real = load_module.coerce

    def counting(t, rows, *, partial, **options):
        sizes.append(len(rows))
        return real(t, rows, partial=partial, **options)

    monkeypatch.setattr(load_module, "CHUNK_ROWS", 3)
    monkeypatch.setattr(load_module, "coerce", counting)
    return sizes


def test_jsonl_is_converted_in_bounded_chunks(graph: gl.Graph, small_chunks: list[int]) -> None:
    graph.load([{"type": "Person", "data": {"name": f"p{i}", "age": i}} for i in range(10)])
    assert small_chunks and max(small_chunks) <= 3 and sum(small_chunks) == 10
    assert graph.nodes("Person").num_rows == 10
    assert len(graph.log()) == 2  # still one commit


def test_chunked_loads_keep_their_semantics(graph: gl.Graph, small_chunks: list[int]) -> None:
    people = [{"type": "Person", "data": {"name": f"p{i}", "age": i}} for i in range(7)]
    with pytest.raises(gl.DuplicateKeyError):  # the duplicate is in another chunk
        graph.load([*people, {"type": "Person", "data": {"name": "p0"}}])
    graph.load(people)
    # merge: absent properties stay as they are, whichever chunk a row is in
    graph.load([{"type": "Person", "data": {"name": f"p{i}"}} for i in range(7)], mode="merge")
    assert sorted(r["age"] for r in graph.nodes("Person").to_pylist()) == list(range(7))
    graph.load(people[:5], mode="overwrite")  # one overwrite, not the last chunk only
    assert graph.nodes("Person").num_rows == 5
