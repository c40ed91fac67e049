"""`to_torch`: a real DataLoader with worker processes over a pinned table; ranks and
workers each read their rows exactly once, with equal batch counts and a seeded shuffle."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path

import pytest

import graphlake as gl
from graphlake.catalog.leases import LEASES_DIR
from graphlake.errors import ReaderError, UnknownPropertyError
from tests.readers.helpers import rows, sample_graph

torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader  # noqa: E402


@pytest.fixture(scope="module")
def g(tmp_path_factory: pytest.TempPathFactory):
    return sample_graph(tmp_path_factory.mktemp("torch") / "g")  # 300 rows, 3 fragments


def _keys(batches) -> list[int]:
    return [k for b in batches for k in b["k"].tolist()]


def test_a_dataloader_with_two_spawned_workers_reads_each_row_once(g, tmp_path: Path) -> None:
    g.create_branch("moving")
    ds = g.to_torch(
        "Sample", "moving", ["k", "emb", "label", "text", "raw"], batch_size=16, shuffle=3
    )
    pinned = ds.commit_id
    with g.write("moving", message="after the loader was made") as w:  # not seen: pinned
        w.insert("Sample", rows(300, 320))
    loader = DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context="spawn")
    batches = list(loader)
    assert len(batches) == len(ds) == 19  # ceil(300 / 16) for one rank
    assert sorted(_keys(batches)) == list(range(300))
    for batch in batches:  # Blob: lazy handles made in the workers, pickled back, read here
        assert all(isinstance(r, gl.BlobRef) for r in batch["raw"])
        assert gl.read_blobs(batch["raw"]) == [bytes([k % 256]) * 8 for k in batch["k"].tolist()]
    first = batches[0]
    assert first["emb"].dtype == torch.float32 and first["emb"].shape == (16, 4)
    k = first["k"][0].item()
    assert first["emb"][0].tolist() == [k, k + 0.5, -k, 1.0]
    assert first["label"].dtype == torch.int32 and first["text"][0] == f"t{k}"
    assert ds.commit_id == pinned
    ds.close()
    assert g.repo.store.list(LEASES_DIR) == []


def test_a_blob_column_as_bytes(g) -> None:
    eager = g.to_torch("Sample", columns=["k", "raw"], batch_size=100, blobs="bytes")
    first = next(iter(eager))
    assert first["raw"] == [bytes([k % 256]) * 8 for k in first["k"].tolist()]
    eager.close()
    assert g.repo.store.list(LEASES_DIR) == []


def test_ranks_split_rows_exactly_with_a_seeded_shuffle_per_epoch(g) -> None:
    def epoch(rank: int, n: int, seed: int = 11) -> list[int]:
        ds = g.to_torch(
            "Sample",
            columns=["k"],
            batch_size=10,
            shuffle=seed,
            rank=rank,
            world_size=2,
            chunk_rows=32,
        )
        ds.set_epoch(n)
        batches = list(ds)
        assert len(batches) == len(ds) == 15
        ds.close()
        return _keys(batches)

    r0, r1 = epoch(0, 0), epoch(1, 0)
    assert len(r0) == len(r1) == 150 and sorted(r0 + r1) == list(range(300))
    assert epoch(0, 0) == r0  # same seed and epoch: same order
    assert epoch(0, 1) != r0 and epoch(0, 0, seed=12) != r0
    r0e1, r1e1 = epoch(0, 1), epoch(1, 1)
    assert sorted(r0e1 + r1e1) == list(range(300))
    assert r0 != sorted(r0)  # shuffled


@pytest.mark.parametrize(
    ("world", "drop_last", "batches", "per_rank"),
    [
        (4, False, 8, 75),  # 300 / 4: no padding needed, last batch short on every rank
        (7, False, 5, 43),  # ceil(300 / 7) = 43: one row read twice in all
        (7, True, 4, 40),  # whole batches only: 20 rows left out
    ],
)
def test_every_rank_gets_the_same_number_of_batches(
    g, world: int, drop_last: bool, batches: int, per_rank: int
) -> None:
    seen: Counter[int] = Counter()
    for rank in range(world):
        ds = g.to_torch(
            "Sample",
            columns=["k"],
            batch_size=10,
            rank=rank,
            world_size=world,
            drop_last=drop_last,
            shuffle=5,
        )
        out = list(ds)
        ds.close()
        assert len(out) == len(ds) == batches
        if drop_last:
            assert {len(b["k"]) for b in out} == {10}
        keys = _keys(out)
        assert len(keys) == per_rank and len(set(keys)) == per_rank
        seen.update(keys)
    if drop_last:
        assert sum(seen.values()) == 280 and max(seen.values()) == 1
    else:
        assert set(seen) == set(range(300))
        assert sum(seen.values()) == world * per_rank  # padding repeats, nothing is lost


def test_a_filtered_loader_reads_only_matching_rows(g) -> None:
    ds = g.to_torch("Sample", columns=["k", "label"], where="label = 1", batch_size=7)
    keys = _keys(ds)
    ds.close()
    assert sorted(keys) == [k for k in range(300) if k % 5 == 1]


def test_the_leased_commit_survives_gc_after_its_branch_is_gone(tmp_path: Path) -> None:
    g = sample_graph(tmp_path / "g", parts=(30,))
    g.create_branch("run")
    with g.write("run", message="only on run") as w:
        w.insert("Sample", rows(30, 45))
    ds = g.to_torch("Sample", "run", ["k"], batch_size=8)
    g.delete_branch("run")
    g.gc(grace=dt.timedelta(0), reflog_keep=dt.timedelta(0))
    assert sorted(_keys(ds)) == list(range(45))
    ds.close()


def test_bad_loader_arguments_are_typed_errors(g) -> None:
    with pytest.raises(ReaderError, match=r"Blob column 'raw' .*not blobs='tensor'.*tensor"):
        g.to_torch("Sample", columns=["k", "raw"], blobs="tensor")
    with pytest.raises(ReaderError, match=r"rank must be in 0\.\.1"):
        g.to_torch("Sample", rank=2, world_size=2)
    with pytest.raises(ReaderError, match="world_size"):
        g.to_torch("Sample", rank=0, world_size=0)
    with pytest.raises(ReaderError, match="shuffle is a seed"):
        g.to_torch("Sample", shuffle=True)
    with pytest.raises(ReaderError, match="batch_size"):
        g.to_torch("Sample", batch_size=0)
    with pytest.raises(UnknownPropertyError):
        g.to_torch("Sample", columns=["nope"])
    ds = g.to_torch("Sample", columns=["k"])
    with pytest.raises(ReaderError, match="epoch"):
        ds.set_epoch(-1)
    ds.close()
    assert g.repo.store.list(LEASES_DIR) == []
