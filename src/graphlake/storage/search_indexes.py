"""The ANN and full-text (BM25) indexes a schema declares, and their upkeep.

Names are fixed per property (`<prop>_ann`, `<prop>_fts`) so a fork, an adopted base or a
later optimize finds them. Only `optimize` calls `maintain`: writes and merges never
build, extend or retrain these indexes (their publish path refreshes BTREE indexes
only), and the rows they leave outside an index are searched exactly by Lance.

Rules (README "Search"):
- an ANN index is built once a table holds `MIN_ANN_ROWS` rows (below that an exact
  scan is as fast and exact); IVF_HNSW_SQ below `PQ_MIN_ROWS` rows, IVF_PQ from there;
- it is retrained when it has drifted: the partition count the table's live rows ask for
  is at least `RETRAIN_RATIO` times, or at most 1/`RETRAIN_RATIO` of, the index's own
  (IVF_HNSW_SQ: the table grew to twice, or deletes shrank it to half, the rows the index
  was trained on; IVF_PQ, whose partitions grow with the square root: 4x), or the kind
  chosen by size or the declared metric changed;
- otherwise optimize folds uncovered rows into it incrementally (`optimize_indices`),
  keeping its partitions (the centroids stay those of the training rows);
- when to optimize at all, without a writer paying for it, is `upkeep`'s threshold;
- full-text indexes exist from the table's creation (Lance searches text only on a
  column with an INVERTED index) and are folded the same way.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import lance

from graphlake import probes

MIN_ANN_ROWS = 4096
# IVF_PQ only for very large tables: at 100k x 128 (2 cores) IVF_HNSW_SQ with refine
# reached recall@10 0.998 where IVF_PQ (316 partitions, 16 sub-vectors) stayed at 0.68.
PQ_MIN_ROWS = 5_000_000
HNSW_ROWS_PER_PARTITION = 4096  # measured: recall@10 0.96 at 10k x 128 (25 partitions)
# Drift: retrain once the partition count the table asks for is this factor off the index's.
RETRAIN_RATIO = 2
VECTOR_PROBE = "stage_vector_index_calls"
FTS_PROBE = "stage_fts_index_calls"

# Lance's index statistics include the IVF centroids unless told otherwise (and warn).
os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")


def ann_name(prop: str) -> str:
    return f"{prop}_ann"


def fts_name(prop: str) -> str:
    return f"{prop}_fts"


def kind_of(index: Any) -> str:
    """ "btree", "vector", "fts" or "other" for a Lance `IndexDescription`."""
    url = index.type_url
    if "BTree" in url:
        return "btree"
    if "Vector" in url:
        return "vector"
    if "Inverted" in url:
        return "fts"
    return "other"


def by_name(ds: lance.LanceDataset) -> dict[str, Any]:
    return {index.name: index for index in ds.describe_indices()}


@dataclass(frozen=True)
class AnnPlan:
    index_type: str
    num_partitions: int
    params: dict[str, Any]  # create_index's keyword arguments (all ints)


def ann_plan(rows: int, dim: int) -> AnnPlan:
    """The index kind and parameters for a table of `rows` vectors of `dim`."""
    if rows < PQ_MIN_ROWS:
        return AnnPlan("IVF_HNSW_SQ", max(1, rows // HNSW_ROWS_PER_PARTITION), {})
    sub = next(s for s in (dim // 8, dim // 4, dim // 2, dim, 1) if s >= 1 and dim % s == 0)
    return AnnPlan("IVF_PQ", max(1, int(math.sqrt(rows))), {"num_sub_vectors": sub})


def create_text_indexes(ds: lance.LanceDataset, props: Sequence[str]) -> None:
    """BM25 indexes on a new (empty) table's `@search` properties."""
    for prop in props:
        ds.create_scalar_index(prop, "INVERTED", name=fts_name(prop))


def maintain(
    ds: lance.LanceDataset,
    vectors: Mapping[str, str],
    texts: Sequence[str],
    before_commit: Any,
    label: str,
) -> set[str]:
    """Create, retrain or drop `ds`'s search indexes to match the declared ones
    (`vectors`: property -> metric; `texts`: `@search` properties). Folding uncovered rows
    is left to the caller's `optimize_indices`. `before_commit()` runs before each Lance
    commit (the CAS lock's expected version); `label` names the table in probes. Returns
    the names of the indexes built (or rebuilt) from every row."""
    existing = by_name(ds)
    built: set[str] = set()
    for name, index in existing.items():
        declared = name in {ann_name(p) for p in vectors} or name in {fts_name(p) for p in texts}
        if kind_of(index) in ("vector", "fts") and not declared:
            before_commit()
            ds.drop_index(name)
    for prop in texts:
        if fts_name(prop) not in existing:
            before_commit()
            probes.add(f"{FTS_PROBE}:{label}")
            ds.create_scalar_index(prop, "INVERTED", name=fts_name(prop))
            built.add(fts_name(prop))
    rows = ds.count_rows()
    for prop, metric in vectors.items():
        if rows < MIN_ANN_ROWS:
            continue
        plan = ann_plan(rows, ds.schema.field(prop).type.list_size)
        index = existing.get(ann_name(prop))
        if index is not None and not _drifted(ds, ann_name(prop), plan, metric):
            continue
        before_commit()
        probes.add(f"{VECTOR_PROBE}:{label}")
        ds.create_index(
            prop,
            plan.index_type,
            name=ann_name(prop),
            metric=metric,
            num_partitions=plan.num_partitions,
            replace=index is not None,
            **plan.params,
        )
        built.add(ann_name(prop))
    return built


def drifted(ds: lance.LanceDataset, prop: str, metric: str, rows: int | None = None) -> bool:
    """Whether `prop`'s existing ANN index would be retrained (manifest data only)."""
    rows = ds.count_rows() if rows is None else rows
    if rows < MIN_ANN_ROWS:
        return False  # optimize keeps an index it would not build today
    plan = ann_plan(rows, ds.schema.field(prop).type.list_size)
    return _drifted(ds, ann_name(prop), plan, metric)


def _drifted(ds: lance.LanceDataset, name: str, plan: AnnPlan, metric: str) -> bool:
    stats = ds.stats.index_stats(name)
    info = stats["indices"][0] if stats.get("indices") else {}
    partitions = int(info.get("num_partitions") or 1)
    if stats.get("index_type") != plan.index_type or info.get("metric_type") != metric:
        return True
    wanted = plan.num_partitions
    return wanted >= RETRAIN_RATIO * partitions or RETRAIN_RATIO * wanted <= partitions


def count_fold(ds: lance.LanceDataset, label: str, names: Sequence[str] | None = None) -> None:
    """Count, in the probes, the search indexes an `optimize_indices` call (on `names`,
    default all) will fold: those that do not cover every fragment. Every call site counts,
    so a merge's stats would show it if its publish path ever touched these indexes."""
    fragments = set(ds.fragment_ids())
    for index in ds.describe_indices():
        kind = kind_of(index)
        if names is not None and index.name not in names:
            continue
        covered = set().union(*(set(s.fragment_ids) for s in index.segments))
        if kind in ("vector", "fts") and fragments - covered:
            probes.add(f"{VECTOR_PROBE if kind == 'vector' else FTS_PROBE}:{label}")


def needs_work(ds: lance.LanceDataset, vectors: Mapping[str, str], texts: Sequence[str]) -> bool:
    """Whether `maintain` would build, retrain or drop an index (manifest data only)."""
    existing = by_name(ds)
    wanted = {ann_name(p) for p in vectors} | {fts_name(p) for p in texts}
    if any(kind_of(i) in ("vector", "fts") and n not in wanted for n, i in existing.items()):
        return True
    if any(fts_name(p) not in existing for p in texts):
        return True
    if not vectors:
        return False
    rows = ds.count_rows()
    if rows < MIN_ANN_ROWS:
        return False
    # A drift by deletes alone leaves every fragment indexed: it must still count.
    return any(
        ann_name(p) not in existing or drifted(ds, p, metric, rows) for p, metric in vectors.items()
    )


@dataclass(frozen=True)
class Coverage:
    """How one property's rows are searched: through its index, or exactly (a scan)."""

    property: str
    index: str | None
    index_type: str | None
    indexed_rows: int
    exact_rows: int

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def coverage(ds: lance.LanceDataset, prop: str, name: str) -> Coverage:
    if name not in by_name(ds):
        return Coverage(prop, None, None, 0, ds.count_rows())
    stats = ds.stats.index_stats(name)
    index_type = stats.get("index_type")
    return Coverage(
        prop,
        name,
        None if index_type in (None, "N/A") else str(index_type),
        int(stats["num_indexed_rows"]),
        int(stats["num_unindexed_rows"]),
    )
