"""`Graph.apply_schema`: a schema change published as one commit, like a write.

1. parse the new `.pg` text and diff it with the branch head's schema
   (`schema.changes`: typed steps, refusals);
2. check the steps that narrow or constrain against the head's rows, in memory and in
   the new layout (nothing is written if any row violates them);
3. inside one `Publication` (recovery record, fault points `schema.*`): evolve each
   changed Lance table on a Lance branch the graph branch owns (`storage.evolve`:
   column adds, renames, casts, drops; no row rewrite), create tables for new types,
   leave dropped types out of the commit, store the new schema text, CAS the ref.

A lost race (another writer moved the branch) starts over on the new head, bounded.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import lance
import pyarrow as pa
import pyarrow.compute as pc
from ulid import ULID

from graphlake.catalog.commits import Commit, TableState
from graphlake.catalog.intents import MergeIntents
from graphlake.constraints.cardinality import card_violations
from graphlake.constraints.unique import unique_violations
from graphlake.constraints.values import value_violations
from graphlake.errors import (
    SchemaDataError,
    SchemaDropError,
    SchemaError,
    SchemaUnchangedError,
)
from graphlake.recovery.publication import Publication
from graphlake.retry import HeadMoved, retry_while_head_moves
from graphlake.schema.arrow import arrow_field, arrow_schema, arrow_type
from graphlake.schema.changes import (
    AddProperty,
    Cost,
    DropProperty,
    DropType,
    RenameProperty,
    RenameType,
    Step,
    schema_changes,
)
from graphlake.schema.model import MAX_SCHEMA_BYTES, EdgeType, NodeType, Schema
from graphlake.schema.parser import parse_schema
from graphlake.storage.evolve import ColumnFill, LayoutChange, evolve
from graphlake.storage.plan import TablePlan
from graphlake.storage.tables import LanceCasError, index_columns

if TYPE_CHECKING:
    from graphlake.catalog.refs import RefEntry
    from graphlake.repo import Repo

MAX_ATTEMPTS = 10
MAX_KEYS_SHOWN = 20
_COST_ORDER = list(Cost)


@dataclass
class SchemaPlan:
    """What `apply_schema` does (or did): the steps and, once published, the commit."""

    branch: str
    base: str  # the head commit the plan was made on
    steps: list[Step]
    dry_run: bool
    commit: Commit | None = None
    schema_id: str = ""
    # Values the plan drops: "Table.prop" -> non-null values, "Table" -> rows (a type).
    dropped_values: dict[str, int] = field(default_factory=dict)
    # A dropped and an added property of one type in one table: likely a rename.
    suggestions: list[str] = field(default_factory=list)

    @property
    def cost(self) -> Cost:
        """The most expensive step's cost (metadata for an empty plan)."""
        return max((s.cost for s in self.steps), key=_COST_ORDER.index, default=Cost.METADATA)

    @property
    def changed(self) -> bool:
        return bool(self.steps)

    def to_json(self) -> dict[str, Any]:
        return {
            "branch": self.branch,
            "base": self.base,
            "dry_run": self.dry_run,
            "cost": str(self.cost),
            "steps": [s.to_json() for s in self.steps],
            "commit": self.commit.id if self.commit else None,
            "dropped_values": dict(self.dropped_values),
            "suggestions": list(self.suggestions),
        }


def apply_schema(
    repo: Repo,
    pg_text: str,
    branch: str,
    *,
    message: str | None = None,
    dry_run: bool = False,
    allow_drop: bool = False,
) -> SchemaPlan:
    if not isinstance(pg_text, str):
        raise SchemaError("the schema must be .pg text")
    if len(pg_text.encode()) > MAX_SCHEMA_BYTES:
        raise SchemaError(f"schema text is larger than {MAX_SCHEMA_BYTES} bytes")
    repo.branch_ref(branch)  # an unknown branch or a commit revision fails before parsing
    new = parse_schema(pg_text)
    if dry_run:
        _, head = repo.branch_head(branch)
        steps = _checked_steps(repo, head, new)
        dropped, hints = _losses(repo, head, steps)
        return SchemaPlan(
            branch, head.id, steps, dry_run=True, dropped_values=dropped, suggestions=hints
        )
    return retry_while_head_moves(
        lambda: _apply_once(repo, branch, new, message, allow_drop),
        branch=branch,
        what="schema change",
        attempts=MAX_ATTEMPTS,
        also_retry=(HeadMoved,),
        before_attempt=MergeIntents(repo.store).writer_gate(branch),
    )


def _checked_steps(repo: Repo, head: Commit, new: Schema) -> list[Step]:
    old = repo.schemas.of(head)
    steps = schema_changes(old, new)
    _check_data(repo, head, old, new, steps)
    return steps


def _apply_once(
    repo: Repo, branch: str, new: Schema, message: str | None, allow_drop: bool
) -> SchemaPlan:
    ref, head = repo.branch_head(branch)
    steps = _checked_steps(repo, head, new)
    if not steps:
        raise SchemaUnchangedError(
            f"the schema equals the one on {branch!r} (head {head.id[:12]}); nothing was published"
        )
    old = repo.schemas.of(head)
    dropped, hints = _losses(repo, head, steps)
    losing = {what: n for what, n in dropped.items() if n}
    if losing and not allow_drop:
        raise SchemaDropError(_drop_message(branch, losing, hints))
    with Publication(repo, "schema", branch, ref) as pub:
        tables = _apply_tables(repo, branch, ref, head, old, new, steps, pub)
        sid = repo.schemas.put(new.text)
        commit = Commit.create(
            parents=(head.id,),
            message=message or _default_message(steps),
            schema_id=sid,
            tables=tables,
            meta={"schema_change": [s.kind for s in steps]},
            checks_id=head.checks_id,
        )
        pub.publish(commit)
    return SchemaPlan(
        branch,
        head.id,
        steps,
        dry_run=False,
        commit=commit,
        schema_id=sid,
        dropped_values=dropped,
        suggestions=hints,
    )


def _losses(repo: Repo, head: Commit, steps: list[Step]) -> tuple[dict[str, int], list[str]]:
    """How many values each drop removes (non-null values of a property: one column
    read; rows of a type: metadata), and the drop + add pairs that look like a rename
    (same table, same type) with the `@renamed_from` that would keep the values."""
    dropped: dict[str, int] = {}
    for step in steps:
        if isinstance(step, DropProperty):
            ds = repo.tables.open(head.tables[step.table])
            # Lance counts under a filter column by column, without holding the column
            # (a dropped Vector column of 1M rows is never materialised).
            nonnull = ds.count_rows(filter=f"`{step.prop.name}` IS NOT NULL")
            dropped[f"{step.table}.{step.prop.name}"] = nonnull
        elif isinstance(step, DropType) and step.table in head.tables:
            dropped[step.table] = repo.tables.open(head.tables[step.table]).count_rows()
    hints = []
    for drop in (s for s in steps if isinstance(s, DropProperty)):
        n = dropped.get(f"{drop.table}.{drop.prop.name}", 0)
        for add in (s for s in steps if isinstance(s, AddProperty)):
            if n and add.table == drop.table and add.prop.type == drop.prop.type:
                hints.append(
                    f"{add.table}.{add.prop.name} looks like a rename of "
                    f"{drop.table}.{drop.prop.name}, whose {n} values this plan drops: "
                    f"declare `{add.prop.name}: ... @renamed_from({drop.prop.name})` "
                    f"to keep them"
                )
    return dropped, hints


def _drop_message(branch: str, losing: dict[str, int], hints: list[str]) -> str:
    what = ", ".join(
        f"{n} {'value' if '.' in name else 'row'}{'' if n == 1 else 's'} of {name}"
        for name, n in losing.items()
    )
    text = (
        f"this schema change would drop {what} on {branch!r}; nothing was published. "
        f'Pass allow_drop=True (CLI --allow-drop, HTTP "allow_drop": true) to drop '
        f"them"
    )
    return text + "".join(f"; hint: {h}" for h in hints)


def _default_message(steps: list[Step]) -> str:
    first = steps[0].describe()
    more = f" (+{len(steps) - 1} more)" if len(steps) > 1 else ""
    return f"schema: {first}{more}"


# --- table effects ----------------------------------------------------------------------


def _apply_tables(
    repo: Repo,
    branch: str,
    ref: RefEntry,
    head: Commit,
    old: Schema,
    new: Schema,
    steps: list[Step],
    pub: Publication,
) -> dict[str, TableState]:
    type_renames = {s.table: s.old for s in steps if isinstance(s, RenameType)}

    def still_current() -> bool:
        return repo.refs.head(branch) == ref

    out: dict[str, TableState] = {}
    for name in new.table_names:
        t = new.require(name)
        source = type_renames.get(name, name)
        before = old.table(source)
        if before is None:  # a new type: a new, empty table
            out[name] = repo.tables.create(
                f"{name}-{ULID()}".lower(), arrow_schema(t), index_columns(t), ref.incarnation
            )
            pub.effect()
            continue
        change = _layout_change(before, t, steps)
        state = head.tables[source]
        if not change.is_empty:
            state = _evolve(repo, state, change, ref.incarnation, still_current)
            pub.effect()
        out[name] = state
    return out


def _evolve(
    repo: Repo, state: TableState, change: LayoutChange, owner: str, still_current: Any
) -> TableState:
    """Like `publish.apply_plan`: fork on first touch; a moved Lance branch means either
    the ref moved (start over) or a lost writer's versions (fork and redo)."""
    if state.owner != owner:
        state = repo.tables.fork(state, owner=owner)
    try:
        return evolve(repo.tables, state, change)
    except LanceCasError:
        if not still_current():
            raise HeadMoved() from None
        return evolve(repo.tables, repo.tables.fork(state, owner=owner), change)


def _layout_change(
    old: NodeType | EdgeType, new: NodeType | EdgeType, steps: list[Step]
) -> LayoutChange:
    renames = {
        s.old.name: s.new.name
        for s in steps
        if isinstance(s, RenameProperty) and s.table == new.name
    }
    back = {v: k for k, v in renames.items()}
    change = LayoutChange(rename=renames)
    kept = {back.get(p.name, p.name) for p in new.properties}
    change.drop = [p.name for p in old.properties if p.name not in kept]
    for p in new.properties:
        before = old.property(back.get(p.name, p.name))
        if before is None:
            if p.default is None:
                change.add_null.append(arrow_field(p))
            else:
                change.add_filled.append(ColumnFill(arrow_field(p), p.default))
            continue
        if arrow_type(before.type) != arrow_type(p.type):
            change.retype[p.name] = arrow_type(p.type)
        if before.nullable != p.nullable:
            change.nullable[p.name] = p.nullable
    had = {renames.get(c, c) for c in index_columns(old)}
    change.index = [c for c in index_columns(new) if c not in had]
    if old.name != new.name:
        change.metadata = {
            k.decode(): v.decode() for k, v in (arrow_schema(new).metadata or {}).items()
        }
    return change


# --- checking the data ------------------------------------------------------------------


def _check_data(repo: Repo, head: Commit, old: Schema, new: Schema, steps: list[Step]) -> None:
    """Raise `SchemaDataError` naming up to 20 rows if the head's data breaks a narrowing
    or a new constraint. Only tables with such steps are read."""
    checked = {s.table for s in steps if s.cost == Cost.CHECK}
    if not checked:
        return
    type_renames = {s.table: s.old for s in steps if isinstance(s, RenameType)}
    rows = {
        name: _rows_in_new_layout(repo, head, old, new, name, type_renames, steps)
        for name in checked
    }
    plans = {name: _as_inserted(new.require(name), r) for name, r in rows.items()}
    for name in list(checked):
        t = new.require(name)
        if isinstance(t, EdgeType) and t.card is not None and t.card.min > 0 and t.src not in plans:
            src = _rows_in_new_layout(
                repo, head, old, new, t.src, type_renames, steps, columns=["id"]
            )
            plans[t.src] = _as_inserted(new.require(t.src), src)
    with tempfile.TemporaryDirectory(prefix="graphlake-schema-") as scratch:
        for name in sorted(checked):
            _raise_violations(name, _violations(new.require(name), plans, scratch))


def _violations(
    t: NodeType | EdgeType, plans: dict[str, TablePlan], scratch: str
) -> list[tuple[str, str]]:
    """(key, message) of every row that breaks `t`'s narrowed types or constraints."""
    plan = plans[t.name]
    rows = plan.inserted
    found: list[tuple[str, str]] = []
    for p in t.properties:
        col = rows.column(p.name)
        if not p.nullable and col.null_count:
            ids = rows.column("id").filter(pc.is_null(col)).to_pylist()
            found += [(k, f"{t.name}.{p.name} is null") for k in ids]
    found += [(v.entity_id, v.message) for v in value_violations(t, rows)]
    if t.uniques:
        found += [(v.entity_id, v.message) for v in unique_violations(plan, _empty(t, scratch))]
    if isinstance(t, EdgeType) and t.card is not None:
        found += [
            (v.entity_id, v.message) for v in card_violations(plan, plans, _empty(t, scratch))
        ]
    return found


def _raise_violations(table: str, found: list[tuple[str, str]]) -> None:
    if not found:
        return
    keys = list(dict.fromkeys(k for k, _ in found))
    shown = keys[:MAX_KEYS_SHOWN]
    more = f" and {len(keys) - len(shown)} more" if len(keys) > len(shown) else ""
    raise SchemaDataError(
        f"{table}: {len(keys)} row(s) break the new schema ({found[0][1]}): "
        f"{', '.join(map(repr, shown))}{more}; nothing was published",
        shown,
    )


def _rows_in_new_layout(
    repo: Repo,
    head: Commit,
    old: Schema,
    new: Schema,
    name: str,
    type_renames: dict[str, str],
    steps: list[Step],
    columns: list[str] | None = None,
) -> pa.Table:
    """The head's rows of table `name` (new name) as the new schema lays them out:
    renamed columns under their new names, new columns filled with default or null,
    widened columns cast. Nullability is not enforced here (it is checked)."""
    t = new.require(name)
    source = type_renames.get(name, name)
    before = old.table(source)
    target = arrow_schema(t)
    if before is None:  # a new type has no rows
        return target.empty_table()
    renames = {
        s.new.name: s.old.name for s in steps if isinstance(s, RenameProperty) and s.table == name
    }
    ds = repo.tables.open(head.tables[source])
    data = ds.to_table()
    arrays: list[pa.Array | pa.ChunkedArray] = []
    fields: list[pa.Field] = []
    for f in target:
        if columns is not None and f.name not in columns:
            continue
        origin = renames.get(f.name, f.name)
        if origin in data.column_names:
            arrays.append(data.column(origin).cast(f.type))
        else:
            p = t.property(f.name)
            value = p.default if p is not None else None
            arrays.append(pa.array([value] * data.num_rows, f.type))
        fields.append(f.with_nullable(True))
    return pa.table(arrays, schema=pa.schema(fields))


def _as_inserted(t: NodeType | EdgeType, rows: pa.Table) -> TablePlan:
    none = rows.schema.empty_table()
    return TablePlan(t, rows.schema, rows, none, none, none)


def _empty(t: NodeType | EdgeType, scratch: str) -> lance.LanceDataset:
    """An empty table of `t`: every row is checked as if inserted into it."""
    path = f"{scratch}/{t.name}-{ULID()}.lance"
    return lance.write_dataset(arrow_schema(t).empty_table(), path)


__all__ = ["MAX_SCHEMA_BYTES", "SchemaPlan", "apply_schema"]
