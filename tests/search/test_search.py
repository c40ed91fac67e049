"""`g.search`: exact results against numpy brute force, filters, branches, text and
hybrid ranking, typed bad input (README "Search")."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

import graphlake as gl
from graphlake.errors import KeyNotFoundError, QueryError, SearchError
from graphlake.search.distance import distance
from graphlake.search.query import MAX_K, RRF_K

SCHEMA = """
node Doc {
  name: String @key
  title: String @search
  body: String? @search
  n: I32
  embedding: Vector(8) @index
}
node Pt {
  name: String @key, v: Vector(4) @index(metric="l2"), w: Vector(4) @index(w, metric="dot")
}
node Plain { name: String @key, label: String }
edge Cites: Doc -> Doc { weight: F32? }
"""
WORDS = ["apple", "banana", "cherry", "delta", "echo", "fox"]


def docs(lo: int, hi: int, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed + lo)
    return [
        {
            "name": f"d{i:03d}",
            "title": f"{WORDS[i % 6]} {WORDS[(i // 6) % 6]}",
            "body": None if i % 4 == 0 else WORDS[(i + 2) % 6],
            "n": i,
            "embedding": rng.normal(size=8).tolist(),
        }
        for i in range(lo, hi)
    ]


def exact(
    g: gl.Graph,
    q,
    k: int,
    branch: str = "main",
    where: str | None = None,
    metric: str = "cosine",
    prop: str = "embedding",
    type: str = "Doc",
) -> list[str]:
    """The k nearest keys by numpy brute force (ties by key)."""
    t = g.nodes(type, branch=branch, where=where)
    d = distance(np.array(t[prop].to_pylist()), q, metric)
    names = t["name"].to_pylist()
    return [names[i] for i in sorted(range(len(names)), key=lambda i: (d[i], names[i]))[:k]]


@pytest.fixture(scope="module")
def g(tmp_path_factory) -> gl.Graph:
    g = gl.Graph.init(tmp_path_factory.mktemp("search") / "g", SCHEMA)
    with g.write() as w:
        w.insert("Doc", docs(0, 120))
        w.insert("Plain", [{"name": "p", "label": "x"}])
    return g


Q = [0.5, -1.0, 0.25, 2.0, 0.0, 1.0, -0.5, 0.1]


def names(t: pa.Table) -> list[str]:
    return t["name"].to_pylist()


def test_vector_search_equals_brute_force(g):
    got = g.search("Doc", vector=Q, k=7)
    assert names(got) == exact(g, Q, 7)
    t = g.nodes("Doc")
    by_name = dict(zip(t["name"].to_pylist(), t["embedding"].to_pylist(), strict=True))
    want = [distance(by_name[n], Q)[0] for n in names(got)]
    assert got["_distance"].to_pylist() == pytest.approx(want, abs=1e-5)
    assert set(got.column_names) == {*t.column_names, "_distance"}


@pytest.mark.parametrize(("prop", "metric"), [("v", "l2"), ("w", "dot")])
def test_metrics_have_the_distance_functions_semantics(tmp_path, prop, metric):
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    rng = np.random.default_rng(3)
    with g.write() as w:
        w.insert(
            "Pt",
            [
                {
                    "name": f"p{i}",
                    "v": rng.normal(size=4).tolist(),
                    "w": rng.normal(size=4).tolist(),
                }
                for i in range(50)
            ],
        )
    q = [1.0, 0.5, -0.5, 2.0]
    got = g.search("Pt", vector=q, k=5, on=prop)
    assert names(got) == exact(g, q, 5, metric=metric, prop=prop, type="Pt")
    t = g.nodes("Pt")
    by_name = dict(zip(t["name"].to_pylist(), t[prop].to_pylist(), strict=True))
    want = [distance(by_name[n], q, metric)[0] for n in names(got)]
    assert got["_distance"].to_pylist() == pytest.approx(want, rel=1e-4, abs=1e-4)


def test_where_is_applied_before_ranking(g):
    got = g.search("Doc", vector=Q, k=5, where="n >= 100", columns=["name", "n"])
    assert names(got) == exact(g, Q, 5, where="n >= 100")
    assert all(n >= 100 for n in got["n"].to_pylist())
    few = g.search("Doc", vector=Q, k=10, where="n IN (3, 50, 77)")
    assert sorted(names(few)) == ["d003", "d050", "d077"]  # all 3 matches, not 0


def test_near_uses_the_nodes_own_vector_and_skips_it(g):
    row = g.get("Doc", "d010")
    got = g.search("Doc", near="d010", k=4, columns=["name"])
    assert got.column_names == ["name", "_distance"]
    assert names(got) == [n for n in exact(g, row["embedding"], 5) if n != "d010"][:4]


def test_columns_and_id(g):
    got = g.search("Doc", vector=Q, k=2, columns=["id", "n"])
    assert got.column_names == ["id", "n", "_distance"]


def test_results_come_from_one_branch_or_commit(g):
    g.create_branch("iso")
    twin = docs(500, 501)[0] | {"name": "iso-twin", "embedding": Q}
    with g.write("iso") as w:
        w.insert("Doc", [twin])
    assert names(g.search("Doc", vector=Q, k=1, branch="iso")) == ["iso-twin"]
    assert "iso-twin" not in names(g.search("Doc", vector=Q, k=20))
    old = g.head("iso").id
    with g.write("iso") as w:
        w.delete("Doc", ["iso-twin"])
    assert names(g.search("Doc", vector=Q, k=1, branch=old)) == ["iso-twin"]
    assert "iso-twin" not in names(g.search("Doc", vector=Q, k=20, branch="iso"))


def test_results_after_write_merge_merge_many_and_optimize_equal_brute_force(tmp_path):
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    with g.write() as w:
        w.insert("Doc", docs(0, 60))
    g.create_branch("one")
    for b in ("s1", "s2"):
        g.create_branch(b)
    with g.write("one") as w:
        w.insert("Doc", docs(60, 70, seed=1))
        w.update("Doc", [{"name": "d001", "embedding": Q}])
    with g.write() as w:
        w.delete("Doc", ["d002"])
    assert names(g.search("Doc", vector=Q, k=9)) == exact(g, Q, 9)
    g.merge("one")
    assert names(g.search("Doc", vector=Q, k=9)) == exact(g, Q, 9)
    assert names(g.search("Doc", vector=Q, k=1)) == ["d001"]
    with g.write("s1") as w:
        w.insert("Doc", docs(100, 110, seed=2))
    with g.write("s2") as w:
        w.insert("Doc", docs(200, 210, seed=3))
    r = g.merge_many(["s1", "s2"])
    assert all(s.vector_index_calls == 0 and s.fts_index_calls == 0 for s in r.stats.values())
    assert names(g.search("Doc", vector=Q, k=12)) == exact(g, Q, 12)
    assert "d002" not in names(g.search("Doc", vector=Q, k=80))  # deleted stays deleted
    g.optimize()
    assert names(g.search("Doc", vector=Q, k=12)) == exact(g, Q, 12)
    assert names(g.search("Doc", vector=Q, k=80)) == exact(g, Q, 80)


def test_text_ranks_all_terms_above_one(g):
    got = g.search("Doc", text="apple banana", k=10, columns=["name", "title"])
    titles = got["title"].to_pylist()
    both = [i for i, t in enumerate(titles) if "apple" in t and "banana" in t]
    one = [i for i, t in enumerate(titles) if ("apple" in t) != ("banana" in t)]
    assert both and one and max(both) < min(one)
    scores = got["_score"].to_pylist()
    assert scores == sorted(scores, reverse=True)


def test_text_on_one_property_and_where(g):
    got = g.search("Doc", text="cherry", k=50, on="body", where="n < 60")
    assert got.num_rows and all(b == "cherry" for b in got["body"].to_pylist())
    assert all(n < 60 for n in got["n"].to_pylist())


def test_hybrid_is_rrf_of_the_two_lists(g):
    k = 6
    vec = names(g.search("Doc", vector=Q, k=k))
    txt = names(g.search("Doc", text="apple fox", k=k))
    fused: dict[str, float] = {}
    for ranked in (vec, txt):
        for rank, n in enumerate(ranked, start=1):
            fused[n] = fused.get(n, 0.0) + 1 / (RRF_K + rank)
    want = sorted(fused, key=lambda n: (-fused[n], n))[:k]
    got = g.search("Doc", vector=Q, text="apple fox", k=k)
    assert names(got) == want
    assert got["_rrf"].to_pylist() == pytest.approx([fused[n] for n in want])
    assert {"_distance", "_score", "_rrf"} <= set(got.column_names)


def test_edges_are_searchable_by_text_only_when_declared(g):
    with pytest.raises(SearchError, match="no Vector property"):
        g.search("Cites", vector=[1.0])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"vector": [1.0, 2.0]}, SearchError, r"has 2 values; the property is Vector\(8\)"),
        ({"vector": [math.nan] * 8}, SearchError, "NaN or infinite"),
        ({"vector": [math.inf] + [0.0] * 7}, SearchError, "NaN or infinite"),
        ({"vector": ["a"] * 8}, SearchError, "list of numbers"),
        ({"vector": Q, "k": 0}, SearchError, "k must be between 1"),
        ({"vector": Q, "k": MAX_K + 1}, SearchError, "k must be between 1"),
        ({"vector": Q, "k": 2.5}, SearchError, "k must be an integer"),
        ({"near": "nobody"}, KeyNotFoundError, "no Doc with key 'nobody'"),
        ({"vector": Q, "near": "d001"}, SearchError, "either vector or near"),
        ({}, SearchError, "give a query"),
        ({"vector": Q, "where": "n >"}, QueryError, "filter"),
        ({"vector": Q, "where": "nope = 1"}, QueryError, "nope"),
        ({"vector": Q, "columns": ["nope"]}, SearchError, "no column 'nope'"),
        ({"text": "x", "on": "n"}, SearchError, "'n' of Doc has no @search"),
        ({"text": "x" * 5000}, SearchError, "at most 4096"),
        ({"text": "  "}, SearchError, "non-empty"),
        ({"vector": Q, "on": "nope"}, SearchError, "not a property"),
    ],
)
def test_bad_input_is_a_typed_error(g, kwargs, error, match):
    head = g.head().id
    with pytest.raises(error, match=match):
        g.search("Doc", **kwargs)
    assert g.head().id == head


def test_bad_type_and_missing_declarations(g):
    with pytest.raises(gl.errors.UnknownTableError):
        g.search("Nope", vector=Q)
    with pytest.raises(SearchError, match="no Vector property"):
        g.search("Plain", vector=[1.0])
    with pytest.raises(SearchError, match="no @search property"):
        g.search("Plain", text="x")
    with pytest.raises(SearchError, match="several Vector properties"):
        g.search("Pt", vector=[1.0] * 4)


def test_search_on_each_backend(backend):
    uri, options = backend
    g = gl.Graph.init(uri, SCHEMA, storage_options=options)
    with g.write() as w:
        w.insert("Doc", docs(0, 40))
    assert names(g.search("Doc", vector=Q, k=5)) == exact(g, Q, 5)
    assert g.search("Doc", text="apple", k=3).num_rows == 3
    g.optimize()
    assert names(g.search("Doc", vector=Q, k=5)) == exact(g, Q, 5)
