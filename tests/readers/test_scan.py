"""`Snapshot.scan`: one table of one pinned commit, streamed, under a read lease gc honours.

Also: `import graphlake` imports none of the readers' extras, and a missing extra is one
line naming the pip install.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import time
from pathlib import Path

import pytest

import graphlake as gl
from graphlake.catalog.leases import LEASES_DIR, ReadLeases
from graphlake.errors import (
    MissingExtraError,
    QueryError,
    ReaderError,
    UnknownPropertyError,
    UnknownRevisionError,
    UnknownTableError,
)
from tests.readers.helpers import rows, sample_graph


def _keys(batches) -> list[int]:
    return [k for b in batches for k in b.column("k").to_pylist()]


def test_scan_streams_batches_of_the_pinned_commit(tmp_path: Path) -> None:
    g = sample_graph(tmp_path / "g")
    with g.snapshot("main").scan("Sample", batch_size=32) as scan:
        assert [n for _, n in scan.fragments()] == [100, 70, 130]
        batches = list(scan)
        assert max(b.num_rows for b in batches) <= 32
        assert sorted(_keys(batches)) == list(range(300))
        # Blob columns only when named: the default projection leaves them unread.
        assert scan.columns == ("id", "k", "emb", "text", "label")
        assert batches[0].schema.names == list(scan.columns)
    with g.snapshot("main").scan("Sample", ["k", "raw"], where="label = 2") as scan:
        table = scan.to_table()
        assert sorted(table.column("k").to_pylist()) == [k for k in range(300) if k % 5 == 2]
        assert table.column("raw").to_pylist()[0] == bytes([table["k"][0].as_py()]) * 8


def test_scan_reads_its_commit_whatever_happens_later(tmp_path: Path) -> None:
    g = sample_graph(tmp_path / "g")
    g.create_branch("exp")
    with g.write("exp", message="more") as w:
        w.insert("Sample", rows(300, 350))
        w.delete("Sample", [0, 1])
    scan = g.snapshot("exp").scan("Sample", ["k"], batch_size=50)
    pinned = sorted(_keys(scan))
    # Later: more writes, a merge of main into the branch, the branch deleted, main
    # rewritten, gc with no grace: nothing live reaches the scan's commit any more.
    with g.write(message="main moves") as w:
        w.delete("Sample", list(range(2, 100)))
    g.merge("main", into="exp")
    with g.write("exp", message="even more") as w:
        w.insert("Sample", rows(350, 400))
    g.delete_branch("exp")
    g.gc(grace=dt.timedelta(0), reflog_keep=dt.timedelta(0))
    assert sorted(_keys(scan)) == pinned == [k for k in range(350) if k > 1]
    scan.close()
    assert g.repo.store.list(LEASES_DIR) == []


def test_gc_keeps_a_leased_commit_and_forgets_it_after_release(backend) -> None:
    uri, options = backend  # a local folder and S3 (moto on loopback): plain objects
    g = sample_graph(uri, parts=(40,), storage_options=options)
    g.create_branch("tmp")
    with g.write("tmp", message="tmp rows") as w:
        w.insert("Sample", rows(40, 60))
    scan = g.snapshot("tmp").scan("Sample", ["k"])
    g.delete_branch("tmp")
    g.gc(grace=dt.timedelta(0), reflog_keep=dt.timedelta(0))
    assert sorted(_keys(scan)) == list(range(60))  # the lease kept the commit's versions
    commit = scan.commit_id
    scan.close()
    g.gc(grace=dt.timedelta(0), reflog_keep=dt.timedelta(0))
    with pytest.raises(gl.CommitNotFoundError):
        g.resolve(commit)  # released: the next gc removed the commit


def test_a_lease_is_renewed_while_held_and_runs_out_when_its_holder_dies(tmp_path: Path) -> None:
    g = sample_graph(tmp_path / "g", parts=(10,))
    leases = ReadLeases(g.repo.store)
    scan = g.snapshot().scan("Sample", lease_s=0.6)
    first = leases.list()
    time.sleep(1.0)  # past the first lease's expiry: it was renewed meanwhile
    assert leases.live_commits() == {scan.commit_id}
    assert leases.list()[-1].key != first[-1].key
    scan.lease._stop.set()  # as if the process were killed: no renewal, no release
    time.sleep(0.8)
    assert leases.live_commits() == set()
    g.gc(grace=dt.timedelta(hours=1))  # gc deletes expired leases
    assert g.repo.store.list(LEASES_DIR) == []


def test_a_garbage_collected_scan_releases_its_lease(tmp_path: Path) -> None:
    g = sample_graph(tmp_path / "g", parts=(10,))
    scan = g.snapshot().scan("Sample")
    assert len(g.repo.store.list(LEASES_DIR)) == 1
    del scan
    assert g.repo.store.list(LEASES_DIR) == []


def test_bad_scans_are_typed_errors_and_leave_no_lease(tmp_path: Path) -> None:
    g = sample_graph(tmp_path / "g", parts=(10,))
    snap = g.snapshot()
    with pytest.raises(UnknownTableError, match="Nope"):
        snap.scan("Nope")
    with pytest.raises(UnknownPropertyError, match="'nope'"):
        snap.scan("Sample", ["k", "nope"])
    with pytest.raises(ReaderError, match="list of column names"):
        snap.scan("Sample", "k")
    with pytest.raises(QueryError):
        snap.scan("Sample", where="k = = 1")
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ReaderError, match="batch_size"):
            snap.scan("Sample", batch_size=bad)
    with pytest.raises(ReaderError, match="lease_s"):
        snap.scan("Sample", lease_s=0)
    with pytest.raises(UnknownRevisionError):
        g.snapshot("no-such-branch")
    assert g.repo.store.list(LEASES_DIR) == []


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_import_graphlake_imports_no_reader_extra() -> None:
    out = _run(
        "import sys, graphlake, graphlake.readers, graphlake.read.scan\n"
        "print([m for m in ('torch', 'ray', 'datasets', 'polars') if m in sys.modules])"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("module", "method", "extra"),
    [
        ("torch", "to_torch", "torch"),
        ("ray", "to_ray", "ray"),
        ("datasets", "to_hf", "hf"),
        ("polars", "to_polars", "polars"),
    ],
)
def test_a_missing_extra_names_the_pip_install(
    tmp_path: Path, module: str, method: str, extra: str
) -> None:
    sample_graph(tmp_path / "g", parts=(3,))
    out = _run(
        f"import sys; sys.modules[{module!r}] = None\n"  # as if not installed
        "import graphlake as gl\n"
        f"g = gl.Graph.open({str(tmp_path / 'g')!r})\n"
        f"try:\n    g.{method}('Sample')\n"
        "except gl.errors.MissingExtraError as e:\n    print(e)\n"
        "print(g.repo.store.list('_graphlake/leases'))\n"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        f"{method} needs {module}: pip install 'graphlake[{extra}]'",
        "[]",
    ]
    assert issubclass(MissingExtraError, ImportError)
