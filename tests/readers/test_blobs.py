"""Lazy Blob reads: scans and readers hand out `BlobRef` handles that read exactly the
bytes of their pinned commit, whatever happens later (under the read lease), in this
process, in a spawned process and in DataLoader workers."""

from __future__ import annotations

import datetime as dt
import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pyarrow as pa
import pytest

import graphlake as gl
from graphlake.catalog.leases import LEASES_DIR
from graphlake.errors import ReaderError
from tests.readers.helpers import read_in_child, rows, sample_graph


def _blob_graph(path: Path) -> tuple[gl.Graph, str]:
    """Main: 300 rows; branch `exp`: some blobs replaced, some null, some new rows."""
    g = sample_graph(path)
    g.create_branch("exp")
    with g.write("exp", message="exp blobs") as w:
        w.update("Sample", [{"k": k, "raw": b"exp-%d" % k * 3} for k in range(0, 300, 7)])
        w.update("Sample", [{"k": k, "raw": None} for k in (1, 2)])
        new = rows(300, 320)
        for r in new:
            r["raw"] = b"new-%d" % r["k"]
        w.insert("Sample", new)
    return g, g.resolve("exp").id


def _expected(g: gl.Graph, commit: str, keys: list[int]) -> dict[int, bytes | None]:
    return {k: g.get("Sample", k, branch=commit)["raw"] for k in keys}


def test_handles_read_the_pinned_bytes_after_writes_merges_deletion_and_gc(
    tmp_path: Path,
) -> None:
    g, commit = _blob_graph(tmp_path / "g")
    scan = g.snapshot("exp").scan("Sample", ["k", "raw"], blobs="lazy", batch_size=64)
    assert scan.schema.field("raw").type == pa.uint64()
    handles: dict[int, gl.BlobRef] = {}
    for batch in scan:
        handles.update(
            zip(batch.column("k").to_pylist(), scan.blob_refs(batch, "raw"), strict=True)
        )
    assert sorted(handles) == list(range(320))
    expected = _expected(g, commit, sorted(handles))
    assert expected[7] == b"exp-7" * 3 and expected[1] is None and expected[3] == b"\x03" * 8
    # Later: the same rows rewritten on the branch, main merged in, the branch deleted,
    # gc with no grace: only the scan's lease keeps the pinned state.
    with g.write("exp", message="rewrite") as w:
        w.update("Sample", [{"k": k, "raw": b"later"} for k in range(0, 320, 3)])
    untouched = [k for k in range(3, 300) if k % 3 and k % 7]  # no conflict on merge
    with g.write(message="main moves") as w:
        w.update("Sample", [{"k": k, "raw": b"main"} for k in untouched[2::4]])
        w.delete("Sample", untouched[:2])
    g.merge("main", into="exp")
    g.delete_branch("exp")
    g.gc(grace=dt.timedelta(0), reflog_keep=dt.timedelta(0))
    keys = sorted(handles)
    from graphlake.read import blobs

    blobs._repos.clear()  # nothing cached: the files themselves must still be there
    assert gl.read_blobs([handles[k] for k in keys]) == [expected[k] for k in keys]
    assert handles[310].read() == b"new-310" and handles[2].read() is None
    # Mixed batches, repeats and None pass through in order.
    assert gl.read_blobs([handles[7], None, handles[7], handles[3]]) == [
        expected[7],
        None,
        expected[7],
        expected[3],
    ]
    scan.close()
    assert g.repo.store.list(LEASES_DIR) == []


def test_handles_pickle_small_and_resolve_in_a_spawned_process(tmp_path: Path) -> None:
    g, commit = _blob_graph(tmp_path / "g")
    with g.snapshot("exp").scan("Sample", ["k", "raw"], where="k >= 290", blobs="lazy") as scan:
        table = scan.to_table()
        refs = scan.blob_refs(table, "raw")
        keys = table.column("k").to_pylist()
        one = pickle.dumps(refs[0])
        assert len(one) < 600 and b"exp-" not in one  # a handle, not the bytes
        assert len(pickle.dumps(refs)) < 600 + 40 * len(refs)  # the source pickles once
        with g.write("exp", message="after") as w:
            w.update("Sample", [{"k": k, "raw": b"moved"} for k in keys])
        spawn = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(1, mp_context=spawn) as pool:
            got = pool.submit(read_in_child, refs).result(timeout=120)
        assert got == [_expected(g, commit, keys)[k] for k in keys]
        assert b"moved" not in got


def test_handles_on_a_local_folder_and_on_s3(backend) -> None:
    uri, options = backend  # S3: moto on 127.0.0.1; the handle carries the options
    g = sample_graph(uri, parts=(25, 15), storage_options=options)
    with g.snapshot().scan("Sample", ["k", "raw"], blobs="lazy", batch_size=10) as scan:
        refs, keys = [], []
        for batch in scan:
            refs += scan.blob_refs(batch, "raw")
            keys += batch.column("k").to_pylist()
        from graphlake.read import blobs

        blobs._repos.clear()
        got = gl.read_blobs(pickle.loads(pickle.dumps(refs)))
    assert got == [bytes([k]) * 8 for k in keys] and sorted(keys) == list(range(40))


def test_blob_modes_and_bad_input(tmp_path: Path) -> None:
    g = sample_graph(tmp_path / "g", parts=(20,))
    snap = g.snapshot()
    with snap.scan("Sample", ["k", "raw"]) as scan:  # a scan's default: the bytes
        assert scan.blobs == "bytes"
        assert scan.to_table().column("raw").to_pylist()[3] == b"\x03" * 8
        with pytest.raises(ReaderError, match="not a lazily read Blob column"):
            scan.blob_refs(scan.to_table(), "raw")
    with snap.scan("Sample", ["raw", "k"], blobs="lazy") as scan:
        table = scan.to_table()  # the row ids, no bytes
        assert table.column_names == ["raw", "k"]
        assert gl.read_blobs(scan.blob_refs(table, "raw")) == [
            bytes([k]) * 8 for k in table["k"].to_pylist()
        ]
    for bad in ("tensor", None, True):
        with pytest.raises(ReaderError, match=r"Blob column 'raw' .*blobs='lazy'.*blobs='bytes'"):
            snap.scan("Sample", ["k", "raw"], blobs=bad)
    with pytest.raises(ReaderError, match="takes BlobRef handles"):
        gl.read_blobs([b"bytes"])
    assert g.repo.store.list(LEASES_DIR) == []


def test_a_handle_whose_state_was_collected_is_a_typed_error(tmp_path: Path) -> None:
    g, _ = _blob_graph(tmp_path / "g")
    with g.snapshot("exp").scan("Sample", ["k", "raw"], where="k >= 300", blobs="lazy") as scan:
        table = scan.to_table()
        ref = scan.blob_refs(table, "raw")[0]
        assert ref.read() == b"new-%d" % table["k"][0].as_py()
    # Lease released, branch deleted, gc: the state the handle names is gone.
    g.delete_branch("exp")
    g.gc(grace=dt.timedelta(0), reflog_keep=dt.timedelta(0))
    fresh = pickle.loads(pickle.dumps(ref))
    from graphlake.read import blobs

    blobs._repos.clear()  # as in a new process
    with pytest.raises(ReaderError, match=r"cannot read blobs of Sample\.raw"):
        fresh.read()
