"""The adjacency of one edge type at a pinned snapshot: `adjacency(snapshot, "Knows")`.

Reads only the edge table's `src`, `dst` and `id` columns and the endpoint node tables'
`id` column at the snapshot's exact table states. This is the one entry point traversal
and graph algorithms use; caching (`adjacency.cache`, keyed by those table states) and
delta maintenance live behind it.

Where no cached adjacency serves, one persisted for the same states (`adjacency.persist`,
under a local root) is loaded, or derived from a persisted one of other states plus the
lineage delta; a full build at a branch head's states is persisted for the next process.

`max_bytes` (a query's memory limit) refuses an adjacency whose estimated size is above
it before anything is read: a typed `AdjacencyTooLargeError`, never a partial answer. The
estimate counts rows from Lance's metadata (no scan): `EDGE_BYTES` per edge and
`NODE_BYTES` per node.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from graphlake import probes
from graphlake.adjacency import persist
from graphlake.adjacency.cache import CACHE
from graphlake.adjacency.csr import Csr, from_edges
from graphlake.adjacency.delta import derive
from graphlake.catalog.commits import TableState
from graphlake.errors import AdjacencyTooLargeError
from graphlake.schema.model import EdgeType

EDGE_BYTES = 32  # both directions' int32 arrays and an edge id of ~12 characters
NODE_BYTES = 28  # two offsets and a key of ~12 characters

if TYPE_CHECKING:
    from graphlake.read.snapshot import Snapshot


def adjacency(snapshot: Snapshot, edge_type: str, *, max_bytes: int | None = None) -> Csr:
    """The CSR (both directions) of `edge_type` as `snapshot` shows it (cached)."""
    edge = snapshot.type(edge_type, "edge")
    assert isinstance(edge, EdgeType)  # type(..., "edge") refuses a node type
    key = state_key(snapshot, edge)
    found = CACHE.get(key)
    if isinstance(found, Csr):
        return found
    if max_bytes is not None:
        _check_size(snapshot, edge, max_bytes)
    built = CACHE.get_or_build(key, lambda: _obtain(snapshot, edge, key))
    assert isinstance(built, Csr)
    return built


def _obtain(snapshot: Snapshot, edge: EdgeType, key: tuple) -> Csr:
    """Derived from a cached one of other states, else persisted for these states, else
    derived from a persisted one, else built (and persisted at a branch head). Which
    of the four it was is counted in `probes` (`adjacency.derived_from_cached`,
    `.loaded`, `.derived_from_persisted`, `.built`: tests and bench/query.py read it)."""
    ids = _table_ids(key)
    derived = _derived(snapshot, edge, CACHE.recent(lambda k: _table_ids(k) == ids))
    if derived is not None:
        probes.add("adjacency.derived_from_cached")
        return derived
    base = persist.folder(_local_root(snapshot))
    states: persist.Key = key[1:]
    if base is not None:
        path = base / states[0][0] / persist.entry_name(states)
        loaded = persist.load(path, states)
        if loaded is not None:
            probes.add("adjacency.loaded")
            return loaded
        persist.discard(path)  # damaged or foreign, if there at all: a build replaces it
        derived = _derived(snapshot, edge, _persisted(base, key))
        if derived is not None:
            probes.add("adjacency.derived_from_persisted")
            if _at_head(snapshot):  # the next process loads it instead of deriving again
                persist.save_later(base, states, derived)
            return derived
    probes.add("adjacency.built")
    built = _build(snapshot, edge)
    if base is not None and _at_head(snapshot):
        persist.save(base, states, built)
    return built


def _local_root(snapshot: Snapshot) -> str | None:
    store = snapshot.repo.store
    return store.uri_for("") if store.is_local else None


def _at_head(snapshot: Snapshot) -> bool:
    """The snapshot is a live branch's head (only those are persisted)."""
    return any(ref.commit == snapshot.commit.id for ref in snapshot.repo.refs.list().values())


def _persisted(base: Path, key: tuple) -> Iterator[tuple[Hashable, Csr]]:
    """Persisted adjacencies of the same tables at other states, newest first (at most
    two are tried, each loaded only when reached)."""
    ids = _table_ids(key)
    tried = 0
    for entry in persist.entries(base, key[1][0]):
        if tried == 2:
            return
        other = (key[0], *entry.key)
        if other == key or _table_ids(other) != ids:
            continue
        tried += 1
        csr = persist.load(entry.path, entry.key)
        if csr is not None:
            yield other, csr


def _derived(
    snapshot: Snapshot, edge: EdgeType, bases: Iterable[tuple[Hashable, object]]
) -> Csr | None:
    """The adjacency from one of the same tables at other states (cached or persisted)
    plus the lineage delta between them (adjacency.delta); None: no base, or a rebuild."""
    for other, csr in bases:
        if not isinstance(csr, Csr) or not isinstance(other, tuple):
            continue
        states = {
            name: TableState(tid, branch, version, "adjacency")
            for name, (tid, branch, version) in zip(
                (edge.name, edge.src, edge.dst), other[1:], strict=True
            )
        }
        try:
            derived = derive(csr, states, snapshot, edge)
        except Exception:  # an old state gc removed, a Lance error: the delta is an
            continue  # optimization, a fresh build is always right
        if derived is not None:
            return derived
    return None


def _table_ids(key: Hashable) -> tuple | None:
    """(root, edge table id, source id, target id) of an adjacency key, else None."""
    if not isinstance(key, tuple) or len(key) != 4:
        return None
    if not all(isinstance(state, tuple) for state in key[1:]):
        return None
    return (key[0], *(state[0] for state in key[1:]))


def node_values(snapshot: Snapshot, node_type: str, prop: str) -> pa.Array:
    """One property of every node of `node_type`, aligned with the adjacency's dense key
    index of that type (`prop` "id": the keys themselves); cached by the node table's
    state beside the adjacencies (an Arrow array has `nbytes` too)."""
    s = snapshot.commit.tables[node_type]
    key = (snapshot.repo.uri, (s.table_id, s.lance_branch, s.version), "values", prop)
    found = CACHE.get_or_build(key, lambda: _values(snapshot, node_type, prop))
    assert isinstance(found, pa.Array)
    return found


def edge_values(snapshot: Snapshot, edge_type: str, prop: str) -> pa.Array:
    """One property of every edge of `edge_type`, aligned with the adjacency's edge rows
    (`Csr.edge_ids`); cached beside the adjacency, keyed by its tables' states."""
    edge = snapshot.type(edge_type, "edge")
    assert isinstance(edge, EdgeType)
    key = (*state_key(snapshot, edge), "values", prop)

    def build() -> pa.Array:
        csr = adjacency(snapshot, edge_type)
        t = snapshot.dataset(edge_type).to_table(columns=["id", prop])
        rows = pc.index_in(csr.edge_ids, value_set=t["id"])
        return _array(t[prop].take(rows))

    found = CACHE.get_or_build(key, build)
    assert isinstance(found, pa.Array)
    return found


def _values(snapshot: Snapshot, node_type: str, prop: str) -> pa.Array:
    columns = ["id"] if prop == "id" else ["id", prop]
    t = snapshot.dataset(node_type).to_table(columns=columns)
    order = pc.sort_indices(t["id"])  # the order of the adjacency's key index
    return _array(t[prop].take(order))


def state_key(snapshot: Snapshot, edge: EdgeType) -> tuple:
    """The cache key: the graph's root and the exact states of the edge table and its
    endpoint node tables."""
    states = []
    for name in (edge.name, edge.src, edge.dst):
        s = snapshot.commit.tables[name]
        states.append((s.table_id, s.lance_branch, s.version))
    return (snapshot.repo.uri, *states)


def estimated_bytes(snapshot: Snapshot, edge: EdgeType) -> int:
    edges = snapshot.dataset(edge.name).count_rows()
    nodes = snapshot.dataset(edge.src).count_rows()
    if edge.dst != edge.src:
        nodes += snapshot.dataset(edge.dst).count_rows()
    return EDGE_BYTES * edges + NODE_BYTES * nodes


def _check_size(snapshot: Snapshot, edge: EdgeType, max_bytes: int) -> None:
    size = estimated_bytes(snapshot, edge)
    if size > max_bytes:
        raise AdjacencyTooLargeError(
            f"the adjacency of {edge.name} needs about {size // 2**20} MB, more than an "
            f"adjacency may take ({max_bytes // 2**20} MB: the server's adjacency_memory_mb, "
            f"else the query's memory limit); raise the limit"
        )


def _build(snapshot: Snapshot, edge: EdgeType) -> Csr:
    edge_type = edge.name
    edges = snapshot.dataset(edge_type).to_table(columns=["src", "dst", "id"])
    src_nodes = _keys(snapshot, edge.src)
    dst_nodes = None if edge.dst == edge.src else _keys(snapshot, edge.dst)
    return from_edges(
        src_nodes,
        dst_nodes,
        _array(edges["src"]),
        _array(edges["dst"]),
        _array(edges["id"]),
    )


def _keys(snapshot: Snapshot, node_type: str) -> pa.Array:
    return _array(snapshot.dataset(node_type).to_table(columns=["id"])["id"])


def _array(column: pa.ChunkedArray) -> pa.Array:
    return column.combine_chunks()
