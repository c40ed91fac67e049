"""A checked Cypher query to one DuckDB statement: a chain of CTEs, one per clause.

Each step's rows are the bindings so far: one column per variable (a node or relationship
is a struct of its id, label or type and the properties the query reads). MATCH joins
the pattern's tables to the previous step; OPTIONAL MATCH does the same over numbered
rows and left-joins the result back; WITH and RETURN project (grouping by the
non-aggregate items, as openCypher does); UNWIND unnests. The last step is the RETURN,
so its ORDER BY is the statement's. This module decides what each step reads and keeps;
the SQL text is written by query.sqlgen (its `clauses` and `select`).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from graphlake.errors import CypherError, CypherParameterError
from graphlake.query import sqlgen, syntax
from graphlake.query.calls import AlgoCall, compile_call, completed
from graphlake.query.checker import Binding, Checker, value_type
from graphlake.query.expr import ExprCompiler, contains_aggregate
from graphlake.query.logical import LogicalPlan, choose_executors, pattern_text
from graphlake.query.logical import build as build_logical
from graphlake.query.patterns import FreshNames, PathSearch, PatternCompiler, Prefetch, Seed
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
    return _Planner(schema, params, completed(query)).plan()


class _Planner:
    def __init__(self, schema: Schema, params: dict[str, object], query: syntax.Query):
        self.checker = Checker(schema, params)
        self.query = query
        self.names = FreshNames()
        self.tables: set[str] = set()
        self.patterns = PatternCompiler(
            self.checker, property_usage(query), self.names, self.tables
        )
        self.steps: list[PlanStep] = [PlanStep("s0", "start", "start: one empty row", sqlgen.START)]
        self.scope: dict[str, Binding] = {}
        self.seeds: list[Seed] = []
        self.prefetch: list[Prefetch] = []
        self.searches: list[PathSearch] = []
        # The first MATCH's step reading its rows from the adjacency, if the logical plan
        # puts it there: (step, SQL, its variables, its seeds, prefetches, searches).
        self.first_match: tuple[str, str, frozenset[str], tuple[int, int, int]] | None = None
        self.calls: list[AlgoCall] = []

    @property
    def prev(self) -> str:
        return next(s.name for s in reversed(self.steps) if s.is_rows)

    def plan(self) -> Plan:
        clauses = self.query.clauses
        last = clauses[-1]
        if not (isinstance(last, syntax.Projection) and last.is_return):
            pos = getattr(last, "pos", (None, None))
            raise CypherError("a query must end with RETURN", *pos)
        columns: tuple[str, ...] = ()
        for clause in clauses:
            if isinstance(clause, syntax.Projection) and clause.is_return and clause is not last:
                raise CypherError("RETURN must be the last clause (use WITH to go on)", *clause.pos)
            if isinstance(clause, syntax.Match):
                self._match(clause)
            elif isinstance(clause, syntax.Unwind):
                self._unwind(clause)
            elif isinstance(clause, syntax.Call):
                self._call(clause)
            else:
                columns = self._projection(clause)
        logical = build_logical(self.query, self.checker, self.patterns.usage)
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
            columns,
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
    def _match(self, m: syntax.Match) -> None:
        source = self.prev
        first = len(self.steps) == 1 and not self.scope
        if m.optional:
            # Number the incoming rows, match over them, and left-join back: a row with no
            # match stays, its new variables null.
            self._add("number rows for OPTIONAL MATCH", sqlgen.numbered(source))
            source = self.prev
        compiled = self.patterns.compile(m.patterns, self.scope, m.where, source, self._subquery)
        self.steps += compiled.ctes
        self.seeds += compiled.seeds
        self.prefetch += compiled.prefetch
        self.searches += compiled.searches
        scope = {**self.scope, **compiled.new}
        conditions = list(compiled.conditions)
        where_sql = None
        if m.where is not None:
            ec = ExprCompiler(self.checker, scope, self._subquery)
            where_sql = ec.condition(m.where)
            conditions.append(where_sql)
        new_cols = [sqlgen.named(sql, v) for v, sql in compiled.outputs.items()]
        what = ("OPTIONAL MATCH " if m.optional else "MATCH ") + ", ".join(
            pattern_text(p) for p in m.patterns
        )
        if not m.optional:
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
        self.scope = scope

    def _subquery(self, e: syntax.Expr, ec: ExprCompiler) -> str:
        """A pattern predicate or EXISTS { } as a correlated EXISTS subquery."""
        patterns: tuple[syntax.Pattern, ...]
        if isinstance(e, syntax.PatternPred):
            patterns, where = (syntax.Pattern(e.pos, None, e.chain),), None
        else:
            assert isinstance(e, syntax.Exists)
            patterns, where = e.patterns, e.where
        compiled = self.patterns.compile(patterns, ec.scope, where, None, self._subquery)
        conditions = list(compiled.conditions)
        if where is not None:
            inner = ExprCompiler(self.checker, {**ec.scope, **compiled.new}, self._subquery)
            conditions.append(inner.condition(where))
        return sqlgen.exists(compiled.items, conditions)

    # --- UNWIND
    def _unwind(self, u: syntax.Unwind) -> None:
        ec = ExprCompiler(self.checker, self.scope, self._subquery)
        s, t = ec.typed(u.expr)
        if u.name in self.scope:
            raise CypherError(f"variable {u.name!r} is already defined", *u.pos)
        self.checker.expect("UNWIND", t, ("list",), u.expr.pos)
        self._add(f"UNWIND AS {u.name}", sqlgen.unwind(self.prev, self.scope, s, u.name))
        self.scope = {**self.scope, u.name: Binding(_item_type(u.expr, self.checker))}

    # --- CALL (query/calls.py)
    def _call(self, c: syntax.Call) -> None:
        compiled = compile_call(
            c, self.checker, self.scope, self.prev, self.patterns, self.names, self._subquery
        )
        self.calls.append(compiled.call)
        self._add(compiled.what, compiled.sql)
        self.scope = {**self.scope, **compiled.new}

    # --- WITH / RETURN
    def _projection(self, p: syntax.Projection) -> tuple[str, ...]:
        items = list(p.items)
        if p.star:
            visible = sorted(v for v in self.scope if not v.startswith("__"))
            if not visible:
                raise CypherError("RETURN * / WITH * with no variables in scope", *p.pos)
            items = [syntax.Item(syntax.Var(p.pos, v), v, True) for v in visible] + items
        ec = ExprCompiler(self.checker, self.scope, self._subquery, allow_aggregates=True)
        select, scope, seen = [], {}, set()
        for item in items:
            s, t = ec.typed(item.expr)
            if item.alias in seen:
                raise CypherError(
                    f"column name {item.alias!r} is used twice; add AS", *item.expr.pos
                )
            if not p.is_return and not item.explicit and not isinstance(item.expr, syntax.Var):
                raise CypherError("an expression in WITH needs a name: add AS", *item.expr.pos)
            seen.add(item.alias)
            select.append(sqlgen.named(s, item.alias))
            scope[item.alias] = (
                self.scope[item.expr.name] if isinstance(item.expr, syntax.Var) else Binding(t)
            )
        grouped = any(contains_aggregate(i.expr) for i in items)
        keys, hidden = self._order(p, scope, grouped)
        limit = None if p.limit is None else self._count(p.limit, "LIMIT")
        offset = None if p.skip is None else self._count(p.skip, "SKIP")
        cond = None
        if p.where is not None:
            cond = ExprCompiler(self.checker, scope, self._subquery).condition(p.where)
        sql = sqlgen.projection(
            self.prev,
            select + hidden,
            distinct=p.distinct,
            grouped=grouped,
            names=[i.alias for i in items],
            keys=keys,
            limit=limit,
            offset=offset,
            condition=cond,
        )
        self._add(("RETURN " if p.is_return else "WITH ") + ", ".join(i.alias for i in items), sql)
        self.scope = scope
        return tuple(i.alias for i in items)

    def _order(
        self, p: syntax.Projection, scope: dict[str, Binding], grouped: bool
    ) -> tuple[list[str], list[str]]:
        """The ORDER BY keys, and (when the projection aggregates) the extra columns of
        the grouping that the keys sort by: aggregates the projection does not list."""
        if not p.order:
            return [], []
        # ORDER BY sees the projected names and, unless the projection aggregates or is
        # DISTINCT, the variables before it too.
        visible = scope if grouped or p.distinct else {**self.scope, **scope}
        ec = ExprCompiler(self.checker, visible, self._subquery, allow_aggregates=grouped)
        # An ORDER BY expression that repeats a projected one sorts by that column.
        projected = {}
        for item in p.items:
            with contextlib.suppress(CypherError):
                projected[self._before(item.expr)] = sqlgen.column(item.alias)
        keys: list[str] = []
        hidden: list[str] = []
        for e, desc in p.order:
            if not isinstance(e, syntax.Var) or e.name not in scope:
                with contextlib.suppress(CypherError):
                    key = projected.get(self._before(e))
                    if key is not None:
                        keys.append(sqlgen.sort_key(key, desc))
                        continue
            sql = ec.sql(e)
            if grouped and contains_aggregate(e):
                name = sqlgen.order_column(len(hidden) + 1)
                hidden.append(sqlgen.named(sql, name))
                sql = sqlgen.column(name)
            keys.append(sqlgen.sort_key(sql, desc))
        return keys, hidden

    def _before(self, e: syntax.Expr) -> str:
        """`e` compiled against the variables before the projection."""
        return ExprCompiler(self.checker, self.scope, self._subquery, allow_aggregates=True).sql(e)

    def _count(self, e: syntax.Expr, what: str) -> int:
        value = self.checker.param(e) if isinstance(e, syntax.Param) else getattr(e, "value", e)
        if (
            isinstance(e, syntax.Param | syntax.Lit)
            and not isinstance(value, bool)
            and isinstance(value, int)
            and value >= 0
        ):
            return value
        error = CypherParameterError if isinstance(e, syntax.Param) else CypherError
        got = repr(value) if isinstance(e, syntax.Param | syntax.Lit) else "an expression"
        raise error(
            f"{what} needs a non-negative integer (a literal or a parameter), got {got}", *e.pos
        )


def _item_type(e: syntax.Expr, checker: Checker) -> str | None:
    """The type of a list's items when they all have one (a literal or parameter list)."""
    if isinstance(e, syntax.ListLit):
        values = [i.value for i in e.items if isinstance(i, syntax.Lit)]
        if len(values) != len(e.items):
            return None
    elif isinstance(e, syntax.Param) and isinstance(checker.param(e), list | tuple):
        values = list(cast("list[object] | tuple[object, ...]", checker.param(e)))
    else:
        return None
    types = {value_type(v) for v in values} - {None}
    return types.pop() if len(types) == 1 else None
