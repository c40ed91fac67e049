"""The schema's and the parameters' answers to a Cypher query, and the type rules.

The checker answers the binder's questions (query.binder: "which node types can this
pattern be?", "does `r` have `since`?", "can these two types be compared?", "what is
`$p`?") and raises the typed errors, with the line and column of the offending token
and a "did you mean" when a name is close to one the schema knows. It also holds what
the SQL of one plan needs of the parameters: the prepared parameters (`bind`) and the
names whose values the plan depends on (`inlined`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from graphlake import hints
from graphlake.errors import CypherNameError, CypherParameterError, CypherTypeError
from graphlake.query import sqlgen, syntax
from graphlake.schema.model import FLOAT_KINDS, INTEGER_KINDS, EdgeType, NodeType, Schema

# Value types the checker tracks; None means "not known before running".
STRING, INT, FLOAT, BOOL, DATE, DATETIME, LIST, MAP = (
    "string",
    "integer",
    "float",
    "boolean",
    "date",
    "datetime",
    "list",
    "map",
)
NODE, EDGE, PATH, EDGES = "node", "relationship", "path", "relationship list"
NUMBERS = (INT, FLOAT)
# Types that can meet in a comparison (numbers compare with numbers, ...).
_FAMILY = {
    STRING: "string",
    INT: "number",
    FLOAT: "number",
    BOOL: "boolean",
    DATE: "date",
    DATETIME: "datetime",
    LIST: "list",
    MAP: "map",
    NODE: "node",
    EDGE: "relationship",
    PATH: "path",
}


closest = hints.closest  # re-exported: the query modules import it from here


def suggest(name: str, known: Iterable[str]) -> str:
    known = list(known)
    close = closest(name, known)
    if close is not None:
        return f"; did you mean {close!r}?"
    return f" (known: {', '.join(known)})" if known and len(known) <= 12 else ""


def kind_type(kind: str) -> str | None:
    if kind in ("String", "Enum"):
        return STRING
    if kind in INTEGER_KINDS:
        return INT
    if kind in FLOAT_KINDS:
        return FLOAT
    return {"Bool": BOOL, "Date": DATE, "DateTime": DATETIME, "Vector": LIST, "List": LIST}.get(
        kind
    )


@dataclass(frozen=True)
class Binding:
    """What a variable holds: a node or relationship of one of `types`, a path, or a value."""

    kind: str | None  # NODE, EDGE, PATH, EDGES or a value type (None: unknown value)
    types: tuple[str, ...] = ()

    @property
    def is_entity(self) -> bool:
        return self.kind in (NODE, EDGE)


class Checker:
    def __init__(self, schema: Schema, params: dict[str, object]):
        self.schema = schema
        self.params = params
        self.bound: dict[str, object] = {}  # prepared parameter name -> value
        self.bound_names: dict[str, str] = {}  # Cypher name -> prepared parameter name
        # Parameters whose values (not only their types) the plan depends on: inlined as
        # SQL literals, LIMIT counts, checked regexes. The plan cache keys on their values.
        self.inlined: set[str] = set()

    # --- labels and types
    def node_types(self, pat: syntax.NodePat) -> tuple[str, ...]:
        for label in pat.labels:
            if label not in self.schema.nodes:
                hint = (
                    f" ({label!r} is a relationship type)"
                    if label in self.schema.edges
                    else suggest(label, self.schema.nodes)
                )
                raise CypherNameError(f"unknown node label {label!r}{hint}", *pat.pos)
        return tuple(pat.labels) if pat.labels else tuple(self.schema.nodes)

    def edge_types(self, pat: syntax.RelPat) -> tuple[str, ...]:
        for t in pat.types:
            if t not in self.schema.edges:
                hint = (
                    f" ({t!r} is a node label)"
                    if t in self.schema.nodes
                    else suggest(t, self.schema.edges)
                )
                raise CypherNameError(f"unknown relationship type {t!r}{hint}", *pat.pos)
        return tuple(pat.types) if pat.types else tuple(self.schema.edges)

    def table(self, name: str) -> NodeType | EdgeType:
        t = self.schema.table(name)
        assert t is not None
        return t

    # --- properties
    def property_type(self, var: str, binding: Binding, prop: str, pos: syntax.Pos) -> str | None:
        """The type of `var.prop`; an error when no type `var` can be has `prop`."""
        if prop == "id" or (binding.kind == EDGE and prop in ("src", "dst")):
            return STRING
        kinds = {
            p.type.kind for t in binding.types if (p := self.table(t).property(prop)) is not None
        }
        if not kinds:
            known = sorted({p for t in binding.types for p in self.table(t).property_names})
            what = "/".join(binding.types)
            raise CypherNameError(
                f"{var} ({what}) has no property {prop!r}{suggest(prop, known)}", *pos
            )
        types = {kind_type(k) for k in kinds}
        return types.pop() if len(types) == 1 else None

    # --- parameters
    def param(self, p: syntax.Param) -> object:
        """`$name`'s value, which the plan then depends on (see `inlined`)."""
        value = self.peek(p)
        self.inlined.add(p.name)
        return value

    def peek(self, p: syntax.Param) -> object:
        """`$name`'s value, for a decision that depends on its type alone (the plan
        cache keys on every parameter's type: `param_signature`)."""
        if p.name not in self.params:
            given = ", ".join(f"${k}" for k in self.params) or "none"
            raise CypherParameterError(f"parameter ${p.name} is missing (given: {given})", *p.pos)
        value = self.params[p.name]
        if not _plain(value):
            raise CypherParameterError(
                f"parameter ${p.name} has a {type(value).__name__} value; parameters are "
                f"strings, numbers, booleans, dates, null, or lists and maps of these",
                *p.pos,
            )
        return value

    def bind(self, p: syntax.Param) -> str:
        """The SQL of `$name`'s value: a DuckDB prepared parameter, bound once however
        often the query names it (its value never enters the SQL text)."""
        value = self.peek(p)
        name = self.bound_names.get(p.name)
        if name is None:
            name = self.bound_names[p.name] = sqlgen.param_name(len(self.bound_names))
            self.bound[name] = value
        cast = duck_type(value)
        return sqlgen.param(name, cast)

    def param_type(self, p: syntax.Param) -> str | None:
        return value_type(self.peek(p))

    # --- type rules
    def comparable(self, op: str, left: str | None, right: str | None, pos: syntax.Pos) -> None:
        if left is None or right is None:
            return
        if _FAMILY.get(left) != _FAMILY.get(right):
            raise CypherTypeError(f"cannot compare {a(left)} with {a(right)} ({op})", *pos)

    def expect(self, what: str, t: str | None, wanted: tuple[str, ...], pos: syntax.Pos) -> None:
        if t is not None and t not in wanted:
            raise CypherTypeError(f"{what} needs {' or '.join(map(a, wanted))}, got {a(t)}", *pos)


def a(noun: str) -> str:
    """`noun` with its indefinite article: "an integer", "a string"."""
    return ("an " if noun[:1] in "aeiou" else "a ") + noun


def value_type(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT
    if isinstance(value, float):
        return FLOAT
    if isinstance(value, str):
        return STRING
    if isinstance(value, dt.datetime):
        return DATETIME
    if isinstance(value, dt.date):
        return DATE
    if isinstance(value, list | tuple):
        return LIST
    if isinstance(value, dict):
        return MAP
    return None


def duck_type(value: object) -> str | None:
    """The DuckDB type a parameter's value is cast to, as its literal would have had
    (integers are BIGINT, not DuckDB's default INTEGER); None leaves the type to DuckDB
    (null, empty or mixed lists and maps)."""
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "BIGINT" if -(2**63) <= value < 2**63 else "HUGEINT"
    if isinstance(value, float):
        return "DOUBLE"
    if isinstance(value, str):
        return "VARCHAR"
    if isinstance(value, dt.datetime):
        return "TIMESTAMPTZ" if value.tzinfo is not None else "TIMESTAMP"
    if isinstance(value, dt.date):
        return "DATE"
    if isinstance(value, list | tuple):
        types = {duck_type(v) for v in value if v is not None}
        if types == {"BIGINT", "DOUBLE"}:
            types = {"DOUBLE"}
        return f"{types.pop()}[]" if len(types) == 1 and None not in types else None
    if isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
        fields = [(k, duck_type(v)) for k, v in value.items()]
        if any(t is None for _, t in fields):
            return None
        return sqlgen.struct_type((k, t) for k, t in fields if t is not None)
    return None


def param_signature(params: Mapping[str, object]) -> tuple | None:
    """What a plan depends on in its parameters besides the values in `Checker.inlined`:
    each one's name, Python type, Cypher type, DuckDB cast and plainness (None when a
    name is not a string: such parameters are refused anyway)."""
    out = []
    for name, value in params.items():
        if not isinstance(name, str):
            return None
        out.append((name, type(value).__name__, value_type(value), duck_type(value), _plain(value)))
    return tuple(sorted(out))


def _plain(value: object, depth: int = 0) -> bool:
    if depth > 8:
        return False
    if value is None or isinstance(value, bool | int | float | str | dt.date):
        return True
    if isinstance(value, list | tuple):
        return all(_plain(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v, depth + 1) for k, v in value.items())
    return False
