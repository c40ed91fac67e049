"""Apply a three-way schema merge (`schema.merge3`) before a merge's rows are merged.

`prepare` merges the base's, the target's and the source's schemas, then decides each
table of the merged schema by which sides changed its *data* since the base (commits
that are not schema commits and changed the table's state):

- its layout (columns) is the same on every side: the usual row routes (`classify`);
- the source did not change its data: the target's state, evolved to the merged layout
  (Lance schema evolution: metadata, or one column for a default) - O(tables);
- only the source changed its data: the source's state, evolved likewise (O(1));
- both changed data, the source only backfilled columns it added: the target's state
  evolved, then the column route (`merge.columns`) writes the source's columns;
- both changed data otherwise: the base's, target's and source's states are each evolved
  to the merged layout on forks, and the usual three-way row merge runs on them with
  the walk for discovery (the forks share no Lance history that proves the changes).

A property dropped on one side while the other changed its values merges as the drop;
the values are listed in `r.stats[table].dropped_values`. A constraint one side added is
checked against the other side's rows (as `unique_violation` /
`value_constraint_violation`). A type dropped on one side while the other changed its
rows is a `schema_conflict`.

`prepare` answers with one immutable `SchemaOutcome`, which the row classification reads
(`merge.classify`: its views, decided tables, conflicts) and keeps.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from graphlake.catalog.commits import Commit, TableState
from graphlake.constraints.values import value_violations
from graphlake.errors import MergeError
from graphlake.merge import result as R
from graphlake.merge.base import MergeBase
from graphlake.merge.conflicts import UNIQUE_VIOLATION, VALUE_CONSTRAINT_VIOLATION, Conflict
from graphlake.schema.arrow import arrow_field, arrow_schema, arrow_type
from graphlake.schema.changes import RenameProperty, schema_changes
from graphlake.schema.merge3 import (
    OURS,
    THEIRS,
    SchemaMerge,
    SchemaSide,
    merge_schemas,
    resolve_dropped_type,
)
from graphlake.schema.model import EdgeType, NodeType
from graphlake.schema.text import schema_text
from graphlake.storage.evolve import ColumnFill, LayoutChange, evolve
from graphlake.storage.plan import TablePlan
from graphlake.storage.tables import (
    LanceCasError,
    index_columns,  # one rule for init, apply, merge
)

if TYPE_CHECKING:
    from graphlake.merge.run import MergeRun
    from graphlake.repo import Repo

SCHEMA_CHANGE_META = "schema_change"  # commit meta of `apply_schema` commits
SHOWN = 20  # dropped values listed per property


@dataclass
class _History:
    """What one side did since the base, by table id."""

    data: set[str] = field(default_factory=set)  # tables whose rows changed
    schema: set[str] = field(default_factory=set)  # tables schema commits changed
    backfill: dict[str, set[str]] = field(default_factory=dict)  # table id -> props
    other: set[str] = field(default_factory=set)  # table ids changed by non-backfills


@dataclass
class Prepared:
    """The schema merge's working record, filled in by `prepare` (see `SchemaOutcome`)."""

    merge: SchemaMerge
    schema_id: str | None  # stored merged schema (None while conflicts remain)
    target: Commit  # views keyed by the merged names, with the merged schema id
    source: Commit
    base: MergeBase
    fixed: dict[str, TableState] = field(default_factory=dict)  # decided here
    stats: dict[str, R.TableStats] = field(default_factory=dict)
    discover_target: dict[str, TableState] = field(default_factory=dict)
    conflicts: list[Conflict] = field(default_factory=list)
    resolved: list[Conflict] = field(default_factory=list)
    # Tables whose rows both sides changed across a layout change: merged by the row
    # routes on evolved states, discovered by the walk; their dropped values.
    walk: set[str] = field(default_factory=set)
    dropped: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    # Node keys a decided table no longer has that the target's had (the source deleted
    # them): deletion-only plans, so the merge's checks find edges left pointing at them.
    deletions: dict[str, TablePlan] = field(default_factory=dict)


@dataclass(frozen=True)
class SchemaOutcome:
    """What the schema merge decided, built once by `prepare` and never changed."""

    schema_id: str | None  # stored merged schema (None while conflicts remain)
    # Views keyed by the merged names, with the merged schema id; only the tables the
    # row routes merge (while conflicts remain: the commits as they were).
    target: Commit
    source: Commit
    base: MergeBase
    fixed: Mapping[str, TableState]  # tables decided here: their final states
    stats: Mapping[str, R.TableStats]  # ... and their stats
    # Where the target's changes since the base are found for tables whose target state
    # was evolved to the merged layout.
    discover_target: Mapping[str, TableState]
    conflicts: tuple[Conflict, ...]
    resolved: tuple[Conflict, ...]
    # Tables whose rows both sides changed across a layout change: merged by the row
    # routes on evolved states, discovered by the walk; their dropped values.
    walk: frozenset[str]
    dropped: Mapping[str, dict[str, dict[str, Any]]]
    # Deletion-only plans of node keys the decided tables lost (the merge's checks find
    # edges left pointing at them).
    deletions: Mapping[str, TablePlan]

    @property
    def merged(self) -> bool:
        """Whether the schemas merged (no schema conflict remains): the rows can merge."""
        return self.schema_id is not None


def _outcome(out: Prepared) -> SchemaOutcome:
    return SchemaOutcome(
        out.schema_id,
        out.target,
        out.source,
        out.base,
        fixed=dict(out.fixed),
        stats=dict(out.stats),
        discover_target=dict(out.discover_target),
        conflicts=tuple(out.conflicts),
        resolved=tuple(out.resolved),
        walk=frozenset(out.walk),
        dropped=dict(out.dropped),
        deletions=dict(out.deletions),
    )


def prepare(
    run: MergeRun, base: MergeBase, target: Commit, source: Commit, owner: str
) -> SchemaOutcome:
    """Merge the schemas of `base`, `target` and `source`; tables evolve on Lance
    branches `owner` owns. `run.resolver`'s schema resolutions settle single schema
    conflicts before `run.strategy` (`schema.merge3` choices); it learns which of them
    settled one."""
    repo, strategy, resolver = run.repo, run.strategy, run.resolver
    choices = resolver.schema_choices() if resolver is not None else None
    b_schema = repo.schemas.of(base.commit)
    sides = {OURS: target, THEIRS: source}
    history = {label: _history(repo, base.commit, head) for label, head in sides.items()}
    schemas = {label: _side(repo, base.commit, head) for label, head in sides.items()}
    merged = merge_schemas(b_schema, schemas[OURS], schemas[THEIRS], strategy, choices)
    for check in list(merged.dropped_type_checks):
        keeper = sides[THEIRS if check.dropped_by == OURS else OURS]
        tid = keeper.tables[check.table].table_id
        keeper_label = THEIRS if check.dropped_by == OURS else OURS
        resolve_dropped_type(merged, check, tid in history[keeper_label].data, strategy, choices)
    if resolver is not None:
        resolver.schema_used(merged.chosen)
    out = Prepared(
        merged,
        None,
        target,
        source,
        base,
        conflicts=list(merged.conflicts),
        resolved=list(merged.resolved),
    )
    if out.conflicts:
        return _outcome(out)
    schema = merged.schema
    out.schema_id = repo.schemas.put(schema_text(schema))
    by_id = {
        label: {st.table_id: (n, st) for n, st in head.tables.items()}
        for label, head in sides.items()
    }
    b_by_id = {st.table_id: (n, st) for n, st in base.commit.tables.items()}
    t_tables: dict[str, TableState] = {}
    s_tables: dict[str, TableState] = {}
    b_tables: dict[str, TableState] = {}
    for name in schema.table_names:
        t_type = schema.require(name)
        tid = _table_id(name, merged, sides)
        t_side, s_side, b_side = by_id[OURS].get(tid), by_id[THEIRS].get(tid), b_by_id.get(tid)
        layouts = {
            label: _layout(repo, label, merged, sides[label], side_entry)
            for label, side_entry in ((OURS, t_side), (THEIRS, s_side))
        }
        if b_side is None or t_side is None or s_side is None:
            # New on one side (or restored): that side's table, evolved if it must be.
            label, entry = (OURS, t_side) if t_side is not None else (THEIRS, s_side)
            assert entry is not None
            out.fixed[name] = _evolved(repo, merged, label, entry, t_type, owner)
            out.stats[name] = R.TableStats(
                R.NO_CHANGE if label == OURS else R.POINTER_ADOPTION, discovery="schema"
            )
            continue
        target_state, source_state = t_side[1], s_side[1]
        same_layout = _same_layout(b_schema.table(b_side[0]), t_type) and all(layouts.values())
        t_data, s_data = tid in history[OURS].data, tid in history[THEIRS].data
        out.stats[name] = R.TableStats(R.NO_CHANGE, discovery="schema")
        _list_dropped(repo, merged, name, base, sides, history, tid, out)
        _check_added(repo, merged, name, t_type, target_state, source_state, out)
        if same_layout:
            t_tables[name], s_tables[name], b_tables[name] = (target_state, source_state, b_side[1])
            del out.stats[name]
            continue
        if not s_data:
            out.fixed[name] = _evolved(repo, merged, OURS, t_side, t_type, owner)
        elif not t_data:
            out.fixed[name] = _evolved(repo, merged, THEIRS, s_side, t_type, owner)
            out.stats[name].route = R.POINTER_ADOPTION
            gone = _deletions(repo, t_type, target_state, out.fixed[name])
            if gone is not None:
                out.deletions[name] = gone
        elif history[THEIRS].other.isdisjoint({tid}) and _only_source_added(
            repo, merged, name, b_schema.table(b_side[0]), sides
        ):
            t_tables[name] = _evolved(repo, merged, OURS, t_side, t_type, owner)
            out.discover_target[name] = target_state
            s_tables[name], b_tables[name] = source_state, b_side[1]
            del out.stats[name]
        else:
            # Both changed rows across a layout change: the base, target and source
            # states, each evolved to the merged layout on scratch forks, then the
            # ordinary three-way row merge. The forks share no Lance history that proves
            # their differences, so discovery walks (compares every row).
            t_tables[name] = _evolved(repo, merged, OURS, t_side, t_type, owner)
            s_tables[name] = _evolved(repo, merged, THEIRS, s_side, t_type, owner)
            b_map = _base_mapping(b_schema.table(b_side[0]), tid, merged, schemas, by_id)
            b_tables[name] = _evolve_state(repo, b_side[1], b_map, t_type, owner)
            out.walk.add(name)
            out.dropped[name] = out.stats.pop(name).dropped_values
    out.target = replace(target, tables=t_tables, schema_id=out.schema_id)
    out.source = replace(source, tables=s_tables, schema_id=out.schema_id)
    out.base = replace(base, commit=replace(base.commit, tables=b_tables, schema_id=out.schema_id))
    return _outcome(out)


# --- history ----------------------------------------------------------------------------


def _history(repo: Repo, base: Commit, head: Commit) -> _History:
    h = _History()
    ids = (repo.history.ancestors_since(head.id, {base.id}) | {head.id}) - {base.id}
    for cid in ids:
        commit = repo.commits.get(cid)
        parents = [repo.commits.get(p) for p in commit.parents]
        for name, state in commit.tables.items():
            if any(_state_of(p, state.table_id) == state for p in parents):
                continue
            if SCHEMA_CHANGE_META in commit.meta:
                h.schema.add(state.table_id)
                continue
            h.data.add(state.table_id)
            props = (commit.meta.get("backfill") or {}).get(name)
            if props and len(parents) == 1:
                h.backfill.setdefault(state.table_id, set()).update(props)
            else:
                h.other.add(state.table_id)
    return h


def _state_of(commit: Commit, table_id: str) -> TableState | None:
    for st in commit.tables.values():
        if st.table_id == table_id:
            return st
    return None


def _side(repo: Repo, base: Commit, head: Commit) -> SchemaSide:
    """The side's schema with its renames since `base`: types by table id, properties
    by the `RenameProperty` steps of the schema commits in its history since the base
    (every parent, not only the first: a rename can arrive through a merge, or through
    an earlier step of a `merge_many` fold), parents before children."""
    b_names = {st.table_id: n for n, st in base.tables.items()}
    type_renames = {
        n: b_names[st.table_id]
        for n, st in head.tables.items()
        if st.table_id in b_names and b_names[st.table_id] != n
    }
    current: dict[tuple[str, str], str] = {}  # (table id, current name) -> base name
    for c in _since(repo, base, head):
        if SCHEMA_CHANGE_META not in c.meta or "rename_property" not in c.meta.get(
            SCHEMA_CHANGE_META, []
        ):
            continue
        parent = repo.commits.get(c.parents[0])
        for step in schema_changes(repo.schemas.of(parent), repo.schemas.of(c)):
            if isinstance(step, RenameProperty):
                tid = c.tables[step.table].table_id
                old = current.pop((tid, step.old.name), step.old.name)
                current[(tid, step.new.name)] = old
    prop_renames = {}
    for n, st in head.tables.items():
        for (tid, new), old in current.items():
            if tid == st.table_id and new != old:
                prop_renames[(n, new)] = old
    return SchemaSide(repo.schemas.of(head), type_renames, prop_renames)


def _since(repo: Repo, base: Commit, head: Commit) -> list[Commit]:
    """The commits in `head`'s history since `base` (head included), parents first."""
    ids = (repo.history.ancestors_since(head.id, {base.id}) | {head.id}) - {base.id}
    out: list[Commit] = []
    done: set[str] = set()
    todo: list[tuple[str, bool]] = [(head.id, False)]
    while todo:  # depth-first post-order without recursion (histories can be long)
        cid, expanded = todo.pop()
        if cid in done:
            continue
        commit = repo.commits.get(cid)
        if expanded:
            done.add(cid)
            out.append(commit)
            continue
        todo.append((cid, True))
        todo += [(p, False) for p in commit.parents if p in ids and p not in done]
    return out


# --- layouts ----------------------------------------------------------------------------


def _table_id(name: str, merged: SchemaMerge, sides: dict[str, Commit]) -> str:
    for label, head in sides.items():
        for side_name, (merged_name, _) in merged.columns.get(label, {}).items():
            if merged_name == name and side_name in head.tables:
                return head.tables[side_name].table_id
    for head in sides.values():  # a type restored after a dropped-type conflict
        if name in head.tables:
            return head.tables[name].table_id
    raise MergeError(f"{name}: no side has this table")


def _layout(
    repo: Repo, label: str, merged: SchemaMerge, head: Commit, entry: tuple[str, TableState] | None
) -> bool:
    """Whether the side's table already has the merged layout (same columns)."""
    if entry is None:
        return False
    side_type = repo.schemas.of(head).table(entry[0])
    mapped = merged.columns.get(label, {}).get(entry[0])
    if side_type is None or mapped is None:
        return False
    merged_type = merged.schema.table(mapped[0])
    return mapped[0] == entry[0] and _same_layout(side_type, merged_type)


def _same_layout(a: NodeType | EdgeType | None, b: NodeType | EdgeType | None) -> bool:
    if a is None or b is None:
        return False
    sa, sb = arrow_schema(a), arrow_schema(b)
    return sa.names == sb.names and all(
        fa.type == fb.type and fa.nullable == fb.nullable for fa, fb in zip(sa, sb, strict=True)
    )


def _only_source_added(
    repo: Repo,
    merged: SchemaMerge,
    name: str,
    base_type: NodeType | EdgeType | None,
    sides: dict[str, Commit],
) -> bool:
    """The table's layout differs only by columns the source added (no rename, drop or
    type change anywhere), and the target's layout is the base's."""
    t_type = merged.schema.table(name)
    if base_type is None or t_type is None:
        return False
    target_type = repo.schemas.of(sides[OURS]).table(name)
    if target_type is None or not _same_layout(base_type, target_type):
        return False
    merged_fields = {f.name: f for f in arrow_schema(t_type)}
    # Every base column is still there, as it was (new columns may sit anywhere).
    return all(
        merged_fields.get(f.name) is not None
        and merged_fields[f.name].type == f.type
        and merged_fields[f.name].nullable == f.nullable
        for f in arrow_schema(base_type)
    )


def _evolved(
    repo: Repo,
    merged: SchemaMerge,
    label: str,
    entry: tuple[str, TableState],
    t_type: NodeType | EdgeType,
    owner: str,
) -> TableState:
    """The side's table state in the merged layout, on a Lance branch `owner` owns."""
    side_name, state = entry
    mapping = merged.columns.get(label, {}).get(side_name, (t_type.name, {}))[1]
    return _evolve_state(repo, state, mapping, t_type, owner)


def _evolve_state(
    repo: Repo, state: TableState, mapping: dict[str, str], t_type: NodeType | EdgeType, owner: str
) -> TableState:
    """`state` in `t_type`'s layout (its properties renamed by `mapping`), forked to
    `owner` unless nothing changes."""
    current = repo.tables.open(state).schema
    change = _change(current, mapping, t_type)
    if change.is_empty:
        return state
    if state.owner != owner:
        state = repo.tables.fork(state, owner=owner)
    try:
        return evolve(repo.tables, state, change)
    except LanceCasError:
        # Versions an earlier attempt of this merge (or a lost writer) left on our
        # Lance branch: evolve a fresh fork of the exact state instead.
        return evolve(repo.tables, repo.tables.fork(state, owner=owner), change)


def _base_mapping(
    base_type: NodeType | EdgeType | None,
    tid: str,
    merged: SchemaMerge,
    schemas: dict[str, SchemaSide],
    by_id: dict[str, dict[str, tuple[str, TableState]]],
) -> dict[str, str]:
    """The base's property -> its merged name, through either side's renames (properties
    the merge drops are absent, so they are dropped from the base's state too)."""
    names = {p.name for p in base_type.properties} if base_type is not None else set()
    out: dict[str, str] = {}
    for label in (OURS, THEIRS):
        side_name = by_id[label][tid][0]
        props = merged.columns.get(label, {}).get(side_name, ("", {}))[1]
        for side_prop, merged_prop in props.items():
            base_prop = schemas[label].prop_renames.get((side_name, side_prop), side_prop)
            if base_prop in names:
                out.setdefault(base_prop, merged_prop)
    return out


def _change(
    current: pa.Schema, mapping: dict[str, str], t_type: NodeType | EdgeType
) -> LayoutChange:
    """From the side's physical layout to the merged type's (properties by `mapping`)."""
    fixed = {"id", "src", "dst"}
    renames = {old: new for old, new in mapping.items() if old != new}
    kept = set(mapping) | fixed
    change = LayoutChange(rename=renames)
    change.drop = [n for n in current.names if n not in kept]
    have = {renames.get(n, n) for n in current.names if n in kept}
    for p in t_type.properties:
        if p.name not in have:
            if p.default is None:
                change.add_null.append(arrow_field(p))
            else:
                change.add_filled.append(ColumnFill(arrow_field(p), p.default))
            continue
        old_name = next((o for o, n in renames.items() if n == p.name), p.name)
        before = current.field(old_name)
        if before.type != arrow_type(p.type):
            if not _widens(before.type, arrow_type(p.type)):
                # A strategy took the other side's type: this side's values cannot be
                # cast (Lance refuses), so the column starts over, empty.
                change.drop.append(old_name)
                change.rename.pop(old_name, None)
                change.add_null.append(arrow_field(p).with_nullable(True))
                continue
            change.retype[p.name] = arrow_type(p.type)
        if before.nullable != p.nullable:
            change.nullable[p.name] = p.nullable
    change.index = [c for c in index_columns(t_type) if c not in fixed and c not in have]
    target = arrow_schema(t_type)
    if (current.metadata or {}) != (target.metadata or {}):
        change.metadata = {k.decode(): v.decode() for k, v in (target.metadata or {}).items()}
    return change


def _widens(old: pa.DataType, new: pa.DataType) -> bool:
    """A cast Lance makes in place and that changes no value (I32 -> I64, F32 -> F64)."""
    for kind in (pa.types.is_signed_integer, pa.types.is_unsigned_integer, pa.types.is_floating):
        if kind(old) and kind(new):
            return bool(new.bit_width >= old.bit_width)
    return False


def _deletions(
    repo: Repo, t_type: NodeType | EdgeType, before: TableState, after: TableState
) -> TablePlan | None:
    """The node keys of `before` that `after` lacks, as a plan that only deletes them
    (the checks read only their ids); None for edge types or when none is gone."""
    if not isinstance(t_type, NodeType):
        return None
    old = repo.tables.open(before).to_table(columns=["id"]).column("id")
    new = repo.tables.open(after).to_table(columns=["id"]).column("id")
    gone = pc.filter(old, pc.invert(pc.is_in(old, value_set=new)))
    if not len(gone):
        return None
    schema = arrow_schema(t_type)
    deleted = pa.Table.from_arrays(
        [gone if f.name == "id" else pa.nulls(len(gone), f.type) for f in schema], schema=schema
    )
    empty = schema.empty_table()
    return TablePlan(
        t_type, schema, inserted=empty, updated_old=empty, updated_new=empty, deleted_old=deleted
    )


# --- data checks ------------------------------------------------------------------------


def _list_dropped(
    repo: Repo,
    merged: SchemaMerge,
    name: str,
    base: MergeBase,
    sides: dict[str, Commit],
    history: dict[str, _History],
    tid: str,
    out: Prepared,
) -> None:
    """Values the keeping side changed in a property the other side dropped."""
    for d in merged.dropped_properties:
        if d.table != name:
            continue
        keeper = THEIRS if d.dropped_by == OURS else OURS
        if tid not in history[keeper].data:
            continue
        k_state = _state_of(sides[keeper], tid)
        b_state = _state_of(base.commit, tid)
        if k_state is None or b_state is None:
            continue
        # Dropped against unchanged: the keeper's name is the base's.
        now = repo.tables.open(k_state).to_table(columns=["id", d.prop])
        then = repo.tables.open(b_state).to_table(columns=["id", d.prop])
        joined = now.join(then.rename_columns(["id", "__base"]), "id", join_type="left outer")
        changed = joined.filter(
            pc.invert(pc.fill_null(pc.equal(joined.column(d.prop), joined.column("__base")), False))
        )
        changed = changed.filter(
            pc.or_(pc.is_valid(changed.column(d.prop)), pc.is_valid(changed.column("__base")))
        )
        if changed.num_rows:
            shown = {r["id"]: r[d.prop] for r in changed.slice(0, SHOWN).to_pylist()}
            out.stats.setdefault(name, R.TableStats(R.NO_CHANGE, discovery="schema"))
            out.stats[name].dropped_values[d.prop] = {"count": changed.num_rows, "values": shown}


def _check_added(
    repo: Repo,
    merged: SchemaMerge,
    name: str,
    t_type: NodeType | EdgeType,
    target: TableState,
    source: TableState,
    out: Prepared,
) -> None:
    """A constraint one side added holds for the other side's rows too."""
    for added in merged.added_constraints:
        if added.table != name or added.kind not in ("unique", "range", "check", "not_null"):
            continue
        other = source if added.added_by == OURS else target
        label = THEIRS if added.added_by == OURS else OURS
        side_name = next(
            (sn for sn, (mn, _) in merged.columns.get(label, {}).items() if mn == name), name
        )
        mapping = merged.columns.get(label, {}).get(side_name, (name, {}))[1]
        back = {m: s for s, m in mapping.items()}
        cols = list(added.properties)
        ds = repo.tables.open(other)
        physical = [back.get(c, c) for c in cols if back.get(c, c) in ds.schema.names]
        if len(physical) != len(cols):
            continue  # the other side lacks the column: it gets null or the default
        rows = ds.to_table(columns=["id", *physical]).rename_columns(["id", *cols])
        out.conflicts += _violations(t_type, added.kind, tuple(cols), rows)


def _violations(
    t_type: NodeType | EdgeType, kind: str, cols: tuple[str, ...], rows: pa.Table
) -> list[Conflict]:
    if kind == "unique":
        valid = rows
        for c in cols:
            valid = valid.filter(pc.is_valid(valid.column(c)))
        groups = valid.group_by(list(cols)).aggregate([("id", "count"), ("id", "list")])
        clashes = groups.filter(pc.greater(groups.column("id_count"), 1))
        return [
            Conflict(
                UNIQUE_VIOLATION,
                t_type.name,
                r["id_list"][1],
                f"@unique({', '.join(cols)}) added by one side: "
                f"{', '.join(map(repr, r['id_list']))} share a value",
                cols,
            )
            for r in clashes.slice(0, SHOWN).to_pylist()
        ]
    if kind == "not_null":
        nulls = rows.filter(pc.is_null(rows.column(cols[0])))
        return [
            Conflict(
                VALUE_CONSTRAINT_VIOLATION,
                t_type.name,
                k,
                f"{t_type.name}.{cols[0]} is null but the merged schema requires it",
                cols,
            )
            for k in nulls.column("id").to_pylist()[:SHOWN]
        ]
    return [
        Conflict(VALUE_CONSTRAINT_VIOLATION, t_type.name, v.entity_id, v.message, v.properties)
        for v in value_violations(t_type, rows)[:SHOWN]
    ]


__all__ = ["SchemaOutcome", "prepare"]
