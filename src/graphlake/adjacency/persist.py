"""Adjacencies kept on disk as derived state, so a fresh process loads one instead of
building it (a 10M-edge build takes seconds; loading it, tenths).

Layout, under a local graph root (an `s3://` root keeps none):

```
<root>/_graphlake/derived/adjacency/<edge table id>/<entry>/
    meta.json                    the key, the arrays' dtypes, lengths and CRC-32s
    out_offsets.bin ...          the six integer arrays, raw little-endian
    src_keys.arrow ...           the key and edge id arrays, Arrow IPC files
```

`<entry>` is a hash of the key: the exact states (table id, Lance branch, version) of
the edge table and its endpoint node tables, as `load.state_key` has them. An entry is
written (`save`) after a full build at a branch head's states, into a temporary folder
renamed into place once complete, so a reader never sees half of one. `load` maps the
files (numpy and Arrow read them in place, nothing is copied) and trusts an entry only
when its `meta.json` names exactly the states asked for and every file has the length
and CRC-32 recorded there (a damaged or foreign entry is ignored, and the caller builds
afresh and replaces it: never a wrong answer). The checksum reads every byte once (~3 GB/s here).

`entries` lists the entries of one edge table: `load.adjacency` derives the adjacency of
a moved head from the newest of them plus the lineage delta (`adjacency.delta`), as it
does from a cached one, and saves the result in the background (`save_later`), so the
next process loads it directly. (A delta from a cached adjacency, a warm process's
path after each write, is not saved: the next full build or cold start writes one.)
`sweep` (run by `gc`) removes entries whose states are no live
branch head's, and abandoned temporary folders.

`GRAPHLAKE_ADJACENCY_PERSIST=0` switches saving and loading off (read at call time).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import mmap
import os
import shutil
import threading
import uuid
import zlib
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from graphlake.adjacency.csr import Csr

FORMAT = 1
FOLDER = "_graphlake/derived/adjacency"
ENV = "GRAPHLAKE_ADJACENCY_PERSIST"
TMP_PREFIX = ".tmp-"
_INTS = ("out_offsets", "out_targets", "out_edges", "in_offsets", "in_sources", "in_edges")
_STRINGS = ("src_keys", "dst_keys", "edge_ids")

State = tuple[str, str, int]  # (table id, Lance branch, version)
Key = tuple[State, State, State]  # the edge table's, the source's, the target's


def enabled() -> bool:
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def folder(root: str | None) -> Path | None:
    """The adjacency folder of a local graph root (None: not local, or switched off)."""
    if root is None or not enabled():
        return None
    return Path(root, *FOLDER.split("/"))


def entry_name(key: Key) -> str:
    return hashlib.sha256(json.dumps(_plain(key)).encode()).hexdigest()[:32]


def _plain(key: Key) -> list[list]:
    return [[str(t), str(b), int(v)] for t, b, v in key]


def _key(raw: object) -> Key | None:
    try:
        assert isinstance(raw, list) and len(raw) == 3
        states = [(str(t), str(b), int(v)) for t, b, v in raw]
        return (states[0], states[1], states[2])
    except (AssertionError, TypeError, ValueError):
        return None


@dataclass(frozen=True)
class Entry:
    path: Path
    key: Key
    modified: float


def save(base: Path, key: Key, csr: Csr) -> Path | None:
    """Write `csr` as the entry of `key` (atomically); None if it could not be written
    (a read-only root, a full disk: the adjacency is derived state, never required)."""
    final = base / key[0][0] / entry_name(key)
    if final.exists():
        return final
    tmp = final.parent / f"{TMP_PREFIX}{uuid.uuid4().hex}"
    try:
        tmp.mkdir(parents=True)
        files: dict[str, dict] = {}
        for name in _INTS:
            array = np.ascontiguousarray(getattr(csr, name))
            path = tmp / f"{name}.bin"
            with open(path, "wb") as f:
                array.tofile(f)  # no copy of the array
            files[name] = {
                "dtype": array.dtype.str,
                "length": len(array),
                **_stamp(path),
            }
        for name in _STRINGS:
            if name == "dst_keys" and csr.same_type:
                continue
            path = tmp / f"{name}.arrow"
            array = getattr(csr, name)
            table = pa.table({"v": array})
            with ipc.new_file(str(path), table.schema) as writer:
                writer.write_table(table)
            files[name] = {"length": len(array), **_stamp(path)}
        meta = {"format": FORMAT, "key": _plain(key), "same_type": csr.same_type, "files": files}
        (tmp / "meta.json").write_text(json.dumps(meta))
        for path in tmp.iterdir():
            _fsync(path)
        os.rename(tmp, final)  # fails when a racing writer put the same entry first
        return final
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        return final if final.exists() else None


_WRITERS: list[threading.Thread] = []
_WRITERS_LOCK = threading.Lock()


def save_later(base: Path, key: Key, csr: Csr) -> None:
    """`save` in a background thread, so the query that derived `csr` answers first; not
    a daemon, so a process that is about to exit finishes the entry (or, killed, leaves
    a temporary folder `gc` removes)."""
    thread = threading.Thread(
        target=save, args=(base, key, csr), name="graphlake-adjacency-save", daemon=False
    )
    with _WRITERS_LOCK:
        _WRITERS[:] = [t for t in _WRITERS if t.is_alive()]
        _WRITERS.append(thread)
    thread.start()


def flush() -> None:
    """Wait for background saves (tests, benchmarks)."""
    with _WRITERS_LOCK:
        pending = list(_WRITERS)
    for thread in pending:
        thread.join()


def discard(path: Path) -> None:
    """Remove an entry (renamed out of the way first, so no reader sees it half gone)."""
    if not path.exists():
        return
    doomed = path.parent / f"{TMP_PREFIX}{uuid.uuid4().hex}"
    try:
        os.rename(path, doomed)
    except OSError:
        return
    shutil.rmtree(doomed, ignore_errors=True)


def _stamp(path: Path) -> dict:
    return {"bytes": path.stat().st_size, "crc32": _crc(path)}


def _crc(path: Path) -> int:
    with open(path, "rb") as f:
        data = _map(f)
        return zlib.crc32(data) if data is not None else 0


def _map(f: BinaryIO) -> memoryview | None:
    """The file's bytes mapped read-only (an empty file has none to map)."""
    size = os.fstat(f.fileno()).st_size
    if size == 0:
        return None
    return memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))


def _fsync(path: Path) -> None:
    with open(path, "rb") as f:
        os.fsync(f.fileno())


def load(path: Path, key: Key) -> Csr | None:
    """The adjacency of the entry at `path` if it is intact and is `key`'s; else None."""
    try:
        meta = json.loads((path / "meta.json").read_text())
        if meta.get("format") != FORMAT or _key(meta.get("key")) != key:
            return None
        files = meta["files"]
        names = [n for n in (*_INTS, *_STRINGS) if n in files or n in _INTS]
        # The checksums read every byte: in threads (zlib releases the GIL), all cores.
        with ThreadPoolExecutor(max_workers=min(len(names), os.cpu_count() or 1)) as pool:
            arrays = list(pool.map(lambda n: _read(path, n, files[n]), names))
        read = dict(zip(names, arrays, strict=True))
        ints = {name: read[name] for name in _INTS}
        strings = {name: read[name] for name in _STRINGS if name in read}
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException, _Damaged):
        return None
    src_keys = strings["src_keys"]
    dst_keys = src_keys if meta.get("same_type") else strings.get("dst_keys")
    if dst_keys is None:
        return None
    csr = Csr(src_keys=src_keys, dst_keys=dst_keys, edge_ids=strings["edge_ids"], **ints)
    return csr if _consistent(csr) else None


class _Damaged(Exception):
    pass


def _checked(path: Path, recorded: dict) -> memoryview:
    with open(path, "rb") as f:
        data = _map(f)
    size = 0 if data is None else len(data)
    if size != recorded["bytes"]:
        raise _Damaged(path)
    if data is None:
        return memoryview(b"")
    if zlib.crc32(data) != recorded["crc32"]:
        raise _Damaged(path)
    return data


def _read(folder: Path, name: str, recorded: dict) -> np.ndarray | pa.Array:
    if name in _INTS:
        return _ints(folder / f"{name}.bin", recorded)
    return _strings(folder / f"{name}.arrow", recorded)


def _ints(path: Path, recorded: dict) -> np.ndarray:
    dtype = np.dtype(recorded["dtype"])
    if dtype not in (np.dtype("<i4"), np.dtype("<i8")):
        raise _Damaged(path)
    data = _checked(path, recorded)
    array = np.frombuffer(data, dtype=dtype)
    if len(array) != recorded["length"]:
        raise _Damaged(path)
    return array


def _strings(path: Path, recorded: dict) -> pa.Array:
    data = _checked(path, recorded)
    table = ipc.open_file(pa.py_buffer(data)).read_all()
    column = table.column("v")
    array = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    if len(array) != recorded["length"] or array.type != pa.string():
        raise _Damaged(path)
    return array


def _consistent(csr: Csr) -> bool:
    """The lengths agree with one another (what the checksums cannot see: a meta.json
    written by another version of this code)."""
    m = len(csr.edge_ids)
    return (
        len(csr.out_offsets) == len(csr.src_keys) + 1
        and len(csr.in_offsets) == len(csr.dst_keys) + 1
        and all(len(getattr(csr, f)) == m for f in _INTS if not f.endswith("offsets"))
        and int(csr.out_offsets[-1]) == m
        and int(csr.in_offsets[-1]) == m
    )


def entries(base: Path, edge_table_id: str) -> list[Entry]:
    """The entries of one edge table, newest first (unreadable ones left out)."""
    found = []
    with contextlib.suppress(OSError):
        for path in (base / edge_table_id).iterdir():
            if path.name.startswith(TMP_PREFIX):
                continue
            try:
                meta = json.loads((path / "meta.json").read_text())
                modified = (path / "meta.json").stat().st_mtime
            except (OSError, ValueError):
                continue
            key = _key(meta.get("key")) if isinstance(meta, dict) else None
            if key is not None:
                found.append(Entry(path, key, modified))
    return sorted(found, key=lambda e: e.modified, reverse=True)


@dataclass
class Swept:
    entries: int = 0
    bytes: int = 0


def sweep(base: Path, live: Iterable[set[State]], cutoff: dt.datetime, *, dry_run: bool) -> Swept:
    """Remove the entries no live branch head pins all three states of (`live`: each
    head's table states), and abandoned temporary folders; nothing modified at or after
    `cutoff`."""
    heads = list(live)
    swept = Swept()
    if not base.is_dir():
        return swept
    limit = cutoff.timestamp()
    for table in base.iterdir():
        if not table.is_dir():
            continue
        for path in table.iterdir():
            try:
                modified = max(p.stat().st_mtime for p in [path, *path.iterdir()])
            except OSError:
                continue
            if modified >= limit:
                continue
            key = None
            if not path.name.startswith(TMP_PREFIX):
                with contextlib.suppress(OSError, ValueError, AttributeError):
                    key = _key(json.loads((path / "meta.json").read_text()).get("key"))
            if key is not None and any(set(key) <= states for states in heads):
                continue
            swept.entries += 1
            swept.bytes += sum(p.stat().st_size for p in path.iterdir() if p.is_file())
            if not dry_run:
                shutil.rmtree(path, ignore_errors=True)
        if not dry_run:
            with contextlib.suppress(OSError):
                table.rmdir()  # only when empty
    return swept
