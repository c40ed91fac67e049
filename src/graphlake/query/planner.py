"""The logical plan of a bound Cypher query (query.logical, over query.binder's
`BoundQuery`) lowered to one DuckDB statement: a chain of CTEs, one step per clause.

`plan_query` binds the query, builds its logical plan (typed operators, rewrite rules,
executors) and `lower`s it: the planner walks `LogicalPlan.ops` clause by clause
(`clause_ops`) and dispatches on the kind of each clause's first operator (`LOWERINGS`):
its `Lowering` turns that operator and the ones after it in the clause (each of a kind it
declares) into the clause's step, through query.sqlgen's builders. From the operators:

    Unwind                          the list unnested (`sqlgen.unwind`)
    Project, Aggregate              WITH / RETURN: the items in the order written,
      + Sort, Skip, Limit, Filter   grouped by the non-aggregates for an Aggregate (as
                                    openCypher does), sorted, paged, then WITH's WHERE:
                                    one SELECT (`sqlgen.projection`)
    ProcedureCall (+ Filter)        the algorithm's rows joined to the node table(s)
                                    (query.calls, YIELD ... WHERE)
    NodeScan, Lookup, Argument      MATCH: the patterns its operators say (each node's
      + Expand, VarExpand,          labels and inline map, each hop's types, direction,
        ShortestPath, NamePath,     bounds and far node, a chain read `backwards` turned
        Filter                      back, shortestPath's ends, path names:
                                    query.patterns `patterns_of`), compiled by the
                                    pattern compiler (FROM items, walks, seeds, frontiers,
                                    prefetches, path searches, uniqueness); the clause's
                                    WHERE whole is the step's condition
    OptionalJoin                    OPTIONAL MATCH: the incoming rows numbered, its
                                    operators matched as MATCH's, left-joined back

Each `Typed` expression is compiled at its binder place (query.expr). Two things of a
MATCH are not read from its operators: the node types each node pattern can be (the
binder's, narrowed by relationships and other patterns: `BoundQuery.node_types`, by the
element's place), and its WHERE, compiled whole as written, not as the pushed-down
Filters (the WHERE conditions that seed walks are the binder's `anchors`): a WHERE
conjunct's Filter is not read, and a Lookup a WHERE conjunct selects gives its node and
label, its key and value staying in the WHERE. The SQL is what it was before MATCH was
lowered from operators (`bench/compiler_corpus.py`: byte for byte; the answers:
`bench/lowering_answers.py`).

Each step's rows are the bindings so far: one column per variable (a node or relationship
is a struct of its id, label or type and the properties the query reads). The last step
is the RETURN, so its ORDER BY is the statement's. The SQL text is written by
query.sqlgen (its `clauses` and `select`) alone. The executors the logical plan chose
decide what else the `Plan` carries: the whole query as a traversal on the adjacency, or
its first MATCH's rows read from there (query.traverse).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from graphlake.errors import CypherError
from graphlake.query import sqlgen, syntax
from graphlake.query.binder import BoundQuery, Place, bind, child
from graphlake.query.calls import AlgoCall, compile_call, completed
from graphlake.query.checker import Binding, Checker
from graphlake.query.expr import ExprCompiler, contains_aggregate
from graphlake.query.logical import (
    Aggregate,
    Argument,
    Expand,
    Filter,
    Limit,
    LogicalPlan,
    Lookup,
    NamePath,
    NodeScan,
    Op,
    OptionalJoin,
    ProcedureCall,
    Project,
    ShortestPath,
    Skip,
    Sort,
    Typed,
    Unwind,
    VarExpand,
    choose_executors,
    pattern_text,
)
from graphlake.query.logical import build as build_logical
from graphlake.query.patterns import (
    FreshNames,
    PathSearch,
    PatternCompiler,
    Prefetch,
    Seed,
    patterns_of,
)
from graphlake.query.steps import PlanStep
from graphlake.query.traverse import BINDINGS, MatchOnCsr, Traversal, match_on_csr, traversal_of
from graphlake.query.usage import property_usage
from graphlake.schema.model import Schema


@dataclass(frozen=True)
class Plan:
    steps: tuple[PlanStep, ...]
    tables: frozenset[str]  # the only tables the statement reads
    columns: tuple[str, ...]
    seeds: tuple[Seed, ...] = ()  # anchored traversals: run first, then the prefetches
    prefetch: tuple[Prefetch, ...] = ()
    searches: tuple[PathSearch, ...] = ()
    params: Mapping[str, object] = dataclasses.field(default_factory=dict)  # prepared
    # The same query as an anchored traversal on the adjacency (query.traverse), when it
    # has that shape: the executor runs it there instead of this SQL.
    traversal: Traversal | None = None
    # The Cypher parameters as given, which of them are prepared parameters (Cypher name
    # -> prepared name), and those whose values the plan depends on (Checker.inlined).
    arguments: Mapping[str, object] = dataclasses.field(default_factory=dict)
    bound_names: Mapping[str, str] = dataclasses.field(default_factory=dict)
    inlined: frozenset[str] = frozenset()
    # The logical plan: typed operators, each with its executor (query.logical).
    logical: LogicalPlan | None = None
    # Otherwise its first MATCH, when that runs on the adjacency (query.traverse): the
    # executor may register its rows and run `on_bindings()` instead of this plan.
    csr_match: MatchOnCsr | None = None
    calls: tuple[AlgoCall, ...] = ()  # graph algorithms, run before the SQL

    def argument(self, value: object) -> object:
        """A seed lookup's value: a constant, or a parameter's value in `arguments`."""
        return self.arguments[value.name] if isinstance(value, syntax.Param) else value

    def rebound(self, arguments: Mapping[str, object]) -> Plan | None:
        """This plan for other values of its parameters: the same names and types
        (`checker.param_signature`) and the same values of the `inlined` ones, which the
        plan cache checks; None when the traversal does not take the new values."""
        traversal = self.traversal
        if traversal is not None:
            traversal = traversal.with_params(dict(arguments))
            if traversal is None:
                return None
        csr_match = self.csr_match
        if csr_match is not None:
            bound = csr_match.traversal.with_params(dict(arguments))
            if bound is None:
                return None
            csr_match = dataclasses.replace(csr_match, traversal=bound)
        params = {prepared: arguments[name] for name, prepared in self.bound_names.items()}
        return dataclasses.replace(
            self,
            params=params,
            traversal=traversal,
            csr_match=csr_match,
            arguments=dict(arguments),
        )

    def on_bindings(self) -> Plan:
        """The plan whose first MATCH reads the bindings `csr_match` produces: its walk
        CTEs, seeds, prefetches and searches dropped, its step reading BINDINGS."""
        m = self.csr_match
        assert m is not None
        i = next(i for i, s in enumerate(self.steps) if s.name == m.step)
        steps = (
            self.steps[0],
            PlanStep(m.step, "clause", self.steps[i].what, m.sql),
            *self.steps[i + 1 :],
        )
        text = " ".join(s.sql for s in steps)  # tables only the MATCH read: not registered
        return dataclasses.replace(
            self,
            steps=steps,
            tables=frozenset(t for t in self.tables if sqlgen.mentions(text, t)),
            seeds=self.seeds[m.seeds :],
            prefetch=self.prefetch[m.prefetch :],
            searches=self.searches[m.searches :],
            csr_match=None,
        )

    def params_of(self, sql: str) -> dict[str, object]:
        """The prepared parameters `sql` names (DuckDB refuses any others)."""
        named = sqlgen.param_names(sql)
        return {k: v for k, v in self.params.items() if k in named}

    def with_step_sql(self, cte: str, sql: str, executor: str) -> Plan:
        """The plan with the walk `cte` computed by `sql` (over rows a path search by
        `executor` registered), not recursively."""
        steps = tuple(
            s.answered(sql, executor) if s.kind == "walk" and s.name == cte else s
            for s in self.steps
        )
        return dataclasses.replace(self, steps=steps)

    @property
    def sql(self) -> str:
        return self.sql_until(len(self.steps) - 1, final=True)

    def sql_until(self, index: int, final: bool = False) -> str:
        """The statement up to step `index`: its rows (`final`) or how many rows it has."""
        ctes = [s.definition() for s in self.steps[:index]]
        last = self.steps[index]
        if final:
            body = last.sql
        else:
            if last.kind == "walk":  # a recursive CTE: define it, count the paths it found
                ctes.append(last.definition())
            body = last.counting_sql()
        return sqlgen.with_ctes(ctes, body)


def plan_query(query: syntax.Query, schema: Schema, params: dict[str, object]) -> Plan:
    query = completed(query)
    bound = bind(query, schema, params)
    return lower(build_logical(bound, Checker(schema, params)), bound, schema, params)


def lower(
    logical: LogicalPlan, bound: BoundQuery, schema: Schema, params: dict[str, object]
) -> Plan:
    """The SQL plan of `logical`, the logical plan of `bound` (query.logical.build, or
    one rewritten from it): each clause's operators lowered to one step (`LOWERINGS`)."""
    usage = logical.usage or property_usage(bound.query)  # the query's (query.usage)
    return _Planner(schema, params, bound, usage).plan(logical)


def clause_ops(logical: LogicalPlan) -> list[tuple[int, tuple[Op, ...]]]:
    """(clause index, its operators) for each clause of the plan, in order."""
    if logical.ops and (not logical.clauses or logical.clauses[0] != 0):
        raise ValueError("a logical plan's `clauses` must say where each clause begins")
    ends = (*logical.clauses[1:], len(logical.ops))
    return [
        (i, logical.ops[start:end])
        for i, (start, end) in enumerate(zip(logical.clauses, ends, strict=True))
    ]


class _Planner:
    def __init__(
        self,
        schema: Schema,
        params: dict[str, object],
        bound: BoundQuery,
        usage: dict[str, set[str] | None],
    ):
        self.checker = Checker(schema, params)
        # Parameters whose values the binding read (UNWIND lists, regexes, CALL
        # arguments): the plan depends on them too.
        self.checker.inlined |= bound.inlined
        self.bound = bound
        self.query = bound.query
        self.names = FreshNames()
        self.tables: set[str] = set()
        self.patterns = PatternCompiler(self.checker, bound, usage, self.names, self.tables)
        self.exprs = ExprCompiler(self.checker, bound, self._subquery)
        self.steps: list[PlanStep] = [PlanStep("s0", "start", "start: one empty row", sqlgen.START)]
        self.scope: dict[str, Binding] = {}
        self.seeds: list[Seed] = []
        self.prefetch: list[Prefetch] = []
        self.searches: list[PathSearch] = []
        # The first MATCH's step reading its rows from the adjacency, if the logical plan
        # puts it there: (step, SQL, its variables, its seeds, prefetches, searches).
        self.first_match: tuple[str, str, frozenset[str], tuple[int, int, int]] | None = None
        self.calls: list[AlgoCall] = []
        self.columns: tuple[str, ...] = ()

    @property
    def prev(self) -> str:
        return next(s.name for s in reversed(self.steps) if s.is_rows)

    def plan(self, logical: LogicalPlan) -> Plan:
        for i, ops in clause_ops(logical):
            lowering = LOWERINGS[type(ops[0])]
            assert all(type(op) in lowering.follows for op in ops[1:]), ops
            lowering.lower(self, i, ops)
            self.scope = dict(self.bound.scopes[i])
        traversal, csr_match = None, None
        if logical.executors == {"csr"}:  # the executor rule put the whole query there
            traversal = traversal_of(logical, self.checker)
        elif logical.ops and logical.ops[0].executor == "csr":  # its first MATCH
            assert self.first_match is not None
            step, sql, names, counts = self.first_match
            csr_match = match_on_csr(logical, self.checker, step, sql, counts)
            if {v.name for v in csr_match.vars} != names:  # not the variables SQL reads
                csr_match, logical = None, choose_executors(logical, self.checker, csr=False)
        return Plan(
            tuple(self.steps),
            frozenset(self.tables),
            self.columns,
            tuple(self.seeds),
            tuple(self.prefetch),
            tuple(self.searches),
            dict(self.checker.bound),
            traversal,
            dict(self.checker.params),
            dict(self.checker.bound_names),
            frozenset(self.checker.inlined),
            logical,
            csr_match,
            tuple(self.calls),
        )

    def _add(self, what: str, sql: str) -> None:
        self.steps.append(PlanStep(f"s{len(self.steps)}", "clause", what, sql))

    # --- MATCH
    def _lower_match(self, i: int, ops: tuple[Op, ...]) -> None:
        """A MATCH's operators (each pattern's start, hops, NamePath, ShortestPath and
        Filters): its patterns read from them (`patterns_of`), compiled by the pattern
        compiler (FROM items, walks, seeds, prefetches, path searches, uniqueness); the
        clause's WHERE whole is the step's condition (not where the pushdown put its
        Filters)."""
        self._match(i, ops, optional=False)

    def _optional(self, i: int, ops: tuple[Op, ...]) -> None:
        """An OptionalJoin: the incoming rows numbered, its operators matched over them
        (as `_lower_match`), left-joined back."""
        (join,) = ops
        assert isinstance(join, OptionalJoin)
        self._match(i, join.ops, optional=True)

    def _match(self, i: int, ops: tuple[Op, ...], optional: bool) -> None:
        m = self.query.clauses[i]  # its WHERE, compiled whole at the clause's place
        assert isinstance(m, syntax.Match) and m.optional == optional
        patterns = patterns_of(ops)
        source = self.prev
        first = len(self.steps) == 1 and not self.scope
        if optional:
            # Number the incoming rows, match over them, and left-join back: a row with no
            # match stays, its new variables null.
            self._add("number rows for OPTIONAL MATCH", sqlgen.numbered(source))
            source = self.prev
        compiled = self.patterns.compile(patterns, self.scope, source, self._subquery, (i,))
        self.steps += compiled.ctes
        self.seeds += compiled.seeds
        self.prefetch += compiled.prefetch
        self.searches += compiled.searches
        conditions = list(compiled.conditions)
        where_sql = None
        if m.where is not None:
            where_sql = self.exprs.condition(m.where, (i, "where"))
            conditions.append(where_sql)
        new_cols = [sqlgen.named(sql, v) for v, sql in compiled.outputs.items()]
        what = ("OPTIONAL MATCH " if optional else "MATCH ") + ", ".join(
            pattern_text(p) for p in patterns
        )
        if not optional:
            self._add(what, sqlgen.match(source, self.scope, new_cols, compiled.items, conditions))
            if first:  # the same rows from the adjacency (executor: csr_match)
                sql = sqlgen.on_rows(source, compiled.outputs, BINDINGS, where_sql)
                counts = (len(compiled.seeds), len(compiled.prefetch), len(compiled.searches))
                self.first_match = (self.prev, sql, frozenset(compiled.outputs), counts)
        else:
            self._add(
                what,
                sqlgen.optional_match(
                    source, self.scope, compiled.outputs, new_cols, compiled.items, conditions
                ),
            )

    def _subquery(self, e: syntax.Expr, place: Place) -> str:
        """A pattern predicate or EXISTS { } (at `place`) as a correlated EXISTS subquery."""
        patterns: tuple[syntax.Pattern, ...]
        if isinstance(e, syntax.PatternPred):
            patterns, where = (syntax.Pattern(e.pos, None, e.chain),), None
        else:
            assert isinstance(e, syntax.Exists)
            patterns, where = e.patterns, e.where
        scope = self.bound.subquery_scopes[place]
        compiled = self.patterns.compile(patterns, scope, None, self._subquery, place)
        conditions = list(compiled.conditions)
        if where is not None:
            conditions.append(self.exprs.condition(where, child(place, "where")))
        return sqlgen.exists(compiled.items, conditions)

    # --- UNWIND
    def _unwind(self, i: int, ops: tuple[Op, ...]) -> None:
        (u,) = ops
        assert isinstance(u, Unwind)
        s = self._sql(u.expr)
        self._add(f"UNWIND AS {u.var}", sqlgen.unwind(self.prev, self.scope, s, u.var))

    # --- CALL (query/calls.py)
    def _call(self, i: int, ops: tuple[Op, ...]) -> None:
        c, *rest = ops
        assert isinstance(c, ProcedureCall) and c.resolved is not None
        where = None
        for op in rest:  # YIELD ... WHERE
            assert isinstance(op, Filter) and where is None
            where = self._sql(op.condition)
        compiled = compile_call(c.resolved, self.scope, self.prev, self.patterns, self.names, where)
        self.calls.append(compiled.call)
        self._add(compiled.what, compiled.sql)

    # --- WITH / RETURN
    def _projection(self, i: int, ops: tuple[Op, ...]) -> None:
        """Project or Aggregate, then its Sort, Skip, Limit and Filter (WITH's WHERE):
        one SELECT."""
        p, *rest = ops
        assert isinstance(p, Project | Aggregate)
        sort, skip, limit, where = None, None, None, None
        for op in rest:
            if isinstance(op, Sort):
                sort = op
            elif isinstance(op, Skip):
                skip = op
            elif isinstance(op, Limit):
                limit = op
            else:
                assert isinstance(op, Filter), f"{type(op).__name__} after a projection"
                where = op
        select = [sqlgen.named(self._sql(t), alias) for alias, t in p.items]
        grouped = isinstance(p, Aggregate)
        keys, hidden = ([], []) if sort is None else self._order(i, p, sort, grouped)
        sql = sqlgen.projection(
            self.prev,
            select + hidden,
            distinct=p.distinct,
            grouped=grouped,
            names=[alias for alias, _ in p.items],
            keys=keys,
            limit=None if limit is None else self._count(limit.count.expr),
            offset=None if skip is None else self._count(skip.count.expr),
            condition=None if where is None else self._sql(where.condition),
        )
        self.columns = tuple(alias for alias, _ in p.items)
        self._add(("RETURN " if p.final else "WITH ") + ", ".join(self.columns), sql)

    def _sql(self, t: Typed) -> str:
        """A typed expression's SQL, compiled at the place the binder typed it."""
        assert t.place is not None, f"{t} has no place"
        return self.exprs.sql(t.expr, t.place)

    def _order(
        self, i: int, p: Project | Aggregate, sort: Sort, grouped: bool
    ) -> tuple[list[str], list[str]]:
        """The ORDER BY keys, and (when the projection aggregates) the extra columns of
        the grouping that the keys sort by: aggregates the projection does not list."""
        scope = self.bound.scopes[i]  # the projected names
        # An ORDER BY expression that repeats a projected one sorts by that column.
        projected = {}
        for j, (alias, t) in enumerate(p.items):
            if j >= p.starred:  # not an item `*` spelled out
                projected[self._sql(t)] = sqlgen.column(alias)
        keys: list[str] = []
        hidden: list[str] = []
        for (t, desc), before in zip(sort.keys, sort.before, strict=True):
            e = t.expr
            if not isinstance(e, syntax.Var) or e.name not in scope:
                with contextlib.suppress(CypherError):
                    key = projected.get(self._before(e, before))
                    if key is not None:
                        keys.append(sqlgen.sort_key(key, desc))
                        continue
            assert t.place is not None
            sql = self._before(e, t.place)
            if grouped and contains_aggregate(e):
                name = sqlgen.order_column(len(hidden) + 1)
                hidden.append(sqlgen.named(sql, name))
                sql = sqlgen.column(name)
            keys.append(sqlgen.sort_key(sql, desc))
        return keys, hidden

    def _before(self, e: syntax.Expr, place: Place) -> str:
        """An ORDER BY key compiled against the variables before the projection
        ("order_before") or after it ("order"): the binder's error when it does not type
        there."""
        failed = self.bound.failed.get(place)
        if failed is not None:
            raise failed
        return self.exprs.sql(e, place)

    def _count(self, e: syntax.Expr) -> int:
        """A LIMIT or SKIP count: a literal or a parameter (the binder checked it)."""
        value = self.checker.param(e) if isinstance(e, syntax.Param) else getattr(e, "value", e)
        assert isinstance(value, int)
        return value


@dataclass(frozen=True)
class Lowering:
    """How a clause whose first operator is of one kind becomes its step: `lower` (a
    `_Planner` method taking the clause's index and operators), which lowers the
    operators after the first too, each of a kind in `follows`."""

    lower: Callable[[_Planner, int, tuple[Op, ...]], None]
    follows: frozenset[type[Op]]


_MATCH = Lowering(
    _Planner._lower_match,
    frozenset((NodeScan, Lookup, Argument, Expand, VarExpand, ShortestPath, NamePath, Filter)),
)
_PROJECTION = Lowering(_Planner._projection, frozenset((Sort, Skip, Limit, Filter)))
# By the kind of a clause's first operator.
LOWERINGS: Mapping[type[Op], Lowering] = {
    NodeScan: _MATCH,
    Lookup: _MATCH,
    Argument: _MATCH,
    OptionalJoin: Lowering(_Planner._optional, frozenset()),
    Unwind: Lowering(_Planner._unwind, frozenset()),
    ProcedureCall: Lowering(_Planner._call, frozenset((Filter,))),
    Project: _PROJECTION,
    Aggregate: _PROJECTION,
}
