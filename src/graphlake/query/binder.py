"""The binder: a parsed Cypher query resolved against the schema and the parameters.

One pass over the clauses (after query.parser, before the planner and the logical plan)
that

- resolves every variable to its `Binding`, clause by clause: MATCH and OPTIONAL MATCH
  add the variables of their patterns, UNWIND and CALL ... YIELD add theirs, WITH and
  RETURN project (and so narrow) the scope; a pattern predicate or EXISTS { } sees the
  scope around it and adds its own variables inside it;
- resolves each node pattern to the node types (labels) it can match, narrowed by the
  relationships next to it and by the other patterns naming the same variable
  (`node_types`, keyed per MATCH or subquery by `Element`), each relationship to its
  edge types, each property access to the property's type;
- types every expression (query.typer holds the rules: arithmetic, comparisons,
  conditions, functions, aggregates, CASE, lists, maps, temporal fields, vector
  distances, ...);
- raises the typed errors (graphlake.errors) with the line and column of the offending
  token and a "did you mean" for a near-miss name.

The result, `BoundQuery`, is immutable: the scope after each clause, the type of every
expression and the scope at every subquery, keyed by the expression's *place* in the
query (`Place`: the clause's index, the field names and item indexes down to it; an
inline property map's value by its pattern element's position), never by the identity of
an AST object. The later stages read it instead of deriving names and types again:
query.expr writes SQL for the types it finds there, query.patterns reads the node types,
query.planner its scopes, query.logical the types of its `Typed` expressions. The
limits of patterns (hops, shortestPath's shape and ends) are checked here too, in the
order query.patterns meets them, so a query with several errors reports the one it
always did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, NamedTuple, cast

from graphlake.errors import CypherError, CypherParameterError
from graphlake.query import procedures, syntax
from graphlake.query.checker import EDGE, EDGES, LIST, NODE, PATH, Binding, Checker, value_type
from graphlake.query.typer import Place, Scope, Typer, child, contains_aggregate
from graphlake.schema.model import Schema

MAX_HOPS = 10  # the depth of an unbounded `*`, and the largest upper bound allowed
# Hops of one MATCH's patterns together: a fixed relationship counts one, a variable-length
# one its upper bound (an unbounded `*` MAX_HOPS); shortestPath is capped by MAX_HOPS alone.
MAX_PATTERN_HOPS = 2 * MAX_HOPS

Anchors = tuple[tuple[syntax.Expr, Place], ...]  # WHERE conjuncts on one variable


class Element(NamedTuple):
    """A pattern element's place in one MATCH (or pattern predicate): its pattern's
    index and its index among its chain's nodes or relationships. State about elements
    (inferred node types, prefetched sources) is keyed on it, not on the identity of
    AST objects."""

    pattern: int
    kind: Literal["node", "rel"]
    position: int


def node_at(pattern: int, position: int) -> Element:
    return Element(pattern, "node", position)


def rel_at(pattern: int, position: int) -> Element:
    return Element(pattern, "rel", position)


def inline_place(element: syntax.NodePat | syntax.RelPat, index: int) -> Place:
    """The place of the value of entry `index` of a pattern element's property map (an
    element's position in the text is its own: no two start at the same character)."""
    return ("inline", element.pos, index)


def conjunct_places(e: syntax.Expr | None, place: Place) -> list[tuple[syntax.Expr, Place]]:
    """The parts of `e` (at `place`) joined by AND, each with its place."""
    if e is None:
        return []
    if isinstance(e, syntax.Binary) and e.op == "AND":
        return conjunct_places(e.left, child(place, "left")) + conjunct_places(
            e.right, child(place, "right")
        )
    return [(e, place)]


@dataclass(frozen=True)
class BoundQuery:
    """A query with its names and types resolved (see the module docstring)."""

    query: syntax.Query
    scopes: tuple[Scope, ...]  # the variables in force after each clause, in order
    types: Mapping[Place, str | None]  # every expression's type (None: not known)
    node_types: Mapping[Place, Mapping[Element, tuple[str, ...]]]  # per MATCH/subquery
    # Per MATCH/subquery, its WHERE conjuncts on one variable (with their places), by
    # variable: they select the start of a walk (query.patterns' seeds).
    anchors: Mapping[Place, Mapping[str, Anchors]]
    subquery_scopes: Mapping[Place, Scope]  # the scope at each pattern predicate/EXISTS
    # ORDER BY keys that do not type before the projection ("order_before"), or only
    # before it ("order": the planner raises it unless the key repeats a projected
    # column's SQL, and then sorts by that column).
    failed: Mapping[Place, CypherError]
    calls: Mapping[int, procedures.ResolvedCall]  # by clause index
    inlined: frozenset[str]  # parameters whose values the binding read (Checker.inlined)

    def scope_before(self, clause: int) -> Scope:
        return self.scopes[clause - 1] if clause > 0 else MappingProxyType({})

    def type_at(self, place: Place) -> str | None:
        return self.types[place]


def bind(query: syntax.Query, schema: Schema, params: Mapping[str, object]) -> BoundQuery:
    """`query` bound against `schema` and the parameters' values (their types, and the
    values of those the binding reads: UNWIND lists, regexes, CALL arguments)."""
    return _Binder(Checker(schema, dict(params))).bind(query)


# --- the binder ------------------------------------------------------------------------------


class _Binder:
    def __init__(self, checker: Checker):
        self.checker = checker
        self.scope: dict[str, Binding] = {}
        self.types: dict[Place, str | None] = {}
        self.node_types: dict[Place, Mapping[Element, tuple[str, ...]]] = {}
        self.anchors: dict[Place, Mapping[str, Anchors]] = {}
        self.subquery_scopes: dict[Place, Scope] = {}
        self.failed: dict[Place, CypherError] = {}
        self.calls: dict[int, procedures.ResolvedCall] = {}

    def bind(self, query: syntax.Query) -> BoundQuery:
        clauses = query.clauses
        last = clauses[-1]
        if not (isinstance(last, syntax.Projection) and last.is_return):
            pos = getattr(last, "pos", (None, None))
            raise CypherError("a query must end with RETURN", *pos)
        scopes: list[Scope] = []
        for i, clause in enumerate(clauses):
            if isinstance(clause, syntax.Projection) and clause.is_return and clause is not last:
                raise CypherError("RETURN must be the last clause (use WITH to go on)", *clause.pos)
            if isinstance(clause, syntax.Match):
                self._match(i, clause)
            elif isinstance(clause, syntax.Unwind):
                self._unwind(i, clause)
            elif isinstance(clause, syntax.Call):
                self._call(i, clause)
            else:
                self._projection(i, clause)
            scopes.append(MappingProxyType(dict(self.scope)))
        return BoundQuery(
            query,
            tuple(scopes),
            MappingProxyType(self.types),
            MappingProxyType(self.node_types),
            MappingProxyType(self.anchors),
            MappingProxyType(self.subquery_scopes),
            MappingProxyType(self.failed),
            MappingProxyType(self.calls),
            frozenset(self.checker.inlined),
        )

    def typer(self, scope: Scope, aggregates: bool = False, subqueries: bool = True) -> Typer:
        subquery = self.subquery if subqueries else None
        return Typer(self.checker, scope, self.types, aggregates, subquery)

    # --- MATCH
    def _match(self, i: int, m: syntax.Match) -> None:
        new = self.patterns(m.patterns, self.scope, (i,), m.where, nested=False)
        scope = {**self.scope, **new}
        if m.where is not None:
            self.typer(scope).condition(m.where, (i, "where"))
        self.scope = scope

    def patterns(
        self,
        patterns: tuple[syntax.Pattern, ...],
        scope: Scope,
        place: Place,
        where: syntax.Expr | None,
        nested: bool,
    ) -> dict[str, Binding]:
        """The variables `patterns` (of the MATCH or, `nested`, the subquery at `place`)
        bind, in the order query.patterns binds them, and their limits checked; their
        inline property maps typed, and (in the order the SQL's seeds type them) the
        WHERE conditions on one node that select a walk's start."""
        _check_hops(patterns)
        types = self._infer(patterns, scope)
        self.node_types[place] = MappingProxyType(types)
        anchors = self.anchors[place] = _anchors_of(where, child(place, "where"))
        new: dict[str, Binding] = {}
        for k, pattern in enumerate(patterns):
            chain = pattern.chain
            if pattern.shortest:
                self._shortest(pattern, k, types, scope, new, anchors, nested)
                continue
            first = chain.nodes[0]
            if (
                not nested
                and first.var not in scope
                and first.var not in new
                and len(types[node_at(k, 0)]) == 1
                and anchored(first, scope, anchors) == 1
            ):  # an anchored chain: its seed selects the first node
                self._seed(first, types[node_at(k, 0)], scope, anchors)
            for j, n in enumerate(chain.nodes):
                self._node(n, types[node_at(k, j)], scope, new)
            for i, rel in enumerate(chain.rels):
                edge_types = self.checker.edge_types(rel)
                if rel.hops is None:
                    if rel.var is not None and (rel.var in scope or rel.var in new):
                        raise CypherError(
                            f"relationship variable {rel.var!r} is already bound; "
                            f"a relationship can be matched only once",
                            *rel.pos,
                        )
                    if rel.var is not None:
                        new[rel.var] = Binding(EDGE, edge_types)
                    name = rel.var or "an anonymous relationship"
                    self._inline(name, rel, Binding(EDGE, edge_types), scope, new)
                    continue
                if nested:
                    raise CypherError(
                        "variable-length relationships are not supported inside a pattern "
                        "predicate",
                        *rel.pos,
                    )
                _check_variable(rel)
                ends = (chain.nodes[i], chain.nodes[i + 1])
                at = (node_at(k, i), node_at(k, i + 1))
                if anchored(ends[1], scope, anchors) > anchored(ends[0], scope, anchors):
                    ends, at = (ends[1], ends[0]), (at[1], at[0])  # the walk starts there
                self._seed(ends[0], types[at[0]], scope, anchors)
                if rel.var is not None:
                    self._define(rel.var, Binding(EDGES, edge_types), scope, new, rel.pos)
            if pattern.path_var is not None:
                self._define(pattern.path_var, Binding(PATH), scope, new, pattern.pos)
        return new

    def _shortest(
        self,
        pattern: syntax.Pattern,
        k: int,
        types: Mapping[Element, tuple[str, ...]],
        scope: Scope,
        new: dict[str, Binding],
        anchors: Mapping[str, Anchors],
        nested: bool,
    ) -> None:
        """shortestPath((a)-[:T*..n]->(b)): one relationship between nodes bound before
        or selected (by inline properties or a WHERE condition on each)."""
        chain = pattern.chain
        if len(chain.rels) != 1 or nested:
            raise CypherError(
                "shortestPath takes one relationship between two nodes, outside pattern predicates",
                *pattern.pos,
            )
        rel = chain.rels[0]
        low, high = rel.hops or (1, 1)
        if low > 1 or (high is not None and high > MAX_HOPS):
            raise CypherError(f"shortestPath spans 0 or 1 to at most {MAX_HOPS} hops", *rel.pos)
        if rel.props is not None:
            raise CypherError(
                "property maps in shortestPath are not supported; filter with WHERE", *rel.pos
            )
        ends = chain.nodes
        if not all(anchored(n, scope, anchors) for n in ends):
            raise CypherError(
                "shortestPath needs both end nodes bound: by an earlier MATCH, "
                "inline properties, or a WHERE condition on each",
                *pattern.pos,
            )
        for j, n in enumerate(ends):
            self._node(n, types[node_at(k, j)], scope, new)
        edge_types = self.checker.edge_types(rel)
        self._seed(ends[1], types[node_at(k, 1)], scope, anchors)  # the targets, then the start
        self._seed(ends[0], types[node_at(k, 0)], scope, anchors)
        if rel.var is not None:
            self._define(rel.var, Binding(EDGES, edge_types), scope, new, rel.pos)
        if pattern.path_var is not None:
            self._define(pattern.path_var, Binding(PATH), scope, new, pattern.pos)

    def _seed(
        self,
        n: syntax.NodePat,
        types: tuple[str, ...],
        scope: Scope,
        anchors: Mapping[str, Anchors],
    ) -> None:
        """The constants and WHERE conditions that select a walk's (or an anchored
        chain's) start node, typed where query.patterns' seed compiles them (first)."""
        if n.var is not None and n.var in scope:
            return
        binding = Binding(NODE, types)
        name = n.var or "an anonymous node"
        inner: dict[str, Binding] = {} if n.var is None else {n.var: binding}
        typer = self.typer(inner, subqueries=False)
        for m, (key, value) in enumerate(n.props.entries if n.props is not None else ()):
            if not free_vars(value) and not has_subquery(value):
                t = self.checker.property_type(name, binding, key, value.pos)
                vt = typer.typed(value, inline_place(n, m))
                self.checker.comparable("=", t, vt, value.pos)
        for c, at in anchors.get(n.var, ()) if n.var is not None else ():
            self.typer(inner).condition(c, at)

    def _node(
        self, n: syntax.NodePat, types: tuple[str, ...], scope: Scope, new: dict[str, Binding]
    ) -> None:
        if n.var is not None and (n.var in scope or n.var in new):
            b = scope[n.var] if n.var in scope else new[n.var]
            if b.kind != NODE:
                raise CypherError(f"{n.var} is a {b.kind}, not a node", *n.pos)
        elif n.var is not None:
            new[n.var] = Binding(NODE, types)
        self._inline(n.var or "an anonymous node", n, Binding(NODE, types), scope, new)

    def _inline(
        self,
        name: str,
        element: syntax.NodePat | syntax.RelPat,
        binding: Binding,
        scope: Scope,
        new: dict[str, Binding],
    ) -> None:
        """An inline property map: each value typed (it may name the variables bound so
        far, not subqueries) and comparable with its property."""
        if element.props is None:
            return
        inner = {**scope, **new}
        if element.var is not None:
            inner[element.var] = binding
        typer = self.typer(inner, subqueries=False)
        for m, (key, value) in enumerate(element.props.entries):
            t = self.checker.property_type(name, binding, key, value.pos)
            vt = typer.typed(value, inline_place(element, m))
            self.checker.comparable("=", t, vt, value.pos)

    @staticmethod
    def _define(name: str, b: Binding, scope: Scope, new: dict, pos: syntax.Pos) -> None:
        if name in scope or name in new:
            raise CypherError(f"variable {name!r} is already defined", *pos)
        new[name] = b

    def _infer(
        self, patterns: tuple[syntax.Pattern, ...], scope: Scope
    ) -> dict[Element, tuple[str, ...]]:
        """Which node types each node pattern can be: its labels, narrowed by a variable
        bound before, by the relationships' endpoint types and by the other patterns
        naming the same variable."""
        types: dict[Element, tuple[str, ...]] = {}
        by_var: dict[str, tuple[str, ...]] = {}
        for k, p in enumerate(patterns):
            for j, n in enumerate(p.chain.nodes):
                t = self.checker.node_types(n)
                if n.var is not None and n.var in scope and scope[n.var].kind == NODE:
                    t = tuple(x for x in t if x in scope[n.var].types)
                if n.var is not None:
                    t = tuple(x for x in t if x in by_var.get(n.var, t))
                    by_var[n.var] = t
                types[node_at(k, j)] = t
        for _ in range(3):  # narrow by the relationships' endpoint types until stable
            for k, p in enumerate(patterns):
                for i, rel in enumerate(p.chain.rels):
                    left, right = node_at(k, i), node_at(k, i + 1)
                    edges = [self.checker.table(e) for e in self.checker.edge_types(rel)]
                    lt, rt = types[left], types[right]
                    fits = [
                        o
                        for e in edges
                        for o in orientations(e, rel)
                        if rel.hops is not None or (o[0] in lt and o[1] in rt)
                    ]
                    # A walk may also end where it starts (zero hops).
                    stay = rel.hops is not None and rel.hops[0] == 0
                    types[left] = tuple(
                        t for t in lt if any(o[0] == t for o in fits) or (stay and t in rt)
                    )
                    types[right] = tuple(
                        t for t in rt if any(o[1] == t for o in fits) or (stay and t in lt)
                    )
            for k, p in enumerate(patterns):  # one variable, one set of types
                for j, n in enumerate(p.chain.nodes):
                    if n.var is not None:
                        by_var[n.var] = tuple(t for t in by_var[n.var] if t in types[node_at(k, j)])
            for k, p in enumerate(patterns):
                for j, n in enumerate(p.chain.nodes):
                    if n.var is not None:
                        types[node_at(k, j)] = by_var[n.var]
        return types

    def subquery(self, e: syntax.PatternPred | syntax.Exists, place: Place, scope: Scope) -> None:
        """A pattern predicate or EXISTS { }: its patterns see `scope` and bind their own
        variables, which its WHERE sees too."""
        self.subquery_scopes[place] = MappingProxyType(dict(scope))
        if isinstance(e, syntax.PatternPred):
            patterns: tuple[syntax.Pattern, ...] = (syntax.Pattern(e.pos, None, e.chain),)
            where = None
        else:
            patterns, where = e.patterns, e.where
        new = self.patterns(patterns, scope, place, where, nested=True)
        if where is not None:
            self.typer({**scope, **new}).condition(where, child(place, "where"))

    # --- UNWIND
    def _unwind(self, i: int, u: syntax.Unwind) -> None:
        t = self.typer(self.scope).typed(u.expr, (i, "expr"))
        if u.name in self.scope:
            raise CypherError(f"variable {u.name!r} is already defined", *u.pos)
        self.checker.expect("UNWIND", t, (LIST,), u.expr.pos)
        self.scope = {**self.scope, u.name: Binding(self._item_type(u.expr))}

    def _item_type(self, e: syntax.Expr) -> str | None:
        """The type of a list's items when they all have one (a literal or parameter
        list: the plan then depends on the parameter's value)."""
        if isinstance(e, syntax.ListLit):
            values = [i.value for i in e.items if isinstance(i, syntax.Lit)]
            if len(values) != len(e.items):
                return None
        elif isinstance(e, syntax.Param) and isinstance(self.checker.param(e), list | tuple):
            values = list(cast("list[object] | tuple[object, ...]", self.checker.param(e)))
        else:
            return None
        types = {value_type(v) for v in values} - {None}
        return types.pop() if len(types) == 1 else None

    # --- CALL
    def _call(self, i: int, c: syntax.Call) -> None:
        resolved = procedures.resolve(c, self.checker)
        new: dict[str, Binding] = {}
        for _, alias, b in resolved.yields:
            if alias in self.scope or alias in new:
                raise CypherError(f"variable {alias!r} is already defined", *c.pos)
            new[alias] = b
        self.calls[i] = resolved
        scope = {**self.scope, **new}
        if c.where is not None:
            self.typer(scope).condition(c.where, (i, "where"))
        self.scope = scope

    # --- WITH / RETURN
    def _projection(self, i: int, p: syntax.Projection) -> None:
        items = projected_items(p, self.scope)
        before = self.typer(self.scope, aggregates=True)
        scope: dict[str, Binding] = {}
        seen: set[str] = set()
        for j, item in enumerate(items):
            t = before.typed(item.expr, (i, "items", j))
            if item.alias in seen:
                raise CypherError(
                    f"column name {item.alias!r} is used twice; add AS", *item.expr.pos
                )
            if not p.is_return and not item.explicit and not isinstance(item.expr, syntax.Var):
                raise CypherError("an expression in WITH needs a name: add AS", *item.expr.pos)
            seen.add(item.alias)
            scope[item.alias] = (
                self.scope[item.expr.name] if isinstance(item.expr, syntax.Var) else Binding(t)
            )
        grouped = any(contains_aggregate(it.expr) for it in items)
        # ORDER BY sees the projected names and, unless the projection aggregates or is
        # DISTINCT, the variables before it too. A key that repeats a projected
        # expression sorts by its column (the planner compares their SQL, typed before
        # the projection: "order_before"), so it need not type after the projection:
        # its error then waits in `failed` for the planner, raised if it is no repeat.
        visible = scope if grouped or p.distinct else {**self.scope, **scope}
        for j, (e, _) in enumerate(p.order):
            order = self.typer(visible, aggregates=grouped)
            at, ahead = (i, "order", j), (i, "order_before", j)
            if isinstance(e, syntax.Var) and e.name in scope:
                order.typed(e, at)
                continue
            try:
                before.typed(e, ahead)
            except CypherError as exc:
                self.failed[ahead] = exc
                order.typed(e, at)
                continue
            try:
                order.typed(e, at)
            except CypherError as exc:
                self.failed[at] = exc
                self.types[at] = self.types[ahead]  # a projected column's type
        for what, count in (("LIMIT", p.limit), ("SKIP", p.skip)):
            if count is not None:
                self._count(count, what)
                self.typer(self.scope).typed(count, (i, what.lower()))
        if p.where is not None:
            self.typer(scope).condition(p.where, (i, "where"))
        self.scope = scope

    def _count(self, e: syntax.Expr, what: str) -> None:
        """LIMIT and SKIP take a non-negative integer: a literal or a parameter."""
        value = self.checker.param(e) if isinstance(e, syntax.Param) else getattr(e, "value", e)
        if (
            isinstance(e, syntax.Param | syntax.Lit)
            and not isinstance(value, bool)
            and isinstance(value, int)
            and value >= 0
        ):
            return
        error = CypherParameterError if isinstance(e, syntax.Param) else CypherError
        got = repr(value) if isinstance(e, syntax.Param | syntax.Lit) else "an expression"
        raise error(
            f"{what} needs a non-negative integer (a literal or a parameter), got {got}", *e.pos
        )


def projected_items(p: syntax.Projection, scope: Scope) -> list[syntax.Item]:
    """A projection's items, `*` spelled out (the visible variables, sorted) first."""
    items = list(p.items)
    if p.star:
        visible = sorted(v for v in scope if not v.startswith("__"))
        if not visible:
            raise CypherError("RETURN * / WITH * with no variables in scope", *p.pos)
        items = [syntax.Item(syntax.Var(p.pos, v), v, True) for v in visible] + items
    return items


# --- helpers ---------------------------------------------------------------------------------


def _check_hops(patterns: tuple[syntax.Pattern, ...]) -> None:
    total = 0
    for pattern in patterns:
        if pattern.shortest:
            continue
        for rel in pattern.chain.rels:
            high = MAX_HOPS if rel.hops is None or rel.hops[1] is None else rel.hops[1]
            total += 1 if rel.hops is None else min(high, MAX_HOPS)  # more: refused later
            if total > MAX_PATTERN_HOPS:
                raise CypherError(
                    f"a MATCH may span at most {MAX_PATTERN_HOPS} hops in total (a "
                    f"relationship counts one, a variable-length one its upper bound); "
                    f"split the pattern with WITH or shorten it",
                    *rel.pos,
                )


def _check_variable(rel: syntax.RelPat) -> None:
    """A variable-length relationship's bounds, and no property map on it."""
    assert rel.hops is not None
    low, high = rel.hops
    if high is not None and high > MAX_HOPS:
        raise CypherError(
            f"a variable-length relationship may span at most {MAX_HOPS} hops (got *{low}..{high})",
            *rel.pos,
        )
    if high is not None and low > high:
        raise CypherError(f"*{low}..{high}: the lower bound is above the upper one", *rel.pos)
    if rel.props is not None:
        raise CypherError(
            "property maps on variable-length relationships are not supported; filter with WHERE",
            *rel.pos,
        )


def _anchors_of(where: syntax.Expr | None, place: Place) -> Mapping[str, Anchors]:
    """WHERE conjuncts (`where` at `place`) that mention one variable only, by variable,
    each with its place: a walk starting at that variable applies them to its seed rows."""
    out: dict[str, Anchors] = {}
    for c, at in conjunct_places(where, place):
        names = free_vars(c)
        if len(names) == 1 and not has_subquery(c):
            name = names.pop()
            out[name] = (*out.get(name, ()), (c, at))
    return MappingProxyType(out)


def anchored(n: syntax.NodePat, scope: Scope, anchors: Mapping[str, object]) -> int:
    """2: bound by an earlier clause; 1: selected by constant properties or WHERE; 0:
    neither."""
    if n.var is not None and n.var in scope:
        return 2
    constant = n.props is not None and any(
        not free_vars(v) and not has_subquery(v) for _, v in n.props.entries
    )
    return 1 if constant or (n.var is not None and n.var in anchors) else 0


def conjuncts_of(e: syntax.Expr | None) -> list[syntax.Expr]:
    """The parts of `e` joined by AND (none for no condition)."""
    return [c for c, _ in conjunct_places(e, ())]


def free_vars(e: object) -> set[str]:
    """The variables `e` (an expression, or a tuple of them) names."""
    if isinstance(e, syntax.Var):
        return {e.name}
    if isinstance(e, tuple):
        return set().union(*(free_vars(x) for x in e)) if e else set()
    if hasattr(e, "__dataclass_fields__"):
        return set().union(*(free_vars(getattr(e, f)) for f in e.__dataclass_fields__))
    return set()


def has_subquery(e: object) -> bool:
    """Whether `e` holds a pattern predicate or EXISTS (a subquery of its own)."""
    if isinstance(e, syntax.PatternPred | syntax.Exists):
        return True
    if isinstance(e, tuple):
        return any(has_subquery(x) for x in e)
    if hasattr(e, "__dataclass_fields__") and isinstance(e, syntax.Expr):
        return any(has_subquery(getattr(e, f)) for f in e.__dataclass_fields__)
    return False


def orientations(e, rel: syntax.RelPat) -> list[tuple[str, str, bool]]:
    """(left type, right type, forward) for each way `rel` can read edge type `e`."""
    if rel.direction == "out":
        return [(e.src, e.dst, True)]
    if rel.direction == "in":
        return [(e.dst, e.src, False)]
    return [(e.src, e.dst, True), (e.dst, e.src, False)]
