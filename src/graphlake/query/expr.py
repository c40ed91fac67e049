"""Cypher expressions to DuckDB SQL, for expressions the binder (query.binder) resolved
and typed. `ExprCompiler` walks an expression, reads each part's type from the
`BoundQuery` by its place and chooses what to render from it (an entity compared by
identity, `/` of two integers, `+` of strings or of lists, a string's or a list's
length, ...); the SQL text itself is written by the builders of
query.sqlgen.expressions. No name or type rule lives here: a query that reaches it is
known to be well-typed.

A node or relationship variable is a struct (a FROM alias in the MATCH that binds it, a
struct column after that), so `n.name` is `"n"."name"` in both places. Literals of the
query are quoted by sqlgen: no query text is ever pasted into SQL. Parameters are
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

from graphlake.query import syntax
from graphlake.query.binder import BoundQuery
from graphlake.query.checker import DATE, DATETIME, EDGE, INT, LIST, NODE, PATH, STRING, Checker
from graphlake.query.sqlgen import expressions as sx
from graphlake.query.typer import AGGREGATES, TEMPORAL_FIELDS, Place, child, contains_aggregate

__all__ = ["AGGREGATES", "ExprCompiler", "Subquery", "contains_aggregate"]

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
        return sx.constant(e.value)

    def _param(self, e: syntax.Param, place: Place) -> str:
        if self.checker.peek(e) is None:  # its type alone decides it (the plan cache keys on types)
            return sx.NULL
        return self.checker.bind(e)  # bound: a cached plan rebinds it

    def _var(self, e: syntax.Var, place: Place) -> str:
        return sx.variable(e.name)

    def _prop(self, e: syntax.Prop, place: Place) -> str:
        subject = child(place, "subject")
        t = self._type(subject)
        if isinstance(e.subject, syntax.Var) and t in (NODE, EDGE):
            return sx.entity_property(e.subject.name, e.name)
        s = self.sql(e.subject, subject)
        if t in (DATE, DATETIME) and e.name in TEMPORAL_FIELDS:
            return sx.temporal_field(s, e.name)
        return sx.field(s, e.name)

    def _index(self, e: syntax.Index, place: Place) -> str:
        s = self.sql(e.subject, child(place, "subject"))
        i = self.sql(e.index, child(place, "index"))
        if self._type(child(place, "index")) == STRING:
            return sx.string_index(s, i)
        return sx.list_index(s, i)

    def _listlit(self, e: syntax.ListLit, place: Place) -> str:
        return sx.list_of(self.sql(x, child(place, "items", n)) for n, x in enumerate(e.items))

    def _maplit(self, e: syntax.MapLit, place: Place) -> str:
        entries = [
            (k, self.sql(v, child(place, "entries", n))) for n, (k, v) in enumerate(e.entries)
        ]
        return sx.map_of(entries)

    # --- operators
    def _unary(self, e: syntax.Unary, place: Place) -> str:
        s = self.sql(e.operand, child(place, "operand"))
        if e.op == "NOT":
            return sx.negation(s)
        return sx.negative(s) if e.op == "-" else s

    def _isnull(self, e: syntax.IsNull, place: Place) -> str:
        s = self.sql(e.operand, child(place, "operand"))
        return sx.is_null(s, e.negated)

    def _binary(self, e: syntax.Binary, place: Place) -> str:
        if e.op == "IN":
            return self._in(e, place)
        left, right = child(place, "left"), child(place, "right")
        ls, rs = self.sql(e.left, left), self.sql(e.right, right)
        if e.op == "XOR":
            return sx.xor(ls, rs)
        if e.op in ("AND", "OR"):
            return sx.logical(e.op, ls, rs)
        lt, rt = self._type(left), self._type(right)
        if e.op in sx.COMPARISONS:
            if lt in (NODE, EDGE) and e.op in ("=", "<>"):  # entities compare by identity
                return sx.identity_comparison(e.op, ls, rs)
            return sx.comparison(e.op, ls, rs)
        if e.op in ("STARTS", "ENDS", "CONTAINS", "=~"):
            return sx.string_match(e.op, ls, rs)
        if e.op == "+" and STRING in (lt, rt):
            return sx.concat_strings(ls, rs)
        if e.op == "+" and LIST in (lt, rt):
            return sx.concat_lists(ls, rs)
        if e.op == "^":
            return sx.power(ls, rs)
        if e.op == "/" and lt == INT and rt == INT:  # Cypher divides integers to an integer
            return sx.int_divide(ls, rs)
        if e.op == "/":
            return sx.divide(ls, rs)
        return sx.arithmetic(e.op, ls, rs)

    def _in(self, e: syntax.Binary, place: Place) -> str:
        ls = self.sql(e.left, child(place, "left"))
        right = child(place, "right")
        if isinstance(e.right, syntax.ListLit):
            items = [self.sql(x, child(right, "items", n)) for n, x in enumerate(e.right.items)]
            return sx.in_list(ls, items)
        return sx.in_values(ls, self.sql(e.right, right))

    def _case(self, e: syntax.Case, place: Place) -> str:
        subject = None if e.subject is None else self.sql(e.subject, child(place, "subject"))
        whens = [
            (
                self.sql(cond, child(place, "whens", n, 0)),
                self.sql(value, child(place, "whens", n, 1)),
            )
            for n, (cond, value) in enumerate(e.whens)
        ]
        default = None if e.default is None else self.sql(e.default, child(place, "default"))
        return sx.case(subject, whens, default)

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
            return sx.now(e.name)
        return sx.scalar(e.name, self._args(e, place))

    def _args(self, e: syntax.Func, place: Place, upto: int | None = None) -> list[str]:
        return [self.sql(a, child(place, "args", n)) for n, a in enumerate(e.args[:upto])]

    def _fn_vector_distance(self, e: syntax.Func, place: Place) -> str:
        """`vector_distance(a, b [, "cosine" | "l2" | "dot"])`: the distance `g.search`
        ranks by (`graphlake.search.distance`): 1 - cos, squared Euclidean, 1 - a . b."""
        metric = e.args[2].value if len(e.args) == 3 else "cosine"  # type: ignore[attr-defined]
        a, b = self._args(e, place, upto=2)
        return sx.vector_distance(a, b, metric)

    def _aggregate(self, e: syntax.Func, place: Place) -> str:
        if e.star:
            return sx.count_star()
        s = self.sql(e.args[0], child(place, "args", 0))
        t = self._type(child(place, "args", 0))
        # Entities count and collect by identity; a sum of integers stays one.
        return sx.aggregate(e.name, s, e.distinct, t in (NODE, EDGE), t == INT)

    def _fn_id(self, e: syntax.Func, place: Place) -> str:
        return sx.entity_id(self._args(e, place)[0])

    def _fn_labels(self, e: syntax.Func, place: Place) -> str:
        return sx.labels(self._args(e, place)[0])

    def _fn_tointeger(self, e: syntax.Func, place: Place) -> str:
        return sx.to_integer(self._args(e, place)[0], self._type(child(place, "args", 0)))

    def _fn_type(self, e: syntax.Func, place: Place) -> str:
        return sx.edge_type(self._args(e, place)[0])

    def _fn_startnode(self, e: syntax.Func, place: Place) -> str:
        return sx.start_node(self._args(e, place)[0])

    def _fn_endnode(self, e: syntax.Func, place: Place) -> str:
        return sx.end_node(self._args(e, place)[0])

    def _fn_nodes(self, e: syntax.Func, place: Place) -> str:
        return sx.path_nodes(self._args(e, place)[0])

    def _fn_relationships(self, e: syntax.Func, place: Place) -> str:
        return sx.path_rels(self._args(e, place)[0])

    def _fn_length(self, e: syntax.Func, place: Place) -> str:
        (s,) = self._args(e, place)
        t = self._type(child(place, "args", 0))
        if t == PATH:
            return sx.path_length(s)
        return sx.length(s, t == STRING)

    def _fn_size(self, e: syntax.Func, place: Place) -> str:
        (s,) = self._args(e, place)
        return sx.length(s, self._type(child(place, "args", 0)) == STRING)

    def _fn_coalesce(self, e: syntax.Func, place: Place) -> str:
        return sx.coalesce(self._args(e, place))

    def _fn_substring(self, e: syntax.Func, place: Place) -> str:
        return sx.substring(*self._args(e, place))

    def _fn_range(self, e: syntax.Func, place: Place) -> str:
        return sx.range_of(*self._args(e, place))

    def _fn_exists(self, e: syntax.Func, place: Place) -> str:
        return sx.is_null(self._args(e, place)[0], negated=True)
