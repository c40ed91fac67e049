"""Zero-copy adoption: an insert-only source's fragments join the target by reference.

The source's Lance branch directory is registered as a base of the dataset and its new
fragments are appended to the target's Lance branch with their files pointing at that
base: the merge writes manifests, not rows. Lance assigns the adopted rows fresh row
ids and version metadata in the target's lineage, so later deltas see them as inserts.

Adoption is used only when it is provably the same as appending the rows: the source
state was forked from exactly the base state, every fragment the base had is unchanged
(no deletions), and every new fragment was written on the source branch itself with no
deletion file. Anything else is left to the row-copy path. The adopted files must then
outlive every manifest that reads them: `gc` (maintenance/lance_gc.py) keeps a Lance
branch folder, and any old version of it whose cleanup would delete such files, while a
kept manifest of another branch reads files there (Lance's own cleanup and branch
deletion do not look at other branches' bases).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import lance
from lance import DatasetBasePath, LanceOperation
from lance.fragment import FragmentMetadata

from graphlake.catalog.commits import TableState
from graphlake.storage.fragments import appended_fragments
from graphlake.storage.lineage import LineageUnavailable, branch_parents
from graphlake.storage.tables import (
    INDEX_APPEND_THRESHOLD,
    INDEX_REFRESH_FRAGMENTS,
    MAIN,
    TableStore,
    btree_indexes,
    refresh_indexes,
    unindexed_fragments,
)


@dataclass(frozen=True)
class Adoption:
    """The new fragments of one source state, ready to append by reference."""

    source: TableState
    fragments: tuple[dict, ...]  # fragment JSON as Lance wrote it on the source branch
    rows: int

    @property
    def base_name(self) -> str:
        return f"gl-base-{self.source.lance_branch}"


def plan_adoption(tables: TableStore, base: TableState, source: TableState) -> Adoption | None:
    """The source's new fragments if adopting them is provably an append, else None."""
    if source.lance_branch in (MAIN, base.lance_branch):
        return None
    try:
        parents = branch_parents(tables, source.table_id, {source.lance_branch})
    except LineageUnavailable:
        return None
    if parents.get(source.lance_branch) != (base.lance_branch, base.version):
        return None
    appended = appended_fragments(tables.open(base), tables.open(source))
    if appended is None:
        return None  # a fragment of the base changed (rows deleted or rewritten) or went
    new: list[dict] = []
    for frag in appended:
        meta = frag.metadata.to_json()  # (slow: a deep copy; only for the new fragments)
        if meta.get("deletion_file") or any(f.get("base_id") is not None for f in meta["files"]):
            return None
        new.append(meta)
    return Adoption(source, tuple(new), sum(int(m["physical_rows"]) for m in new))


def adopt(tables: TableStore, target: TableState, adoptions: list[Adoption]) -> TableState:
    """Append every adoption's fragments to the target's Lance branch, CAS-checked.

    `target` must be owned by the caller and be its Lance branch's head.
    """
    adoptions = [a for a in adoptions if a.fragments]
    if not adoptions:
        return target
    lock = tables.cas_lock(target.table_id, target.lance_branch)
    ds = lance.dataset(
        tables.uri(target.table_id), storage_options=tables.storage_options, commit_lock=lock
    )
    ds = ds.checkout_version(
        target.version if target.lance_branch == MAIN else (target.lance_branch, target.version)
    )
    try:
        known = {b.name: b.id for b in ds.base_paths().values() if b.name}
        missing = [a for a in adoptions if a.base_name not in known]
        if missing:
            lock.expected = ds.version + 1
            ds.add_bases(
                [
                    DatasetBasePath(
                        _branch_path(tables, a.source), name=a.base_name, is_dataset_root=True
                    )
                    for a in missing
                ]
            )
            known = {b.name: b.id for b in ds.base_paths().values() if b.name}
        fragments = [
            _as_adopted(meta, known[a.base_name]) for a in adoptions for meta in a.fragments
        ]
        lock.expected = ds.version + 1
        ds = lance.LanceDataset.commit(
            ds, LanceOperation.Append(fragments), read_version=ds.version, commit_lock=lock
        )
        # Adopted fragments arrive without index coverage (the shards' own index
        # segments stay behind); index them as a large append would be.
        # Only BTREE indexes: search indexes (ANN, full-text) search adopted rows exactly
        # until `optimize` folds them in; a merge never does index work on them.
        keyed = btree_indexes(ds)
        if keyed and (
            sum(a.rows for a in adoptions) >= INDEX_APPEND_THRESHOLD
            or unindexed_fragments(ds, keyed) >= INDEX_REFRESH_FRAGMENTS
        ):
            committed = ds.version
            ds = lance.dataset(
                tables.uri(target.table_id),
                storage_options=tables.storage_options,
                commit_lock=lock,
            )
            ds = ds.checkout_version(
                committed if target.lance_branch == MAIN else (target.lance_branch, committed)
            )
            lock.expected = ds.version + 1
            refresh_indexes(ds, keyed, target.table_id)
    except OSError as exc:
        raise tables.cas_failure(target, lock, exc) from exc
    return TableState(target.table_id, target.lance_branch, ds.version, target.owner)


def _branch_path(tables: TableStore, state: TableState) -> str:
    return f"{tables.uri(state.table_id)}/tree/{state.lance_branch}"


def _as_adopted(meta: dict, base_id: int) -> FragmentMetadata:
    """The fragment as the target will hold it: files at the source's base; row ids and
    version metadata dropped so Lance assigns them in the target's lineage."""
    meta = json.loads(json.dumps(meta))
    for f in meta["files"]:
        f["base_id"] = base_id
    for key in ("row_id_meta", "created_at_version_meta", "last_updated_at_version_meta"):
        meta.pop(key, None)
    meta["id"] = 0
    return FragmentMetadata.from_json(json.dumps(meta))
