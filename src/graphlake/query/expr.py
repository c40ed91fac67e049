"""Cypher expressions to DuckDB SQL: the SQL generator of expressions the binder
(query.binder) resolved and typed. `ExprCompiler` reads each expression's type from the
`BoundQuery` by its place and writes SQL only (no name or type rule lives here: a query
that reaches it is known to be well-typed).

A node or relationship variable is a struct (a FROM alias in the MATCH that binds it, a
struct column after that), so `n.name` is `"n"."name"` in both places. Literals of the
query are quoted by `literal`: no query text is ever pasted into SQL. Parameters are
DuckDB prepared parameters (`Checker.bind`: the value is bound once, however often the
query names it, and a cached plan binds other values: query.plancache); a null one is
the literal NULL (its type says all there is).

`=~` is DuckDB's `regexp_full_match`, RE2: linear in the input. A pattern given as a
literal or a parameter is held to the caps of `graphlake.regex` (the ones `@check` has)
by the binder, before any SQL is written; a pattern computed per row is bounded by RE2's
own memory cap and the query's time limit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from graphlake import sqltext
from graphlake.query import syntax
from graphlake.query.binder import BoundQuery
from graphlake.query.checker import DATE, DATETIME, EDGE, INT, LIST, NODE, PATH, STRING, Checker
from graphlake.query.sqlgen import literal
from graphlake.query.typer import AGGREGATES, TEMPORAL_FIELDS, Place, child, contains_aggregate

__all__ = ["AGGREGATES", "ExprCompiler", "contains_aggregate", "ident", "literal"]


ident = sqltext.ident  # re-exported: the query modules quote names through expr


# Scalar functions: name -> SQL template over the arguments' SQL (query.binder.SCALARS
# holds their types and arities).
_SCALARS: dict[str, str] = {
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
    "tointeger": "TRY_CAST(TRY_CAST({0} AS DOUBLE) AS BIGINT)",
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
_DISTANCES = {
    "cosine": "list_cosine_distance({0}, {1})",
    "l2": "list_distance({0}, {1}) ** 2",
    "dot": "1 - list_inner_product({0}, {1})",
}

# The SQL of a pattern predicate or EXISTS { } (the planner's): given the expression and
# its place.
Subquery = Callable[[syntax.Expr, Place], str]


class ExprCompiler:
    """Writes the SQL of expressions the binder checked: `bound` holds the type of each
    (by its place), `subquery` compiles pattern predicates and EXISTS { }."""

    def __init__(self, checker: Checker, bound: BoundQuery, subquery: Subquery | None = None):
        self.checker = checker
        self.bound = bound
        self.subquery = subquery

    def sql(self, e: syntax.Expr, place: Place) -> str:
        method = getattr(self, "_" + type(e).__name__.lower())
        return cast(str, method(e, place))

    condition = sql  # the binder checked that a condition is a boolean

    def _type(self, place: Place) -> str | None:
        return self.bound.type_at(place)

    # --- leaves
    def _lit(self, e: syntax.Lit, place: Place) -> str:
        return literal(e.value)

    def _param(self, e: syntax.Param, place: Place) -> str:
        if self.checker.peek(e) is None:  # its type alone decides it (the plan cache keys on types)
            return literal(None)
        return self.checker.bind(e)  # bound: a cached plan rebinds it

    def _var(self, e: syntax.Var, place: Place) -> str:
        return ident(e.name)

    def _prop(self, e: syntax.Prop, place: Place) -> str:
        subject = child(place, "subject")
        t = self._type(subject)
        if isinstance(e.subject, syntax.Var) and t in (NODE, EDGE):
            return f"{ident(e.subject.name)}.{ident(e.name)}"
        s = self.sql(e.subject, subject)
        if t in (DATE, DATETIME) and e.name in TEMPORAL_FIELDS:
            return f"{e.name}({s})::BIGINT"
        return f"({s}).{ident(e.name)}"

    def _index(self, e: syntax.Index, place: Place) -> str:
        s = self.sql(e.subject, child(place, "subject"))
        i = self.sql(e.index, child(place, "index"))
        if self._type(child(place, "index")) == STRING:
            return f"({s})[{i}]"
        # Cypher counts from 0 (and -1 is the last item); DuckDB from 1.
        return f"({s})[CASE WHEN ({i}) >= 0 THEN ({i}) + 1 ELSE ({i}) END]"

    def _listlit(self, e: syntax.ListLit, place: Place) -> str:
        items = (self.sql(x, child(place, "items", n)) for n, x in enumerate(e.items))
        return "[" + ", ".join(items) + "]"

    def _maplit(self, e: syntax.MapLit, place: Place) -> str:
        if not e.entries:
            return "NULL"
        return (
            "{"
            + ", ".join(
                f"{literal(k)}: {self.sql(v, child(place, 'entries', n))}"
                for n, (k, v) in enumerate(e.entries)
            )
            + "}"
        )

    # --- operators
    def _unary(self, e: syntax.Unary, place: Place) -> str:
        s = self.sql(e.operand, child(place, "operand"))
        if e.op == "NOT":
            return f"(NOT {s})"
        return f"(-{s})" if e.op == "-" else s

    def _isnull(self, e: syntax.IsNull, place: Place) -> str:
        s = self.sql(e.operand, child(place, "operand"))
        return f"({s} IS {'NOT ' if e.negated else ''}NULL)"

    def _binary(self, e: syntax.Binary, place: Place) -> str:
        if e.op == "IN":
            return self._in(e, place)
        left, right = child(place, "left"), child(place, "right")
        ls, rs = self.sql(e.left, left), self.sql(e.right, right)
        if e.op == "XOR":
            return f"(({ls}) <> ({rs}))"
        if e.op in ("AND", "OR"):
            return f"({ls} {e.op} {rs})"
        lt, rt = self._type(left), self._type(right)
        if e.op in ("=", "<>", "<", "<=", ">", ">="):
            if lt in (NODE, EDGE) and e.op in ("=", "<>"):  # entities compare by identity
                return f"({ls}.id {e.op} {rs}.id)"
            return f"({ls} {e.op} {rs})"
        if e.op in ("STARTS", "ENDS", "CONTAINS", "=~"):
            fn = {
                "STARTS": "starts_with",
                "ENDS": "suffix",
                "CONTAINS": "contains",
                "=~": "regexp_full_match",
            }[e.op]
            return f"{fn}({ls}, {rs})"
        if e.op == "+" and STRING in (lt, rt):
            return f"(CAST({ls} AS VARCHAR) || CAST({rs} AS VARCHAR))"
        if e.op == "+" and LIST in (lt, rt):
            return f"list_concat({ls}, {rs})"
        if e.op == "^":
            return f"pow({ls}, {rs})"
        if e.op == "/" and lt == INT and rt == INT:  # Cypher divides integers to an integer
            return f"({ls} // {rs})"
        if e.op == "/":
            return f"({ls}::DOUBLE / {rs})"
        return f"({ls} {e.op} {rs})"

    def _in(self, e: syntax.Binary, place: Place) -> str:
        ls = self.sql(e.left, child(place, "left"))
        right = child(place, "right")
        if isinstance(e.right, syntax.ListLit):
            items = [self.sql(x, child(right, "items", n)) for n, x in enumerate(e.right.items)]
            if not items:
                return "FALSE"
            return f"({ls} IN ({', '.join(items)}))"
        rs = self.sql(e.right, right)
        # SQL IN over the unnested list keeps Cypher's null rules (no match + a null: null).
        return f"({ls} IN (SELECT unnest({rs})))"

    def _case(self, e: syntax.Case, place: Place) -> str:
        parts = ["CASE"]
        if e.subject is not None:
            parts.append(self.sql(e.subject, child(place, "subject")))
        for n, (cond, value) in enumerate(e.whens):
            c = self.sql(cond, child(place, "whens", n, 0))
            v = self.sql(value, child(place, "whens", n, 1))
            parts.append(f"WHEN {c} THEN {v}")
        if e.default is not None:
            parts.append(f"ELSE {self.sql(e.default, child(place, 'default'))}")
        parts.append("END")
        return " ".join(parts)

    def _patternpred(self, e: syntax.PatternPred, place: Place) -> str:
        return self._exists(e, place)

    def _exists(self, e: syntax.Expr, place: Place) -> str:
        assert self.subquery is not None  # the binder allows subqueries only where one is
        return self.subquery(e, place)

    # --- functions
    def _func(self, e: syntax.Func, place: Place) -> str:
        if e.name in AGGREGATES:
            return self._aggregate(e, place)
        special = getattr(self, f"_fn_{e.name}", None)
        if special is not None:
            return cast(str, special(e, place))
        if e.name in ("date", "datetime") and not e.args:
            return "current_date" if e.name == "date" else "now()"
        return _SCALARS[e.name].format(*self._args(e, place))

    def _args(self, e: syntax.Func, place: Place, upto: int | None = None) -> list[str]:
        return [self.sql(a, child(place, "args", n)) for n, a in enumerate(e.args[:upto])]

    def _fn_vector_distance(self, e: syntax.Func, place: Place) -> str:
        """`vector_distance(a, b [, "cosine" | "l2" | "dot"])`: the distance `g.search`
        ranks by (`graphlake.search.distance`): 1 - cos, squared Euclidean, 1 - a . b."""
        metric = e.args[2].value if len(e.args) == 3 else "cosine"  # type: ignore[attr-defined]
        a, b = (f"CAST({x} AS DOUBLE[])" for x in self._args(e, place, upto=2))
        # DuckDB's list distances raise on NULL elements anywhere in the child vector they
        # are given (also under a NULL row, whatever a CASE guard selects): hand them
        # fresh lists without NULLs, and null the result of a missing vector instead.
        safe = _DISTANCES[metric].format(
            *(
                f"list_transform(coalesce({x}, {y}), lambda z: coalesce(z, 0.0))"
                for x, y in ((a, b), (b, a))
            )
        )
        return f"CASE WHEN {a} IS NULL OR {b} IS NULL THEN NULL ELSE {safe} END"

    def _aggregate(self, e: syntax.Func, place: Place) -> str:
        if e.star:
            return "count(*)"
        s = self.sql(e.args[0], child(place, "args", 0))
        t = self._type(child(place, "args", 0))
        d = "DISTINCT " if e.distinct else ""
        if t in (NODE, EDGE):  # entities count and collect by identity
            s = f"{s}.id" if e.name == "count" else s
        if e.name == "count":
            return f"count({d}{s})"
        if e.name == "collect":
            return f"coalesce(list({d}{s}) FILTER (WHERE {s} IS NOT NULL), [])"
        if e.name == "sum":  # openCypher: the sum of no values is 0
            total = f"coalesce(sum({d}{s}), 0)"
            return f"{total}::BIGINT" if t == INT else total
        if e.name == "avg":
            return f"avg({d}{s})"
        return f"{e.name}({d}{s})"

    def _fn_id(self, e: syntax.Func, place: Place) -> str:
        return f"{self._args(e, place)[0]}.id"

    def _fn_labels(self, e: syntax.Func, place: Place) -> str:
        return f"[{self._args(e, place)[0]}._label]"

    def _fn_type(self, e: syntax.Func, place: Place) -> str:
        return f"{self._args(e, place)[0]}._type"

    def _fn_startnode(self, e: syntax.Func, place: Place) -> str:
        return f"{self._args(e, place)[0]}.src"

    def _fn_endnode(self, e: syntax.Func, place: Place) -> str:
        return f"{self._args(e, place)[0]}.dst"

    def _fn_nodes(self, e: syntax.Func, place: Place) -> str:
        return f"{self._args(e, place)[0]}.nodes"

    def _fn_relationships(self, e: syntax.Func, place: Place) -> str:
        return f"{self._args(e, place)[0]}.rels"

    def _fn_length(self, e: syntax.Func, place: Place) -> str:
        (s,) = self._args(e, place)
        t = self._type(child(place, "args", 0))
        if t == PATH:
            return f"{s}.length"
        return f"length({s})" if t == STRING else f"len({s})"

    def _fn_size(self, e: syntax.Func, place: Place) -> str:
        (s,) = self._args(e, place)
        return f"length({s})" if self._type(child(place, "args", 0)) == STRING else f"len({s})"

    def _fn_coalesce(self, e: syntax.Func, place: Place) -> str:
        return f"coalesce({', '.join(self._args(e, place))})"

    def _fn_substring(self, e: syntax.Func, place: Place) -> str:
        args = self._args(e, place)
        if len(args) == 2:
            return f"substring({args[0]}, ({args[1]}) + 1)"
        return f"substring({args[0]}, ({args[1]}) + 1, {args[2]})"

    def _fn_range(self, e: syntax.Func, place: Place) -> str:
        args = self._args(e, place)
        a, b = args[0], args[1]
        step = args[2] if len(args) == 3 else "1"
        # Cypher's range includes its end; DuckDB's does not.
        return f"range({a}, ({b}) + CASE WHEN ({step}) > 0 THEN 1 ELSE -1 END, {step})"

    def _fn_exists(self, e: syntax.Func, place: Place) -> str:
        return f"({self._args(e, place)[0]} IS NOT NULL)"
