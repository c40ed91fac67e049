"""The Ray engine (skipped without Ray): a small ingest, and Ray listens on loopback only.

Ray is started once for the module with graphlake's own `start_local_ray` (the settings
ingest uses when it starts Ray), with a temporary HOME and a short RAY_TMPDIR (Ray puts
Unix sockets there; their paths have a length limit).
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import graphlake as gl
from graphlake.ingestion import ingest
from graphlake.ingestion.engines import start_local_ray
from tests.ingest.helpers import SCHEMA, ingest_branches, keys, write_parquet_files

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_ray(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    home = tmp_path_factory.mktemp("home")
    ray_tmp = tempfile.mkdtemp(prefix="glray-", dir="/tmp")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        mp.setenv("RAY_TMPDIR", ray_tmp)
        local = start_local_ray(num_cpus=2, temp_dir=ray_tmp)
        try:
            yield
        finally:
            local.stop()
            shutil.rmtree(ray_tmp, ignore_errors=True)


def test_ingest_with_ray(local_ray: None, tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    paths = write_parquet_files(tmp_path / "in", [3_000, 2_000])
    result = ingest(
        g, paths, table="Doc", workers=2, engine="ray", commit_every=1_000, progress=False
    )
    assert ray.is_initialized()  # ingest did not start this Ray, so it leaves it running
    assert keys(g) == sorted(
        [f"p0-{i:06d}" for i in range(3_000)] + [f"p1-{i:06d}" for i in range(2_000)]
    )
    assert result.rows_per_worker == [2_500, 2_500] and len(g.head().parents) == 3
    assert result.merge.stats["Doc"].adopted_rows == 5_000
    assert ingest_branches(g) == []


def test_ray_listens_on_loopback_only(local_ray: None) -> None:
    sockets = listening_sockets_of_process_tree(os.getpid())
    names = {name for name, _, _ in sockets}
    assert {"raylet", "gcs_server"} <= names, sockets  # Ray's own daemons were found
    public = [s for s in sockets if not _loopback(s[1])]
    assert public == [], f"Ray listens beyond loopback: {public}"


# --- which sockets listen -----------------------------------------------------------------


def _loopback(ip: str) -> bool:
    addr = ipaddress.ip_address(ip)
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    return addr.is_loopback


def listening_sockets_of_process_tree(root: int) -> list[tuple[str, str, int]]:
    """(process name, ip, port) of every listening TCP socket of `root` and its
    descendants: with psutil when installed, else from /proc (Linux)."""
    try:
        import psutil
    except ImportError:
        return _from_proc(root)
    me = psutil.Process(root)
    procs = {p.pid: p.name() for p in [me, *me.children(recursive=True)]}
    return [
        (procs[c.pid], c.laddr.ip, c.laddr.port)
        for c in psutil.net_connections(kind="inet")
        if c.status == psutil.CONN_LISTEN and c.pid in procs
    ]


def _from_proc(root: int) -> list[tuple[str, str, int]]:
    if not Path("/proc/net/tcp").exists():
        pytest.skip("neither psutil nor /proc to list sockets")
    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        pid = int(stat.parent.name)
        names[pid] = text[text.index("(") + 1 : text.rindex(")")]
        parents[pid] = int(text[text.rindex(")") + 2 :].split()[1])
    tree = {root}
    changed = True
    while changed:
        kids = {pid for pid, ppid in parents.items() if ppid in tree} - tree
        tree |= kids
        changed = bool(kids)
    owner: dict[str, int] = {}
    for pid in tree:
        for fd in Path(f"/proc/{pid}/fd").glob("*"):
            try:
                link = os.readlink(fd)
            except OSError:
                continue
            if link.startswith("socket:["):
                owner[link[8:-1]] = pid
    out = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state != "0A" or inode not in owner:  # 0A: LISTEN
                continue
            hex_ip, hex_port = local.split(":")
            out.append((names.get(owner[inode], "?"), _proc_ip(hex_ip), int(hex_port, 16)))
    return out


def _proc_ip(hex_ip: str) -> str:
    """/proc/net/tcp{,6} addresses: 32-bit words in host (little-endian) byte order."""
    raw = bytes.fromhex(hex_ip)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(words))


# --- a Ray Dataset as the source (issue 29 item 3) ------------------------------------------


def test_ray_dataset_round_trip_is_one_validated_commit(local_ray: None, tmp_path: Path) -> None:
    from tests.readers.helpers import SCHEMA as SAMPLE
    from tests.readers.helpers import sample_graph

    source = sample_graph(tmp_path / "src")
    columns = ["k", "emb", "text", "label", "raw"]
    expected = source.nodes("Sample", columns=columns).sort_by("k")
    target = gl.Graph.init(tmp_path / "dst", SAMPLE)
    before = target.head().id
    staging = tmp_path / "staging"
    result = ingest(
        target,
        source.to_ray("Sample", columns=columns, parallelism=3),
        table="Sample",
        workers=2,
        progress=False,
        staging=staging,
    )
    assert result.rows == 300 and target.head().parents[0] == before  # one commit on main
    got = target.nodes("Sample", columns=columns).sort_by("k")
    assert got.to_pylist() == expected.to_pylist()
    assert not staging.exists()  # removed once the run finished


def test_ray_tensor_columns_become_vectors(local_ray: None, tmp_path: Path) -> None:
    import numpy as np

    from tests.readers.helpers import SCHEMA as SAMPLE

    items = [
        {"k": i, "emb": np.array([i, 1, 2, 3], dtype=np.float32), "text": f"t{i}", "label": i % 3}
        for i in range(50)
    ]
    g = gl.Graph.init(tmp_path / "g", SAMPLE)
    ingest(
        g,
        ray.data.from_items(items),
        table="Sample",
        workers=2,
        progress=False,
        staging=tmp_path / "staging",
    )
    rows = g.nodes("Sample", columns=["k", "emb"]).sort_by("k").to_pylist()
    assert [r["k"] for r in rows] == list(range(50))
    assert rows[7]["emb"] == [7.0, 1.0, 2.0, 3.0]


def test_ray_dataset_bad_input_changes_nothing(local_ray: None, tmp_path: Path) -> None:
    from tests.readers.helpers import SCHEMA as SAMPLE

    g = gl.Graph.init(tmp_path / "g", SAMPLE)
    head = g.head().id
    ds = ray.data.from_items([{"k": 1, "text": "a", "label": 1, "colour": "red"}])
    staging = tmp_path / "staging"
    with pytest.raises(gl.DataError, match="needs a table"):
        ingest(g, ds, workers=1, progress=False, staging=staging)
    with pytest.raises(gl.DataError, match="columns Sample does not: colour"):
        ingest(g, ds, table="Sample", workers=1, progress=False, staging=staging)
    with pytest.raises(gl.UnknownTableError, match="unknown node or edge type 'Nope'"):
        ingest(g, ds, table="Nope", workers=1, progress=False, staging=staging)
    bad = ray.data.from_items([{"k": 1, "text": "a", "label": "not a number"}])
    with pytest.raises(gl.DataError):
        ingest(g, bad, table="Sample", workers=1, progress=False, staging=staging)
    assert g.head().id == head and g.branches() == ["main"]
