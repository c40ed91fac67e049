"""recall@10 against exact search on a clustered Vector(128) table, before and after
optimize builds the ANN index (the 100k-row check is in bench/search.py)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import graphlake as gl
from graphlake.search.distance import distance

N, DIM, QUERIES = 10_000, 128, 40


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    rng = np.random.default_rng(7)
    centres = rng.normal(size=(32, DIM))
    vectors = (centres[rng.integers(0, 32, N)] + 0.4 * rng.normal(size=(N, DIM))).astype("f4")
    g = gl.Graph.init(
        tmp_path_factory.mktemp("recall") / "g",
        f"node V {{ name: String @key, e: Vector({DIM}) @index }}",
    )
    names = [f"v{i}" for i in range(N)]
    g.load(
        pa.table(
            {"name": names, "e": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIM)}
        ),
        table="V",
    )
    queries = vectors[rng.integers(0, N, QUERIES)] + 0.1 * rng.normal(size=(QUERIES, DIM))
    truth = [{names[i] for i in np.argsort(distance(vectors, q))[:10]} for q in queries]
    return g, queries, truth


def recall(g: gl.Graph, queries, truth) -> float:
    hits = [
        len(set(g.search("V", vector=q, k=10, columns=["name"])["name"].to_pylist()) & t)
        for q, t in zip(queries, truth, strict=True)
    ]
    return sum(hits) / (10 * len(truth))


@pytest.mark.slow  # over 10 s: outside `make test-fast`
def test_recall_before_and_after_optimize(setup):
    g, queries, truth = setup
    assert recall(g, queries, truth) == 1.0  # no index yet: exact
    g.optimize()
    (c,) = g.search("V", vector=queries[0], explain=True).coverage
    assert c.index_type == "IVF_HNSW_SQ" and c.exact_rows == 0
    assert recall(g, queries, truth) >= 0.95
