"""Classify a merge of N sources into one target: a route and the effects per table.

Two-way merge is the case N = 1. Per table the cheapest route that proves itself wins:
no change; pointer adoption (the target shows the base's content and one source changed
the table: point at that source's exact state); insertion replay (the sources only
inserted keys that nobody else touched: append them); three-way. For N sources, each
key's source images are first combined by the same per-key rules (a key two sources
changed differently is a conflict between them), then merged against the target.

Sources forked from different commits of the target are each merged against their own
base: sources sharing a base form a group; a table only one group changed takes the
routes above against that group's base, otherwise its keys are decided by
`merge.across`.

`classify` answers with one immutable `Classification`: each table's outcome, every
conflict left and every one resolved (the merged data checks', the schema merge's, the
rows', the merged result's constraint violations, in that order) and the schema merge's
own outcome. Strategy, strict disjointness, resolutions and discovery settings come from
the `MergeRun`; what is merged (base, sources, target, the schema merge) from
`MergeInputs`.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from graphlake.catalog.commits import Commit, TableState
from graphlake.constraints.check import checked_columns
from graphlake.errors import MergeError, ResolutionError
from graphlake.merge import across
from graphlake.merge import result as R
from graphlake.merge.base import BaseOrder, MergeBase
from graphlake.merge.columns import backfilled_columns, plan_columns
from graphlake.merge.conflicts import Conflict, between_sources, with_target
from graphlake.merge.delta import DiscoverySettings, TableDelta, discover
from graphlake.merge.rows import Decision, Row, merge_key
from graphlake.merge.run import MergeRun
from graphlake.merge.violations import merge_violations
from graphlake.schema.arrow import arrow_schema
from graphlake.schema.model import EdgeType, NodeType
from graphlake.storage.adopt import Adoption, plan_adoption
from graphlake.storage.lookup import rows_where_in
from graphlake.storage.plan import TablePlan
from graphlake.write.backfill import ColumnWrite

if TYPE_CHECKING:
    from graphlake.merge.data_checks import MergedChecks
    from graphlake.merge.resolutions import Resolver
    from graphlake.merge.schema_merge import SchemaOutcome
    from graphlake.repo import Repo


@dataclass(frozen=True)
class TableOutcome:
    stats: R.TableStats
    plan: TablePlan | None = None  # effects against the target (what validation checks)
    adopt: TableState | None = None  # pointer adoption: the source's exact state
    # Insertion replay: sources whose fragments join by reference, and the plan of the
    # rows still to copy (the plan minus those sources' rows).
    adoptions: tuple[Adoption, ...] = ()
    copy_plan: TablePlan | None = None
    conflicts: tuple[Conflict, ...] = ()
    resolved: tuple[Conflict, ...] = ()
    # The column route: columns written column-wise after `plan` (see merge.columns).
    columns: tuple[ColumnWrite, ...] = ()


@dataclass(frozen=True)
class Classification:
    """One merge step's decision, built once (`classify`) and never changed."""

    # The target as classified (after a schema merge: its view in the merged layout):
    # the table effects apply to it.
    target: Commit
    tables: Mapping[str, TableOutcome]  # the row-routed tables (none: schema conflicts)
    conflicts: tuple[Conflict, ...]  # left unresolved
    resolved: tuple[Conflict, ...]  # settled by a strategy or a resolution
    schema: SchemaOutcome | None = None  # the schema merge that came first, if any

    @property
    def rows_merged(self) -> bool:
        """False while the schema merge has conflicts: the rows were not classified."""
        return self.schema is None or self.schema.merged

    @property
    def fixed(self) -> Mapping[str, TableState]:
        """Tables the schema merge decided: their final states."""
        return self.schema.fixed if self.schema is not None else {}


@dataclass(frozen=True)
class MergeInputs:
    """What one classification merges: the base, the sources and the target."""

    base: MergeBase
    sources: tuple[Commit, ...]
    target: Commit
    # Each source's own base, when the sources forked from (or synced with) different
    # commits of the target; empty when `base` serves them all.
    source_bases: tuple[MergeBase, ...] = ()
    # Branch names of the sources, for conflict reports (the target's: `MergeRun.into`).
    source_names: tuple[str, ...] = ()
    # The schema merge that came first (merge.schema_merge): `base`, `sources` and
    # `target` are then its views in the merged layout. It says where the target's
    # changes are found for tables evolved to the merged layout, which tables the walk
    # discovers (evolved on unrelated forks: lineage cannot relate them) and which tables
    # it decided (not classified, but the merged result's checks read them and their
    # deletions).
    schema: SchemaOutcome | None = None
    # The merged data checks: their conflicts and resolutions come first.
    checks: MergedChecks | None = None

    def source_name(self, i: int) -> str:
        return self.source_names[i] if i < len(self.source_names) else f"source {i + 1}"

    @property
    def many(self) -> bool:
        """merge_many: conflicts then name the branches whose rows they show."""
        return len(self.sources) > 1

    def groups(self) -> list[tuple[MergeBase, list[int]]]:
        """(base, indices of the sources merged against it), in source order."""
        if not self.source_bases:
            return [(self.base, list(range(len(self.sources))))]
        out: dict[int, tuple[MergeBase, list[int]]] = {}
        for i, base in enumerate(self.source_bases):
            out.setdefault(id(base), (base, []))[1].append(i)
        return list(out.values())


def classify(run: MergeRun, inputs: MergeInputs) -> Classification:
    """Decide every table of the merge (no rows when the schema merge has conflicts)."""
    repo, schema = run.repo, inputs.schema
    checks = inputs.checks
    conflicts = [
        *(checks.conflicts if checks else ()),
        *(schema.conflicts if schema else ()),
    ]
    resolved = [*(checks.resolved if checks else ()), *(schema.resolved if schema else ())]
    if schema is not None and not schema.merged:
        return Classification(inputs.target, {}, tuple(conflicts), tuple(resolved), schema)
    tables: dict[str, TableOutcome] = {}
    order = BaseOrder(repo)
    # Merges run only between commits of one schema (engine.py), the target's.
    for name in repo.schemas.of(inputs.target).table_names:
        if name not in inputs.target.tables:
            continue  # decided by the schema merge (merge.schema_merge)
        tables[name] = _classify_table(run, name, inputs, order)
    conflicts += [c for o in tables.values() for c in o.conflicts]
    resolved += [c for o in tables.values() for c in o.resolved]
    with run.timer.phase("validate"):
        plans = {n: o.plan for n, o in tables.items() if o.plan is not None}
        fixed = schema.fixed if schema is not None else {}
        deletions = schema.deletions if schema is not None else {}
        plans.update({n: p for n, p in deletions.items() if n not in plans})
        merged = replace(inputs.target, tables={**fixed, **inputs.target.tables})
        conflicts += merge_violations(repo, merged, plans)
    return Classification(inputs.target, tables, tuple(conflicts), tuple(resolved), schema)


@dataclass
class _Group:
    """The sources merged against one base, as seen in one table."""

    base: MergeBase
    b: TableState  # the base's state of the table
    changed: list[int]  # sources whose state of the table is not the base's
    uncertain: set[str]  # keys a virtual base conflicted on
    deltas: dict[int, TableDelta] = field(default_factory=dict)
    dt: TableDelta | None = None  # the target's changes since this base


def _classify_table(
    run: MergeRun, name: str, inputs: MergeInputs, order: BaseOrder
) -> TableOutcome:
    repo, timer, settings = run.repo, run.timer, run.settings
    t = inputs.target.tables[name]
    s_states = [s.tables[name] for s in inputs.sources]
    groups = [
        _Group(base, base.commit.tables[name], [], base.uncertain.get(name, set()))
        for base, _ in inputs.groups()
    ]
    if len({st.table_id for st in (t, *s_states, *(g.b for g in groups))}) != 1:
        raise MergeError(f"table {name!r} is not the same table on every side")
    for g, (_, members) in zip(groups, inputs.groups(), strict=True):
        g.changed = [i for i in members if not _same(s_states[i], g.b)]
    groups = [g for g in groups if g.changed or g.uncertain]
    if not groups:
        return TableOutcome(R.TableStats(R.NO_CHANGE, discovery="same-state"))
    if inputs.schema is not None and name in inputs.schema.walk:
        settings = replace(settings, lineage="off")
    if len(groups) == 1 and len(groups[0].changed) == 1 and not groups[0].uncertain:
        g, i = groups[0], groups[0].changed[0]
        columns = backfilled_columns(repo, g.base.commit, inputs.sources[i], name)
        if columns:
            return _column_route(run, name, inputs, g.b, s_states[i], t, columns, settings)
    with timer.phase("discover"):
        for g in groups:
            g.deltas = {
                i: discover(repo.tables, g.b, s_states[i], settings, "source") for i in g.changed
            }
            g.dt = discover(repo.tables, g.b, t, settings, "target")
            for i, d in g.deltas.items():  # every group's sources (not only the last's)
                d.label = inputs.source_name(i)
    stats = _stats(
        [d for g in groups for d in g.deltas.values()], [g.dt for g in groups if g.dt is not None]
    )
    if len(groups) == 1 and len(groups[0].deltas) == 1 and not groups[0].uncertain:
        (only,) = groups[0].deltas.values()
        stats.source_counts = only.counts()
    for g in groups:
        g.deltas = {i: d for i, d in g.deltas.items() if d}  # sources whose commits net to zero
    groups = [g for g in groups if g.deltas or g.uncertain]
    if not groups:
        return TableOutcome(stats)
    t_type = repo.schemas.of(inputs.target).require(name)
    with timer.phase("classify"):
        if len(groups) == 1:
            return _one_base(run, t_type, inputs, groups[0], s_states, stats)
        return _across_bases(run, t_type, inputs, groups, s_states, stats, order)


def _column_route(
    run: MergeRun,
    name: str,
    inputs: MergeInputs,
    b: TableState,
    s: TableState,
    t: TableState,
    columns: tuple[str, ...],
    settings: DiscoverySettings,
) -> TableOutcome:
    """The source only backfilled `columns` of the table since the base: adopt its state
    if the target left the table alone, else merge column-wise (`merge.columns`)."""
    stats = R.TableStats(R.POINTER_ADOPTION, discovery="backfill")
    if _same(t, b):
        return TableOutcome(stats, adopt=s)
    repo = run.repo
    evolved_from = inputs.schema.discover_target if inputs.schema is not None else {}
    with run.timer.phase("discover"):
        dt = discover(repo.tables, b, evolved_from.get(name, t), settings, "target")
    t_type = repo.schemas.of(inputs.target).require(name)
    with run.timer.phase("classify"):
        cp = plan_columns(repo, t_type, columns, s, t, set(dt.keys), dt.base, dt.side, run.strategy)
    stats.route, stats.target_changes = R.COLUMN_WRITE, dt.size
    stats.effects = len(cp.changes)
    return TableOutcome(
        stats,
        plan=_plan(t_type, cp.changes),
        conflicts=tuple(cp.conflicts),
        resolved=tuple(cp.resolved),
        columns=tuple(cp.writes),
    )


def _one_base(
    run: MergeRun,
    t_type: NodeType | EdgeType,
    inputs: MergeInputs,
    g: _Group,
    s_states: list[TableState],
    stats: R.TableStats,
) -> TableOutcome:
    """Every source that changed the table was merged against one base (the usual case)."""
    repo, deltas, dt, uncertain, b = run.repo, g.deltas, g.dt, g.uncertain, g.b
    assert dt is not None
    overlap = _overlap(deltas, dt)
    if run.strict_disjoint:
        _refuse_overlap(t_type.name, _overlap(deltas) if overlap else overlap)
    if uncertain:
        # A virtual base that conflicted on these keys cannot arbitrate them: compare
        # the sides' rows for them whatever the deltas say.
        stats.route = R.THREE_WAY
        base_rows = _rows(repo, b, uncertain)
        return _three_way(
            run, t_type, list(deltas.values()), dt, inputs, uncertain, stats, base_rows
        )
    if not dt and len(deltas) == 1:
        # The target shows the base's content: point at the source's exact state.
        ((i, d),) = deltas.items()
        stats.route = R.POINTER_ADOPTION
        if d.inserts is not None:  # only inserts: the plan stays columnar
            plan = _insert_plan(t_type, [d.side_table(_checked_schema(t_type))])
        else:
            plan = _plan(t_type, [(k, d.base.get(k), d.side.get(k)) for k in sorted(d.keys)])
        return TableOutcome(stats, plan=plan, adopt=s_states[i])
    if all(d.only_inserts for d in deltas.values()) and not overlap:
        return _insertion_replay(repo, t_type, dict.fromkeys(deltas, b), s_states, deltas, stats)
    stats.route = R.THREE_WAY
    return _three_way(run, t_type, list(deltas.values()), dt, inputs, uncertain, stats)


def _across_bases(
    run: MergeRun,
    t_type: NodeType | EdgeType,
    inputs: MergeInputs,
    groups: list[_Group],
    s_states: list[TableState],
    stats: R.TableStats,
    order: BaseOrder,
) -> TableOutcome:
    """Sources merged against different bases changed the table. Each source's changes
    are its own since its base (so the target's changes after an older fork are never
    replayed); a key two groups changed is decided by `across.decide`."""
    repo = run.repo
    deltas = {i: d for g in groups for i, d in g.deltas.items()}
    between = _overlap(deltas)
    if run.strict_disjoint:
        _refuse_overlap(t_type.name, between)
    with_target = any(_overlap(g.deltas, g.dt) for g in groups)
    uncertain = any(g.uncertain for g in groups)
    if (
        not uncertain
        and not between
        and not with_target
        and all(d.only_inserts for d in deltas.values())
    ):
        bases = {i: g.b for g in groups for i in g.deltas}
        return _insertion_replay(repo, t_type, bases, s_states, deltas, stats)
    stats.route = R.THREE_WAY
    base_rows = [_rows(repo, g.b, g.uncertain) if g.uncertain else {} for g in groups]
    left: list[Conflict] = []
    settled: list[Conflict] = []
    changes: list[tuple[str, Row | None, Row | None]] = []
    keys = set().union(*(d.keys for d in deltas.values()), *(g.uncertain for g in groups))

    def newest(indices: list[int]) -> int | None:
        return order.newest([groups[i].base for i in indices])

    for key in sorted(keys):
        images, clashes = _images(t_type.name, key, groups, base_rows)
        if clashes or not images:
            left += clashes
            continue
        decision, conflicts = across.decide(t_type.name, key, images, run.strategy, newest)
        conflicts = [
            c if c.between_sources else _with_target(c, run, inputs, across.touched_by(images))
            for c in conflicts
        ]
        resolver = run.resolver
        if resolver is not None and resolver.has(t_type.name, key):
            decision, conflicts = _resolved_across(
                t_type, key, decision, conflicts, images[0].t, resolver
            )
        for conflict in conflicts:
            (settled if conflict.resolution else left).append(conflict)
        t = images[0].t
        if decision.action == "put":
            changes.append((key, t, decision.row))
        elif decision.action == "delete":
            changes.append((key, t, None))
    stats.effects = len(changes)
    return TableOutcome(
        stats, plan=_plan(t_type, changes), conflicts=tuple(left), resolved=tuple(settled)
    )


def _resolved_across(
    t_type: NodeType | EdgeType,
    key: str,
    decision: Decision,
    conflicts: list[Conflict],
    t: Row | None,
    resolver: Resolver | None = None,
) -> tuple[Decision, list[Conflict]]:
    """A key of sources forked from different bases, settled by its resolutions: its one
    conflict (between two groups of sources, or with the target) is decided as any
    conflict is, against the target's row `t`."""
    pending = [c for c in conflicts if not c.resolution]
    if not pending:
        return decision, conflicts
    if len(pending) > 1:
        raise ResolutionError(
            f"{t_type.name} {key!r}: {len(pending)} groups of sources forked from different "
            "commits of the target changed it differently; a resolution settles one "
            "conflict: merge those sources one at a time, then resolve"
        )
    [conflict] = pending
    decided = (
        resolver.decide(t_type, conflict, conflict.base, conflict.source, t) if resolver else None
    )
    if decided is None:
        return decision, conflicts
    settled_decision, settled = decided
    return settled_decision, [c if c is not conflict else settled for c in conflicts]


def _images(
    table: str, key: str, groups: list[_Group], base_rows: list[dict[str, Row]]
) -> tuple[list[across.Image], list[Conflict]]:
    """Each group's combined image of `key` (groups that left it alone are skipped), or
    the conflicts between sources of one group."""
    images: list[across.Image] = []
    clashes: list[Conflict] = []
    for n, (g, rows) in enumerate(zip(groups, base_rows, strict=True)):
        assert g.dt is not None
        ds = list(g.deltas.values())
        touched = any(key in d.keys for d in ds)
        if not touched and key not in g.uncertain:
            continue
        b = _base_row(key, ds, g.dt, rows)
        t = g.dt.side.get(key) if key in g.dt.keys else b
        s, conflicts, _ = _combine_sources(table, key, b, ds, t)
        clashes += conflicts
        if not touched and s == t:
            continue  # an uncertain base, but this group's sources agree with the target
        label = ",".join(d.label for d in ds if key in d.keys)
        images.append(across.Image(n, b, s, t, key in g.uncertain, label))
    return images, clashes


def _insertion_replay(
    repo: Repo,
    t_type: NodeType | EdgeType,
    bases: dict[int, TableState],
    s_states: list[TableState],
    deltas: dict[int, TableDelta],
    stats: R.TableStats,
) -> TableOutcome:
    """Append the sources' new rows: by reference where provable, else copied. Columnar
    throughout, so an insert-only merge of millions of rows stays cheap. `bases`: each
    source's base state of the table (what its fragments were appended to)."""
    stats.route = R.INSERTION_REPLAY
    schema = arrow_schema(t_type)
    checked = _checked_schema(t_type)
    adoptions: list[Adoption] = []
    copied: list[pa.Table] = []
    every: list[pa.Table] = []
    for i, d in deltas.items():
        every.append(d.side_table(checked))
        adoption = plan_adoption(repo.tables, bases[i], s_states[i])
        if adoption is not None and adoption.rows == d.size:
            adoptions.append(adoption)
        else:
            copied.append(d.side_table(schema))  # copied rows are read whole
    copy_plan = _insert_plan(t_type, copied)
    stats.effects = copy_plan.inserted.num_rows
    stats.adopted_rows = sum(a.rows for a in adoptions)
    return TableOutcome(
        stats, plan=_insert_plan(t_type, every), adoptions=tuple(adoptions), copy_plan=copy_plan
    )


def _insert_plan(t_type: NodeType | EdgeType, parts: list[pa.Table]) -> TablePlan:
    """A plan that only inserts these rows (whole, or only the checked columns)."""
    schema = arrow_schema(t_type)
    empty = schema.empty_table()
    inserted = pa.concat_tables(parts) if parts else empty
    return TablePlan(
        t_type, schema, inserted=inserted, updated_old=empty, updated_new=empty, deleted_old=empty
    )


def _checked_schema(t_type: NodeType | EdgeType) -> pa.Schema:
    """The columns validation reads from rows a source inserted. Those rows passed the
    source's own writes under the same schema (a merge refuses differing schemas), so
    they are complete and well typed; only checks that look across rows remain."""
    schema = arrow_schema(t_type)
    return pa.schema([schema.field(c) for c in checked_columns(t_type)])


def _stats(source_deltas: list[TableDelta], dts: list[TableDelta]) -> R.TableStats:
    """`dts`: the target's changes since each base (one per base)."""
    paths = {d.path for d in source_deltas} | ({dt.path for dt in dts} - {"same-state"})
    fallbacks = [d.fallback for d in (*source_deltas, *dts) if d.fallback]
    return R.TableStats(
        R.NO_CHANGE,
        discovery="+".join(sorted(paths)),
        fallback=fallbacks[0] if fallbacks else None,
        source_changes=sum(d.size for d in source_deltas),
        target_changes=max(dt.size for dt in dts),
        candidates=sum(d.candidates for d in (*source_deltas, *dts)),
        rows_scanned=sum(d.rows_scanned for d in (*source_deltas, *dts)),
    )


def _overlap(deltas: dict[int, TableDelta], target: TableDelta | None = None) -> set[str]:
    """Keys changed by more than one source (or by a source and the target)."""
    sides = [*deltas.values(), *([target] if target is not None else [])]
    if _all_distinct(sides):
        return set()
    seen = set(target.keys) if target is not None else set()
    overlap: set[str] = set()
    for d in deltas.values():
        overlap |= d.keys & seen
        seen |= d.keys
    return overlap


_KEY_READERS = 8


def _all_distinct(sides: list[TableDelta]) -> bool:
    """Whether no key appears in two of `sides`, decided on Arrow columns: insert-only
    sides (the sharded-ingest case) keep millions of keys columnar, which this keeps
    far cheaper than Python sets. A side's own keys are distinct. False means "maybe
    not": the caller then finds the overlap exactly."""
    present = [d for d in sides if d]
    if len(present) < 2:
        return True
    # Many small shards: their key reads are mostly per-dataset set-up, which overlaps
    # well in threads (Lance releases the GIL while it scans).
    with ThreadPoolExecutor(max_workers=min(_KEY_READERS, len(present))) as pool:
        columns = list(pool.map(TableDelta.key_column, present))
    # Sides whose key ranges do not overlap cannot share a key (ingest slices of sorted
    # input): a min/max per side decides it without hashing or sorting every key.
    ranges = sorted((r["min"], r["max"]) for r in (pc.min_max(c).as_py() for c in columns))
    if all(prev[1] < nxt[0] for prev, nxt in itertools.pairwise(ranges)):
        return True
    keys = pa.chunked_array([c for col in columns for c in col.chunks], pa.string())
    keys = keys.combine_chunks()
    ordered = keys.take(pc.array_sort_indices(keys))
    n = len(ordered)
    return not pc.any(pc.equal(ordered.slice(1), ordered.slice(0, n - 1))).as_py()


def _refuse_overlap(table: str, overlap: set[str]) -> None:
    if overlap:
        keys = ", ".join(repr(k) for k in sorted(overlap)[:5])
        raise MergeError(
            f"strict_disjoint: sources overlap in {table} on {len(overlap)} key(s): {keys}"
        )


def _three_way(
    run: MergeRun,
    t_type: NodeType | EdgeType,
    deltas: list[TableDelta],
    dt: TableDelta,
    inputs: MergeInputs,
    uncertain: set[str],
    stats: R.TableStats,
    base_rows: dict[str, Row] | None = None,
) -> TableOutcome:
    strategy = run.strategy
    changes: list[tuple[str, Row | None, Row | None]] = []
    left: list[Conflict] = []
    settled_all: list[Conflict] = []
    keys = set(dt.keys).union(*(d.keys for d in deltas)) | uncertain
    for key in sorted(keys):
        b = _base_row(key, deltas, dt, base_rows or {})
        t = dt.side.get(key) if key in dt.keys else b
        resolver = run.resolver if run.resolver and run.resolver.has(t_type.name, key) else None
        s, source_conflicts, settled = _combine_sources(
            t_type.name, key, b, deltas, t, resolver, t_type
        )
        settled_all += settled
        if source_conflicts:
            left += source_conflicts
            continue
        decision, conflict = merge_key(
            t_type.name, key, b, s, t, None if resolver else strategy, key in uncertain
        )
        if conflict is not None:
            conflict = _with_target(
                conflict, run, inputs, [d.label for d in deltas if key in d.keys]
            )
            decided = resolver.decide(t_type, conflict, b, s, t) if resolver else None
            if decided is not None:
                decision, conflict = decided
            (settled_all if conflict.resolution else left).append(conflict)
        if decision.action == "put":
            changes.append((key, t, decision.row))
        elif decision.action == "delete":
            changes.append((key, t, None))
    stats.effects = len(changes)
    return TableOutcome(
        stats, plan=_plan(t_type, changes), conflicts=tuple(left), resolved=tuple(settled_all)
    )


def _with_target(
    conflict: Conflict, run: MergeRun, inputs: MergeInputs, sources: list[str]
) -> Conflict:
    """In a merge_many, name the sources whose combined row a conflict with the target
    shows (a two-way merge's report already names its source and target)."""
    if not inputs.many:
        return conflict
    return with_target(conflict, ",".join(sources) or "sources", run.into)


def _base_row(
    key: str, deltas: list[TableDelta], dt: TableDelta, base_rows: dict[str, Row]
) -> Row | None:
    for d in (*deltas, dt):
        if key in d.keys:
            return d.base.get(key)
    return base_rows.get(key)


def _rows(repo: Repo, state: TableState, keys: set[str]) -> dict[str, Row]:
    table = rows_where_in(repo.tables.open(state), "id", sorted(keys))
    return {r["id"]: r for r in table.to_pylist()}


def _combine_sources(
    table: str,
    key: str,
    b: Row | None,
    deltas: list[TableDelta],
    t: Row | None,
    resolver: Resolver | None = None,
    t_type: NodeType | EdgeType | None = None,
) -> tuple[Row | None, list[Conflict], list[Conflict]]:
    """The sources' combined image of `key`: each source's change merged in turn against
    the base by the per-key rules; a disagreement between sources is a conflict (which
    reports `t`, the target's row, as its target) unless a resolution settles it (the
    third list)."""
    acc = b
    acc_from: list[str] = []  # the sources whose changes `acc` holds
    conflicts: list[Conflict] = []
    settled: list[Conflict] = []
    for d in deltas:
        if key not in d.keys:
            continue
        decision, conflict = merge_key(table, key, b, d.side.get(key), acc)
        if conflict is not None:
            conflict = between_sources(conflict, d.label, ",".join(acc_from), t)
            decided = (
                resolver.decide(t_type, conflict, b, d.side.get(key), acc)
                if resolver and t_type
                else None
            )
            if decided is None:
                conflicts.append(conflict)
                continue
            decision, conflict = decided
            settled.append(conflict)
        acc_from.append(d.label)
        if decision.action == "put":
            acc = decision.row
        elif decision.action == "delete":
            acc = None
    return acc, conflicts, settled


def _plan(
    t_type: NodeType | EdgeType, changes: list[tuple[str, Row | None, Row | None]]
) -> TablePlan:
    """Effects against the target: (key, target row before, row after) per changed key."""
    schema = arrow_schema(t_type)
    inserted = [a for _, b, a in changes if b is None and a is not None]
    upd = [(b, a) for _, b, a in changes if b is not None and a is not None]
    deleted = [b for _, b, a in changes if b is not None and a is None]

    def table(rows: list[Row]) -> pa.Table:
        return pa.Table.from_pylist(rows, schema=schema)

    return TablePlan(
        t_type,
        schema,
        inserted=table(inserted),
        updated_old=table([b for b, _ in upd]),
        updated_new=table([a for _, a in upd]),
        deleted_old=table(deleted),
    )


def _same(a: TableState, b: TableState) -> bool:
    return (a.lance_branch, a.version) == (b.lance_branch, b.version)
