"""An adjacency derived from an earlier one of the same tables plus what changed between
the two table states (`storage.lineage.candidates`: Lance's `ds.delta` along the branch
tree), instead of a rebuild.

The edge ids that may differ are read at the new state by key (Lance's index on `id`);
the earlier adjacency's rows of those ids are dropped and the rows found inserted at
their place in (src, dst, id) order. When an endpoint node table gained or lost keys, the
sorted key index is rebuilt from the old one plus the changed keys and the old dense ids
remapped (order-preserving). The result is equal, array for array, to a fresh build
(`Csr.equals`); a test checks it after writes, merges, `optimize` and `gc`.

Returns None when the delta cannot be had or is not small (lineage unavailable, more
than `MAX_CHANGED` candidates or a share above `MAX_SHARE` of the edges); the caller then
builds afresh.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graphlake.adjacency.csr import ID32, INDEX, Csr, find_key, group_offsets, sorted_keys
from graphlake.storage.lineage import LineageUnavailable, candidates

if TYPE_CHECKING:
    from graphlake.catalog.commits import TableState
    from graphlake.read.snapshot import Snapshot
    from graphlake.schema.model import EdgeType

MAX_CHANGED = 100_000  # candidate keys of one table beyond which a rebuild is cheaper
MAX_SHARE = 0.05  # or beyond this share of the edges


def derive(
    old: Csr, old_states: dict[str, TableState], snapshot: Snapshot, edge: EdgeType
) -> Csr | None:
    """The adjacency of `edge` at `snapshot` from `old`, the adjacency of the same tables
    at `old_states` (name -> state); None when a rebuild is needed."""
    try:
        src_keys, src_map = _keys(old.src_keys, old_states[edge.src], snapshot, edge.src)
        if old.same_type:
            dst_keys, dst_map = src_keys, src_map
        else:
            dst_keys, dst_map = _keys(old.dst_keys, old_states[edge.dst], snapshot, edge.dst)
        changed, appended = _changed(old_states[edge.name], snapshot, edge.name, old.edge_count)
    except _Rebuild:
        return None
    if changed is None:
        changed = pa.array([], pa.string())
    ds = snapshot.dataset(edge.name)
    rows = (
        ds.to_table(columns=["src", "dst", "id"], filter=pc.field("id").isin(changed))
        if len(changed)
        else None
    )
    dropped = (
        pc.is_in(old.edge_ids, value_set=changed).to_numpy(zero_copy_only=False)
        if len(changed) and not appended  # only appended rows: nothing old to drop
        else np.zeros(old.edge_count, dtype=bool)
    )
    return _apply(old, src_keys, dst_keys, src_map, dst_map, dropped, rows)


class _Rebuild(Exception):
    pass


def _lineage(before: TableState, snapshot: Snapshot, name: str) -> tuple[set[str], bool]:
    """Keys that may differ, and whether the new state only appended rows to the old."""
    after = snapshot.commit.tables[name]
    if (after.table_id, after.lance_branch, after.version) == (
        before.table_id,
        before.lance_branch,
        before.version,
    ):
        return set(), True
    try:
        found = candidates(snapshot.repo.tables, before, after, budget=MAX_CHANGED)
    except LineageUnavailable:
        raise _Rebuild from None
    return found.keys, found.inserted is not None


def _candidates(before: TableState, snapshot: Snapshot, name: str) -> set[str]:
    return _lineage(before, snapshot, name)[0]


def _changed(
    before: TableState, snapshot: Snapshot, name: str, edges: int
) -> tuple[pa.Array | None, bool]:
    keys, appended = _lineage(before, snapshot, name)
    if len(keys) > max(MAX_SHARE * edges, 16):
        raise _Rebuild
    return (pa.array(sorted(keys), pa.string()) if keys else None), appended


def _keys(
    old: pa.Array, before: TableState, snapshot: Snapshot, name: str
) -> tuple[pa.Array, np.ndarray | None]:
    """The node type's sorted keys now, and the old dense ids' new ones (None: same)."""
    changed = _candidates(before, snapshot, name)
    if not changed:
        return old, None
    if len(changed) > max(MAX_SHARE * len(old), 16):
        raise _Rebuild
    values = pa.array(sorted(changed), pa.string())
    present = snapshot.dataset(name).to_table(columns=["id"], filter=pc.field("id").isin(values))
    now = set(present.column("id").to_pylist())
    known = pc.is_in(values, value_set=old).to_numpy(zero_copy_only=False)
    gone = [k for k, was in zip(values.to_pylist(), known, strict=True) if was and k not in now]
    added = [k for k, was in zip(values.to_pylist(), known, strict=True) if not was and k in now]
    if not gone and not added:
        return old, None  # only properties changed
    kept = old.filter(pc.invert(pc.is_in(old, value_set=pa.array(gone, pa.string()))))
    keys = sorted_keys(pa.concat_arrays([kept, pa.array(added, pa.string())]))
    remap = pc.index_in(old, value_set=keys).fill_null(-1).to_numpy(zero_copy_only=False)
    return keys, remap.astype(INDEX)


def _dense(keys: pa.Array, values: pa.Array) -> np.ndarray:
    if len(values) <= 64:  # a few new edges: binary searches, no hash of every key
        found = [find_key(keys, v) for v in values.to_pylist()]
        if min(found, default=0) < 0:
            raise _Rebuild
        return np.array(found, dtype=INDEX)
    ids = pc.index_in(values, value_set=keys)
    if ids.null_count:
        raise _Rebuild  # an endpoint outside the node index: not what a fresh build sees
    return ids.to_numpy(zero_copy_only=False).astype(INDEX)


def _apply(
    old: Csr,
    src_keys: pa.Array,
    dst_keys: pa.Array,
    src_map: np.ndarray | None,
    dst_map: np.ndarray | None,
    dropped: np.ndarray,
    rows: pa.Table | None,
) -> Csr | None:
    """Out-order (src, dst, id) and in-order (dst, src, id) kept from `old` minus the
    dropped rows, ids remapped (order-preserving), the new rows inserted where they
    belong, found through the offsets: sequential array copies, no sort of all edges."""
    ids_type = old.out_targets.dtype
    everything = not dropped.any()
    keep = ~dropped
    same_counts = everything and src_map is None and dst_map is None
    # Each edge's dense source id, by row: needed only to regroup (rows dropped or ids
    # remapped); an insert-only delta adds to the offsets instead (no O(m) array).
    s = (
        None
        if same_counts
        else np.repeat(np.arange(len(old.src_keys), dtype=INDEX), np.diff(old.out_offsets))
    )
    d = old.out_targets
    in_rows, in_src = old.in_edges, old.in_sources
    ids = old.edge_ids
    if not everything:
        assert s is not None
        kept_in = keep[old.in_edges]
        kept_row = np.cumsum(keep, dtype=INDEX) - 1
        in_rows, in_src = kept_row[in_rows[kept_in]], in_src[kept_in]
        s, d = s[keep], d[keep]
        ids = ids.filter(pa.array(keep))
    if src_map is not None:
        assert s is not None
        s, in_src = src_map[s], src_map[in_src]
        if (s < 0).any():
            return None  # an edge kept whose endpoint went: the delta does not add up
    if dst_map is not None:
        d = dst_map[d]
        if (d < 0).any():
            return None
    out_off = old.out_offsets if s is None else group_offsets(s, len(src_keys))
    in_off = old.in_offsets if same_counts else group_offsets(d, len(dst_keys))
    if rows is not None and rows.num_rows:
        try:
            ns = _dense(src_keys, rows.column("src").combine_chunks())
            nd = _dense(dst_keys, rows.column("dst").combine_chunks())
        except _Rebuild:
            return None
        nids = rows.column("id").combine_chunks().cast(old.edge_ids.type)
        new = sorted(zip(ns.tolist(), nd.tolist(), nids.to_pylist(), strict=True))
        # Out-order: within src's group, before the first (dst, id) above the new one's.
        pos = []
        for a, b, key in new:
            p, hi = int(out_off[a]), int(out_off[a + 1])
            while p < hi and (int(d[p]), ids[p].as_py()) < (b, key):
                p += 1
            pos.append(p)
        at_out = np.array(pos, dtype=INDEX)
        rows_new = at_out + np.arange(len(new), dtype=INDEX)  # the new rows' positions
        if len(new) <= 16:  # old row r moves down by the new rows inserted at or above it
            shifted = in_rows.astype(np.result_type(in_rows.dtype, ids_type), copy=True)
            for p in pos:
                shifted += in_rows >= p
        else:
            steps = np.cumsum(np.bincount(at_out, minlength=len(d) + 1))
            shifted = in_rows + steps[in_rows]
        if s is not None:
            s = np.insert(s, at_out, [a for a, _, _ in new])
        d = np.insert(d, at_out, [b for _, b, _ in new])
        pieces, prev = [], 0
        for (_, _, key), p in zip(new, pos, strict=True):
            pieces += [ids.slice(prev, p - prev), pa.array([key], ids.type)]
            prev = p
        ids = pa.concat_arrays([*pieces, ids.slice(prev)])
        # In-order: within dst's group, before the first (src, row) above the new one's.
        by_dst = sorted((b, a, int(r)) for (a, b, _), r in zip(new, rows_new.tolist(), strict=True))
        at_in = []
        for b, a, r in by_dst:
            p, hi = int(in_off[b]), int(in_off[b + 1])
            while p < hi and (int(in_src[p]), int(shifted[p])) < (a, r):
                p += 1
            at_in.append(p)
        in_rows = np.insert(shifted, at_in, [r for _, _, r in by_dst])
        in_src = np.insert(in_src, at_in, [a for _, a, _ in by_dst])
        out_off = out_off + group_offsets(np.array([a for a, _, _ in new]), len(src_keys))
        in_off = in_off + group_offsets(np.array([b for _, b, _ in new]), len(dst_keys))
    m = len(d)
    if max(m, len(src_keys), len(dst_keys)) >= ID32:
        return None  # past int32 ids: a fresh build picks the wider type
    return Csr(
        src_keys=src_keys,
        dst_keys=dst_keys,
        edge_ids=ids,
        out_offsets=out_off,
        out_targets=d.astype(ids_type, copy=False),
        out_edges=np.arange(m, dtype=ids_type),
        in_offsets=in_off,
        in_sources=in_src.astype(ids_type, copy=False),
        in_edges=in_rows.astype(ids_type, copy=False),
    )
