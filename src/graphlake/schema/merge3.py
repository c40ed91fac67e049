"""Three-way merge of two schemas against their merge base's schema (pure, no I/O).

`merge_schemas(base, ours, theirs)` merges what each side changed since `base`:

- disjoint changes combine; identical changes converge; a side that changed nothing
  takes the other side's definition;
- a `schema_conflict` is raised (as a `Conflict` value, never an exception) for: the same
  property added with different definitions or constraints, a property or type renamed
  differently on both sides, a property changed differently on both sides, a property or
  type dropped on one side and renamed or changed on the other, a name both sides give to
  different things;
- `strategy="ours" | "theirs"` resolves each schema conflict by taking that side's
  definition of the item (the property, the constraint, or the whole type);
  `choices={(table, property or None): "ours" | "theirs"}` resolves the conflicts reported
  under that table (and property) alone the same way (per-conflict resolutions: the
  conflict's `resolution` is "manual"), before the strategy; `SchemaMerge.chosen` lists
  the choices that settled a conflict;
- a type dropped on one side and left unchanged on the other merges as the drop, but the
  rows the other side may have inserted in it are data: `SchemaMerge.dropped_type_checks`
  lists what the merge engine must check, and `resolve_dropped_type` applies the outcome.

Identity: a property or type keeps its identity across a rename only when the caller
says so (`SchemaSide.type_renames` / `prop_renames`, collected from the side's
`@renamed_from` steps). Without that, a rename is a drop plus an add, as in `apply`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from graphlake.conflicts import SCHEMA_CONFLICT, Conflict
from graphlake.schema.annotations import KINDS, Kind, canonical
from graphlake.schema.model import (
    Constraint,
    ConstraintKind,
    EdgeType,
    NodeType,
    Property,
    Schema,
    TableType,
)

__all__ = ["SCHEMA_CONFLICT", "SchemaMerge", "SchemaSide", "merge_schemas", "resolve_dropped_type"]

OURS = "ours"  # the merge target
THEIRS = "theirs"  # the merge source
STRATEGIES = (OURS, THEIRS)
MANUAL = "manual"  # Conflict.resolution of a conflict a caller's choice settled
Choices = Mapping[tuple[str, str | None], str]  # (table, property or None) -> OURS | THEIRS

Table = NodeType | EdgeType
_T = TypeVar("_T", bound=TableType)
_M = TypeVar("_M")


@dataclass(frozen=True)
class SchemaSide:
    """One side's schema, with the renames it made since the base (new name -> base name).

    `prop_renames` is keyed by (the side's table name, the side's property name).
    """

    schema: Schema
    type_renames: Mapping[str, str] = field(default_factory=dict)
    prop_renames: Mapping[tuple[str, str], str] = field(default_factory=dict)


@dataclass(frozen=True)
class DroppedTypeCheck:
    """A type one side dropped and the other kept unchanged: the drop stands only if the
    keeping side inserted no rows of it and no edges to it since the base."""

    table: str  # its name on the keeping side
    dropped_by: str  # OURS or THEIRS
    kept: Table  # the keeping side's definition, restored if the drop does not stand
    edges: tuple[EdgeType, ...]  # edge types the dropping side dropped along with it


@dataclass(frozen=True)
class DroppedProperty:
    """A property the merge drops because one side dropped it (the other left it)."""

    table: str  # the table's merged name
    prop: str  # the property's name on the side that kept it
    dropped_by: str


@dataclass(frozen=True)
class AddedConstraint:
    """A constraint one side added: the merged rows of the other side must satisfy it."""

    table: str  # merged table name
    kind: str  # "unique", "range", "check", "card", "not_null"
    properties: tuple[str, ...]
    added_by: str


@dataclass
class SchemaMerge:
    schema: Schema  # the merged schema (text empty: render it with the schema printer)
    conflicts: list[Conflict] = field(default_factory=list)  # unresolved
    resolved: list[Conflict] = field(default_factory=list)  # by a choice or the strategy
    chosen: set[tuple[str, str | None]] = field(default_factory=set)  # choices used
    dropped_type_checks: list[DroppedTypeCheck] = field(default_factory=list)
    dropped_properties: list[DroppedProperty] = field(default_factory=list)
    added_constraints: list[AddedConstraint] = field(default_factory=list)
    # Per side: the side's table name -> (merged table name, {side prop -> merged prop}).
    # Tables and properties the merge drops are absent.
    columns: dict[str, dict[str, tuple[str, dict[str, str]]]] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return bool(self.conflicts or self.resolved)


def merge_schemas(
    base: Schema | SchemaSide,
    ours: Schema | SchemaSide,
    theirs: Schema | SchemaSide,
    strategy: str | None = None,
    choices: Choices | None = None,
) -> SchemaMerge:
    """Merge `ours` (the target) and `theirs` (the source) against `base`."""
    if strategy is not None and strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}")
    if any(v not in STRATEGIES for v in (choices or {}).values()):
        raise ValueError(f"choices take one of {STRATEGIES}")
    b = base.schema if isinstance(base, SchemaSide) else base
    b = Schema(
        {n: _plain(t) for n, t in b.nodes.items()},
        {n: _plain(t) for n, t in b.edges.items()},
    )
    so, st = (s if isinstance(s, SchemaSide) else SchemaSide(s) for s in (ours, theirs))
    return _Merger(b, _Side(OURS, so, b), _Side(THEIRS, st, b), strategy, choices or {}).run()


# --- identities -------------------------------------------------------------------------


class _Side:
    """A side's tables and properties keyed by their identity (the base's name, or their
    own name when added since the base)."""

    def __init__(self, label: str, side: SchemaSide, base: Schema):
        self.label = label
        self.schema = side.schema
        self.tables: dict[str, Table] = {}
        self.table_name: dict[str, str] = {}  # identity -> the side's name
        self.prop_ident: dict[str, dict[str, str]] = {}  # identity -> side prop -> identity
        for name in side.schema.table_names:
            table = side.schema.require(name)
            old = side.type_renames.get(name) or _annotated(table.renamed_from, side.schema, name)
            ident = old if base.table(old) is not None else name
            self.tables[ident] = _plain(table)
            self.table_name[ident] = name
            base_table = base.table(ident)
            idents: dict[str, str] = {}
            for p in table.properties:
                old_p = side.prop_renames.get((name, p.name)) or (
                    p.renamed_from
                    if p.renamed_from and table.property(p.renamed_from) is None
                    else p.name
                )
                known = base_table is not None and base_table.property(old_p) is not None
                idents[p.name] = old_p if known else p.name
            self.prop_ident[ident] = idents

    def idents(self, table: str) -> dict[str, str]:
        return self.prop_ident.get(table, {})


def _annotated(renamed_from: str | None, schema: Schema, name: str) -> str:
    """A type's `@renamed_from(old)` names its identity, unless `old` still exists."""
    if renamed_from and schema.table(renamed_from) is None:
        return renamed_from
    return name


def _plain(t: _T) -> _T:
    """`t` without `@renamed_from` annotations: they say where a name came from in one
    apply, not what the type is, so they neither differ nor survive a merge."""
    props = tuple(replace(p, renamed_from=None) for p in t.properties)
    return replace(t, properties=props, renamed_from=None)


def _base_idents(t: Table | None) -> dict[str, str]:
    return {p.name: p.name for p in t.properties} if t is not None else {}


# --- a table's definition, by identity --------------------------------------------------


@dataclass(frozen=True)
class _Shape:
    """A table in identity terms, so that two sides' versions compare field by field."""

    kind: str  # "node" | "edge"
    props: dict[str, Property]  # identity -> property (named by its identity)
    names: dict[str, str]  # identity -> the name the side gives it
    # Per constraint kind, by its merge rule: "set" a frozenset of column tuples, "keyed"
    # identity -> value, "single" the value or None.
    constraints: dict[ConstraintKind, Any]
    extra: dict[str, Any]  # key / src / dst


def _shape(t: Table | None, idents: Mapping[str, str], type_ident: Mapping[str, str]) -> _Shape:
    if t is None:
        return _Shape("", {}, {}, {k: _by_rule(k, ()) for k in KINDS}, {})
    props = {idents[p.name]: replace(p, name=idents[p.name]) for p in t.properties}
    names = {idents[p.name]: p.name for p in t.properties}
    renamed = [
        replace(c, columns=tuple(idents.get(n, n) for n in c.columns)) for c in t.constraints
    ]
    constraints = {k: _by_rule(k, [c for c in renamed if c.kind == k]) for k in KINDS}
    extra: dict[str, Any]
    if isinstance(t, EdgeType):
        extra = {"src": type_ident.get(t.src, t.src), "dst": type_ident.get(t.dst, t.dst)}
    else:
        extra = {"key": idents.get(t.key, t.key)}
    return _Shape("edge" if isinstance(t, EdgeType) else "node", props, names, constraints, extra)


def _by_rule(kind: ConstraintKind, cs: Iterable[Constraint]) -> Any:
    """One kind's constraints in the form its merge rule compares."""
    rule = KINDS[kind].merge
    if rule == "set":
        return frozenset(c.columns for c in cs)
    if rule == "keyed":
        return {c.columns[0]: c.value for c in cs}
    return next((c.value for c in cs), None)


def _three_way(b: Any, o: Any, t: Any) -> tuple[bool, Any]:
    """(agreed, value): o == t, or only one side changed it."""
    if o == t:
        return True, o
    if o == b:
        return True, t
    if t == b:
        return True, o
    return False, None


def _set_merge(b: frozenset[_M], o: frozenset[_M], t: frozenset[_M]) -> frozenset[_M]:
    """Members both sides kept, plus each side's additions (a removal on either wins)."""
    return (o & t) | (o - b) | (t - b)


# --- the merge --------------------------------------------------------------------------


class _Merger:
    def __init__(
        self, base: Schema, ours: _Side, theirs: _Side, strategy: str | None, choices: Choices
    ):
        self.base, self.o, self.t, self.strategy = base, ours, theirs, strategy
        self.choices = choices
        self.out = SchemaMerge(Schema({}, {}))
        # Type identity per side (the side's name -> identity), for edge endpoints.
        self.type_ident = {
            s.label: {name: ident for ident, name in s.table_name.items()} for s in (ours, theirs)
        }
        self.merged_type_name: dict[str, str] = {}  # type identity -> merged name
        self.prop_names: dict[str, dict[str, str]] = {}  # type -> prop identity -> merged name

    def run(self) -> SchemaMerge:
        order = list(self.base.table_names)
        order += [i for i in self.o.tables if i not in order]
        order += [i for i in self.t.tables if i not in order]
        merged: dict[str, Table] = {}
        for ident in order:
            table = self._table(ident)
            if table is not None:
                merged[ident] = table
        merged = self._fix_endpoints(merged)
        self._check_names(merged)
        nodes = {t.name: t for t in merged.values() if isinstance(t, NodeType)}
        edges = {t.name: t for t in merged.values() if isinstance(t, EdgeType)}
        self.out.schema = Schema(nodes, edges)
        self._columns(merged)
        return self.out

    # -- conflicts

    def _conflict(
        self, table: str, message: str, prop: str | None, b: Any, o: Any, t: Any
    ) -> str | None:
        """Record a schema conflict; returns the side whose definition wins, if resolved."""
        side = _decide(self.out, self.choices, self.strategy, table, prop)
        c = Conflict(
            SCHEMA_CONFLICT,
            table,
            prop or "",
            message,
            (prop,) if prop else (),
            b,
            t,
            o,
            resolution=None if side is None else side[1],
        )
        (self.out.resolved if side else self.out.conflicts).append(c)
        return side[0] if side else None

    # -- tables

    def _keep(self, ident: str, table: Table, label: str) -> Table:
        """Take one side's whole definition of a type."""
        side = self.o if label == OURS else self.t
        self.merged_type_name[ident] = table.name
        self.prop_names[ident] = {i: p for p, i in side.idents(ident).items()}
        return self._with_ident_ends(table, label)

    def _with_ident_ends(self, table: Table, label: str) -> Table:
        if not isinstance(table, EdgeType):
            return table
        idents = self.type_ident[label]
        return replace(
            table, src=idents.get(table.src, table.src), dst=idents.get(table.dst, table.dst)
        )

    def _table(self, ident: str) -> Table | None:
        b = self.base.table(ident)
        o, t = self.o.tables.get(ident), self.t.tables.get(ident)
        if o is None and t is None:
            return None
        if o is None or t is None:
            return self._dropped_or_added(ident, b, o, t)
        if b is None and type(o) is not type(t):
            side = self._conflict(
                ident,
                f"type {ident!r} added as a node type on one side and as an edge type on the other",
                None,
                None,
                _describe_table(o),
                _describe_table(t),
            )
            return self._keep(ident, t, THEIRS) if side == THEIRS else self._keep(ident, o, OURS)
        name_o, name_t = self.o.table_name[ident], self.t.table_name[ident]
        agreed, name = _three_way(ident, name_o, name_t)
        if not agreed:
            side = self._conflict(
                ident,
                f"type {ident!r} renamed differently: "
                f"{name_o!r} on the target, {name_t!r} on the source",
                None,
                _describe_table(b),
                _describe_table(o),
                _describe_table(t),
            )
            name = name_t if side == THEIRS else name_o
        self.merged_type_name[ident] = name
        return self._merge_table(ident, name, b, o, t)

    def _dropped_or_added(
        self, ident: str, b: Table | None, o: Table | None, t: Table | None
    ) -> Table | None:
        kept, side = (o, self.o) if o is not None else (t, self.t)
        assert kept is not None
        if b is None:  # added on one side only
            return self._keep(ident, kept, side.label)
        dropper = _other(side.label)
        b_shape = _shape(b, _base_idents(b), {})
        k_shape = _shape(kept, side.idents(ident), self.type_ident[side.label])
        renamed = side.table_name[ident] != ident
        if k_shape == b_shape and not renamed:
            drop_side = self.o if dropper == OURS else self.t
            dropped_edges = tuple(
                e
                for e in side.schema.edges.values()
                if ident in (e.src, e.dst)
                and self.type_ident[side.label].get(e.name, e.name) not in drop_side.tables
            )
            self.out.dropped_type_checks.append(
                DroppedTypeCheck(kept.name, dropper, kept, dropped_edges)
            )
            return None
        winner = self._conflict(
            ident,
            f"type {ident!r} dropped on the {_where(dropper)} and "
            f"{'renamed' if renamed else 'changed'} on the {_where(side.label)}",
            None,
            _describe_table(b),
            _describe_table(o),
            _describe_table(t),
        )
        return self._keep(ident, kept, side.label) if winner == side.label else None

    def _merge_table(self, ident: str, name: str, b: Table | None, o: Table, t: Table) -> Table:
        bs = _shape(b, _base_idents(b), {})
        os_ = _shape(o, self.o.idents(ident), self.type_ident[OURS])
        ts = _shape(t, self.t.idents(ident), self.type_ident[THEIRS])
        props, names = self._props(ident, bs, os_, ts)
        keep = set(props)
        merged: dict[ConstraintKind, Any] = {}
        for kind, how in KINDS.items():
            b_, o_, t_ = bs.constraints[kind], os_.constraints[kind], ts.constraints[kind]
            if how.merge == "set":
                merged[kind] = self._constraint_set(ident, how, b_, o_, t_, keep)
            elif how.merge == "keyed":
                merged[kind] = self._keyed(ident, how, b_, o_, t_, keep)
            else:
                merged[kind] = self._single(ident, how, b_ if b else None, o_, t_, (b, o, t))
        extra: dict[str, Any] = {}
        for key in sorted(set(os_.extra) | set(ts.extra)):
            bv, ov, tv = bs.extra.get(key), os_.extra.get(key), ts.extra.get(key)
            agreed, v = _three_way(bv if b else None, ov, tv)
            if not agreed:
                side = self._conflict(
                    ident,
                    f"{key} of {ident!r} changed differently",
                    None,
                    _describe_table(b),
                    _describe_table(o),
                    _describe_table(t),
                )
                v = tv if side == THEIRS else ov
            extra[key] = v
        rn = {i: names[i] for i in props}
        self.prop_names[ident] = rn

        constraints: list[Constraint] = []
        for kind, how in KINDS.items():
            value = merged[kind]
            if how.merge == "set":
                constraints += [
                    Constraint(kind, tuple(rn[c] for c in cols))
                    for cols in sorted(value)
                    if set(cols) <= keep
                ]
            elif how.merge == "keyed":
                constraints += [Constraint(kind, (rn[k],), v) for k, v in value.items()]
            elif value is not None:
                constraints.append(Constraint(kind, (), value))
        properties = tuple(replace(p, name=rn[i]) for i, p in props.items())
        common: dict[str, Any] = dict(
            name=name, properties=properties, constraints=canonical(properties, constraints)
        )
        if isinstance(o, EdgeType):
            return EdgeType(**common, src=extra["src"], dst=extra["dst"])
        return NodeType(**common, key=rn.get(extra["key"], extra["key"]))

    # -- properties

    def _props(
        self, table: str, bs: _Shape, os_: _Shape, ts: _Shape
    ) -> tuple[dict[str, Property], dict[str, str]]:
        # Keep the target's column order (the source's if the target changed nothing),
        # then the other side's additions.
        first, second = (ts, os_) if os_ == bs else (os_, ts)
        order = list(first.props) + [i for i in second.props if i not in first.props]
        order += [i for i in bs.props if i not in order]
        props: dict[str, Property] = {}
        names: dict[str, str] = {}
        for ident in order:
            merged = self._prop(table, ident, bs, os_, ts)
            if merged is not None:
                props[ident], names[ident] = merged
        return props, names

    def _prop(
        self, table: str, ident: str, bs: _Shape, os_: _Shape, ts: _Shape
    ) -> tuple[Property, str] | None:
        b, o, t = bs.props.get(ident), os_.props.get(ident), ts.props.get(ident)
        nb, no, nt = bs.names.get(ident), os_.names.get(ident), ts.names.get(ident)
        desc = (_describe_prop(bs, ident), _describe_prop(os_, ident), _describe_prop(ts, ident))
        if b is None:
            if o is not None and t is not None:
                if _describe_prop(os_, ident) != _describe_prop(ts, ident):
                    side = self._conflict(
                        table,
                        f"property {table}.{ident} added on both sides with different definitions",
                        ident,
                        *desc,
                    )
                    return (t, nt) if side == THEIRS else (o, no)  # type: ignore[return-value]
                return o, no  # type: ignore[return-value]
            return (o, no) if o is not None else (t, nt)  # type: ignore[return-value]
        if o is None or t is None:
            keeper, kept, kname = (THEIRS, t, nt) if o is None else (OURS, o, no)
            if kept is None:
                return None  # dropped on both sides
            kname = (ts if o is None else os_).names[ident]  # a kept property has a name
            dropper = OURS if keeper == THEIRS else THEIRS
            if kept == b and kname == nb:
                self.out.dropped_properties.append(DroppedProperty(table, kname, dropper))
                return None
            what = "renamed" if kname != nb else "changed"
            side = self._conflict(
                table,
                f"property {table}.{ident} dropped on the "
                f"{_where(dropper)} and {what} on the {_where(keeper)}",
                ident,
                *desc,
            )
            return (kept, kname) if side == keeper else None
        agreed_n, name = _three_way(nb, no, nt)
        agreed_d, prop = _three_way(b, o, t)
        if not agreed_n or not agreed_d:
            what = "renamed" if not agreed_n else "changed"
            side = self._conflict(
                table, f"property {table}.{ident} {what} differently on both sides", ident, *desc
            )
            if not agreed_n:
                name = nt if side == THEIRS else no
            if not agreed_d:
                prop = t if side == THEIRS else o
        if prop is not None and not prop.nullable and b.nullable:
            self._added(table, "not_null", (ident,), OURS if prop == o and o != b else THEIRS)
        return prop, name

    # -- constraints

    def _constraint_set(
        self,
        table: str,
        how: Kind,
        b: frozenset[tuple[str, ...]],
        o: frozenset[tuple[str, ...]],
        t: frozenset[tuple[str, ...]],
        keep: set[str],
    ) -> frozenset[tuple[str, ...]]:
        """A set-merged kind (`_set_merge`); its additions recorded if the kind says so."""
        merged = _set_merge(b, o, t)
        if how.records_added:
            for cols in sorted(merged - b):
                if set(cols) <= keep:
                    self._added(table, how.kind, cols, OURS if cols in o else THEIRS)
        return merged

    def _keyed(
        self,
        table: str,
        how: Kind,
        b: dict[str, Any],
        o: dict[str, Any],
        t: dict[str, Any],
        keep: set[str],
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in [*o, *(k for k in t if k not in o)]:
            if key not in keep:
                continue
            agreed, v = _three_way(b.get(key), o.get(key), t.get(key))
            if not agreed:
                side = self._conflict(
                    table,
                    f"@{how.kind} on {table}.{key} changed differently on both sides",
                    key,
                    _fmt(b.get(key)),
                    _fmt(o.get(key)),
                    _fmt(t.get(key)),
                )
                v = t.get(key) if side == THEIRS else o.get(key)
            if v is not None:
                out[key] = v
                if v != b.get(key) and how.records_added:
                    self._added(table, how.kind, (key,), OURS if v == o.get(key) else THEIRS)
        return out

    def _single(
        self, table: str, how: Kind, b: Any, o: Any, t: Any, defs: tuple[Table | None, ...]
    ) -> Any:
        """One value per table (`@card`): a change on both sides conflicts like the
        table's other fields."""
        agreed, v = _three_way(b, o, t)
        if not agreed:
            side = self._conflict(
                table,
                f"{how.kind} of {table!r} changed differently",
                None,
                *(_describe_table(d) for d in defs),
            )
            v = t if side == THEIRS else o
        elif v is not None and v != b and how.records_added:
            self._added(table, how.kind, (), OURS if v == o and o != b else THEIRS)
        return v

    def _added(self, table: str, kind: str, cols: tuple[str, ...], by: str) -> None:
        self.out.added_constraints.append(AddedConstraint(table, kind, cols, by))

    # -- after all tables

    def _fix_endpoints(self, merged: dict[str, Table]) -> dict[str, Table]:
        """Edge endpoints are identities so far: name them as merged. An edge whose
        endpoint the other side dropped conflicts; the winner keeps or drops both."""
        for ident, table in list(merged.items()):
            if not isinstance(table, EdgeType):
                continue
            for end in {table.src, table.dst} - set(merged):
                keeper = OURS if ident in self.o.tables else THEIRS
                side = self._conflict(
                    ident,
                    f"edge type {table.name!r} needs node type "
                    f"{end!r}, which the {_where(_other(keeper))} dropped",
                    None,
                    _describe_table(self.base.table(ident)),
                    _describe_table(self.o.tables.get(ident)),
                    _describe_table(self.t.tables.get(ident)),
                )
                node = (self.o if keeper == OURS else self.t).tables.get(end)
                if side == keeper and node is not None:
                    self._keep(end, node, keeper)
                    merged[end] = self._with_ident_ends(node, keeper)
                    self.out.dropped_type_checks = [
                        c for c in self.out.dropped_type_checks if c.kept is not node
                    ]
                else:
                    del merged[ident]
                    self.prop_names.pop(ident, None)
                    break
        return {i: self._named_ends(t) for i, t in merged.items()}

    def _named_ends(self, t: Table) -> Table:
        if not isinstance(t, EdgeType):
            return t
        return replace(
            t,
            src=self.merged_type_name.get(t.src, t.src),
            dst=self.merged_type_name.get(t.dst, t.dst),
        )

    def _check_names(self, merged: dict[str, Table]) -> None:
        seen: set[str] = set()
        for table in merged.values():
            if table.name in seen:
                self._conflict(
                    table.name,
                    f"both sides use the name {table.name!r} for different types",
                    None,
                    None,
                    None,
                    None,
                )
            seen.add(table.name)
            names = [p.name for p in table.properties]
            for n in sorted({n for n in names if names.count(n) > 1}):
                self._conflict(
                    table.name,
                    f"both sides use the name {table.name}.{n} for different properties",
                    n,
                    None,
                    None,
                    None,
                )

    def _columns(self, merged: dict[str, Table]) -> None:
        for side in (self.o, self.t):
            cols: dict[str, tuple[str, dict[str, str]]] = {}
            for ident, table in merged.items():
                if ident not in side.tables:
                    continue
                rn = self.prop_names.get(ident, {})
                cols[side.table_name[ident]] = (
                    table.name,
                    {p: rn[i] for p, i in side.idents(ident).items() if i in rn},
                )
            self.out.columns[side.label] = cols


def _other(side: str) -> str:
    return THEIRS if side == OURS else OURS


def _decide(
    out: SchemaMerge, choices: Choices, strategy: str | None, table: str, prop: str | None
) -> tuple[str, str] | None:
    """(the winning side, the conflict's `resolution`) of the conflict reported under
    `table` (and `prop`): the caller's choice for it, else the strategy; None: it blocks."""
    chosen = choices.get((table, prop))
    if chosen is not None:
        out.chosen.add((table, prop))
        return chosen, MANUAL
    return (strategy, strategy) if strategy else None


def resolve_dropped_type(
    result: SchemaMerge,
    check: DroppedTypeCheck,
    inserted: bool,
    strategy: str | None,
    choices: Choices | None = None,
) -> None:
    """Apply the engine's finding for `check`: `inserted` says whether the keeping side
    inserted rows of the type (or edges to it) since the base. Then the drop conflicts;
    the strategy decides whether the type (and the edges dropped with it) is restored."""
    if not inserted:
        return
    keeper = THEIRS if check.dropped_by == OURS else OURS
    side = _decide(result, choices or {}, strategy, check.table, None)
    c = Conflict(
        SCHEMA_CONFLICT,
        check.table,
        "",
        f"type {check.table!r} dropped on the {_where(check.dropped_by)} while the "
        f"{_where(keeper)} inserted rows of it or edges to it",
        (),
        _describe_table(check.kept),
        _describe_table(check.kept if keeper == THEIRS else None),
        _describe_table(check.kept if keeper == OURS else None),
        resolution=None if side is None else side[1],
    )
    (result.resolved if side else result.conflicts).append(c)
    if side is None or side[0] != keeper:
        return
    s = result.schema
    nodes, edges = dict(s.nodes), dict(s.edges)
    for t in (check.kept, *check.edges):
        # Restored as the keeper has it: its columns map to themselves.
        result.columns.setdefault(keeper, {})[t.name] = (
            t.name,
            {p.name: p.name for p in t.properties},
        )
        if isinstance(t, EdgeType):
            edges[t.name] = t
        else:
            nodes[t.name] = t
    result.schema = Schema(nodes, edges)


# --- descriptions for conflicts ---------------------------------------------------------


def _where(side: str) -> str:
    return "target" if side == OURS else "source"


def _fmt(v: Any) -> Any:
    return None if v is None else {"value": str(v)}


def _describe_prop(shape: _Shape, ident: str) -> dict[str, Any] | None:
    p = shape.props.get(ident)
    if p is None:
        return None
    d: dict[str, Any] = {"name": shape.names[ident], "type": str(p.type), "nullable": p.nullable}
    for k, v in p.__dict__.items():  # e.g. a default, when the model has one
        if k not in ("name", "type", "nullable", "renamed_from") and v is not None:
            d[k] = str(v)
    for kind, how in KINDS.items():
        if how.in_property == "list":
            d[kind] = sorted(list(u) for u in shape.constraints[kind] if ident in u)
        elif how.in_property == "value" and ident in shape.constraints[kind]:
            d[kind] = str(shape.constraints[kind][ident])
    return d


def _describe_table(t: TableType | None) -> dict[str, Any] | None:
    if t is None:
        return None
    d: dict[str, Any] = {
        "name": t.name,
        "kind": "edge" if t.is_edge else "node",
        "properties": {p.name: f"{p.type}{'?' if p.nullable else ''}" for p in t.properties},
    }
    if isinstance(t, EdgeType):
        d.update(src=t.src, dst=t.dst, card=str(t.card) if t.card else None)
    elif isinstance(t, NodeType):
        d["key"] = t.key
    return d
