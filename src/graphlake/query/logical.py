"""The logical plan of a checked Cypher query: typed operators over typed expressions.

`build` turns the bound query (query.binder: names, labels, properties and types
resolved against the schema) into a pipeline of operators, from the first (bottom) to
the RETURN (top):

    NodeScan, Lookup       the first node of a chain: every node of its labels, or the
                           one a constant selects by its key
    Expand, VarExpand      one hop, or a variable-length walk, from a bound node
    ShortestPath           a breadth-first search between two bound nodes
    Filter                 a condition (WHERE, inline property maps)
    OptionalJoin           an OPTIONAL MATCH: its own operators, left-joined
    Unwind                 a list to rows
    Project, Aggregate     WITH / RETURN without and with aggregates
    Sort, Skip, Limit      ORDER BY, SKIP, LIMIT

Each expression is a `Typed`: the AST expression with the type the binder gave it (read
by its place in the query; an inline property map's `key = value` filter is a boolean).
Rewrite rules shape the plan as it is built, then choose executors:

- anchoring: a node a constant selects by its key (`{name: $s}` on a String `@key`, or
  the one WHERE conjunct `a.name = $s` on it) is a Lookup, not a NodeScan filtered
  afterwards (its other conditions are Filters after the Lookup); a chain anchored at
  its end is read from that end (its hops `backwards`);
- pushdown: each WHERE conjunct is a Filter right after the operator that binds the last
  of its variables;
- executor choice (`choose_executors`): a plan that is one chain the adjacency runs
  (`read_chain`: an anchored or one-label start, hops of one edge type each, node
  property comparisons with constants) and a RETURN of counts or node or relationship
  properties runs there ("csr"); otherwise, when the first clause is such a chain
  (relationship variables on walks, any WHERE and an anchor without hops allowed, every
  variable's value one its rows carry), that MATCH runs there and the rest in DuckDB
  over its rows (its start and hops "csr", its Filters "sql"). This is the one
  description of what runs on the adjacency: query.traverse builds its `Traversal` and
  `MatchOnCsr` from the operators marked "csr" (`traversal_of`, `match_on_csr`), and
  the planner asks for them only then. A ShortestPath between nodes selected in its own
  MATCH over one edge type runs as a path search ("pathsearch", query.pathsearch, which
  hands wide searches back to SQL), and an end of it that constant properties alone
  select (an inline map of literals and parameters, no WHERE condition on it alone) is
  found by a Lance lookup, its operators "lance" (the search's seed: query.executor);
  everything else is DuckDB SQL ("sql", query.planner).

`LogicalPlan.text()` prints the plan top-down, one operator a line with its executor;
`explain=True` returns it with the per-step report (query.executor).

The SQL is lowered from this plan (query.planner `lower`, one lowering per kind of a
clause's first operator), so an operator carries what its SQL needs: each `Typed` its
binder place (where query.expr compiles it), Project and Aggregate their items in the
order written and how many are `*` spelled out, Sort the places its keys type before the
projection, ProcedureCall the binder's resolved call. A MATCH's patterns are read back
from its operators (query.patterns `patterns_of`): NodeScan's labels, Lookup's key and
value, Argument's labels as written, each Expand and VarExpand's types, direction,
bounds (`capped`: no upper bound written), far node and `backwards`, ShortestPath's ends
and hops, NamePath's name and the inline Filters; each start and hop carries where its
element is written (`pos`, `dst_pos`), the place its inline map's values are typed at.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from graphlake.query import syntax
from graphlake.query.binder import (
    MAX_HOPS,
    BoundQuery,
    Place,
    conjunct_places,
    conjuncts_of,
    contains_aggregate,
    free_vars,
    has_subquery,
    inline_place,
    projected_items,
)
from graphlake.query.checker import BOOL, EDGE, EDGES, NODE, PATH, Binding, Checker
from graphlake.query.procedures import ResolvedCall
from graphlake.query.usage import property_usage, props_of
from graphlake.schema.model import EdgeType, NodeType

Executor = Literal["sql", "csr", "pathsearch", "lance", "algo"]


# --- typed expressions -------------------------------------------------------------------


@dataclass(frozen=True)
class Typed:
    expr: syntax.Expr
    type: str | None  # the binder's type (None: not known before running)
    # Where the binder typed it (query.binder's `Place`), by which the SQL lowering
    # (query.planner) compiles it; None for a condition the builder writes (an inline
    # property map's `key = value`).
    place: Place | None = dataclasses.field(default=None, compare=False)

    def __str__(self) -> str:
        return show(self.expr)


# --- operators -----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Op:
    executor: Executor = "sql"

    def detail(self) -> str:
        return ""

    def line(self) -> str:
        return f"{type(self).__name__} {self.detail()}".rstrip()


@dataclass(frozen=True)
class NodeScan(Op):
    var: str  # `#...`: an anonymous node (see `_name`)
    labels: tuple[str, ...]
    # Where the node pattern is written: the places of its inline map's values
    # (binder.inline_place), which the MATCH lowering (query.patterns) compiles there.
    pos: syntax.Pos = dataclasses.field(default=(0, 0), compare=False)

    def detail(self) -> str:
        return node_text(self.var, self.labels)


@dataclass(frozen=True)
class Argument(Op):
    """A pattern that starts at a node bound before it (by an earlier clause or pattern)."""

    var: str
    labels: tuple[str, ...] = dataclasses.field(default=(), compare=False)  # as written
    pos: syntax.Pos = dataclasses.field(default=(0, 0), compare=False)  # as NodeScan's

    def detail(self) -> str:
        return node_text(self.var, ())


@dataclass(frozen=True)
class Lookup(Op):
    var: str  # as NodeScan's
    label: str
    key: str
    value: Typed  # at the place of its inline map's one entry, or of its WHERE conjunct
    pos: syntax.Pos = dataclasses.field(default=(0, 0), compare=False)  # as NodeScan's

    def detail(self) -> str:
        return f"{node_text(self.var, (self.label,))} by {self.key} = {self.value}"


@dataclass(frozen=True)
class Expand(Op):
    src: str
    rel: str | None
    types: tuple[str, ...]
    direction: str
    dst: str
    dst_labels: tuple[str, ...]
    into: bool  # the far node is bound already: a join, not a new variable
    # The chain is read from its end: the pattern wrote this hop the other way round.
    backwards: bool = False
    # Where the relationship and the far node are written (as NodeScan's `pos`).
    pos: syntax.Pos = dataclasses.field(default=(0, 0), compare=False)
    dst_pos: syntax.Pos = dataclasses.field(default=(0, 0), compare=False)

    def detail(self) -> str:
        far = node_text(self.dst, () if self.into else self.dst_labels)
        rel = rel_text(self.rel, self.types, self.direction, None)
        return ("into " if self.into else "") + f"{node_text(self.src, ())}{rel}{far}"


@dataclass(frozen=True)
class VarExpand(Op):
    src: str
    rel: str | None
    types: tuple[str, ...]
    direction: str
    low: int
    high: int
    dst: str
    dst_labels: tuple[str, ...]
    into: bool
    backwards: bool = False  # as Expand's: its relationship list runs the other way
    pos: syntax.Pos = dataclasses.field(default=(0, 0), compare=False)  # as Expand's
    dst_pos: syntax.Pos = dataclasses.field(default=(0, 0), compare=False)
    # No upper bound written (`*2..`): `high` is the cap, MAX_HOPS.
    capped: bool = dataclasses.field(default=False, compare=False)

    def detail(self) -> str:
        far = node_text(self.dst, () if self.into else self.dst_labels)
        rel = rel_text(self.rel, self.types, self.direction, (self.low, self.high))
        return ("into " if self.into else "") + f"{node_text(self.src, ())}{rel}{far}"


@dataclass(frozen=True)
class ShortestPath(Op):
    path: str | None
    src: str
    rel: str | None
    types: tuple[str, ...]
    direction: str
    low: int
    high: int
    dst: str
    ends_new: bool  # both ends selected by this MATCH (none bound by an earlier clause)
    # For each end, the positions (in the operator list holding this one) of the
    # operators that select it by constant properties alone (its Lookup or NodeScan and
    # its inline Filters; none when a WHERE condition or a non-constant value selects it):
    # a path search's seed of that end is a Lance lookup by those constants.
    seeds: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    pos: syntax.Pos = dataclasses.field(default=(0, 0), compare=False)  # the relationship's
    # The hops as written: None for one (`-[:T]->`), an upper bound None for the cap.
    hops: tuple[int, int | None] | None = dataclasses.field(default=None, compare=False)

    def detail(self) -> str:
        rel = rel_text(self.rel, self.types, self.direction, (self.low, self.high))
        text = f"{node_text(self.src, ())}{rel}{node_text(self.dst, ())}"
        return f"{self.path} = {text}" if self.path else text


@dataclass(frozen=True)
class NamePath(Op):
    var: str
    pattern: str

    def detail(self) -> str:
        return f"{self.var} = {self.pattern}"


@dataclass(frozen=True)
class Filter(Op):
    condition: Typed
    inline: bool = False  # an entry of a pattern's property map (else a WHERE conjunct)

    def detail(self) -> str:
        return str(self.condition)


@dataclass(frozen=True)
class OptionalJoin(Op):
    ops: tuple[Op, ...]  # the OPTIONAL MATCH's operators, over each incoming row


@dataclass(frozen=True)
class ProcedureCall(Op):
    """`CALL name(args) YIELD ...`: a graph algorithm run on the adjacency before the SQL
    (query.calls); its answer is a table the rest of the plan reads."""

    name: str
    yields: tuple[str, ...]
    # The binder's checked call (algorithm, edge type, options, yielded columns): what
    # the lowering (query.calls.compile_call) makes its step of.
    resolved: ResolvedCall | None = dataclasses.field(default=None, compare=False)

    def detail(self) -> str:
        return f"{self.name}() YIELD {', '.join(self.yields)}" if self.yields else f"{self.name}()"


@dataclass(frozen=True)
class Unwind(Op):
    expr: Typed
    var: str

    def detail(self) -> str:
        return f"{self.expr} AS {self.var}"


Item = tuple[str, Typed]  # (column name, expression)


@dataclass(frozen=True)
class Project(Op):
    items: tuple[Item, ...]  # in the order written (`*` spelled out first)
    distinct: bool = False
    final: bool = False  # RETURN (else WITH)
    starred: int = 0  # how many of `items` are `*` spelled out (the visible variables)

    def detail(self) -> str:
        return ("DISTINCT " if self.distinct else "") + items_text(self.items)


@dataclass(frozen=True)
class Aggregate(Op):
    """A projection with aggregates: grouped by its other items (`keys`), as openCypher
    does; `items` keeps the order written, the step's columns."""

    items: tuple[Item, ...]
    distinct: bool = False
    final: bool = False
    starred: int = 0

    @property
    def keys(self) -> tuple[Item, ...]:
        return tuple(it for it in self.items if not contains_aggregate(it[1].expr))

    @property
    def aggregates(self) -> tuple[Item, ...]:
        return tuple(it for it in self.items if contains_aggregate(it[1].expr))

    def detail(self) -> str:
        keys = items_text(self.keys) or "()"
        return f"by {keys}: {items_text(self.aggregates)}"


@dataclass(frozen=True)
class Sort(Op):
    keys: tuple[tuple[Typed, bool], ...]  # (expression, descending)
    # Where the binder typed each key against the variables before the projection (its
    # "order_before" place): a key repeating a projected item sorts by that column.
    before: tuple[Place, ...] = dataclasses.field(default=(), compare=False)

    def detail(self) -> str:
        return ", ".join(f"{k}{' DESC' if d else ''}" for k, d in self.keys)


@dataclass(frozen=True)
class Skip(Op):
    count: Typed

    def detail(self) -> str:
        return str(self.count)


@dataclass(frozen=True)
class Limit(Op):
    count: Typed

    def detail(self) -> str:
        return str(self.count)


@dataclass(frozen=True)
class LogicalPlan:
    ops: tuple[Op, ...]  # bottom (first run) to top (the RETURN)
    clauses: tuple[int, ...] = ()  # where each clause's operators begin in `ops`
    # Which properties of each variable the query reads (query.usage): what a first
    # MATCH's rows carry when they go on to SQL (`read_chain`).
    usage: dict[str, set[str] | None] = dataclasses.field(
        default_factory=dict, compare=False, repr=False
    )

    def text(self) -> str:
        """The plan top-down, one operator a line with its executor."""
        return "\n".join(_lines(self.ops, ""))

    @property
    def executors(self) -> frozenset[str]:
        return frozenset(op.executor for op in _walk(self.ops))


def _lines(ops: tuple[Op, ...], indent: str) -> list[str]:
    out = []
    for op in reversed(ops):
        out.append(f"{indent}{op.line()}  [{op.executor}]")
        if isinstance(op, OptionalJoin):
            out += _lines(op.ops, indent + "| ")
    return out


def _walk(ops: tuple[Op, ...]):
    for op in ops:
        yield op
        if isinstance(op, OptionalJoin):
            yield from _walk(op.ops)


# --- the builder ---------------------------------------------------------------------------


def build(
    bound: BoundQuery, checker: Checker, usage: dict[str, set[str] | None] | None = None
) -> LogicalPlan:
    """The logical plan of the bound query (so names resolve and every expression has
    its type), with executors chosen (`choose_executors`). `checker` is not changed;
    `usage`: the query's property usage when the caller has it
    (query.usage.property_usage)."""
    b = _Builder(bound, Checker(checker.schema, checker.params))
    clauses = []
    for i, clause in enumerate(bound.query.clauses):
        b.clause = i
        clauses.append(len(b.ops))
        if isinstance(clause, syntax.Match):
            b.match(clause)
        elif isinstance(clause, syntax.Unwind):
            b.ops.append(Unwind(b.typed(clause.expr, (i, "expr")), clause.name))
            b.scope[clause.name] = Binding(None)
        elif isinstance(clause, syntax.Call):
            b.call(clause)
        else:
            b.projection(clause)
    usage = property_usage(bound.query) if usage is None else usage
    plan = LogicalPlan(tuple(b.ops), tuple(clauses), usage)
    return choose_executors(plan, checker)


class _Builder:
    def __init__(self, bound: BoundQuery, checker: Checker):
        self.bound = bound
        self.checker = checker
        self.ops: list[Op] = []
        self.scope: dict[str, Binding] = {}
        self.clause = 0  # the index of the clause being built
        self.conjunct_at: list[Place] = []  # the places of the MATCH's WHERE conjuncts

    def typed(self, e: syntax.Expr, place: Place) -> Typed:
        """`e` (at `place`) with the type the binder gave it."""
        return Typed(e, self.bound.type_at(place), place)

    # --- CALL
    def call(self, c: syntax.Call) -> None:
        aliases = tuple(alias for _, alias in c.yields or ())
        resolved = self.bound.calls[self.clause]
        self.ops.append(ProcedureCall(c.name, aliases, resolved, executor="algo"))
        for alias in aliases:
            self.scope[alias] = Binding(None)
        if c.where is not None:
            self.ops.append(Filter(self.typed(c.where, (self.clause, "where"))))

    # --- MATCH
    def match(self, m: syntax.Match) -> None:
        outer = self.ops
        if m.optional:
            self.ops = []
        conjuncts: list[syntax.Expr | None] = list(conjuncts_of(m.where))
        self.conjunct_at = [at for _, at in conjunct_places(m.where, (self.clause, "where"))]
        for pattern in m.patterns:
            self._pattern(pattern, conjuncts)
        for n, c in enumerate(conjuncts):  # conditions on no variable, or with subqueries
            if c is not None:
                self.ops.append(Filter(self.typed(c, self.conjunct_at[n])))
        if m.optional:
            inner = tuple(self.ops)
            self.ops = outer
            self.ops.append(OptionalJoin(inner))

    def _pattern(self, pattern: syntax.Pattern, conjuncts: list[syntax.Expr | None]) -> None:
        chain = pattern.chain
        nodes, rels = list(chain.nodes), list(chain.rels)
        if pattern.shortest:
            rel = rels[0]
            low, high = rel.hops or (1, 1)
            ends_new = not any(n.var in self.scope for n in nodes)
            seeds: list[tuple[int, ...]] = []
            for n in nodes:
                at, constant = len(self.ops), ends_new and self._by_constants(n, conjuncts)
                self._start(n, conjuncts)
                if constant and n.props is not None:  # the start and its inline Filters
                    taken = 1 + len(n.props.entries) - isinstance(self.ops[at], Lookup)
                    seeds.append(tuple(range(at, at + taken)))
                else:
                    seeds.append(())
            self._bind(rel.var, Binding(EDGES, self.checker.edge_types(rel)))
            self.ops.append(
                ShortestPath(
                    pattern.path_var,
                    _name(nodes[0]),
                    rel.var,
                    tuple(rel.types),
                    rel.direction,
                    low,
                    MAX_HOPS if high is None else high,
                    _name(nodes[1]),
                    ends_new,
                    (seeds[0], seeds[1]),
                    pos=rel.pos,
                    hops=rel.hops,
                )
            )
            self._bind(pattern.path_var, Binding(PATH))
            self._push(conjuncts)
            return
        # anchoring: read a chain from the end a key selects, when its start is not
        backwards = bool(
            rels
            and not self._selected(nodes[0], conjuncts)
            and self._selected(nodes[-1], conjuncts)
            and nodes[0].var not in self.scope
        )
        if backwards:
            nodes, rels = nodes[::-1], [_reversed(r) for r in rels[::-1]]
        self._start(nodes[0], conjuncts)
        for i, rel in enumerate(rels):
            self._hop(rel, nodes[i], nodes[i + 1], conjuncts, backwards)
        if pattern.path_var is not None:
            unnamed = dataclasses.replace(pattern, path_var=None)
            self.ops.append(NamePath(pattern.path_var, pattern_text(unnamed)))
            self._bind(pattern.path_var, Binding(PATH))
        self._push(conjuncts)

    def _by_constants(self, n: syntax.NodePat, conjuncts: list[syntax.Expr | None]) -> bool:
        """`n` is selected by an inline map of non-null literals and parameters alone,
        with no WHERE condition on it alone (patterns.PatternCompiler._lookup's case)."""
        if n.props is None or any(
            c is not None and free_vars(c) == {n.var} and not has_subquery(c) for c in conjuncts
        ):
            return False
        for _, v in n.props.entries:
            if isinstance(v, syntax.Param):
                value = self.checker.peek(v)
            elif isinstance(v, syntax.Lit):
                value = v.value
            else:
                return False
            if value is None or isinstance(value, list | tuple | dict):
                return False  # `= null` matches nothing: the SQL seed answers it
        return True

    def _selected(self, n: syntax.NodePat, conjuncts: list[syntax.Expr | None]) -> bool:
        return n.var in self.scope or self._key(n, conjuncts, consume=False) is not None

    def _start(self, n: syntax.NodePat, conjuncts: list[syntax.Expr | None]) -> None:
        if n.var is not None and n.var in self.scope:
            self.ops.append(Argument(n.var, tuple(n.labels), n.pos))
            self._inline(n)
            return
        types = self.checker.node_types(n)
        found = self._key(n, conjuncts, consume=True)
        self._bind(n.var, Binding(NODE, types))
        if found is not None:
            key, value, at = found
            self.ops.append(Lookup(_name(n), types[0], key, self.typed(value, at), n.pos))
        else:
            self.ops.append(NodeScan(_name(n), tuple(n.labels), n.pos))
        self._inline(n, skip=found[0] if found is not None else None)
        self._push(conjuncts)

    def _key(
        self, n: syntax.NodePat, conjuncts: list[syntax.Expr | None], consume: bool
    ) -> tuple[str, syntax.Expr, Place] | None:
        """(key property, constant, its place) when a constant selects `n` by its String
        key: its inline map's one entry, or the one WHERE conjunct comparing it (other
        conditions on `n` are Filters after its Lookup)."""
        if len(n.labels) != 1:
            return None
        t = self.checker.schema.table(n.labels[0])
        if not isinstance(t, NodeType):
            return None
        p = t.property(t.key)
        if p is None or p.type.kind != "String":
            return None
        names = (t.key, "id")
        on_n = [i for i, c in enumerate(conjuncts) if c is not None and free_vars(c) == {n.var}]
        if n.props is not None:  # `{key: constant}` and nothing else in the map
            entries = n.props.entries
            if len(entries) == 1 and entries[0][0] in names and _is_constant(entries[0][1]):
                return (*entries[0], inline_place(n, 0))
            return None
        picked = [
            (i, pair)
            for i in on_n
            if isinstance(c := conjuncts[i], syntax.Binary)
            and c.op == "="
            and n.var is not None
            and (pair := _prop_eq(c, n.var, names)) is not None
        ]
        if len(picked) != 1:
            return None
        at, (key, value, side) = picked[0]
        if consume:
            conjuncts[at] = None
        return key, value, (*self.conjunct_at[at], side)

    def _hop(
        self,
        rel: syntax.RelPat,
        left: syntax.NodePat,
        right: syntax.NodePat,
        conjuncts: list[syntax.Expr | None],
        backwards: bool = False,
    ) -> None:
        src, dst = _name(left), _name(right)
        into = right.var is not None and right.var in self.scope
        types = tuple(rel.types)
        labels = tuple(right.labels)
        if rel.hops is None:
            self._bind(rel.var, Binding(EDGE, self.checker.edge_types(rel)))
            op: Op = Expand(
                src, rel.var, types, rel.direction, dst, labels, into, backwards, rel.pos, right.pos
            )
        else:
            low, high = rel.hops
            self._bind(rel.var, Binding(EDGES, self.checker.edge_types(rel)))
            op = VarExpand(
                src,
                rel.var,
                types,
                rel.direction,
                low,
                MAX_HOPS if high is None else high,
                dst,
                labels,
                into,
                backwards,
                rel.pos,
                right.pos,
                high is None,
            )
        if not into:
            self._bind(right.var, Binding(NODE, self.checker.node_types(right)))
        self.ops.append(op)
        for k, v in rel.props.entries if rel.props is not None else ():
            self.ops.append(Filter(Typed(_eq(rel.var or "#rel", k, v), BOOL), inline=True))
        self._inline(right)
        self._push(conjuncts)

    def _inline(self, n: syntax.NodePat, skip: str | None = None) -> None:
        if n.props is None:
            return
        for k, v in n.props.entries:
            if k != skip:
                self.ops.append(Filter(Typed(_eq(_name(n), k, v), BOOL), inline=True))

    def _bind(self, var: str | None, b: Binding) -> None:
        if var is not None and var not in self.scope:
            self.scope[var] = b

    def _push(self, conjuncts: list[syntax.Expr | None]) -> None:
        """pushdown: the WHERE conjuncts whose variables are all bound now."""
        for i, c in enumerate(conjuncts):
            if c is None:
                continue
            names = free_vars(c)
            if names and names <= set(self.scope) and not has_subquery(c):
                self.ops.append(Filter(self.typed(c, self.conjunct_at[i])))
                conjuncts[i] = None

    # --- WITH / RETURN
    def projection(self, p: syntax.Projection) -> None:
        i = self.clause
        items = projected_items(p, self.bound.scope_before(i))
        typed = [(it.alias, self.typed(it.expr, (i, "items", j))) for j, it in enumerate(items)]
        grouped = [contains_aggregate(item.expr) for item in items]
        scope = {
            item.alias: (
                self.scope.get(item.expr.name, Binding(None))
                if isinstance(item.expr, syntax.Var)
                else Binding(t.type)
            )
            for item, (_, t) in zip(items, typed, strict=True)
        }
        kind = Aggregate if any(grouped) else Project
        starred = len(items) - len(p.items)
        self.ops.append(kind(tuple(typed), p.distinct, p.is_return, starred))
        if p.order:
            order = tuple((self.typed(e, (i, "order", j)), d) for j, (e, d) in enumerate(p.order))
            self.ops.append(Sort(order, tuple((i, "order_before", j) for j in range(len(order)))))
        self.scope = scope
        if p.skip is not None:
            self.ops.append(Skip(self.typed(p.skip, (i, "skip"))))
        if p.limit is not None:
            self.ops.append(Limit(self.typed(p.limit, (i, "limit"))))
        if p.where is not None:
            self.ops.append(Filter(self.typed(p.where, (i, "where"))))


# --- the executor rule ---------------------------------------------------------------------

# The property kinds the adjacency reads and compares (query.traverse: columns cached
# beside it), besides a node's key (`id`).
CSR_KINDS = ("String", "Bool", "I32", "I64", "F32", "F64")
# The property kinds a first MATCH's rows carry on to SQL (query.traverse.bind); a variable
# whose value needs a vector, list or blob leaves that MATCH to SQL.
CARRIED_KINDS = frozenset(
    ("String", "Enum", "Bool", "I32", "I64", "U32", "U64", "F32", "F64", "Date", "DateTime")
)
_FLIP = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def choose_executors(plan: LogicalPlan, checker: Checker, csr: bool = True) -> LogicalPlan:
    """Every operator with the executor that runs it (see the module docstring);
    `csr=False` leaves the adjacency out (the planner did not take it)."""
    ops = tuple(dataclasses.replace(op, executor=_fixed_executor(op)) for op in plan.ops)
    if csr and _on_adjacency(ops, checker):
        csr_ops = tuple(dataclasses.replace(op, executor="csr") for op in ops)
        return dataclasses.replace(plan, ops=csr_ops)
    ops = _path_searches(ops, checker)
    plan = dataclasses.replace(plan, ops=ops)
    first = first_clause(plan)
    if csr and read_chain(first, checker, plan.usage) is not None:
        # The first MATCH's chain on the adjacency, the rest in DuckDB over its rows (the
        # planner's `Plan.csr_match`): the MATCH's WHERE too, so its Filters stay "sql".
        marked = tuple(
            op if isinstance(op, Filter) else dataclasses.replace(op, executor="csr")
            for op in first
        )
        plan = dataclasses.replace(plan, ops=marked + ops[len(first) :])
    return plan


def first_clause(plan: LogicalPlan) -> tuple[Op, ...]:
    """The operators of the query's first clause."""
    end = plan.clauses[1] if len(plan.clauses) > 1 else len(plan.ops)
    return plan.ops[:end]


def _on_adjacency(ops: tuple[Op, ...], checker: Checker) -> bool:
    """The whole plan on the adjacency: a chain (`read_chain`) then a final projection of
    node or relationship properties, or an aggregation of counts alone."""
    if len(ops) < 2:
        return False
    chain = read_chain(ops[:-1], checker)
    if chain is None:
        return False
    last = ops[-1]
    if isinstance(last, Project):
        if last.distinct or not last.final:
            return False
        outputs = [csr_output(t.expr, chain, checker) for _, t in last.items]
        return all(o is not None and o[0] in ("prop", "edge") for o in outputs)
    if isinstance(last, Aggregate):
        if last.keys or last.distinct or not last.final:
            return False
        outputs = [csr_output(t.expr, chain, checker) for _, t in last.aggregates]
        return all(o is not None and o[0] in ("count", "distinct") for o in outputs)
    return False


@dataclass(frozen=True)
class Chain:
    """Operators the adjacency runs as one chain (`read_chain`), as query.traverse builds
    its traversal from them."""

    names: tuple[str, ...]  # the node variable at each position (`#...`: anonymous)
    types: tuple[str, ...]  # the node type at each position
    hops: tuple[Expand | VarExpand, ...]  # hop i joins positions i and i + 1
    anchor: syntax.Expr | None  # the string constant its Lookup selects position 0 by
    # The comparisons the adjacency applies: (position, property, operator, constant)
    conds: tuple[tuple[int, str, str, syntax.Expr], ...]
    # A first MATCH's rows: the properties each variable's value carries
    carried: Mapping[str, tuple[str, ...]]


def read_chain(
    ops: Sequence[Op], checker: Checker, usage: dict[str, set[str] | None] | None = None
) -> Chain | None:
    """`ops` as one chain on the adjacency, or None: a Lookup by a String key (or a
    NodeScan of one label, or of none when the first relationship's one edge type starts
    at one node type), then hops of one edge type each to new variables (a walk over an
    edge type joining one node type to itself), and Filters comparing a node property with
    a constant (a string, number, boolean or null).

    Without `usage`, the MATCH of a query run wholly on the adjacency: at least one hop,
    no relationship variable on a walk, every Filter such a comparison. With `usage` (the
    query's property usage: query.usage), the query's first MATCH, whose rows go on to
    SQL: a walk may have a variable, a chain without hops must start at a Lookup, and a
    WHERE conjunct of another form is left to SQL (an inline map's entries still must be
    comparisons); every variable's value must be one the rows carry (`CARRIED_KINDS`)."""
    if not ops or not isinstance(ops[0], Lookup | NodeScan):
        return None
    first = ops[0]
    anchor, conds = None, []
    if isinstance(first, Lookup):
        ok, value = constant(first.value.expr, checker)
        if not ok:
            return None
        if isinstance(value, str):
            anchor = first.value.expr
        else:  # `= null`: a comparison (no node matches)
            conds.append((0, first.key, "=", first.value.expr))
        here: str | None = first.label
    elif len(first.labels) == 1:
        here = first.labels[0]
    else:
        hop = next((op for op in ops if isinstance(op, Expand | VarExpand)), None)
        here = None if first.labels or hop is None else _start_type(hop, checker)
    if here is None:
        return None
    names, types, hops = [first.var], [here], []
    rels: dict[str, Expand | VarExpand] = {}
    inline = {first.var: {first.key} if isinstance(first, Lookup) else set()}
    for op in ops[1:]:
        if isinstance(op, Expand | VarExpand):
            there = _hop_type(op, types[-1], checker)
            if there is None or op.into or op.dst in names or op.dst in rels:
                return None
            if op.rel is not None:
                walk = isinstance(op, VarExpand)
                if op.rel in names or op.rel in rels or (walk and usage is None):
                    return None
                rels[op.rel] = op
            names.append(op.dst)
            types.append(there)
            hops.append(op)
        elif isinstance(op, Filter):
            c = comparison(op.condition.expr)
            at = names.index(c[0]) if c is not None and c[0] in names else None
            if (
                c is not None
                and at is not None
                and property_kind(types[at], c[1], checker) is not None
                and constant(c[3], checker)[0]
            ):
                conds.append((at, c[1], c[2], c[3]))
                if op.inline:
                    inline.setdefault(c[0], set()).add(c[1])
            elif op.inline or usage is None:
                return None
        else:
            return None
    if not hops and (usage is None or anchor is None):
        return None  # a whole node table: DuckDB scans it with pushdown, faster than rows
    carried: dict[str, tuple[str, ...]] = {}
    if usage is not None:
        for name, type_name in zip(names, types, strict=True):
            if not name.startswith("#"):
                props = carried_properties(
                    checker.schema.require(type_name), usage, name, inline.get(name, set())
                )
                if props is None:
                    return None
                carried[name] = props
        for name, op in rels.items():
            edge = checker.schema.require_edge(op.types[0])
            props = carried_properties(edge, usage, name, set()) if isinstance(op, Expand) else ()
            if props is None:
                return None
            carried[name] = props
    return Chain(tuple(names), tuple(types), tuple(hops), anchor, tuple(conds), carried)


def csr_output(e: syntax.Expr, chain: Chain, checker: Checker) -> tuple[str, int | None] | None:
    """What the adjacency returns for a RETURN item over `chain`: ("count", None) for
    `count(*)` or a relationship's count, ("count" or "distinct", position) for
    `count([DISTINCT] v)` of a node, ("prop", position) for a node's property, ("edge",
    hop) for a fixed relationship's; None for anything else."""
    rels = {op.rel: i for i, op in enumerate(chain.hops) if op.rel is not None}
    if isinstance(e, syntax.Func) and e.name == "count":
        if e.star:
            return "count", None
        if len(e.args) != 1 or not isinstance(e.args[0], syntax.Var):
            return None
        name = e.args[0].name
        if name in rels:  # a relationship is never null
            return None if e.distinct else ("count", None)
        if name in chain.names:
            return ("distinct" if e.distinct else "count"), chain.names.index(name)
        return None
    if not isinstance(e, syntax.Prop) or not isinstance(e.subject, syntax.Var):
        return None
    name = e.subject.name
    if name in chain.names:
        at = chain.names.index(name)
        return ("prop", at) if property_kind(chain.types[at], e.name, checker) else None
    if name in rels and isinstance(chain.hops[rels[name]], Expand):
        hop = chain.hops[rels[name]]
        return ("edge", rels[name]) if property_kind(hop.types[0], e.name, checker) else None
    return None


def comparison(e: syntax.Expr) -> tuple[str, str, str, syntax.Expr] | None:
    """(variable, property, operator, constant) of `v.p <op> constant`, either way round
    (the operator as if `v.p` were on the left)."""
    if not isinstance(e, syntax.Binary) or e.op not in _FLIP:
        return None
    for left, right, op in ((e.left, e.right, e.op), (e.right, e.left, _FLIP[e.op])):
        if (
            isinstance(left, syntax.Prop)
            and isinstance(left.subject, syntax.Var)
            and _is_constant(right)
        ):
            return left.subject.name, left.name, op, right
    return None


def constant(e: syntax.Expr, checker: Checker) -> tuple[bool, object]:
    """(usable, value) of a constant the adjacency compares with: a literal or a
    parameter whose value is a string, number, boolean or null (its type is what the plan
    depends on: the traversal takes new values, `Traversal.with_params`)."""
    if isinstance(e, syntax.Unary):
        ok, v = constant(e.operand, checker)
        number = isinstance(v, int | float) and not isinstance(v, bool)
        return (ok and number), (-v if ok and number else None)  # type: ignore[operator]
    if isinstance(e, syntax.Lit):
        v = e.value
    elif isinstance(e, syntax.Param):
        v = checker.peek(e)
    else:
        return False, None
    return (v is None or isinstance(v, str | int | float | bool)), v


def property_kind(type_name: str, prop: str, checker: Checker) -> str | None:
    """The kind of a node or edge type's property the adjacency reads (`id`: String),
    or None."""
    if prop == "id":
        return "String"
    t = checker.schema.table(type_name)
    p = None if t is None else t.property(prop)
    return p.type.kind if p is not None and p.type.kind in CSR_KINDS else None


def carried_properties(
    t: NodeType | EdgeType, usage: dict[str, set[str] | None], name: str, inline: set[str]
) -> tuple[str, ...] | None:
    """The properties a first MATCH's row carries for variable `name` (those the query
    uses and its inline map's, every one when it is used whole), in the schema's order;
    None when one is of a kind the rows do not carry."""
    used = props_of(usage, name)
    if used is not None:
        used = used | inline
    props = tuple(p for p in t.property_names if used is None or p in used)
    for p in props:
        prop = t.property(p)
        if prop is None or prop.type.kind not in CARRIED_KINDS:
            return None
    return props


def _fixed_executor(op: Op) -> Executor:
    """An operator's executor before the rules choose: "algo" for a CALL, else "sql"."""
    return "algo" if isinstance(op, ProcedureCall) else "sql"


def _path_searches(ops: tuple[Op, ...], checker: Checker) -> tuple[Op, ...]:
    out: list[Op] = []
    for op in ops:
        if isinstance(op, ShortestPath):
            types = _edge_types(op.types, checker)
            e = checker.schema.table(types[0]) if len(types) == 1 else None
            if op.ends_new and isinstance(e, EdgeType) and e.src == e.dst:
                op = dataclasses.replace(op, executor="pathsearch")
                for at in _seeded_by_lance(out, op, e.src):
                    out[at] = dataclasses.replace(out[at], executor="lance")
        elif isinstance(op, OptionalJoin):
            op = dataclasses.replace(op, ops=_path_searches(op.ops, checker))
        out.append(op)
    return tuple(out)


def _seeded_by_lance(ops: list[Op], op: ShortestPath, node_type: str) -> list[int]:
    """The positions of the operators selecting a path search's ends that its seeds
    answer by a Lance lookup (query.executor: a seed with a `lookup`): an end selected by
    constants alone whose node can be of the search's one node type."""
    out: list[int] = []
    for seeds in op.seeds:
        first = ops[seeds[0]] if seeds else None
        if isinstance(first, Lookup):
            labels: tuple[str, ...] = (first.label,)
        elif isinstance(first, NodeScan):
            labels = first.labels or (node_type,)  # no label: the edge type's endpoints
        else:
            continue
        if node_type in labels:
            out += seeds
    return out


def _edge_types(types: tuple[str, ...], checker: Checker) -> tuple[str, ...]:
    return types or tuple(checker.schema.edges)


def _start_type(op: Expand | VarExpand, checker: Checker) -> str | None:
    """The one node type a chain with an unlabelled first node starts at: an endpoint
    type of its first relationship's (one) edge type."""
    e = checker.schema.table(op.types[0]) if len(op.types) == 1 else None
    return e.start_type(op.direction) if isinstance(e, EdgeType) else None


def _hop_type(op: Expand | VarExpand, here: str, checker: Checker) -> str | None:
    """The node type a hop of one edge type from a node of type `here` reaches, or None
    (a walk: only over an edge type joining one node type to itself)."""
    e = checker.schema.table(op.types[0]) if len(op.types) == 1 else None
    if not isinstance(e, EdgeType):
        return None
    if op.direction == "out":
        there = e.dst if e.src == here else None
    elif op.direction == "in":
        there = e.src if e.dst == here else None
    else:
        there = here if e.src == e.dst == here else None
    if there is None:
        return None
    if isinstance(op, VarExpand) and (e.src != e.dst or op.low > op.high):
        return None
    if op.dst_labels and op.dst_labels != (there,):
        return None
    return there


# --- helpers ---------------------------------------------------------------------------------


def _name(n: syntax.NodePat) -> str:
    """A node's variable; an anonymous node is `#` and its position (no Cypher name
    starts so), printed `()`."""
    return n.var or f"#{n.pos[0]}:{n.pos[1]}"


def _eq(var: str, key: str, value: syntax.Expr) -> syntax.Expr:
    return syntax.Binary(
        value.pos, "=", syntax.Prop(value.pos, syntax.Var(value.pos, var), key), value
    )


def _prop_eq(
    c: syntax.Binary, var: str, names: tuple[str, ...]
) -> tuple[str, syntax.Expr, str] | None:
    """(property, constant, the constant's side) of `var.property = constant`."""
    for left, right, side in ((c.left, c.right, "right"), (c.right, c.left, "left")):
        if (
            isinstance(left, syntax.Prop)
            and isinstance(left.subject, syntax.Var)
            and left.subject.name == var
            and left.name in names
            and _is_constant(right)
        ):
            return left.name, right, side
    return None


def _is_constant(e: syntax.Expr) -> bool:
    if isinstance(e, syntax.Unary) and e.op == "-":
        v = e.operand.value if isinstance(e.operand, syntax.Lit) else None
        return isinstance(v, int | float) and not isinstance(v, bool)
    return isinstance(e, syntax.Lit | syntax.Param)


def _reversed(rel: syntax.RelPat) -> syntax.RelPat:
    direction = {"out": "in", "in": "out"}.get(rel.direction, "both")
    return dataclasses.replace(rel, direction=direction)


# --- text -----------------------------------------------------------------------------------


def items_text(items: tuple[Item, ...]) -> str:
    return ", ".join(str(t) if str(t) == alias else f"{t} AS {alias}" for alias, t in items)


def node_text(var: str | None, labels: tuple[str, ...]) -> str:
    var = None if var is not None and var.startswith("#") else var
    return f"({var or ''}{':' + '|'.join(labels) if labels else ''})"


def rel_text(
    var: str | None, types: tuple[str, ...], direction: str, hops: tuple[int, int] | None
) -> str:
    inner = (var or "") + (":" + "|".join(types) if types else "")
    if hops is not None:
        inner += f"*{hops[0]}..{hops[1]}"
    body = f"[{inner}]" if inner else ""
    left, right = {"out": ("-", "->"), "in": ("<-", "-"), "both": ("-", "-")}[direction]
    return f"{left}{body}{right}"


def pattern_text(p: syntax.Pattern) -> str:
    """A pattern as written (inline property maps as `{...}`)."""
    chain = p.chain

    def node(n: syntax.NodePat) -> str:
        text = node_text(n.var, n.labels)
        return text[:-1] + " {...})" if n.props else text

    parts = [node(chain.nodes[0])]
    for rel, n in zip(chain.rels, chain.nodes[1:], strict=True):
        hops = None if rel.hops is None else (rel.hops[0], rel.hops[1])
        inner = (rel.var or "") + (":" + "|".join(rel.types) if rel.types else "")
        if hops is not None:
            inner += f"*{hops[0]}..{'' if hops[1] is None else hops[1]}"
        body = f"[{inner}]" if inner else ""
        left, right = {"out": ("-", "->"), "in": ("<-", "-"), "both": ("-", "-")}[rel.direction]
        parts.append(f"{left}{body}{right}{node(n)}")
    text = "".join(parts)
    return f"{p.path_var} = {text}" if p.path_var else text


def show(e: syntax.Expr) -> str:
    """`e` as Cypher text."""
    if isinstance(e, syntax.Lit):
        return _lit(e.value)
    if isinstance(e, syntax.Param):
        return f"${e.name}"
    if isinstance(e, syntax.Var):
        return "_" if e.name.startswith("#") else e.name
    if isinstance(e, syntax.Prop):
        return f"{_operand(e.subject)}.{e.name}"
    if isinstance(e, syntax.Index):
        return f"{_operand(e.subject)}[{show(e.index)}]"
    if isinstance(e, syntax.Unary):
        return f"NOT {_operand(e.operand)}" if e.op == "NOT" else f"{e.op}{_operand(e.operand)}"
    if isinstance(e, syntax.Binary):
        return f"{_operand(e.left)} {e.op} {_operand(e.right)}"
    if isinstance(e, syntax.IsNull):
        return f"{_operand(e.operand)} IS {'NOT ' if e.negated else ''}NULL"
    if isinstance(e, syntax.Func):
        if e.star:
            return f"{e.name}(*)"
        args = ", ".join(show(a) for a in e.args)
        return f"{e.name}({'DISTINCT ' if e.distinct else ''}{args})"
    if isinstance(e, syntax.Case):
        subject = f" {show(e.subject)}" if e.subject is not None else ""
        whens = "".join(f" WHEN {show(w)} THEN {show(t)}" for w, t in e.whens)
        default = f" ELSE {show(e.default)}" if e.default is not None else ""
        return f"CASE{subject}{whens}{default} END"
    if isinstance(e, syntax.ListLit):
        return "[" + ", ".join(show(i) for i in e.items) + "]"
    if isinstance(e, syntax.MapLit):
        return "{" + ", ".join(f"{k}: {show(v)}" for k, v in e.entries) + "}"
    if isinstance(e, syntax.PatternPred):
        return pattern_text(syntax.Pattern(e.pos, None, e.chain))
    if isinstance(e, syntax.Exists):
        inner = ", ".join(pattern_text(p) for p in e.patterns)
        where = f" WHERE {show(e.where)}" if e.where is not None else ""
        return f"EXISTS {{ {inner}{where} }}"
    return type(e).__name__


def _operand(e: syntax.Expr) -> str:
    text = show(e)
    return f"({text})" if isinstance(e, syntax.Binary | syntax.IsNull | syntax.Unary) else text


def _lit(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_lit(v) for v in value) + "]"
    return repr(value)
