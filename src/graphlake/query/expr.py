"""Cypher expressions to DuckDB SQL, with their types checked on the way.

A node or relationship variable is a struct (a FROM alias in the MATCH that binds it, a
struct column after that), so `n.name` is `"n"."name"` in both places. Literals of the
query are quoted by `literal`: no query text is ever pasted into SQL. Parameters are
DuckDB prepared parameters (`Checker.bind`: the value is bound once, however often the
query names it, and a cached plan binds other values: query.plancache); a null one is
the literal NULL (its type says all there is).

`=~` is DuckDB's `regexp_full_match`, RE2: linear in the input. A pattern given as a
literal or a parameter is held to the caps of `graphlake.regex` (the ones `@check` has)
before any SQL runs; a pattern computed per row is bounded by RE2's own memory cap and
the query's time limit.
"""

from __future__ import annotations

from collections.abc import Callable

from graphlake import sqltext
from graphlake.errors import CypherError, CypherNameError, CypherTypeError
from graphlake.query import syntax
from graphlake.query.checker import (
    BOOL,
    DATE,
    DATETIME,
    EDGE,
    EDGES,
    FLOAT,
    INT,
    LIST,
    MAP,
    NODE,
    NUMBERS,
    PATH,
    STRING,
    Binding,
    Checker,
    suggest,
    value_type,
)
from graphlake.query.sqlgen import literal
from graphlake.regex import pattern_problem
from graphlake.schema.model import VECTOR_METRICS

AGGREGATES = ("count", "sum", "avg", "min", "max", "collect")
_TEMPORAL_FIELDS = ("year", "month", "day", "hour", "minute", "second")

Typed = tuple[str, str | None]  # (SQL, type or None)


ident = sqltext.ident  # re-exported: the query modules quote names through expr


# Scalar functions: name -> (SQL template over the arguments' SQL, result type, arity).
_SCALARS: dict[str, tuple[str, str | None, tuple[int, ...]]] = {
    "toupper": ("upper({0})", STRING, (1,)),
    "tolower": ("lower({0})", STRING, (1,)),
    "upper": ("upper({0})", STRING, (1,)),
    "lower": ("lower({0})", STRING, (1,)),
    "trim": ("trim({0})", STRING, (1,)),
    "ltrim": ("ltrim({0})", STRING, (1,)),
    "rtrim": ("rtrim({0})", STRING, (1,)),
    "replace": ("replace({0}, {1}, {2})", STRING, (3,)),
    "left": ("left({0}, {1})", STRING, (2,)),
    "right": ("right({0}, {1})", STRING, (2,)),
    "reverse": ("reverse({0})", STRING, (1,)),
    "split": ("string_split({0}, {1})", LIST, (2,)),
    "tostring": ("CAST({0} AS VARCHAR)", STRING, (1,)),
    "tointeger": ("TRY_CAST(TRY_CAST({0} AS DOUBLE) AS BIGINT)", INT, (1,)),
    "tofloat": ("TRY_CAST({0} AS DOUBLE)", FLOAT, (1,)),
    "toboolean": ("TRY_CAST({0} AS BOOLEAN)", BOOL, (1,)),
    "abs": ("abs({0})", None, (1,)),
    "ceil": ("ceil({0})::DOUBLE", FLOAT, (1,)),
    "floor": ("floor({0})::DOUBLE", FLOAT, (1,)),
    "round": ("round({0})::DOUBLE", FLOAT, (1,)),
    "sign": ("sign({0})::BIGINT", INT, (1,)),
    "sqrt": ("sqrt({0})", FLOAT, (1,)),
    "exp": ("exp({0})", FLOAT, (1,)),
    "log": ("ln({0})", FLOAT, (1,)),
    "log10": ("log10({0})", FLOAT, (1,)),
    "rand": ("random()", FLOAT, (0,)),
    "head": ("({0})[1]", None, (1,)),
    "last": ("({0})[-1]", None, (1,)),
    "tail": ("({0})[2:]", LIST, (1,)),
    "date": ("CAST({0} AS DATE)", DATE, (0, 1)),
    "datetime": ("CAST({0} AS TIMESTAMPTZ)", DATETIME, (0, 1)),
    "timestamp": ("(epoch_ms(now()))::BIGINT", INT, (0,)),
}
# Vector distances over DOUBLE lists, as `graphlake.search.distance` defines them.
_DISTANCES = {
    "cosine": "list_cosine_distance({0}, {1})",
    "l2": "list_distance({0}, {1}) ** 2",
    "dot": "1 - list_inner_product({0}, {1})",
}
_OTHER_FUNCTIONS = (
    "vector_distance",
    "id",
    "labels",
    "type",
    "length",
    "size",
    "nodes",
    "relationships",
    "coalesce",
    "substring",
    "range",
    "startnode",
    "endnode",
    "exists",
)


class ExprCompiler:
    """Compiles the expressions of one clause; `scope` names the variables in force."""

    def __init__(
        self,
        checker: Checker,
        scope: dict[str, Binding],
        subquery: Callable[[syntax.Expr, ExprCompiler], str] | None = None,
        allow_aggregates: bool = False,
    ):
        self.checker = checker
        self.scope = scope
        self.subquery = subquery
        self.allow_aggregates = allow_aggregates

    def sql(self, e: syntax.Expr) -> str:
        return self.typed(e)[0]

    def typed(self, e: syntax.Expr) -> Typed:
        method = getattr(self, "_" + type(e).__name__.lower())
        return method(e)

    def condition(self, e: syntax.Expr) -> str:
        s, t = self.typed(e)
        self.checker.expect("a condition", t, (BOOL,), e.pos)
        return s

    # --- leaves
    def _lit(self, e: syntax.Lit) -> Typed:
        return literal(e.value), value_type(e.value)

    def _param(self, e: syntax.Param) -> Typed:
        value = self.checker.peek(e)
        if value is None:  # its type alone decides it (the plan cache keys on types)
            return literal(value), None
        return self.checker.bind(e), value_type(value)  # bound: a cached plan rebinds it

    def _var(self, e: syntax.Var) -> Typed:
        b = self.binding(e.name, e.pos)
        return ident(e.name), b.kind

    def binding(self, name: str, pos: syntax.Pos) -> Binding:
        if name not in self.scope:
            raise CypherNameError(
                f"variable {name!r} is not defined{suggest(name, self.scope)}", *pos
            )
        return self.scope[name]

    def _prop(self, e: syntax.Prop) -> Typed:
        if isinstance(e.subject, syntax.Var):
            b = self.binding(e.subject.name, e.subject.pos)
            if b.is_entity:
                t = self.checker.property_type(e.subject.name, b, e.name, e.pos)
                return f"{ident(e.subject.name)}.{ident(e.name)}", t
        s, t = self.typed(e.subject)
        if t in (DATE, DATETIME) and e.name in _TEMPORAL_FIELDS:
            return f"{e.name}({s})::BIGINT", INT
        if t not in (None, MAP):
            raise CypherTypeError(f"a {t} has no property {e.name!r}", *e.pos)
        return f"({s}).{ident(e.name)}", None

    def _index(self, e: syntax.Index) -> Typed:
        s, t = self.typed(e.subject)
        i, it = self.typed(e.index)
        if it == STRING:
            return f"({s})[{i}]", None
        self.checker.expect("a list index", it, (INT,), e.index.pos)
        self.checker.expect("indexing", t, (LIST, STRING), e.pos)
        # Cypher counts from 0 (and -1 is the last item); DuckDB from 1.
        return f"({s})[CASE WHEN ({i}) >= 0 THEN ({i}) + 1 ELSE ({i}) END]", None

    def _listlit(self, e: syntax.ListLit) -> Typed:
        return "[" + ", ".join(self.sql(i) for i in e.items) + "]", LIST

    def _maplit(self, e: syntax.MapLit) -> Typed:
        if not e.entries:
            return "NULL", MAP
        return "{" + ", ".join(f"{literal(k)}: {self.sql(v)}" for k, v in e.entries) + "}", MAP

    # --- operators
    def _unary(self, e: syntax.Unary) -> Typed:
        s, t = self.typed(e.operand)
        if e.op == "NOT":
            self.checker.expect("NOT", t, (BOOL,), e.pos)
            return f"(NOT {s})", BOOL
        self.checker.expect(f"unary {e.op}", t, NUMBERS, e.pos)
        return (f"(-{s})" if e.op == "-" else s), t

    def _isnull(self, e: syntax.IsNull) -> Typed:
        return f"({self.sql(e.operand)} IS {'NOT ' if e.negated else ''}NULL)", BOOL

    def _binary(self, e: syntax.Binary) -> Typed:
        if e.op in ("AND", "OR", "XOR"):
            left, right = self.condition(e.left), self.condition(e.right)
            if e.op == "XOR":
                return f"(({left}) <> ({right}))", BOOL
            return f"({left} {e.op} {right})", BOOL
        if e.op == "IN":
            return self._in(e)
        (ls, lt), (rs, rt) = self.typed(e.left), self.typed(e.right)
        if e.op in ("=", "<>", "<", "<=", ">", ">="):
            self.checker.comparable(e.op, lt, rt, e.pos)
            if lt in (NODE, EDGE) and e.op in ("=", "<>"):  # entities compare by identity
                return f"({ls}.id {e.op} {rs}.id)", BOOL
            return f"({ls} {e.op} {rs})", BOOL
        if e.op in ("STARTS", "ENDS", "CONTAINS", "=~"):
            word = {"STARTS": "STARTS WITH", "ENDS": "ENDS WITH"}.get(e.op, e.op)
            self.checker.expect(word, lt, (STRING,), e.left.pos)
            self.checker.expect(word, rt, (STRING,), e.right.pos)
            if e.op == "=~":
                self._check_pattern(e.right)
            fn = {
                "STARTS": "starts_with",
                "ENDS": "suffix",
                "CONTAINS": "contains",
                "=~": "regexp_full_match",
            }[e.op]
            return f"{fn}({ls}, {rs})", BOOL
        return self._arith(e, ls, lt, rs, rt)

    def _arith(self, e: syntax.Binary, ls: str, lt: str | None, rs: str, rt: str | None) -> Typed:
        if e.op == "+" and STRING in (lt, rt):
            return f"(CAST({ls} AS VARCHAR) || CAST({rs} AS VARCHAR))", STRING
        if e.op == "+" and LIST in (lt, rt):
            return f"list_concat({ls}, {rs})", LIST
        self.checker.expect(f"'{e.op}'", lt, NUMBERS, e.left.pos)
        self.checker.expect(f"'{e.op}'", rt, NUMBERS, e.right.pos)
        both_int = lt == INT and rt == INT
        t = INT if both_int else (FLOAT if lt and rt else None)
        if e.op == "^":
            return f"pow({ls}, {rs})", FLOAT
        if e.op == "/" and both_int:  # Cypher divides integers to an integer (truncating)
            return f"({ls} // {rs})", INT
        if e.op == "/":
            return f"({ls}::DOUBLE / {rs})", FLOAT
        return f"({ls} {e.op} {rs})", t

    def _check_pattern(self, e: syntax.Expr) -> None:
        """A known `=~` pattern must be one RE2 runs within the caps."""
        if isinstance(e, syntax.Lit):
            pattern = e.value
        elif isinstance(e, syntax.Param):
            pattern = self.checker.param(e)
        else:
            return
        if isinstance(pattern, str):
            problem = pattern_problem(pattern)
            if problem is not None:
                raise CypherError(
                    f"invalid regex for =~: {problem} (patterns are RE2 syntax)", *e.pos
                )

    def _in(self, e: syntax.Binary) -> Typed:
        ls, lt = self.typed(e.left)
        if isinstance(e.right, syntax.ListLit):
            items = [self.typed(i) for i in e.right.items]
            for (_, it), item in zip(items, e.right.items, strict=True):
                self.checker.comparable("IN", lt, it, item.pos)
            if not items:
                return "FALSE", BOOL
            return f"({ls} IN ({', '.join(s for s, _ in items)}))", BOOL
        rs, rt = self.typed(e.right)
        self.checker.expect("IN", rt, (LIST,), e.right.pos)
        # SQL IN over the unnested list keeps Cypher's null rules (no match + a null: null).
        return f"({ls} IN (SELECT unnest({rs})))", BOOL

    def _case(self, e: syntax.Case) -> Typed:
        parts = ["CASE"]
        if e.subject is not None:
            parts.append(self.sql(e.subject))
        types = set()
        for cond, value in e.whens:
            c = self.sql(cond) if e.subject is not None else self.condition(cond)
            v, t = self.typed(value)
            types.add(t)
            parts.append(f"WHEN {c} THEN {v}")
        if e.default is not None:
            v, t = self.typed(e.default)
            types.add(t)
            parts.append(f"ELSE {v}")
        parts.append("END")
        types.discard(None)
        return " ".join(parts), (types.pop() if len(types) == 1 else None)

    def _patternpred(self, e: syntax.PatternPred) -> Typed:
        return self._exists(e)

    def _exists(self, e: syntax.Expr) -> Typed:
        if self.subquery is None:
            raise CypherError("a pattern predicate is not allowed here", *e.pos)
        return self.subquery(e, self), BOOL

    # --- functions
    def _func(self, e: syntax.Func) -> Typed:
        if e.name in AGGREGATES:
            return self._aggregate(e)
        if e.distinct:
            raise CypherError(f"DISTINCT only applies to aggregates, not {e.name}()", *e.pos)
        special = getattr(self, f"_fn_{e.name}", None)
        if special is not None:
            return special(e)
        if e.name not in _SCALARS:
            known = [*_SCALARS, *_OTHER_FUNCTIONS, *AGGREGATES]
            raise CypherNameError(f"unknown function {e.name}(){suggest(e.name, known)}", *e.pos)
        template, t, arity = _SCALARS[e.name]
        self._arity(e, arity)
        if e.name in ("date", "datetime") and not e.args:
            return ("current_date" if e.name == "date" else "now()"), t
        return template.format(*(self.sql(a) for a in e.args)), t

    def _fn_vector_distance(self, e: syntax.Func) -> Typed:
        """`vector_distance(a, b [, "cosine" | "l2" | "dot"])`: the distance `g.search`
        ranks by (`graphlake.search.distance`): 1 - cos, squared Euclidean, 1 - a . b."""
        self._arity(e, (2, 3))
        metric = "cosine"
        if len(e.args) == 3:
            arg = e.args[2]
            if not isinstance(arg, syntax.Lit) or arg.value not in VECTOR_METRICS:
                raise CypherError(
                    "vector_distance()'s third argument is a metric: "
                    f"{', '.join(map(repr, VECTOR_METRICS))}",
                    *e.pos,
                )
            metric = arg.value
        a, b = (f"CAST({self.sql(x)} AS DOUBLE[])" for x in e.args[:2])
        # DuckDB's list distances raise on NULL elements anywhere in the child vector they
        # are given (also under a NULL row, whatever a CASE guard selects): hand them
        # fresh lists without NULLs, and null the result of a missing vector instead.
        safe = _DISTANCES[metric].format(
            *(
                f"list_transform(coalesce({x}, {y}), lambda z: coalesce(z, 0.0))"
                for x, y in ((a, b), (b, a))
            )
        )
        return f"CASE WHEN {a} IS NULL OR {b} IS NULL THEN NULL ELSE {safe} END", FLOAT

    def _arity(self, e: syntax.Func, arity: tuple[int, ...]) -> None:
        if len(e.args) not in arity:
            wanted = " or ".join(map(str, arity))
            raise CypherError(f"{e.name}() takes {wanted} argument(s), got {len(e.args)}", *e.pos)

    def _aggregate(self, e: syntax.Func) -> Typed:
        if not self.allow_aggregates:
            raise CypherError(f"aggregate {e.name}() is only allowed in WITH and RETURN", *e.pos)
        if e.star:
            if e.name != "count":
                raise CypherError(f"{e.name}(*) is not a function; did you mean count(*)?", *e.pos)
            return "count(*)", INT
        self._arity(e, (1,))
        inner = ExprCompiler(self.checker, self.scope, self.subquery)  # no nesting
        s, t = inner.typed(e.args[0])
        d = "DISTINCT " if e.distinct else ""
        if t in (NODE, EDGE):  # entities count and collect by identity
            s = f"{s}.id" if e.name == "count" else s
        if e.name == "count":
            return f"count({d}{s})", INT
        if e.name == "collect":
            return f"coalesce(list({d}{s}) FILTER (WHERE {s} IS NOT NULL), [])", LIST
        if e.name in ("sum", "avg"):
            self.checker.expect(f"{e.name}()", t, NUMBERS, e.args[0].pos)
        if e.name == "sum":  # openCypher: the sum of no values is 0
            total = f"coalesce(sum({d}{s}), 0)"
            return (f"{total}::BIGINT" if t == INT else total), t
        if e.name == "avg":
            return f"avg({d}{s})", FLOAT
        return f"{e.name}({d}{s})", t

    def _entity(self, e: syntax.Func, kinds: tuple[str, ...]) -> tuple[str, Binding]:
        self._arity(e, (1,))
        arg = e.args[0]
        s, t = self.typed(arg)
        if t not in kinds:
            raise CypherTypeError(f"{e.name}() needs a {' or '.join(kinds)}, got a {t}", *arg.pos)
        return s, Binding(t)

    def _fn_id(self, e: syntax.Func) -> Typed:
        s, _ = self._entity(e, (NODE, EDGE))
        return f"{s}.id", STRING

    def _fn_labels(self, e: syntax.Func) -> Typed:
        s, _ = self._entity(e, (NODE,))
        return f"[{s}._label]", LIST

    def _fn_type(self, e: syntax.Func) -> Typed:
        s, _ = self._entity(e, (EDGE,))
        return f"{s}._type", STRING

    def _fn_startnode(self, e: syntax.Func) -> Typed:
        s, _ = self._entity(e, (EDGE,))
        return f"{s}.src", STRING

    def _fn_endnode(self, e: syntax.Func) -> Typed:
        s, _ = self._entity(e, (EDGE,))
        return f"{s}.dst", STRING

    def _fn_nodes(self, e: syntax.Func) -> Typed:
        s, _ = self._entity(e, (PATH,))
        return f"{s}.nodes", LIST

    def _fn_relationships(self, e: syntax.Func) -> Typed:
        s, _ = self._entity(e, (PATH,))
        return f"{s}.rels", LIST

    def _fn_length(self, e: syntax.Func) -> Typed:
        self._arity(e, (1,))
        s, t = self.typed(e.args[0])
        if t == PATH:
            return f"{s}.length", INT
        if t == EDGES:
            return f"len({s})", INT
        self.checker.expect("length()", t, (STRING, LIST, PATH), e.args[0].pos)
        return (f"length({s})" if t == STRING else f"len({s})"), INT

    def _fn_size(self, e: syntax.Func) -> Typed:
        self._arity(e, (1,))
        s, t = self.typed(e.args[0])
        self.checker.expect("size()", t, (STRING, LIST, EDGES), e.args[0].pos)
        return (f"length({s})" if t == STRING else f"len({s})"), INT

    def _fn_coalesce(self, e: syntax.Func) -> Typed:
        if not e.args:
            raise CypherError("coalesce() needs at least one argument", *e.pos)
        typed = [self.typed(a) for a in e.args]
        types = {t for _, t in typed} - {None}
        return f"coalesce({', '.join(s for s, _ in typed)})", (
            types.pop() if len(types) == 1 else None
        )

    def _fn_substring(self, e: syntax.Func) -> Typed:
        self._arity(e, (2, 3))
        s, start = self.sql(e.args[0]), self.sql(e.args[1])
        if len(e.args) == 2:
            return f"substring({s}, ({start}) + 1)", STRING
        return f"substring({s}, ({start}) + 1, {self.sql(e.args[2])})", STRING

    def _fn_range(self, e: syntax.Func) -> Typed:
        self._arity(e, (2, 3))
        a, b = self.sql(e.args[0]), self.sql(e.args[1])
        step = self.sql(e.args[2]) if len(e.args) == 3 else "1"
        # Cypher's range includes its end; DuckDB's does not.
        return (f"range({a}, ({b}) + CASE WHEN ({step}) > 0 THEN 1 ELSE -1 END, {step})", LIST)

    def _fn_exists(self, e: syntax.Func) -> Typed:
        self._arity(e, (1,))
        return f"({self.sql(e.args[0])} IS NOT NULL)", BOOL


def contains_aggregate(e: object) -> bool:
    """Whether an expression (any AST value) calls an aggregate outside a subquery."""
    if isinstance(e, syntax.Func) and e.name in AGGREGATES:
        return True
    if isinstance(e, syntax.PatternPred | syntax.Exists):
        return False
    if isinstance(e, tuple):
        return any(contains_aggregate(x) for x in e)
    if isinstance(e, syntax.Expr):
        return any(contains_aggregate(getattr(e, f)) for f in e.__dataclass_fields__)
    return False
