"""`to_hf` (Hugging Face `datasets`) and `to_polars` (a LazyFrame with pushdown) over a
pinned table."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from graphlake.catalog.leases import LEASES_DIR
from graphlake.errors import ReaderError, UnknownPropertyError, UnknownTableError
from tests.readers.helpers import rows, sample_graph

datasets = pytest.importorskip("datasets")
pl = pytest.importorskip("polars")


@pytest.fixture
def g(tmp_path: Path):
    return sample_graph(tmp_path / "g")


def test_to_hf_in_memory_and_streaming(g) -> None:
    ds = g.to_hf("Sample", columns=["k", "emb", "text"])
    with g.write(message="after") as w:  # not seen: pinned
        w.insert("Sample", rows(300, 305))
    assert isinstance(ds, datasets.Dataset) and ds.num_rows == 300
    row = ds.sort("k")[7]
    assert row == {"k": 7, "emb": [7.0, 7.5, -7.0, 1.0], "text": "t7"}
    assert ds.with_format("numpy")[:3]["emb"].shape == (3, 4)
    assert g.repo.store.list(LEASES_DIR) == []  # all read: nothing left to lease

    it = g.to_hf("Sample", "main~1", ["k", "label"], where="label = 4", streaming=True)
    assert isinstance(it, datasets.IterableDataset) and it.num_shards == 3  # the fragments
    assert len(g.repo.store.list(LEASES_DIR)) == 1
    assert sorted(r["k"] for r in it) == [k for k in range(300) if k % 5 == 4]
    del it
    gc.collect()
    assert g.repo.store.list(LEASES_DIR) == []


def test_to_hf_reads_blobs_as_bytes_and_refuses_lazy(g) -> None:
    ds = g.to_hf("Sample", columns=["k", "raw"], where="k < 3")
    assert sorted((r["k"], r["raw"]) for r in ds) == [(k, bytes([k]) * 8) for k in range(3)]
    for bad, match in (("lazy", "holds no BlobRef handles"), ("tensor", "Blob column 'raw'")):
        with pytest.raises(ReaderError, match=match):
            g.to_hf("Sample", columns=["k", "raw"], blobs=bad)
    assert g.repo.store.list(LEASES_DIR) == []


def test_to_polars_pushes_projection_and_filter_down(g, monkeypatch) -> None:
    import lance

    calls: list[dict] = []
    original = lance.LanceDataset.to_batches

    def spy(self, *args, **kwargs):
        calls.append(kwargs)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(lance.LanceDataset, "to_batches", spy)
    lf = g.to_polars("Sample")
    with g.write(message="after") as w:  # not seen: pinned
        w.insert("Sample", rows(300, 400))
    out = lf.filter(pl.col("k") >= 290).select("k", "text").collect()
    assert sorted(out["k"].to_list()) == list(range(290, 300))
    assert sorted(calls[-1]["columns"]) == ["k", "text"]  # the blob and vector stay unread
    assert calls[-1]["filter"] is not None  # the predicate reached Lance
    assert g.to_polars("Sample", columns=["k", "raw"]).collect().columns == ["k", "raw"]
    with pytest.raises(UnknownPropertyError):
        g.to_polars("Sample", columns=["nope"])
    with pytest.raises(UnknownTableError):
        g.to_hf("Nope")
