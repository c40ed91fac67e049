"""A whole ingest run lands as ONE commit on the target, whatever the input mixes: nodes
and edges are written together on each shard and checked together at the final merge
(`@card(1..)` included); shards never refuse an edge whose endpoint is in another shard."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphlake as gl
from graphlake.ingestion import ingest
from tests.ingest.helpers import ingest_branches, write_jsonl

SHOP = """
node Product { sku: String @key  name: String? }
node Maker { name: String @key }
edge MadeBy: Product -> Maker @card(CARD)
"""


def _shop(root: Path, card: str) -> gl.Graph:
    return gl.Graph.init(root, SHOP.replace("CARD", card))


def _records(n: int) -> list[dict]:
    """Makers, then products, then their edges: with 2 workers an edge's product and
    maker sit in the other worker's slice."""
    recs: list[dict] = [{"type": "Maker", "data": {"name": f"m{i}"}} for i in range(4)]
    recs += [{"type": "Product", "data": {"sku": f"s{i:04d}"}} for i in range(n)]
    recs += [{"edge": "MadeBy", "from": f"s{i:04d}", "to": f"m{i % 4}"} for i in range(n)]
    return recs


@pytest.mark.parametrize("card", ["1..1", "0..1"])
def test_nodes_and_edges_land_as_one_commit(tmp_path: Path, card: str) -> None:
    g = _shop(tmp_path / "g", card)
    trunk = g.head().id
    path = write_jsonl(tmp_path / "shop.jsonl", _records(300))
    result = ingest(g, path, workers=2, commit_every=100, progress=False)
    head = g.head()
    assert head.parents[0] == trunk and len(head.parents) == 3  # one merge of 2 shards
    assert result.commit == head.id and list(result.merges) == ["all"]
    assert (g.nodes("Product").num_rows, g.nodes("Maker").num_rows, g.edges("MadeBy").num_rows) == (
        300,
        4,
        300,
    )
    assert result.rows == 604 and ingest_branches(g) == []
    assert g.fsck().ok


def test_cross_shard_violations_are_refused_at_the_merge(tmp_path: Path) -> None:
    """Checks deferred from the shards still run, once, on the merged result."""
    g = _shop(tmp_path / "g", "1..1")
    trunk = g.head().id
    recs = _records(100)
    recs.append({"type": "Product", "data": {"sku": "lonely"}})  # no MadeBy edge
    path = write_jsonl(tmp_path / "shop.jsonl", recs)
    with pytest.raises(gl.MergeConflictError) as info:
        ingest(g, path, workers=2, progress=False)
    [conflict] = info.value.conflicts
    assert (conflict.kind, conflict.table, conflict.entity_id) == (
        "cardinality_violation",
        "MadeBy",
        "lonely",
    )
    assert g.head().id == trunk
