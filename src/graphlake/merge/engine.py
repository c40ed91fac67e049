"""`Graph.merge`: classify every table, decide every changed key, validate, publish once.

Nothing is written before every table has been classified and the merged result
validated; then all table effects land on Lance branches the target owns (or adopt the
source's exact state), and one compare-and-swap of the target ref publishes the merge.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyarrow as pa
from ulid import ULID

from graphlake.catalog.commits import Commit, TableState
from graphlake.catalog.names import validate_branch_name
from graphlake.constraints.check import all_violations
from graphlake.constraints.violation import Violation
from graphlake.errors import ConcurrentWriteError, MergeConflictError, MergeError
from graphlake.merge import result as R
from graphlake.merge.base import MergeBase, merge_base
from graphlake.merge.conflicts import (
    CARDINALITY_VIOLATION,
    ORPHAN_EDGE,
    UNIQUE_VIOLATION,
    VALUE_CONSTRAINT_VIOLATION,
    Conflict,
)
from graphlake.merge.delta import DiscoverySettings, TableDelta, discover
from graphlake.merge.rows import STRATEGIES, Row, merge_key
from graphlake.schema.arrow import arrow_schema
from graphlake.schema.model import EdgeType, NodeType
from graphlake.write.plan import TablePlan
from graphlake.write.publish import HeadMoved, apply_plan

if TYPE_CHECKING:
    from graphlake.graph import Graph

MAX_ATTEMPTS = 5
_VIOLATION_KIND = {
    "unique": UNIQUE_VIOLATION,
    "endpoint": ORPHAN_EDGE,
    "dangling": ORPHAN_EDGE,
    "cardinality": CARDINALITY_VIOLATION,
    "value": VALUE_CONSTRAINT_VIOLATION,
}


@dataclass
class TableOutcome:
    stats: R.TableStats
    plan: TablePlan | None = None  # effects against the target (also for adoption)
    adopt: TableState | None = None  # pointer adoption: the source's exact state
    conflicts: list[Conflict] = field(default_factory=list)
    resolved: list[Conflict] = field(default_factory=list)


@dataclass
class Classification:
    tables: dict[str, TableOutcome]
    conflicts: list[Conflict]
    resolved: list[Conflict]

    @property
    def changes_target(self) -> bool:
        return any(
            o.adopt is not None or (o.plan is not None and not o.plan.is_empty)
            for o in self.tables.values()
        )


class _Timer:
    def __init__(self) -> None:
        self.timings: dict[str, float] = {}

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - start


def merge(
    graph: Graph,
    source: str,
    into: str,
    *,
    strategy: str | None = None,
    dry_run: bool = False,
    message: str | None = None,
    lineage: str | None = None,
    memory_budget: int | None = None,
) -> R.MergeResult:
    settings = DiscoverySettings.resolve(lineage, memory_budget)
    validate_branch_name(source)
    validate_branch_name(into)
    if source == into:
        raise MergeError(f"cannot merge branch {source!r} into itself")
    if strategy is not None and strategy not in STRATEGIES:
        raise MergeError(f"unknown strategy {strategy!r} (use one of: {', '.join(STRATEGIES)})")
    for attempt in range(MAX_ATTEMPTS):
        try:
            return _merge_once(graph, source, into, strategy, dry_run, message, settings)
        except (ConcurrentWriteError, HeadMoved):
            if attempt == MAX_ATTEMPTS - 1:
                raise ConcurrentWriteError(
                    f"branch {into!r} kept moving during the merge; retry later"
                ) from None
            time.sleep(0.01 * 2**attempt)
    raise AssertionError("unreachable")


def _merge_once(
    graph: Graph, source: str, into: str, strategy: str | None, dry_run: bool,
    message: str | None, settings: DiscoverySettings,
) -> R.MergeResult:
    timer = _Timer()
    with timer.phase("resolve_base"):
        t_ref, target = graph._head(into)
        _, src = graph._head(source)
        if src.schema_id != target.schema_id:
            raise MergeError(
                f"{source!r} and {into!r} have different schemas; schema merge is not supported"
            )
        result = R.MergeResult(R.ALREADY_UP_TO_DATE, source, into, commit=target.id,
                               dry_run=dry_run)
        if graph.history.is_ancestor(src.id, target.id):
            result.base = src.id
            return _finish(result, timer)
        if graph.history.is_ancestor(target.id, src.id):
            result.outcome, result.base, result.commit = R.FAST_FORWARD, target.id, src.id
            if not dry_run:
                with timer.phase("publish"):
                    graph.refs.cas(into, t_ref, src.id)
            return _finish(result, timer)
        base = merge_base(graph, target, src)
        result.base = base.commit.id
    cls = classify(graph, base, src, target, strategy, timer, settings)
    result.routes = {n: o.stats.route for n, o in cls.tables.items()}
    result.stats = {n: o.stats for n, o in cls.tables.items()}
    result.resolved = cls.resolved
    if cls.conflicts:
        if dry_run:
            result.outcome, result.conflicts = R.CONFLICT, cls.conflicts
            return _finish(result, timer)
        raise MergeConflictError(cls.conflicts)
    if not cls.changes_target:
        return _finish(result, timer)
    result.outcome = R.MERGED
    if dry_run:
        result.commit = None
        return _finish(result, timer)
    with timer.phase("publish"):
        owner = t_ref.incarnation

        def still_current() -> bool:
            return graph.refs.head(into) == t_ref

        states = _apply(graph, target, cls, owner, still_current)
        commit = Commit.create(
            parents=(target.id, src.id),
            message=message or f"merge {source} into {into}",
            schema_id=target.schema_id,
            tables={**target.tables, **states},
            meta={"merge_base": base.commit.id, "source": source},
        )
        graph.commits.put(commit)
        graph.refs.cas(into, t_ref, commit.id)
    result.commit = commit.id
    return _finish(result, timer)


def _finish(result: R.MergeResult, timer: _Timer) -> R.MergeResult:
    result.timings = {k: round(v, 6) for k, v in timer.timings.items()}
    return result


def _apply(
    graph: Graph, target: Commit, cls: Classification, owner: str, still_current
) -> dict[str, TableState]:
    states: dict[str, TableState] = {}
    for name, outcome in cls.tables.items():
        if outcome.adopt is not None:
            states[name] = outcome.adopt
        elif outcome.plan is not None and not outcome.plan.is_empty:
            states[name] = apply_plan(
                graph, target.tables[name], outcome.plan, owner, still_current
            )
    return states


def virtual_merge(
    graph: Graph, base: MergeBase, source: Commit, target: Commit
) -> tuple[Commit, dict[str, set[str]]]:
    """Materialise the merge of two commits as an unreferenced commit (a virtual base).

    Data conflicts resolve to the target's side and are returned as uncertain keys.
    """
    cls = classify(graph, base, source, target, "ours", _Timer(), DiscoverySettings())
    uncertain: dict[str, set[str]] = {}
    for c in cls.resolved:
        uncertain.setdefault(c.table, set()).add(c.entity_id)
    states = _apply(graph, target, cls, owner=f"virtual-{ULID()}", still_current=lambda: True)
    commit = Commit.create(
        parents=(target.id, source.id),
        message="virtual merge base",
        schema_id=target.schema_id,
        tables={**target.tables, **states},
        meta={"virtual": True},
    )
    graph.commits.put(commit)
    return commit, uncertain


# --- classification ---------------------------------------------------------------------


def classify(
    graph: Graph, base: MergeBase, source: Commit, target: Commit, strategy: str | None,
    timer: _Timer, settings: DiscoverySettings,
) -> Classification:
    tables: dict[str, TableOutcome] = {}
    for name in graph.schema.table_names:
        states = (base.commit.tables[name], source.tables[name], target.tables[name])
        if len({s.table_id for s in states}) != 1:
            raise MergeError(f"table {name!r} is not the same table on both sides")
        tables[name] = _classify_table(
            graph, name, *states, strategy, base.uncertain.get(name, set()), timer, settings
        )
    conflicts = [c for o in tables.values() for c in o.conflicts]
    resolved = [c for o in tables.values() for c in o.resolved]
    with timer.phase("validate"):
        plans = {n: o.plan for n, o in tables.items() if o.plan is not None}
        conflicts += _violations(graph, target, plans)
    return Classification(tables, conflicts, resolved)


def _classify_table(
    graph: Graph, name: str, b: TableState, s: TableState, t: TableState,
    strategy: str | None, uncertain: set[str], timer: _Timer, settings: DiscoverySettings,
) -> TableOutcome:
    t_type = graph.schema.table(name)
    if _same(s, b):
        return TableOutcome(R.TableStats(R.NO_CHANGE, discovery="same-state"))
    with timer.phase("discover"):
        ds = discover(graph.tables, b, s, settings, "source")
        dt = discover(graph.tables, b, t, settings, "target")
    stats = R.TableStats(
        R.NO_CHANGE,
        discovery=_paths(ds, dt),
        fallback=ds.fallback or dt.fallback,
        source_changes=len(ds.keys),
        target_changes=len(dt.keys),
        candidates=ds.candidates + dt.candidates,
        rows_scanned=ds.rows_scanned + dt.rows_scanned,
    )
    if not ds:
        return TableOutcome(stats)  # the source's commits net to zero here
    with timer.phase("classify"):
        if not dt and not uncertain:
            # The target shows the base's content: point at the source's exact state.
            stats.route = R.POINTER_ADOPTION
            plan = _plan(t_type, [(k, ds.base.get(k), ds.side.get(k)) for k in sorted(ds.keys)])
            return TableOutcome(stats, plan=plan, adopt=s)
        if ds.only_inserts and not (ds.keys & dt.keys) and not (ds.keys & uncertain):
            stats.route = R.INSERTION_REPLAY
            plan = _plan(t_type, [(k, None, ds.side[k]) for k in sorted(ds.keys)])
            stats.effects = plan.inserted.num_rows
            return TableOutcome(stats, plan=plan)
        stats.route = R.THREE_WAY
        return _three_way(t_type, ds, dt, strategy, uncertain, stats)


def _three_way(
    t_type: NodeType | EdgeType, ds: TableDelta, dt: TableDelta, strategy: str | None,
    uncertain: set[str], stats: R.TableStats,
) -> TableOutcome:
    changes: list[tuple[str, Row | None, Row | None]] = []
    outcome = TableOutcome(stats)
    for key in sorted(ds.keys | dt.keys):
        b = ds.base.get(key) if key in ds.keys else dt.base.get(key)
        s = ds.side.get(key) if key in ds.keys else b
        t = dt.side.get(key) if key in dt.keys else b
        decision, conflict = merge_key(t_type.name, key, b, s, t, strategy, key in uncertain)
        if conflict is not None:
            (outcome.resolved if conflict.resolution else outcome.conflicts).append(conflict)
        if decision.action == "put":
            changes.append((key, t, decision.row))
        elif decision.action == "delete":
            changes.append((key, t, None))
    outcome.plan = _plan(t_type, changes)
    stats.effects = len(changes)
    return outcome


def _plan(
    t_type: NodeType | EdgeType, changes: list[tuple[str, Row | None, Row | None]]
) -> TablePlan:
    """Effects against the target: (key, target row before, row after) per changed key."""
    schema = arrow_schema(t_type)
    inserted = [after for _, before, after in changes if before is None and after is not None]
    upd = [(b, a) for _, b, a in changes if b is not None and a is not None]
    deleted = [before for _, before, after in changes if before is not None and after is None]

    def table(rows: list[Row]) -> pa.Table:
        return pa.Table.from_pylist(rows, schema=schema)

    return TablePlan(
        t_type, schema,
        inserted=table(inserted),
        updated_old=table([b for b, _ in upd]),
        updated_new=table([a for _, a in upd]),
        deleted_old=table(deleted),
    )


def _violations(graph: Graph, target: Commit, plans: dict[str, TablePlan]) -> list[Conflict]:
    """Constraint checks of the merged result, scoped to the merge's effects."""
    if not plans:
        return []

    def dataset(name: str):
        return graph.tables.open(target.tables[name])

    found: list[Violation] = all_violations(graph.schema, plans, dataset)
    out: list[Conflict] = []
    seen: set[tuple[str, str, str, str]] = set()
    for v in found:
        kind = _VIOLATION_KIND[v.kind]
        if (kind, v.table, v.entity_id, v.message) in seen:
            continue
        seen.add((kind, v.table, v.entity_id, v.message))
        out.append(Conflict(kind, v.table, v.entity_id, v.message, v.properties))
    return out


def _paths(ds: TableDelta, dt: TableDelta) -> str:
    return ds.path if ds.path == dt.path or dt.path == "same-state" else f"{ds.path}+{dt.path}"


def _same(a: TableState, b: TableState) -> bool:
    return (a.lance_branch, a.version) == (b.lance_branch, b.version)
