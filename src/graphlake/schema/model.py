"""The parsed schema: node and edge types, their properties and constraints.

These are plain immutable values; `parser.parse_schema` builds them from `.pg` text and
`arrow.arrow_schema` maps a table type to its Arrow schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal

from graphlake.errors import UnknownTableError

# What a property's type is: a scalar kind or one of the four shaped kinds.
TypeKind = Literal[
    "String",
    "Bool",
    "I32",
    "I64",
    "U32",
    "U64",
    "F32",
    "F64",
    "Date",
    "DateTime",
    "Vector",
    "Blob",
    "List",
    "Enum",
]

# A table is a node type or an edge type (readers take it to refuse the other kind).
TableKind = Literal["node", "edge"]

# Scalar kinds as written in the schema language.
SCALARS: tuple[TypeKind, ...] = (
    "String",
    "Bool",
    "I32",
    "I64",
    "U32",
    "U64",
    "F32",
    "F64",
    "Date",
    "DateTime",
)
INTEGER_KINDS = ("I32", "I64", "U32", "U64")
FLOAT_KINDS = ("F32", "F64")
NUMERIC_KINDS = INTEGER_KINDS + FLOAT_KINDS
# Kinds that may carry `@key` (their value becomes the string row id).
KEY_KINDS = ("String", *INTEGER_KINDS, "Date")
# Distance metrics of a Vector `@index` (the first is the default).
VECTOR_METRICS = ("cosine", "l2", "dot")

# Physical columns every table has, and names a schema may not use.
NODE_COLUMNS = ("id",)
EDGE_COLUMNS = ("id", "src", "dst")
RESERVED_NAMES = frozenset({"id", "src", "dst"})
RESERVED_PREFIX = "_row"
# The largest schema text `apply_schema` (and its CLI and HTTP forms) takes: schemas are
# small, and this bounds what one request makes the parser read.
MAX_SCHEMA_BYTES = 1 << 20


@dataclass(frozen=True)
class TypeRef:
    """A property type. `kind` is a scalar kind, or "Vector", "Blob", "List", "Enum"."""

    kind: TypeKind
    dim: int | None = None  # Vector(dim)
    item: TypeRef | None = None  # [T]
    values: tuple[str, ...] | None = None  # enum(a, b, ...)

    def __str__(self) -> str:
        if self.kind == "Vector":
            return f"Vector({self.dim})"
        if self.kind == "List":
            return f"[{self.item}]"
        if self.kind == "Enum":
            return f"enum({', '.join(self.values or ())})"
        return self.kind


# A `@default(value)`: int/float for numeric kinds, bool, str (String and enum), `date`,
# or a UTC-aware `datetime`. None means "no default" (a null default says nothing).
DefaultValue = bool | int | float | str | date | datetime


@dataclass(frozen=True)
class Property:
    name: str
    type: TypeRef
    nullable: bool = False
    default: DefaultValue | None = None  # `@default(value)`
    # `@renamed_from(old)`: this property was called `old` in the schema this one
    # replaces. Only `apply_schema`'s diff reads it; it never changes the table layout.
    renamed_from: str | None = None


@dataclass(frozen=True)
class Range:
    """`@range(p, min..max)`; either bound may be None (open), both are inclusive.

    Bounds have the property's type: int for integer kinds, float for float kinds, `date`
    for Date and a UTC-aware `datetime` for DateTime.
    """

    min: float | int | date | datetime | None
    max: float | int | date | datetime | None


@dataclass(frozen=True)
class Cardinality:
    """`@card(min..max)`: edges of one type per source node. `max` None is unbounded."""

    min: int
    max: int | None


# The kinds of constraint and index a table declares, in their canonical order (the order
# of a table's `constraints`). `schema.annotations` holds one description per kind: how
# it parses, prints, diffs, merges and shows.
ConstraintKind = Literal["unique", "index", "range", "check", "vector_index", "search", "card"]
CONSTRAINT_KINDS: tuple[ConstraintKind, ...] = (
    "unique",
    "index",
    "range",
    "check",
    "vector_index",
    "search",
    "card",
)
# What a constraint carries besides its columns: the bounds of a `@range` (Range), the
# regex of a `@check` or the metric of a Vector `@index` (str), the bounds of a `@card`
# (Cardinality); None for `@unique`, `@index` and `@search`.
ConstraintValue = Range | Cardinality | str | None


@dataclass(frozen=True)
class Constraint:
    """One declared constraint or index: `@unique(a, b)`, `@index(a)`, `@range(p, 0..1)`,
    `@check(p, "rx")`, `@index(v, metric="l2")` (kind "vector_index"), `@search(p)` (one
    per property) or `@card(0..1)` (no columns)."""

    kind: ConstraintKind
    columns: tuple[str, ...]
    value: ConstraintValue = None


@dataclass(frozen=True)
class TableType:
    """What node and edge types share: a name, properties and constraints.

    `constraints` is the one list of the table's constraints and indexes, kinds in
    `CONSTRAINT_KINDS` order; `uniques`, `ranges`, `card`, ... are views of it.
    """

    name: str
    properties: tuple[Property, ...]
    constraints: tuple[Constraint, ...] = ()
    renamed_from: str | None = None  # `node New @renamed_from(Old)`, as on properties

    @property
    def property_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.properties)

    @property
    def is_edge(self) -> bool:
        return False

    def of_kind(self, kind: ConstraintKind) -> tuple[Constraint, ...]:
        """The table's constraints of one kind, in declared order."""
        return tuple(c for c in self.constraints if c.kind == kind)

    @property
    def uniques(self) -> tuple[tuple[str, ...], ...]:
        return tuple(c.columns for c in self.of_kind("unique"))

    @property
    def indexes(self) -> tuple[tuple[str, ...], ...]:
        return tuple(c.columns for c in self.of_kind("index"))

    @property
    def ranges(self) -> dict[str, Range]:
        return {c.columns[0]: c.value for c in self.of_kind("range") if isinstance(c.value, Range)}

    @property
    def checks(self) -> dict[str, str]:
        """property -> regex (full match)"""
        return {c.columns[0]: c.value for c in self.of_kind("check") if isinstance(c.value, str)}

    @property
    def vector_indexes(self) -> dict[str, str]:
        """`@index` on a Vector: an ANN index, property -> metric ("cosine", "l2", "dot")."""
        return {
            c.columns[0]: c.value for c in self.of_kind("vector_index") if isinstance(c.value, str)
        }

    @property
    def search(self) -> tuple[str, ...]:
        """`@search(a, b)`: String properties with a BM25 index."""
        return tuple(c.columns[0] for c in self.of_kind("search"))

    # Defined last: inside the class body this name shadows the `property` builtin, so any
    # `@property` written after it would call this method instead.
    def property(self, name: str) -> Property | None:
        for p in self.properties:
            if p.name == name:
                return p
        return None


@dataclass(frozen=True)
class NodeType(TableType):
    key: str = ""  # the `@key` property; its value (as a string) is the row id


@dataclass(frozen=True)
class EdgeType(TableType):
    src: str = ""  # source node type
    dst: str = ""  # destination node type

    @property
    def is_edge(self) -> bool:
        return True

    @property
    def card(self) -> Cardinality | None:
        """`@card(min..max)`, if declared."""
        for c in self.of_kind("card"):
            if isinstance(c.value, Cardinality):
                return c.value
        return None

    def start_type(self, direction: str) -> str | None:
        """The node type a relationship of this type followed in `direction` ("out",
        "in", or either way) starts at: either way only when both ends are one type."""
        if direction == "out":
            return self.src
        if direction == "in":
            return self.dst
        return self.src if self.src == self.dst else None


@dataclass(frozen=True)
class Schema:
    nodes: dict[str, NodeType]
    edges: dict[str, EdgeType]
    text: str = ""

    def table(self, name: str) -> NodeType | EdgeType | None:
        """The node or edge type called `name`; None when there is none."""
        return self.nodes.get(name) or self.edges.get(name)

    def require(self, name: str) -> NodeType | EdgeType:
        """The node or edge type called `name`; `UnknownTableError` when there is none."""
        t = self.table(name)
        if t is None:
            known = ", ".join(self.table_names) or "none"
            raise UnknownTableError(f"unknown node or edge type {name!r} (known: {known})")
        return t

    def require_edge(self, name: str) -> EdgeType:
        """The edge type called `name`; `UnknownTableError` when there is none."""
        t = self.edges.get(name)
        if t is None:
            known = ", ".join(self.edges) or "none"
            raise UnknownTableError(f"unknown edge type {name!r} (known: {known})")
        return t

    @property
    def table_names(self) -> tuple[str, ...]:
        return tuple(self.nodes) + tuple(self.edges)

    def edges_touching(self, node_type: str) -> tuple[EdgeType, ...]:
        """Edge types whose source or destination is `node_type`."""
        return tuple(e for e in self.edges.values() if node_type in (e.src, e.dst))
