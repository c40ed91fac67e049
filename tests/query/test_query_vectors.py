"""`vector_distance(a, b [, metric])` in Cypher ranks as `g.search` does: its values are
`graphlake.search.distance`'s (numpy), and ordering by it gives g.search's exact order."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import graphlake as gl
from graphlake.errors import CypherError
from graphlake.search.distance import distance

SCHEMA = 'node Doc { name: String @key  v: Vector(3)?  @index(v, metric="l2") }'


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> tuple[gl.Graph, np.ndarray]:
    g = gl.Graph.init(Path(tmp_path_factory.mktemp("vec")) / "g", SCHEMA)
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(40, 3)).astype("float32")
    with g.write() as w:
        w.insert(
            "Doc",
            [{"name": f"d{i:02d}", "v": v.tolist()} for i, v in enumerate(vectors)]
            + [{"name": "none"}],
        )
    return g, vectors


@pytest.mark.parametrize("metric", ["cosine", "l2", "dot"])
def test_vector_distance_is_the_search_distance(docs, metric: str) -> None:
    g, vectors = docs
    q = [0.3, -1.0, 0.5]
    # (no `WHERE d.v IS NOT NULL`: README "Known limitations", DuckDB pushes it into Lance)
    out = g.query(
        "MATCH (d:Doc) "
        f"RETURN d.name AS name, vector_distance(d.v, $q, '{metric}') AS dist "
        "ORDER BY dist, name",
        {"q": q},
    )
    expected = distance(vectors, np.asarray(q, dtype="float32"), metric)
    got = dict(zip(out.column("name").to_pylist(), out.column("dist").to_pylist(), strict=True))
    assert got.pop("none") is None and out.column("name").to_pylist()[-1] == "none"
    assert got == pytest.approx(
        {f"d{i:02d}": float(d) for i, d in enumerate(expected)}, rel=1e-5, abs=1e-6
    )
    assert out.column("name").to_pylist()[:5] == [f"d{i:02d}" for i in np.argsort(expected)[:5]]


def test_ordering_by_it_matches_search(docs) -> None:
    g, _ = docs
    q = [1.0, 0.0, 0.25]
    cypher = g.query(
        "MATCH (d:Doc) RETURN d.name AS name ORDER BY vector_distance(d.v, $q, 'l2') LIMIT 5",
        {"q": q},
    )
    found = g.search("Doc", vector=np.asarray(q, dtype="float32"), k=5)
    assert cypher.column("name").to_pylist() == found.column("name").to_pylist()


def test_a_bad_metric_is_a_typed_error(docs) -> None:
    g, _ = docs
    with pytest.raises(CypherError, match="metric"):
        g.query("MATCH (d:Doc) RETURN vector_distance(d.v, [1.0, 0.0, 0.0], 'manhattan')")
    with pytest.raises(CypherError, match="argument"):
        g.query("MATCH (d:Doc) RETURN vector_distance(d.v)")
