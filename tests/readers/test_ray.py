"""`to_ray`: a Ray Data Dataset over a pinned table, read by two Ray worker processes on
127.0.0.1 (Ray started once for the module, loopback only, as the ingest tests do)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from graphlake.catalog.leases import LEASES_DIR
from graphlake.errors import ReaderError, UnknownPropertyError
from graphlake.ingestion.engines import start_local_ray
from tests.readers.helpers import rows, sample_graph

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_ray(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    home = tmp_path_factory.mktemp("home")
    ray_tmp = tempfile.mkdtemp(prefix="glrd-", dir="/tmp")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        mp.setenv("RAY_TMPDIR", ray_tmp)
        local = start_local_ray(num_cpus=2, temp_dir=ray_tmp)
        try:
            yield
        finally:
            local.stop()
            shutil.rmtree(ray_tmp, ignore_errors=True)


def _checksums(table: pa.Table) -> dict[str, object]:
    """Order-free: each column's values, sorted by key."""
    table = table.sort_by("id")
    return {name: table.column(name).to_pylist() for name in table.column_names}


@ray.remote
def _worker_pid() -> int:
    return os.getpid()


def test_to_ray_matches_nodes_with_two_worker_processes(local_ray: None, tmp_path: Path) -> None:
    g = sample_graph(tmp_path / "g")
    columns = ["id", "k", "emb", "text", "label", "raw"]
    expected = g.nodes("Sample", columns=columns)
    ds = g.to_ray("Sample", columns=columns, parallelism=3, blobs="bytes")
    with g.write(message="after") as w:  # not seen: the dataset is pinned
        w.insert("Sample", rows(300, 310))
    got = ds.to_arrow_refs()
    table = pa.concat_tables(ray.get(got))
    assert table.num_rows == expected.num_rows == 300
    assert _checksums(table) == _checksums(expected)
    source = ds._graphlake_source
    assert [t.metadata.num_rows for t in source.get_read_tasks(3)] == [100, 70, 130]
    assert [t.metadata.num_rows for t in source.get_read_tasks(2)] == [230, 70]
    pids = set(ray.get([_worker_pid.remote() for _ in range(8)]))
    assert os.getpid() not in pids  # tasks run in Ray's worker processes
    assert len(g.repo.store.list(LEASES_DIR)) == 1  # held by the driver while ds lives
    ds._graphlake_scan.close()
    assert g.repo.store.list(LEASES_DIR) == []


def _blob_sizes(batch: dict) -> dict:
    """Resolve a batch of handles inside a Ray worker (one Lance take)."""
    import graphlake as gl

    return {
        "k": batch["k"],
        "raw": gl.read_blobs(batch["raw"]),
        "pid": [os.getpid()] * len(batch["k"]),
    }


def test_to_ray_hands_out_lazy_blob_handles_resolved_in_workers(
    local_ray: None, tmp_path: Path
) -> None:
    import graphlake as gl

    g = sample_graph(tmp_path / "g", parts=(30, 30))
    ds = g.to_ray("Sample", columns=["k", "raw"], parallelism=2)  # blobs="lazy" by default
    rows_ = ds.take_all()
    assert all(isinstance(r["raw"], gl.BlobRef) for r in rows_)
    resolved = ds.map_batches(_blob_sizes, batch_format="numpy").take_all()
    assert sorted((r["k"], r["raw"]) for r in resolved) == [(k, bytes([k]) * 8) for k in range(60)]
    assert os.getpid() not in {r["pid"] for r in resolved}
    ds._graphlake_scan.close()


def test_to_ray_filters_and_refuses_bad_input(local_ray: None, tmp_path: Path) -> None:
    g = sample_graph(tmp_path / "g", parts=(20, 20))
    ds = g.to_ray("Sample", columns=["k"], where="label = 0")
    assert sorted(ds.to_pandas()["k"].tolist()) == [k for k in range(40) if k % 5 == 0]
    ds._graphlake_scan.close()
    with pytest.raises(UnknownPropertyError):
        g.to_ray("Sample", columns=["nope"])
    with pytest.raises(ReaderError, match="parallelism"):
        g.to_ray("Sample", parallelism=0)
    with pytest.raises(ReaderError, match=r"Blob column 'raw' .*not blobs='tensor'"):
        g.to_ray("Sample", columns=["k", "raw"], blobs="tensor")
    assert g.repo.store.list(LEASES_DIR) == []
