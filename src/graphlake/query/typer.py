"""The type rules of Cypher expressions: each expression's type from its parts'.

`Typer` types the expressions of one context (the variables in force, whether
aggregates and subqueries are allowed) for the binder (query.binder), recording each
type at the expression's `Place` in the query, and raises the typed errors with the
line and column of the offending token: arithmetic (integers divide to an integer; `+`
joins strings and lists), comparisons (`Checker.comparable`), conditions, IN, string
predicates, `=~` (a literal or parameter pattern held to RE2's caps), properties of
nodes, relationships, maps and temporal values, indexing, CASE, lists and maps,
functions (`SCALARS` and the special ones), aggregates (only where allowed, never
nested) and vector distances. query.expr writes the SQL of what it typed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import cast

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
from graphlake.regex import pattern_problem
from graphlake.schema.model import VECTOR_METRICS

# An expression's place in the query: the clause's index, then the field names and item
# indexes down to it (an inline property map's value: query.binder.inline_place).
Place = tuple[object, ...]
Scope = Mapping[str, Binding]
# Binds a pattern predicate or EXISTS { } at a place, in a scope (the binder's).
Subquery = Callable[[syntax.PatternPred | syntax.Exists, Place, Scope], None]

AGGREGATES = ("count", "sum", "avg", "min", "max", "collect")
TEMPORAL_FIELDS = ("year", "month", "day", "hour", "minute", "second")
# Scalar functions: name -> (result type, arity); query.expr holds their SQL.
SCALARS: dict[str, tuple[str | None, tuple[int, ...]]] = {
    "toupper": (STRING, (1,)),
    "tolower": (STRING, (1,)),
    "upper": (STRING, (1,)),
    "lower": (STRING, (1,)),
    "trim": (STRING, (1,)),
    "ltrim": (STRING, (1,)),
    "rtrim": (STRING, (1,)),
    "replace": (STRING, (3,)),
    "left": (STRING, (2,)),
    "right": (STRING, (2,)),
    "reverse": (STRING, (1,)),
    "split": (LIST, (2,)),
    "tostring": (STRING, (1,)),
    "tointeger": (INT, (1,)),
    "tofloat": (FLOAT, (1,)),
    "toboolean": (BOOL, (1,)),
    "abs": (None, (1,)),
    "ceil": (FLOAT, (1,)),
    "floor": (FLOAT, (1,)),
    "round": (FLOAT, (1,)),
    "sign": (INT, (1,)),
    "sqrt": (FLOAT, (1,)),
    "exp": (FLOAT, (1,)),
    "log": (FLOAT, (1,)),
    "log10": (FLOAT, (1,)),
    "rand": (FLOAT, (0,)),
    "head": (None, (1,)),
    "last": (None, (1,)),
    "tail": (LIST, (1,)),
    "date": (DATE, (0, 1)),
    "datetime": (DATETIME, (0, 1)),
    "timestamp": (INT, (0,)),
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


def child(place: Place, *path: object) -> Place:
    """The place of a part of the expression at `place` (a field name, then an index)."""
    return (*place, *path)


class Typer:
    """Types the expressions of one context and records each type in `types` at its
    place: `scope` names the variables in force, `aggregates` allows aggregates, and
    `subquery` binds a pattern predicate or EXISTS { } (None: not allowed here)."""

    def __init__(
        self,
        checker: Checker,
        scope: Scope,
        types: dict[Place, str | None],
        aggregates: bool = False,
        subquery: Subquery | None = None,
    ):
        self.checker = checker
        self.scope = scope
        self.types = types
        self.aggregates = aggregates
        self.subquery = subquery

    def typed(self, e: syntax.Expr, place: Place) -> str | None:
        method = getattr(self, "_" + type(e).__name__.lower())
        t = method(e, place)
        self.types[place] = t
        return t

    def condition(self, e: syntax.Expr, place: Place) -> str | None:
        t = self.typed(e, place)
        self.checker.expect("a condition", t, (BOOL,), e.pos)
        return t

    # --- leaves
    def _lit(self, e: syntax.Lit, place: Place) -> str | None:
        return value_type(e.value)

    def _param(self, e: syntax.Param, place: Place) -> str | None:
        return self.checker.param_type(e)

    def _var(self, e: syntax.Var, place: Place) -> str | None:
        return self.binding(e.name, e.pos).kind

    def binding(self, name: str, pos: syntax.Pos) -> Binding:
        if name not in self.scope:
            raise CypherNameError(
                f"variable {name!r} is not defined{suggest(name, self.scope)}", *pos
            )
        return self.scope[name]

    def _prop(self, e: syntax.Prop, place: Place) -> str | None:
        if isinstance(e.subject, syntax.Var):
            b = self.binding(e.subject.name, e.subject.pos)
            if b.is_entity:
                self.types[child(place, "subject")] = b.kind
                return self.checker.property_type(e.subject.name, b, e.name, e.pos)
        t = self.typed(e.subject, child(place, "subject"))
        if t in (DATE, DATETIME) and e.name in TEMPORAL_FIELDS:
            return INT
        if t not in (None, MAP):
            raise CypherTypeError(f"a {t} has no property {e.name!r}", *e.pos)
        return None

    def _index(self, e: syntax.Index, place: Place) -> str | None:
        t = self.typed(e.subject, child(place, "subject"))
        it = self.typed(e.index, child(place, "index"))
        if it == STRING:
            return None
        self.checker.expect("a list index", it, (INT,), e.index.pos)
        self.checker.expect("indexing", t, (LIST, STRING), e.pos)
        return None

    def _listlit(self, e: syntax.ListLit, place: Place) -> str | None:
        for n, item in enumerate(e.items):
            self.typed(item, child(place, "items", n))
        return LIST

    def _maplit(self, e: syntax.MapLit, place: Place) -> str | None:
        for n, (_, value) in enumerate(e.entries):
            self.typed(value, child(place, "entries", n))
        return MAP

    # --- operators
    def _unary(self, e: syntax.Unary, place: Place) -> str | None:
        t = self.typed(e.operand, child(place, "operand"))
        if e.op == "NOT":
            self.checker.expect("NOT", t, (BOOL,), e.pos)
            return BOOL
        self.checker.expect(f"unary {e.op}", t, NUMBERS, e.pos)
        return t

    def _isnull(self, e: syntax.IsNull, place: Place) -> str | None:
        self.typed(e.operand, child(place, "operand"))
        return BOOL

    def _binary(self, e: syntax.Binary, place: Place) -> str | None:
        left, right = child(place, "left"), child(place, "right")
        if e.op in ("AND", "OR", "XOR"):
            self.condition(e.left, left)
            self.condition(e.right, right)
            return BOOL
        if e.op == "IN":
            return self._in(e, place)
        lt, rt = self.typed(e.left, left), self.typed(e.right, right)
        if e.op in ("=", "<>", "<", "<=", ">", ">="):
            self.checker.comparable(e.op, lt, rt, e.pos)
            return BOOL
        if e.op in ("STARTS", "ENDS", "CONTAINS", "=~"):
            word = {"STARTS": "STARTS WITH", "ENDS": "ENDS WITH"}.get(e.op, e.op)
            self.checker.expect(word, lt, (STRING,), e.left.pos)
            self.checker.expect(word, rt, (STRING,), e.right.pos)
            if e.op == "=~":
                self._check_pattern(e.right)
            return BOOL
        if e.op == "+" and STRING in (lt, rt):
            return STRING
        if e.op == "+" and LIST in (lt, rt):
            return LIST
        self.checker.expect(f"'{e.op}'", lt, NUMBERS, e.left.pos)
        self.checker.expect(f"'{e.op}'", rt, NUMBERS, e.right.pos)
        both_int = lt == INT and rt == INT
        if e.op == "^":
            return FLOAT
        if e.op == "/":  # Cypher divides integers to an integer (truncating)
            return INT if both_int else FLOAT
        return INT if both_int else (FLOAT if lt and rt else None)

    def _check_pattern(self, e: syntax.Expr) -> None:
        """A known `=~` pattern must be one RE2 runs within the caps (the plan depends
        on a parameter's value then)."""
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

    def _in(self, e: syntax.Binary, place: Place) -> str | None:
        lt = self.typed(e.left, child(place, "left"))
        right = child(place, "right")
        if isinstance(e.right, syntax.ListLit):
            types = [self.typed(i, child(right, "items", n)) for n, i in enumerate(e.right.items)]
            for it, item in zip(types, e.right.items, strict=True):
                self.checker.comparable("IN", lt, it, item.pos)
            return BOOL
        rt = self.typed(e.right, right)
        self.checker.expect("IN", rt, (LIST,), e.right.pos)
        return BOOL

    def _case(self, e: syntax.Case, place: Place) -> str | None:
        if e.subject is not None:
            self.typed(e.subject, child(place, "subject"))
        types = set()
        for n, (cond, value) in enumerate(e.whens):
            if e.subject is not None:
                self.typed(cond, child(place, "whens", n, 0))
            else:
                self.condition(cond, child(place, "whens", n, 0))
            types.add(self.typed(value, child(place, "whens", n, 1)))
        if e.default is not None:
            types.add(self.typed(e.default, child(place, "default")))
        types.discard(None)
        return types.pop() if len(types) == 1 else None

    def _patternpred(self, e: syntax.PatternPred, place: Place) -> str | None:
        return self._exists(e, place)

    def _exists(self, e: syntax.PatternPred | syntax.Exists, place: Place) -> str | None:
        if self.subquery is None:
            raise CypherError("a pattern predicate is not allowed here", *e.pos)
        self.subquery(e, place, self.scope)
        return BOOL

    # --- functions
    def _func(self, e: syntax.Func, place: Place) -> str | None:
        if e.name in AGGREGATES:
            return self._aggregate(e, place)
        if e.distinct:
            raise CypherError(f"DISTINCT only applies to aggregates, not {e.name}()", *e.pos)
        special = getattr(self, f"_fn_{e.name}", None)
        if special is not None:
            return cast("str | None", special(e, place))
        if e.name not in SCALARS:
            known = [*SCALARS, *_OTHER_FUNCTIONS, *AGGREGATES]
            raise CypherNameError(f"unknown function {e.name}(){suggest(e.name, known)}", *e.pos)
        t, arity = SCALARS[e.name]
        self._arity(e, arity)
        self._args(e, place)
        return t

    def _args(self, e: syntax.Func, place: Place, upto: int | None = None) -> list[str | None]:
        return [self.typed(a, child(place, "args", n)) for n, a in enumerate(e.args[:upto])]

    def _arity(self, e: syntax.Func, arity: tuple[int, ...]) -> None:
        if len(e.args) not in arity:
            wanted = " or ".join(map(str, arity))
            raise CypherError(f"{e.name}() takes {wanted} argument(s), got {len(e.args)}", *e.pos)

    def _fn_vector_distance(self, e: syntax.Func, place: Place) -> str | None:
        """`vector_distance(a, b [, metric])`: the metric a literal of VECTOR_METRICS."""
        self._arity(e, (2, 3))
        if len(e.args) == 3:
            arg = e.args[2]
            if not isinstance(arg, syntax.Lit) or arg.value not in VECTOR_METRICS:
                raise CypherError(
                    "vector_distance()'s third argument is a metric: "
                    f"{', '.join(map(repr, VECTOR_METRICS))}",
                    *e.pos,
                )
        self._args(e, place, upto=2)
        return FLOAT

    def _aggregate(self, e: syntax.Func, place: Place) -> str | None:
        if not self.aggregates:
            raise CypherError(f"aggregate {e.name}() is only allowed in WITH and RETURN", *e.pos)
        if e.star:
            if e.name != "count":
                raise CypherError(f"{e.name}(*) is not a function; did you mean count(*)?", *e.pos)
            return INT
        self._arity(e, (1,))
        inner = Typer(self.checker, self.scope, self.types, False, self.subquery)  # no nesting
        t = inner.typed(e.args[0], child(place, "args", 0))
        if e.name == "count":
            return INT
        if e.name == "collect":
            return LIST
        if e.name in ("sum", "avg"):
            self.checker.expect(f"{e.name}()", t, NUMBERS, e.args[0].pos)
        return FLOAT if e.name == "avg" else t

    def _entity(self, e: syntax.Func, place: Place, kinds: tuple[str, ...]) -> None:
        self._arity(e, (1,))
        arg = e.args[0]
        t = self.typed(arg, child(place, "args", 0))
        if t not in kinds:
            raise CypherTypeError(f"{e.name}() needs a {' or '.join(kinds)}, got a {t}", *arg.pos)

    def _fn_id(self, e: syntax.Func, place: Place) -> str | None:
        self._entity(e, place, (NODE, EDGE))
        return STRING

    def _fn_labels(self, e: syntax.Func, place: Place) -> str | None:
        self._entity(e, place, (NODE,))
        return LIST

    def _fn_type(self, e: syntax.Func, place: Place) -> str | None:
        self._entity(e, place, (EDGE,))
        return STRING

    def _fn_startnode(self, e: syntax.Func, place: Place) -> str | None:
        self._entity(e, place, (EDGE,))
        return STRING

    def _fn_endnode(self, e: syntax.Func, place: Place) -> str | None:
        self._entity(e, place, (EDGE,))
        return STRING

    def _fn_nodes(self, e: syntax.Func, place: Place) -> str | None:
        self._entity(e, place, (PATH,))
        return LIST

    def _fn_relationships(self, e: syntax.Func, place: Place) -> str | None:
        self._entity(e, place, (PATH,))
        return LIST

    def _fn_length(self, e: syntax.Func, place: Place) -> str | None:
        self._arity(e, (1,))
        (t,) = self._args(e, place)
        if t not in (PATH, EDGES):
            self.checker.expect("length()", t, (STRING, LIST, PATH), e.args[0].pos)
        return INT

    def _fn_size(self, e: syntax.Func, place: Place) -> str | None:
        self._arity(e, (1,))
        (t,) = self._args(e, place)
        self.checker.expect("size()", t, (STRING, LIST, EDGES), e.args[0].pos)
        return INT

    def _fn_coalesce(self, e: syntax.Func, place: Place) -> str | None:
        if not e.args:
            raise CypherError("coalesce() needs at least one argument", *e.pos)
        types = set(self._args(e, place)) - {None}
        return types.pop() if len(types) == 1 else None

    def _fn_substring(self, e: syntax.Func, place: Place) -> str | None:
        self._arity(e, (2, 3))
        self._args(e, place)
        return STRING

    def _fn_range(self, e: syntax.Func, place: Place) -> str | None:
        self._arity(e, (2, 3))
        self._args(e, place)
        return LIST

    def _fn_exists(self, e: syntax.Func, place: Place) -> str | None:
        self._arity(e, (1,))
        self._args(e, place)
        return BOOL


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
