"""The difference between two schemas as a list of typed steps, each with its cost.

`schema_changes(old, new)` is pure: it reads only the two models. Whether the data
allows a step (no nulls before `T? -> T`, no duplicates before `@unique`) is checked by
the executor (`graphlake.write.schema_apply`); a change no data could make safe (a new
`@key`, another Vector dimension, a cast that can change values) is refused here with
`SchemaChangeRefusedError`.

Renames are explicit: `new: T @renamed_from(old)` / `node New @renamed_from(Old)`. Without
the annotation a rename is a drop plus an add, and the plan shows exactly that.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from graphlake.errors import SchemaChangeRefusedError
from graphlake.schema.annotations import KINDS, kind_of
from graphlake.schema.model import (
    ConstraintKind,
    EdgeType,
    NodeType,
    Property,
    Schema,
    TableType,
    TypeRef,
)

__all__ = [
    "AddConstraint",
    "AddProperty",
    "AddType",
    "ChangeDefault",
    "Cost",
    "DropConstraint",
    "DropProperty",
    "DropType",
    "NarrowProperty",
    "RenameProperty",
    "RenameType",
    "RetypeProperty",
    "Step",
    "StepConstraint",
    "WidenProperty",
    "describe_changes",
    "schema_changes",
]


class Cost(StrEnum):
    """What a step costs, cheapest first."""

    METADATA = "metadata"  # a new table version without data files
    COLUMN = "column"  # writes one column's data (a filled default, a cast, an index)
    CHECK = "check"  # reads every row of the table to validate, writes no data
    REWRITE = "rewrite"  # rewrites whole rows (no supported step does today)


@dataclass(frozen=True)
class StepConstraint:
    """A constraint as a schema diff compares it: its kind (`annotations.KINDS`), what it
    covers, and its detail as text (the range, regex, cardinality or metric)."""

    kind: ConstraintKind
    columns: tuple[str, ...]
    detail: str = ""

    def __str__(self) -> str:
        inner = ", ".join([*self.columns, *([self.detail] if self.detail else [])])
        return f"@{KINDS[self.kind].written}({inner})"


@dataclass(frozen=True)
class Step:
    """One schema change on one table (`table` is the name in the new schema, or the
    dropped table's name)."""

    table: str

    @property
    def kind(self) -> str:
        return _snake(type(self).__name__)

    @property
    def cost(self) -> Cost:
        return Cost.METADATA

    def describe(self) -> str:
        raise NotImplementedError

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "table": self.table,
            "cost": str(self.cost),
            "description": self.describe(),
        }


@dataclass(frozen=True)
class AddType(Step):
    definition: NodeType | EdgeType = field(compare=True, kw_only=True)

    def describe(self) -> str:
        what = "edge" if self.definition.is_edge else "node"
        return f"add {what} type {self.table} (a new, empty table)"


@dataclass(frozen=True)
class DropType(Step):
    definition: NodeType | EdgeType = field(kw_only=True)

    def describe(self) -> str:
        what = "edge" if self.definition.is_edge else "node"
        return f"drop {what} type {self.table} and all its rows"


@dataclass(frozen=True)
class RenameType(Step):
    old: str = field(kw_only=True)

    def describe(self) -> str:
        return f"rename type {self.old} to {self.table}"


@dataclass(frozen=True)
class AddProperty(Step):
    prop: Property = field(kw_only=True)

    @property
    def cost(self) -> Cost:
        # Without a default the new column is all null: Lance writes no data for it.
        return Cost.METADATA if self.prop.default is None else Cost.COLUMN

    def describe(self) -> str:
        fill = "null" if self.prop.default is None else f"{self.prop.default!r}"
        return (
            f"add property {self.table}.{self.prop.name}: {_type(self.prop)} "
            f"(existing rows get {fill})"
        )


@dataclass(frozen=True)
class DropProperty(Step):
    prop: Property = field(kw_only=True)

    def describe(self) -> str:
        return f"drop property {self.table}.{self.prop.name} and its values"


@dataclass(frozen=True)
class RenameProperty(Step):
    old: Property = field(kw_only=True)
    new: Property = field(kw_only=True)

    def describe(self) -> str:
        return f"rename property {self.table}.{self.old.name} to {self.new.name}"


@dataclass(frozen=True)
class WidenProperty(Step):
    """Every old value is a value of the new type: nothing to check."""

    old: Property = field(kw_only=True)
    new: Property = field(kw_only=True)

    @property
    def needs_cast(self) -> bool:
        return _physical(self.old.type) != _physical(self.new.type)

    @property
    def cost(self) -> Cost:
        return Cost.COLUMN if self.needs_cast else Cost.METADATA

    def describe(self) -> str:
        return f"widen {self.table}.{self.new.name} from {_type(self.old)} to {_type(self.new)}"


@dataclass(frozen=True)
class NarrowProperty(Step):
    """Some values of the old type are not values of the new one: every row is checked."""

    old: Property = field(kw_only=True)
    new: Property = field(kw_only=True)

    @property
    def cost(self) -> Cost:
        return Cost.CHECK

    def describe(self) -> str:
        return (
            f"narrow {self.table}.{self.new.name} from {_type(self.old)} to "
            f"{_type(self.new)} (checks every row)"
        )


@dataclass(frozen=True)
class RetypeProperty(Step):
    """A type change no apply performs (e.g. I64 -> I32): only `describe_changes` (a
    diff between any two commits, in either direction) reports it."""

    old: Property = field(kw_only=True)
    new: Property = field(kw_only=True)

    @property
    def cost(self) -> Cost:
        return Cost.REWRITE

    def describe(self) -> str:
        return f"retype {self.table}.{self.new.name} from {_type(self.old)} to {_type(self.new)}"


@dataclass(frozen=True)
class ChangeDefault(Step):
    old: Property = field(kw_only=True)
    new: Property = field(kw_only=True)

    def describe(self) -> str:
        return (
            f"change the default of {self.table}.{self.new.name} from "
            f"{self.old.default!r} to {self.new.default!r} (existing rows keep theirs)"
        )


@dataclass(frozen=True)
class AddConstraint(Step):
    constraint: StepConstraint = field(kw_only=True)

    @property
    def cost(self) -> Cost:
        # Search indexes (ANN, full-text) are built by `optimize`, never by a schema change.
        return Cost(KINDS[self.constraint.kind].add_cost)

    def describe(self) -> str:
        return f"add {self.constraint} on {self.table} ({KINDS[self.constraint.kind].add_note})"


@dataclass(frozen=True)
class DropConstraint(Step):
    constraint: StepConstraint = field(kw_only=True)

    def describe(self) -> str:
        return f"drop {self.constraint} on {self.table}"


# --- the diff ----------------------------------------------------------------------------


def describe_changes(old: Schema, new: Schema) -> list[Step]:
    """The changes between the schemas of any two commits, in either direction, for a
    diff: never refuses (a change apply would refuse is a `RetypeProperty`, or a drop
    plus an add), and follows `@renamed_from` both ways (b's annotations, and a's
    when b is older)."""
    return schema_changes(old, new, strict=False)


def schema_changes(old: Schema, new: Schema, *, strict: bool = True) -> list[Step]:
    """The steps that turn `old` into `new`, in the order they can be executed: type
    renames, then per surviving table its property and constraint changes, then new
    types, then dropped types. Raises `SchemaChangeRefusedError` for a change no data
    could make safe. An empty list means the schemas describe the same graph."""
    renames = _type_renames(old, new, strict)  # new name -> old name
    steps: list[Step] = []
    for new_name, old_name in renames.items():
        steps.append(RenameType(new_name, old=old_name))
    kept = {n: renames.get(n, n) for n in new.table_names if renames.get(n, n) in old.table_names}
    for new_name, old_name in kept.items():
        steps += _table_changes(old.require(old_name), new.require(new_name), renames, strict)
    for name in new.table_names:
        if name not in kept:
            steps.append(AddType(name, definition=new.require(name)))
    gone = set(old.table_names) - set(kept.values())
    for name in old.table_names:
        if name in gone:
            steps.append(DropType(name, definition=old.require(name)))
    return steps


def _type_renames(old: Schema, new: Schema, strict: bool) -> dict[str, str]:
    if not strict:
        return _lenient_renames(
            {n: new.require(n).renamed_from for n in new.table_names},
            {n: old.require(n).renamed_from for n in old.table_names},
            {n: old.require(n).is_edge for n in old.table_names},
            {n: new.require(n).is_edge for n in new.table_names},
        )
    renames: dict[str, str] = {}
    for name in new.table_names:
        t = new.require(name)
        source = t.renamed_from
        if source is None or name in old.table_names:
            continue  # no rename, or one an earlier apply already made
        if source not in old.table_names:
            raise SchemaChangeRefusedError(
                f"{name} @renamed_from({source}): the current schema has no type {source}"
            )
        if source in new.table_names:
            raise SchemaChangeRefusedError(
                f"{name} @renamed_from({source}): {source} is still declared; "
                f"a type can be renamed only once"
            )
        if old.require(source).is_edge != t.is_edge:
            raise SchemaChangeRefusedError(
                f"{name} @renamed_from({source}): a rename cannot turn a node type into an "
                f"edge type or back"
            )
        renames[name] = source
    return renames


def _lenient_renames(
    new: dict[str, str | None],
    old: dict[str, str | None],
    old_kind: dict[str, bool],
    new_kind: dict[str, bool],
) -> dict[str, str]:
    """new name -> old name for every rename either side's annotations make sense of."""
    renames: dict[str, str] = {}
    for name, source in new.items():  # forward: new `@renamed_from(old)`
        if (
            source
            and name not in old
            and source in old
            and source not in new
            and old_kind[source] == new_kind[name]
            and source not in renames.values()
        ):
            renames[name] = source
    for name, target in old.items():  # backward: old `@renamed_from(new)`, b older than a
        if (
            target
            and name not in new
            and target in new
            and target not in old
            and target not in renames
            and name not in renames.values()
            and old_kind[name] == new_kind[target]
        ):
            renames[target] = name
    return renames


def _table_changes(
    old: NodeType | EdgeType,
    new: NodeType | EdgeType,
    type_renames: dict[str, str],
    strict: bool = True,
) -> list[Step]:
    name = new.name
    if not strict and (
        old.is_edge != new.is_edge
        or _endpoints_moved(old, new, type_renames)
        or _key_changed(old, new)
    ):
        # A table apply could never turn into the other: a drop and an add.
        return [DropType(old.name, definition=old), AddType(name, definition=new)]
    if old.is_edge != new.is_edge:
        raise SchemaChangeRefusedError(
            f"{name} changes from a {_kind(old)} type to a {_kind(new)} type; drop it and "
            f"add a type of another name instead"
        )
    if isinstance(old, EdgeType) and isinstance(new, EdgeType):
        _check_endpoints(old, new, type_renames)
    prop_renames = _property_renames(old, new, strict)  # new name -> old name
    if strict and isinstance(old, NodeType) and isinstance(new, NodeType):
        _check_key(old, new, prop_renames)
    steps: list[Step] = []
    new_names = set(new.property_names)
    kept_old = {prop_renames.get(n, n) for n in new_names}
    for p in old.properties:
        if p.name not in kept_old:
            steps.append(DropProperty(name, prop=p))
    for p in new.properties:
        source = prop_renames.get(p.name, p.name)
        before = old.property(source)
        if before is None:
            steps.append(_add_property(name, p) if strict else AddProperty(name, prop=p))
            continue
        if source != p.name:
            steps.append(RenameProperty(name, old=before, new=p))
        steps += _property_changes(name, before, p, strict)
    steps += _constraint_changes(old, new, prop_renames)
    return steps


def _property_renames(old: TableType, new: TableType, strict: bool) -> dict[str, str]:
    if not strict:
        kinds_old = {p.name: True for p in old.properties}
        kinds_new = {p.name: True for p in new.properties}
        return _lenient_renames(
            {p.name: p.renamed_from for p in new.properties},
            {p.name: p.renamed_from for p in old.properties},
            kinds_old,
            kinds_new,
        )
    renames: dict[str, str] = {}
    for p in new.properties:
        source = p.renamed_from
        if source is None or old.property(p.name) is not None:
            continue
        where = f"{new.name}.{p.name} @renamed_from({source})"
        if old.property(source) is None:
            raise SchemaChangeRefusedError(
                f"{where}: the current schema has no property {old.name}.{source}"
            )
        if new.property(source) is not None:
            raise SchemaChangeRefusedError(f"{where}: {source} is still declared")
        if source in renames.values():
            raise SchemaChangeRefusedError(f"{where}: {source} is renamed twice")
        renames[p.name] = source
    return renames


def _check_endpoints(old: EdgeType, new: EdgeType, type_renames: dict[str, str]) -> None:
    for end in ("src", "dst"):
        before, after = getattr(old, end), getattr(new, end)
        if type_renames.get(after, after) != before:
            raise SchemaChangeRefusedError(
                f"edge type {new.name}: its {'source' if end == 'src' else 'destination'} "
                f"changes from {before} to {after}; existing edges would point at the wrong "
                f"type. Add a new edge type instead"
            )


def _endpoints_moved(old: TableType, new: TableType, type_renames: dict[str, str]) -> bool:
    if not (isinstance(old, EdgeType) and isinstance(new, EdgeType)):
        return False
    return any(
        type_renames.get(getattr(new, end), getattr(new, end)) != getattr(old, end)
        for end in ("src", "dst")
    )


def _key_changed(old: TableType, new: TableType) -> bool:
    if not (isinstance(old, NodeType) and isinstance(new, NodeType)):
        return False
    before, after = old.property(old.key), new.property(new.key)
    return before is None or after is None or before.type != after.type


def _check_key(old: NodeType, new: NodeType, renames: dict[str, str]) -> None:
    if renames.get(new.key, new.key) != old.key:
        raise SchemaChangeRefusedError(
            f"node type {new.name}: the @key changes from {old.key} to {new.key}; every row "
            f"id would change. Keep the key and add {new.key} as a new (@unique) property"
        )
    before, after = old.property(old.key), new.property(new.key)
    assert before is not None and after is not None
    if before.type != after.type:
        raise SchemaChangeRefusedError(
            f"node type {new.name}: key property {new.key} changes type from {before.type} "
            f"to {after.type}; a key cannot change type. Add a new property instead"
        )


def _add_property(table: str, p: Property) -> AddProperty:
    if not p.nullable and p.default is None:
        raise SchemaChangeRefusedError(
            f"new property {table}.{p.name} is required but existing rows have no value: "
            f"declare it nullable ({p.name}: {p.type}?) or give it @default(value)"
        )
    return AddProperty(table, prop=p)


def _property_changes(table: str, old: Property, new: Property, strict: bool = True) -> list[Step]:
    steps: list[Step] = []
    if (old.type, old.nullable) != (new.type, new.nullable):
        refused = _type_relation(old.type, new.type) == "refused"
        steps.append(
            RetypeProperty(table, old=old, new=new)
            if refused and not strict
            else _retype(table, old, new)
        )
    if old.default != new.default:
        steps.append(ChangeDefault(table, old=old, new=new))
    return steps


def _retype(table: str, old: Property, new: Property) -> Step:
    where = f"{table}.{new.name}"
    relation = _type_relation(old.type, new.type)
    if relation == "refused":
        if old.type.kind == "Vector" and new.type.kind == "Vector":
            why = f"a Vector's dimension cannot change ({old.type} -> {new.type})"
        else:
            why = f"{old.type} -> {new.type} can change or lose values"
        raise SchemaChangeRefusedError(
            f"{where}: {why}; add a new property (and backfill it) instead"
        )
    narrowing = relation == "narrow" or (old.nullable and not new.nullable)
    if narrowing:
        return NarrowProperty(table, old=old, new=new)
    return WidenProperty(table, old=old, new=new)


# Casts where every value of the old type is exactly a value of the new one and Lance's
# `alter_columns` performs the cast (it refuses e.g. I64 -> F64, which could round anyway).
_WIDENING_CASTS = {("I32", "I64"), ("U32", "U64"), ("U32", "I64"), ("F32", "F64")}


def _type_relation(old: TypeRef, new: TypeRef) -> str:
    """ "same", "widen" (no value changes), "narrow" (values must be checked) or
    "refused"."""
    if old == new:
        return "same"
    if (old.kind, new.kind) in _WIDENING_CASTS:
        return "widen"
    # Enums are stored as strings: adding values or dropping the enum is free, removing
    # values or turning a String into an enum needs every row checked.
    if old.kind == "Enum" and new.kind == "Enum":
        grows = set(old.values or ()) <= set(new.values or ())
        return "widen" if grows else "narrow"
    if (old.kind, new.kind) == ("Enum", "String"):
        return "widen"
    if (old.kind, new.kind) == ("String", "Enum"):
        return "narrow"
    return "refused"


def _constraint_changes(old: TableType, new: TableType, renames: dict[str, str]) -> list[Step]:
    # Compare under the new names, so a renamed property keeps its constraints.
    to_new = {source: target for target, source in renames.items()}
    before = _constraints(old, to_new)
    after = _constraints(new, {})
    steps: list[Step] = [DropConstraint(new.name, constraint=c) for c in before if c not in after]
    steps += [AddConstraint(new.name, constraint=c) for c in after if c not in before]
    return steps


def _constraints(t: TableType, rename: dict[str, str]) -> list[StepConstraint]:
    return [
        StepConstraint(c.kind, tuple(rename.get(n, n) for n in c.columns), kind_of(c).detail(c))
        for c in t.constraints
    ]


def _physical(t: TypeRef) -> str:
    # Enum values are stored as strings: String <-> enum is no storage change.
    return "String" if t.kind == "Enum" else str(t)


def _type(p: Property) -> str:
    return f"{p.type}{'?' if p.nullable else ''}"


def _kind(t: TableType) -> str:
    return "edge" if t.is_edge else "node"


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(name))
