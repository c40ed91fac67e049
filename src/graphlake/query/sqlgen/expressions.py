"""Cypher expressions as DuckDB SQL: operators, functions, CASE, lists and maps, temporal
fields, regular expressions and vector distances.

`query.expr.ExprCompiler` walks a bound expression and picks the builder by the binder's
types (an entity compared by identity, `/` of two integers, `+` of strings or lists, a
string's length, ...); the builders here take the operands' SQL (text other builders
wrote) and return the expression's. Names and values are quoted by `quote`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from graphlake.query.sqlgen.quote import ident, literal

__all__ = [
    "COMPARISONS",
    "DISTANCES",
    "NULL",
    "SCALARS",
    "aggregate",
    "arithmetic",
    "case",
    "coalesce",
    "comparison",
    "concat_lists",
    "concat_strings",
    "constant",
    "count_star",
    "divide",
    "edge_type",
    "end_node",
    "entity_id",
    "entity_property",
    "field",
    "identity_comparison",
    "in_list",
    "in_values",
    "int_divide",
    "is_null",
    "labels",
    "length",
    "list_index",
    "list_of",
    "logical",
    "map_of",
    "negation",
    "negative",
    "now",
    "path_length",
    "path_nodes",
    "path_rels",
    "power",
    "range_of",
    "scalar",
    "start_node",
    "string_index",
    "string_match",
    "substring",
    "temporal_field",
    "to_integer",
    "variable",
    "vector_distance",
    "xor",
]

# Scalar functions: Cypher's name -> SQL template over the arguments' SQL (query.typer's
# SCALARS holds their types and arities).
SCALARS: dict[str, str] = {
    "toupper": "upper({0})",
    "tolower": "lower({0})",
    "upper": "upper({0})",
    "lower": "lower({0})",
    "trim": "trim({0})",
    "ltrim": "ltrim({0})",
    "rtrim": "rtrim({0})",
    "replace": "replace({0}, {1}, {2})",
    "left": "left({0}, {1})",
    "right": "right({0}, {1})",
    "reverse": "reverse({0})",
    "split": "string_split({0}, {1})",
    "tostring": "CAST({0} AS VARCHAR)",
    "tofloat": "TRY_CAST({0} AS DOUBLE)",
    "toboolean": "TRY_CAST({0} AS BOOLEAN)",
    "abs": "abs({0})",
    "ceil": "ceil({0})::DOUBLE",
    "floor": "floor({0})::DOUBLE",
    "round": "round({0})::DOUBLE",
    "sign": "sign({0})::BIGINT",
    "sqrt": "sqrt({0})",
    "exp": "exp({0})",
    "log": "ln({0})",
    "log10": "log10({0})",
    "rand": "random()",
    "head": "({0})[1]",
    "last": "({0})[-1]",
    "tail": "({0})[2:]",
    "date": "CAST({0} AS DATE)",
    "datetime": "CAST({0} AS TIMESTAMPTZ)",
    "timestamp": "(epoch_ms(now()))::BIGINT",
}
# Vector distances over DOUBLE lists, as `graphlake.search.distance` defines them.
DISTANCES = {
    "cosine": "list_cosine_distance({0}, {1})",
    "l2": "list_distance({0}, {1}) ** 2",
    "dot": "1 - list_inner_product({0}, {1})",
}
COMPARISONS = ("=", "<>", "<", "<=", ">", ">=")
NULL = "NULL"  # a null parameter: its type alone decides it
# Cypher's string operators -> DuckDB's functions (`=~`: RE2, linear in the input).
_STRING_MATCH = {
    "STARTS": "starts_with",
    "ENDS": "suffix",
    "CONTAINS": "contains",
    "=~": "regexp_full_match",
}


# --- values, properties, indexes


def constant(value: object) -> str:
    """A literal of the query."""
    return literal(value)


def variable(name: str) -> str:
    """A variable: its column (or, in its MATCH, its FROM item's alias)."""
    return ident(name)


def entity_property(var: str, prop: str) -> str:
    """Property `prop` of the node or relationship variable `var` (a struct or alias)."""
    return f"{ident(var)}.{ident(prop)}"


def field(sql: str, name: str) -> str:
    """Field `name` of the struct (or map) `sql`."""
    return f"({sql}).{ident(name)}"


def temporal_field(sql: str, name: str) -> str:
    """A date's or datetime's field (`year`, `month`, ...) as an integer."""
    return f"{name}({sql})::BIGINT"


def string_index(sql: str, index: str) -> str:
    """`sql[index]` by a string key (a map's)."""
    return f"({sql})[{index}]"


def list_index(sql: str, index: str) -> str:
    """`sql[index]` by Cypher's integer index: from 0, -1 the last item (DuckDB: from 1)."""
    return f"({sql})[CASE WHEN ({index}) >= 0 THEN ({index}) + 1 ELSE ({index}) END]"


def list_of(items: Iterable[str]) -> str:
    """A list of the items' SQL."""
    return "[" + ", ".join(items) + "]"


def map_of(entries: Sequence[tuple[str, str]]) -> str:
    """A map of (key, value SQL) entries; the empty map is null."""
    if not entries:
        return "NULL"
    return "{" + ", ".join(f"{literal(k)}: {v}" for k, v in entries) + "}"


# --- operators


def negation(sql: str) -> str:
    return f"(NOT {sql})"


def negative(sql: str) -> str:
    return f"(-{sql})"


def is_null(sql: str, negated: bool = False) -> str:
    """`sql IS NULL` (or `IS NOT NULL`)."""
    return f"({sql} IS {'NOT ' if negated else ''}NULL)"


def xor(left: str, right: str) -> str:
    return f"(({left}) <> ({right}))"


def logical(op: str, left: str, right: str) -> str:
    """`AND` or `OR`."""
    return f"({left} {op} {right})"


def comparison(op: str, left: str, right: str) -> str:
    """One of `COMPARISONS` between two values."""
    return f"({left} {op} {right})"


def identity_comparison(op: str, left: str, right: str) -> str:
    """`=` or `<>` between two nodes or relationships: by their ids."""
    return f"({left}.id {op} {right}.id)"


def string_match(op: str, left: str, right: str) -> str:
    """STARTS WITH, ENDS WITH, CONTAINS or `=~` (by Cypher's first word of it)."""
    return f"{_STRING_MATCH[op]}({left}, {right})"


def concat_strings(left: str, right: str) -> str:
    """`+` with a string: both sides as text."""
    return f"(CAST({left} AS VARCHAR) || CAST({right} AS VARCHAR))"


def concat_lists(left: str, right: str) -> str:
    return f"list_concat({left}, {right})"


def power(left: str, right: str) -> str:
    return f"pow({left}, {right})"


def int_divide(left: str, right: str) -> str:
    """`/` of two integers: Cypher divides them to an integer."""
    return f"({left} // {right})"


def divide(left: str, right: str) -> str:
    return f"({left}::DOUBLE / {right})"


def arithmetic(op: str, left: str, right: str) -> str:
    """`+`, `-`, `*`, `%` of numbers."""
    return f"({left} {op} {right})"


def in_list(left: str, items: Sequence[str]) -> str:
    """`left IN [items]` over a list literal's items' SQL."""
    if not items:
        return "FALSE"
    return f"({left} IN ({', '.join(items)}))"


def in_values(left: str, values: str) -> str:
    """`left IN values` over a list value: SQL IN over the unnested list keeps Cypher's
    null rules (no match and a null: null)."""
    return f"({left} IN (SELECT unnest({values})))"


def case(subject: str | None, whens: Sequence[tuple[str, str]], default: str | None) -> str:
    """CASE [subject] WHEN ... THEN ... [ELSE default] END."""
    parts = ["CASE"]
    if subject is not None:
        parts.append(subject)
    parts += [f"WHEN {c} THEN {v}" for c, v in whens]
    if default is not None:
        parts.append(f"ELSE {default}")
    parts.append("END")
    return " ".join(parts)


# --- functions


def scalar(name: str, args: Sequence[str]) -> str:
    """A scalar function of `SCALARS` over its arguments' SQL."""
    return SCALARS[name].format(*args)


def to_integer(arg: str, kind: str | None) -> str:
    """Cypher's `toInteger`: a number truncated toward zero (DuckDB's casts round, so
    2.7 would be 3), a string of digits read exactly (through DOUBLE, a value past 2**53
    would not be), anything else through its number; null when it is none."""
    if kind == "integer":
        return arg
    truncated = f"TRY_CAST(trunc(TRY_CAST({arg} AS DOUBLE)) AS BIGINT)"
    if kind != "string":
        return truncated
    digits = f"CASE WHEN regexp_full_match(trim({arg}), '[+-]?[0-9]+') THEN trim({arg}) END"
    return f"COALESCE(TRY_CAST({digits} AS BIGINT), {truncated})"


def now(name: str) -> str:
    """`date()` or `datetime()` without an argument: today, now."""
    return "current_date" if name == "date" else "now()"


def count_star() -> str:
    return "count(*)"


def aggregate(name: str, sql: str, distinct: bool, entity: bool, integer: bool) -> str:
    """An aggregate over `sql`: `entity`, a node or relationship (counted and collected
    by identity); `integer`, integers (their sum stays one)."""
    d = "DISTINCT " if distinct else ""
    if entity and name == "count":
        sql = f"{sql}.id"
    if name == "count":
        return f"count({d}{sql})"
    if name == "collect":
        return f"coalesce(list({d}{sql}) FILTER (WHERE {sql} IS NOT NULL), [])"
    if name == "sum":  # openCypher: the sum of no values is 0
        total = f"coalesce(sum({d}{sql}), 0)"
        return f"{total}::BIGINT" if integer else total
    return f"{name}({d}{sql})"


def entity_id(sql: str) -> str:
    """A node's or relationship's id."""
    return f"{sql}.id"


def labels(sql: str) -> str:
    return f"[{sql}._label]"


def edge_type(sql: str) -> str:
    return f"{sql}._type"


def start_node(sql: str) -> str:
    return f"{sql}.src"


def end_node(sql: str) -> str:
    return f"{sql}.dst"


def path_nodes(sql: str) -> str:
    return f"{sql}.nodes"


def path_rels(sql: str) -> str:
    return f"{sql}.rels"


def path_length(sql: str) -> str:
    return f"{sql}.length"


def length(sql: str, string: bool) -> str:
    """The length of a string (`string`) or a list."""
    return f"length({sql})" if string else f"len({sql})"


def coalesce(args: Sequence[str]) -> str:
    return f"coalesce({', '.join(args)})"


def substring(text: str, start: str, count: str | None = None) -> str:
    """Cypher's substring (from 0) in DuckDB's (from 1)."""
    if count is None:
        return f"substring({text}, ({start}) + 1)"
    return f"substring({text}, ({start}) + 1, {count})"


def range_of(start: str, end: str, step: str | None = None) -> str:
    """Cypher's range includes its end; DuckDB's does not."""
    step = "1" if step is None else step
    return f"range({start}, ({end}) + CASE WHEN ({step}) > 0 THEN 1 ELSE -1 END, {step})"


def vector_distance(a: str, b: str, metric: str) -> str:
    """The distance `g.search` ranks by (`graphlake.search.distance`) between two vectors:
    1 - cos, squared Euclidean, 1 - a . b."""
    a, b = (f"CAST({x} AS DOUBLE[])" for x in (a, b))
    # DuckDB's list distances raise on NULL elements anywhere in the child vector they
    # are given (also under a NULL row, whatever a CASE guard selects): hand them fresh
    # lists without NULLs, and null the result of a missing vector instead.
    safe = DISTANCES[metric].format(
        *(
            f"list_transform(coalesce({x}, {y}), lambda z: coalesce(z, 0.0))"
            for x, y in ((a, b), (b, a))
        )
    )
    return f"CASE WHEN {a} IS NULL OR {b} IS NULL THEN NULL ELSE {safe} END"
