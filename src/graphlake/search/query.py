"""`g.search`: the k best rows of one type by vector distance, BM25 score or both (RRF).

Everything is checked before anything is read: the type and properties, `k`, the query
vector (dimension, finite values), the text's size and the `where` filter (the safe filter
grammar of `read.filter`). The filter is applied before ranking (Lance's prefilter), so k
rows come back whenever k rows match. Lance searches rows an index covers through it and
the others (new writes, adopted fragments) exactly, so results are correct after any
write or merge without index work.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
from lance.query import MatchQuery, MultiMatchQuery

from graphlake.errors import KeyNotFoundError, QueryError, SearchError, clean_message
from graphlake.read.filter import compile_filter
from graphlake.storage import search_indexes as indexes

if TYPE_CHECKING:
    import lance

    from graphlake.read.snapshot import Snapshot
    from graphlake.schema.model import EdgeType, NodeType

MAX_K = 1000
MAX_TEXT_CHARS = 4096
RRF_K = 60  # the usual reciprocal-rank-fusion constant: score = sum 1 / (RRF_K + rank)
# Rows fetched past k so ties at the cut can be broken by key, not by storage order.
TIE_MARGIN = 8
# ANN candidates re-ranked with the full vectors (IVF_PQ needs it for recall >= 0.95).
REFINE_FACTOR = 5
DEFAULT_METRIC = "cosine"


@dataclass(frozen=True)
class SearchRequest:
    type: str
    vector: Any = None
    text: str | None = None
    k: int = 10
    where: str | None = None
    columns: Sequence[str] | None = None
    near: Any = None
    on: Sequence[str] = ()  # the properties to search (default: the declared ones)


@dataclass
class _Plan:
    """A checked request: what to search on which properties, with which filter."""

    t: NodeType | EdgeType
    ds: lance.LanceDataset
    k: int
    columns: list[str]
    keep_id: bool
    filter: str | None
    vector_prop: str | None = None
    metric: str = DEFAULT_METRIC
    query: np.ndarray | None = None
    text_props: list[str] = field(default_factory=list)
    text: str | None = None


@dataclass(frozen=True)
class SearchPlan:
    """What `explain=True` reports: per searched property, rows through the index and
    rows searched exactly."""

    type: str
    mode: str  # "vector", "text" or "hybrid"
    k: int
    filter: str | None
    coverage: list[indexes.Coverage]

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "mode": self.mode,
            "k": self.k,
            "filter": self.filter,
            "coverage": [c.to_dict() for c in self.coverage],
        }


def search(snap: Snapshot, req: SearchRequest) -> pa.Table:
    plan = _plan(snap, req)
    if plan.query is not None and plan.text is not None:
        return _hybrid(plan)
    ranked = _vector_rows(plan) if plan.query is not None else _text_rows(plan)
    return _finish(ranked.slice(0, plan.k), plan)


def explain(snap: Snapshot, req: SearchRequest) -> SearchPlan:
    plan = _plan(snap, req)
    cover = []
    if plan.vector_prop is not None:
        cover.append(
            indexes.coverage(plan.ds, plan.vector_prop, indexes.ann_name(plan.vector_prop))
        )
    cover += [indexes.coverage(plan.ds, p, indexes.fts_name(p)) for p in plan.text_props]
    mode = (
        "hybrid"
        if plan.query is not None and plan.text is not None
        else ("vector" if plan.query is not None else "text")
    )
    return SearchPlan(plan.t.name, mode, plan.k, plan.filter, cover)


# --- checking ------------------------------------------------------------------------


def _plan(snap: Snapshot, req: SearchRequest) -> _Plan:
    t = snap.type(req.type)
    ds = snap.dataset(t.name)
    k = _check_k(req.k)
    if req.vector is None and req.near is None and req.text is None:
        raise SearchError("give a query: vector, near (a node's key) or text")
    if req.vector is not None and req.near is not None:
        raise SearchError("give either vector or near, not both")
    names = list(ds.schema.names)
    columns = list(req.columns) if req.columns is not None else names
    unknown = [c for c in columns if c not in names]
    if unknown:
        raise SearchError(
            f"{t.name} has no column {', '.join(map(repr, unknown))} (columns: {', '.join(names)})"
        )
    where = None if req.where is None else compile_filter(req.where, t.name, names)
    plan = _Plan(
        t,
        ds,
        k,
        columns if "id" in columns else [*columns, "id"],
        keep_id="id" in columns,
        filter=where,
    )
    on = [req.on] if isinstance(req.on, str) else list(req.on)
    for p in on:
        if t.property(p) is None:
            raise SearchError(f"{p!r} is not a property of {t.name}")
    if req.vector is not None or req.near is not None:
        plan.vector_prop = _vector_prop(t, on)
        plan.metric = t.vector_indexes.get(plan.vector_prop, DEFAULT_METRIC)
        raw = req.vector if req.near is None else _near_vector(snap, plan, req.near)
        dims = {p.name: p.type.dim for p in t.properties}
        plan.query = _check_vector(raw, dims[plan.vector_prop] or 0)
    if req.text is not None:
        plan.text_props = _text_props(t, ds, on)
        plan.text = _check_text(req.text)
    return plan


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise SearchError(f"k must be an integer, not {type(k).__name__}")
    if not 1 <= int(k) <= MAX_K:
        raise SearchError(f"k must be between 1 and {MAX_K}, not {k}")
    return int(k)


def _vector_prop(t: NodeType | EdgeType, on: list[str]) -> str:
    vectors = [p.name for p in t.properties if p.type.kind == "Vector"]
    if not vectors:
        raise SearchError(f"{t.name} has no Vector property to search")
    chosen = [p for p in on if p in vectors]
    if len(chosen) > 1:
        raise SearchError(f"search one Vector property at a time, not {chosen}")
    if chosen:
        return chosen[0]
    declared = list(t.vector_indexes) or vectors
    if len(declared) > 1:
        raise SearchError(
            f"{t.name} has several Vector properties ({', '.join(declared)}); name one with on="
        )
    return declared[0]


def _text_props(t: NodeType | EdgeType, ds: lance.LanceDataset, on: list[str]) -> list[str]:
    named = [p for p in on if t.property(p).type.kind != "Vector"]  # type: ignore[union-attr]
    props = named or list(t.search)
    if not props:
        raise SearchError(f"{t.name} has no @search property for text search")
    missing = [p for p in props if p not in t.search]
    if missing:
        raise SearchError(
            f"{', '.join(map(repr, missing))} of {t.name} has no @search "
            f"(full-text properties: {', '.join(t.search) or 'none'})"
        )
    built = indexes.by_name(ds)
    unbuilt = [p for p in props if indexes.fts_name(p) not in built]
    if unbuilt:
        raise SearchError(
            f"{t.name}: no full-text index on {', '.join(unbuilt)} yet; "
            f"run `graphlake optimize` to build it"
        )
    return props


def _near_vector(snap: Snapshot, plan: _Plan, key: Any) -> Any:
    if plan.t.is_edge:
        raise SearchError("near= takes a node's key; edge types have no key")
    row = snap.get(plan.t.name, key)
    if row is None:
        raise KeyNotFoundError(f"near: no {plan.t.name} with key {key!r}")
    assert plan.vector_prop is not None
    if row[plan.vector_prop] is None:
        raise SearchError(f"near: {plan.t.name} {key!r} has no {plan.vector_prop}")
    # The node itself is not among its own nearest neighbours.
    own = f"(`id` != '{str(row['id']).replace(chr(39), chr(39) * 2)}')"
    plan.filter = own if plan.filter is None else f"({plan.filter}) AND {own}"
    return row[plan.vector_prop]


def _check_vector(raw: Any, dim: int) -> np.ndarray:
    try:
        q = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError):
        raise SearchError("the query vector must be a list of numbers") from None
    if q.ndim != 1 or q.shape[0] != dim:
        raise SearchError(
            f"the query vector has {q.size if q.ndim else 1} values; the property is Vector({dim})"
        )
    if not np.isfinite(q).all():
        raise SearchError("the query vector holds NaN or infinite values")
    return q.astype(np.float32)


def _check_text(text: Any) -> str:
    if not isinstance(text, str) or not text.strip():
        raise SearchError("text must be a non-empty string")
    if len(text) > MAX_TEXT_CHARS:
        raise SearchError(f"text is {len(text)} characters; at most {MAX_TEXT_CHARS}")
    return text


# --- running -------------------------------------------------------------------------


def _run(plan: _Plan, **kwargs: Any) -> pa.Table:
    try:
        return plan.ds.to_table(filter=plan.filter, prefilter=True, **kwargs)
    except (OSError, ValueError, pa.ArrowInvalid) as exc:
        raise QueryError(f"{plan.t.name}: search failed: {clean_message(exc)}") from None


def _vector_rows(plan: _Plan) -> pa.Table:
    """Up to k + TIE_MARGIN rows, best first, ties by id."""
    assert plan.vector_prop is not None
    nearest = {
        "column": plan.vector_prop,
        "q": plan.query,
        "k": plan.k + TIE_MARGIN,
        "metric": plan.metric,
        "refine_factor": REFINE_FACTOR,
    }
    rows = _run(plan, nearest=nearest, columns=[*plan.columns, "_distance"])
    return rows.sort_by([("_distance", "ascending"), ("id", "ascending")])


def _text_rows(plan: _Plan) -> pa.Table:
    assert plan.text is not None
    query = (
        MatchQuery(plan.text, plan.text_props[0])
        if len(plan.text_props) == 1
        else MultiMatchQuery(plan.text, plan.text_props)
    )
    rows = _run(
        plan, full_text_query=query, columns=[*plan.columns, "_score"], limit=plan.k + TIE_MARGIN
    )
    return rows.sort_by([("_score", "descending"), ("id", "ascending")])


def rrf(lists: Sequence[Sequence[str]], k: int = RRF_K) -> dict[str, float]:
    """Reciprocal rank fusion: each id scores sum 1 / (k + rank), rank 1-based."""
    scores: dict[str, float] = {}
    for ids in lists:
        for rank, key in enumerate(ids, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return scores


def _hybrid(plan: _Plan) -> pa.Table:
    """The k best of the fused vector and text lists (each cut at k, as returned alone)."""
    vec = _vector_rows(plan).slice(0, plan.k)
    txt = _text_rows(plan).slice(0, plan.k)
    scores = rrf([vec["id"].to_pylist(), txt["id"].to_pylist()])
    best = sorted(scores, key=lambda key: (-scores[key], key))[: plan.k]
    rows = pa.concat_tables([vec.drop_columns(["_distance"]), txt.drop_columns(["_score"])])
    first = {key: i for i, key in reversed(list(enumerate(rows["id"].to_pylist())))}
    out = rows.take([first[key] for key in best])
    out = out.append_column("_distance", _lookup(vec, "_distance", best))
    out = out.append_column("_score", _lookup(txt, "_score", best))
    out = out.append_column("_rrf", pa.array([scores[key] for key in best], pa.float64()))
    return _finish(out, plan)


def _lookup(table: pa.Table, column: str, ids: list[str]) -> pa.Array:
    values = dict(zip(table["id"].to_pylist(), table[column].to_pylist(), strict=True))
    return pa.array([values.get(key) for key in ids], table.schema.field(column).type)


def _finish(rows: pa.Table, plan: _Plan) -> pa.Table:
    return rows if plan.keep_id else rows.drop_columns(["id"])


__all__ = ["MAX_K", "SearchPlan", "SearchRequest", "explain", "rrf", "search"]
