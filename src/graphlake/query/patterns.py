"""Graph patterns to SQL FROM items and join conditions.

A node variable becomes a FROM alias over its node table(s) (several labels: a
`UNION ALL BY NAME`, tagged with `_label`), a relationship one over its edge table(s),
oriented so that `_a` is the endpoint on the pattern's left and `_b` the one on its
right (an undirected relationship reads both orientations, a self-loop once); those
orienting columns stay inside the match: a relationship variable's value is a struct of
`id`, `src`, `dst`, `_type` and properties. Variables already bound by an earlier clause
are referenced by name and add no FROM item.

The binder (query.binder) has bound the patterns and checked their limits: the node
types each node pattern can be (`BoundQuery.node_types`, by `Element`), the variables and
the types of inline property values come from there.

A variable-length relationship is a recursive CTE, a *walk*: it starts from the anchor
node's rows (a bound node, or the node whose inline properties and WHERE conditions
select it), expands one hop per step along the `src`/`dst` columns, and never reuses an
edge on a path (openCypher's relationship uniqueness); its depth is capped.

The patterns a MATCH compiles are read from its logical operators (`patterns_of`: the
planner's MATCH and OPTIONAL MATCH lowering); a pattern predicate's or EXISTS's are
those of the expression (query.planner `_subquery`), and a CALL's node join builds its
own (query.calls).

The text of these FROM items, conditions and CTEs is written by query.sqlgen (`entities`,
`walks`); this module decides which ones a pattern needs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from graphlake.query import sqlgen, syntax
from graphlake.query.binder import (
    MAX_HOPS,
    BoundQuery,
    Element,
    Place,
    anchored,
    free_vars,
    has_subquery,
    inline_place,
    node_at,
    rel_at,
)
from graphlake.query.binder import orientations as _orientations
from graphlake.query.checker import EDGE, EDGES, NODE, PATH, Binding, Checker
from graphlake.query.expr import ExprCompiler, Subquery
from graphlake.query.logical import (
    Argument,
    Expand,
    Filter,
    Lookup,
    NamePath,
    NodeScan,
    Op,
    ShortestPath,
    VarExpand,
)
from graphlake.query.steps import PlanStep
from graphlake.query.usage import props_of
from graphlake.schema.model import EdgeType

__all__ = ["MAX_HOPS"]  # re-exported: query.traverse and tests import it from here


@dataclass
class Walk:
    cte: str  # the recursive CTE's name
    alias: str  # its alias in the FROM list
    types: tuple[str, ...]


@dataclass(frozen=True)
class Seed:
    """A small query whose `node` column starts a frontier (an anchored chain's first
    node: selected by constants, so its rows are known before the main statement)."""

    frontier: str
    sql: str
    tables: frozenset[str]
    # When the node is selected by constant properties only: (table, ((column, value),
    # ...)), answered by a Lance scan without starting DuckDB. A value given as a
    # parameter stays an `syntax.Param`, read from the plan's arguments when it runs (so a
    # cached plan serves other values: `Plan.argument`).
    lookup: tuple[str, tuple[tuple[str, object], ...]] | None = None


@dataclass(frozen=True)
class Prefetch:
    """Rows of `table` whose `key` is in `frontier`, read through Lance (its index on
    `id`, `src`, `dst`) before the main statement runs and registered as `name`; the
    statement reads `name` in place of `table`. Its `next_key` values are the next
    frontier. Exact, not approximate: every matching row of the pattern passes through
    these rows. A frontier larger than the executor's cap registers the whole table."""

    name: str
    table: str
    key: str
    frontier: str
    columns: tuple[str, ...]
    next_key: str | None = None
    next_frontier: str | None = None


@dataclass(frozen=True)
class PathSearch:
    """shortestPath between seeded nodes over one edge type: the executor may answer the
    walk CTE `cte` by a breadth-first search through Lance's `src`/`dst` indexes (frontier
    by frontier) and register its rows, with the same columns, in its place."""

    cte: str
    starts: str  # frontier names of the two seeds
    targets: str
    table: str
    direction: str  # "out", "in" or "both"
    labels: tuple[str, str]  # the edge type's source and destination node types
    max_depth: int


@dataclass
class Compiled:
    """FROM items and conditions of one MATCH (or one pattern predicate)."""

    items: list[str] = field(default_factory=list)
    conditions: list[str] = field(default_factory=list)
    new: dict[str, Binding] = field(default_factory=dict)  # variables this match binds
    outputs: dict[str, str] = field(default_factory=dict)  # variable -> SQL of its value
    ctes: list[PlanStep] = field(default_factory=list)  # walks
    seeds: list[Seed] = field(default_factory=list)
    prefetch: list[Prefetch] = field(default_factory=list)
    searches: list[PathSearch] = field(default_factory=list)
    tables: dict[Element, str] = field(default_factory=dict)  # pattern element -> source


@dataclass
class _Rel:
    alias: str
    types: tuple[str, ...]
    walk: Walk | None


class PatternCompiler:
    def __init__(
        self,
        checker: Checker,
        bound: BoundQuery,
        usage: dict,
        names: FreshNames,
        tables: set[str],
    ):
        self.checker = checker
        self.bound = bound
        self.usage = usage
        self.names = names
        self.tables = tables

    def compile(
        self,
        patterns: tuple[syntax.Pattern, ...],
        scope: Mapping[str, Binding],
        source: str | None,
        subquery: Subquery | None,
        place: Place,
    ) -> Compiled:
        """The patterns of the MATCH (or subquery) at `place`, which the binder bound:
        `source` is the CTE holding the earlier clauses' rows (walk anchors start there);
        None inside a pattern predicate."""
        out = Compiled()
        node_types = self.bound.node_types[place]
        anchors = self.bound.anchors[place]
        rels: list[_Rel] = []
        for k, pattern in enumerate(patterns):
            if pattern.shortest:
                path = self._shortest(pattern, k, node_types, scope, out, anchors, source, subquery)
                if pattern.path_var is not None:
                    self._bind(pattern.path_var, Binding(PATH), out)
                    out.outputs[pattern.path_var] = path
                continue
            chain = pattern.chain
            if source is not None:
                self._frontiers(chain, k, node_types, scope, anchors, out)
            aliases = [
                self._node(n, node_at(k, i), node_types, scope, out)
                for i, n in enumerate(chain.nodes)
            ]
            lengths, node_lists, rel_lists = [], [sqlgen.node_list(aliases[0])], []
            for i, rel in enumerate(chain.rels):
                left, right = chain.nodes[i], chain.nodes[i + 1]
                lt, rt = node_types[node_at(k, i)], node_types[node_at(k, i + 1)]
                if rel.hops is None:
                    ends = (aliases[i], aliases[i + 1])
                    r = self._fixed(rel, rel_at(k, i), *ends, lt, rt, scope, out)
                    lengths.append(sqlgen.ONE_HOP)
                    rel_lists.append(sqlgen.rel_list(r.alias))
                    node_lists.append(sqlgen.node_list(aliases[i + 1]))
                else:
                    r, parts = self._variable(
                        rel,
                        (left, right),
                        aliases[i : i + 2],
                        (lt, rt),
                        scope,
                        out,
                        anchors,
                        source,
                        subquery,
                    )
                    lengths.append(parts[0])
                    rel_lists.append(parts[1])
                    node_lists.append(parts[2])
                rels.append(r)
            if pattern.path_var is not None:
                self._bind(pattern.path_var, Binding(PATH), out)
                out.outputs[pattern.path_var] = sqlgen.path(lengths, node_lists, rel_lists)
        out.conditions += _uniqueness(rels)
        return out

    # --- nodes
    def _node(
        self,
        n: syntax.NodePat,
        at: Element,
        node_types: Mapping[Element, tuple[str, ...]],
        scope: Mapping[str, Binding],
        out: Compiled,
    ) -> str:
        types = node_types[at]
        if n.var is not None and (n.var in scope or n.var in out.new):
            b = scope.get(n.var) or out.new[n.var]  # a node: the binder checked it
            if set(types) != set(b.types):
                out.conditions.append(sqlgen.label_in(n.var, types))
        else:
            alias = n.var or self.names.fresh("n")
            if n.var is not None:
                self._bind(n.var, Binding(NODE, types), out)
                out.outputs[n.var] = sqlgen.column(n.var)
            props = _with_inline(self.usage, n.var, n.props)
            out.items.append(
                sqlgen.named(self.node_source(types, props, out.tables.get(at)), alias)
            )
            if not types:
                out.conditions.append(sqlgen.FALSE)
        alias = n.var or alias
        out.conditions += self._inline(alias, n, Binding(NODE, types))
        return alias

    def node_source(
        self, types: tuple[str, ...], props: set[str] | None, prefetched: str | None = None
    ) -> str:
        """The rows of a node variable; `prefetched` names a frontier's rows of its one
        type, read in place of the whole table."""
        parts = []
        for t in types:
            if prefetched is None:
                self.tables.add(t)
            names = self.checker.table(t).property_names
            read = [p for p in names if props is None or p in props]
            parts.append(sqlgen.NodeRows(t, prefetched or t, read))
        return sqlgen.node_rows(parts)

    def _inline(
        self,
        alias: str,
        element: syntax.NodePat | syntax.RelPat,
        binding: Binding,
        constant: bool = False,
    ) -> list[str]:
        """The conditions of an inline property map (with `constant`, of its entries
        whose values use no variable only)."""
        if element.props is None:
            return []
        ec = ExprCompiler(self.checker, self.bound)
        conds = []
        for m, (key, value) in enumerate(element.props.entries):
            if constant and (free_vars(value) or has_subquery(value)):
                continue
            at = inline_place(element, m)
            s = ec.sql(value, at)
            conds.append(sqlgen.property_equals(alias, key, s))
            if self._is_text_key(binding, key) and self.bound.type_at(at) == "string":
                # The same condition on `id` (the key's text) reaches Lance's index on id.
                conds.append(sqlgen.key_equals(alias, s))
        return conds

    def _is_text_key(self, binding: Binding, prop: str) -> bool:
        if binding.kind != NODE or len(binding.types) != 1:
            return False
        t = self.checker.table(binding.types[0])
        p = t.property(prop)
        return getattr(t, "key", None) == prop and p is not None and p.type.kind == "String"

    @staticmethod
    def _bind(name: str, b: Binding, out: Compiled) -> None:
        out.new[name] = b  # new: the binder checked it

    # --- relationships
    def edge_source(
        self,
        types: tuple[str, ...],
        rel: syntax.RelPat,
        lt: tuple[str, ...],
        rt: tuple[str, ...],
        props: set[str] | None,
        prefetched: str | None = None,
    ) -> str:
        parts = []
        for t in types:
            e = self.checker.table(t)
            for a_type, b_type, forward in _orientations(e, rel):
                if a_type not in lt or b_type not in rt:
                    continue
                if prefetched is None:
                    self.tables.add(t)
                read = [p for p in e.property_names if props is None or p in props]
                # An undirected pattern reads each edge both ways, a self-loop only once.
                loops = rel.direction == "both" and not forward
                parts.append(
                    sqlgen.EdgeRows(t, prefetched or t, forward, a_type, b_type, read, loops)
                )
        return sqlgen.edge_rows(parts)

    def edge_value(
        self,
        alias: str,
        types: tuple[str, ...],
        rel: syntax.RelPat,
        lt: tuple[str, ...],
        rt: tuple[str, ...],
        props: set[str] | None,
    ) -> str:
        """A relationship variable's value: a struct of `id`, `src`, `dst`, `_type` and
        the properties read (those of every type the pattern can match), without the
        columns that orient and key the edge inside the match (`_key`, `_a`, ...)."""
        names: list[str] = []
        for t in types:
            e = self.checker.table(t)
            if any(a in lt and b in rt for a, b, _ in _orientations(e, rel)):
                names += [
                    p for p in e.property_names if (props is None or p in props) and p not in names
                ]
        return sqlgen.edge_struct(alias, names)

    def _fixed(
        self,
        rel: syntax.RelPat,
        at: Element,
        left: str,
        right: str,
        lt: tuple[str, ...],
        rt: tuple[str, ...],
        scope: Mapping[str, Binding],
        out: Compiled,
    ) -> _Rel:
        types = self.checker.edge_types(rel)
        alias = rel.var or self.names.fresh("r")
        if rel.var is not None:
            self._bind(rel.var, Binding(EDGE, types), out)
        props = _with_inline(self.usage, rel.var, rel.props)
        if rel.var is not None:
            out.outputs[rel.var] = self.edge_value(alias, types, rel, lt, rt, props)
        src = self.edge_source(types, rel, lt, rt, props, out.tables.get(at))
        out.items.append(sqlgen.named(src, alias))
        out.conditions += sqlgen.hop(alias, left, right, len(lt) > 1, len(rt) > 1)
        out.conditions += self._inline(alias, rel, Binding(EDGE, types))
        return _Rel(alias, types, None)

    def _variable(self, rel, ends, aliases, end_types, scope, out, anchors, source, subquery):
        low, high = rel.hops  # within the limits: the binder checked them
        high = MAX_HOPS if high is None else high
        types = self.checker.edge_types(rel)
        flip = self._start_at_right(ends, scope, out, anchors)
        if flip:
            ends, aliases, end_types = ends[::-1], aliases[::-1], end_types[::-1]
            rel = syntax.RelPat(
                rel.pos,
                rel.var,
                rel.types,
                {"out": "in", "in": "out"}.get(rel.direction, "both"),
                rel.hops,
                None,
            )
        walk = self._walk(
            rel, types, ends[0], aliases[0], scope, out, anchors, source, (low, high), subquery
        )
        out.items.append(sqlgen.walk_item(walk.cte, low, walk.alias))
        out.conditions += sqlgen.walk_ends(
            walk.alias, aliases[0], aliases[1], len(end_types[1]) > 1
        )
        # flip: the walk ran right to left, the path's lists run the other way
        length, edges, nodes = sqlgen.walk_lists(walk.alias, flip)
        if rel.var is not None:
            self._bind(rel.var, Binding(EDGES, types), out)
            out.outputs[rel.var] = edges
        return _Rel(walk.alias, types, walk), (length, edges, nodes)

    def _start_at_right(self, ends, scope, out, anchors) -> bool:
        """Expand from the right end when only it is bound or selected."""
        return anchored(ends[1], scope, anchors) > anchored(ends[0], scope, anchors)

    def _frontiers(
        self,
        chain: syntax.Chain,
        k: int,
        node_types: Mapping[Element, tuple[str, ...]],
        scope,
        anchors,
        out: Compiled,
    ) -> None:
        """Anchored traversal: when a chain starts at a node selected by constants, read
        each fixed hop's edges (and the next node's rows) through Lance by the frontier
        of node ids so far, instead of joining whole tables."""
        first = chain.nodes[0]
        types = node_types[node_at(k, 0)]
        if (
            first.var in scope
            or first.var in out.new
            or len(types) != 1
            or anchored(first, scope, anchors) != 1
        ):
            return
        frontier = self.names.fresh("f")
        sql = self._seed(first, first.var or "__seed", scope, out, anchors, None, None, types=types)
        out.seeds.append(
            Seed(frontier, sql, frozenset(types), self._lookup(first, types[0], anchors))
        )
        for i, rel in enumerate(chain.rels):
            edges = [
                e
                for e in self.checker.edge_types(rel)
                if any(
                    o[0] in node_types[node_at(k, i)] and o[1] in node_types[node_at(k, i + 1)]
                    for o in _orientations(self.checker.table(e), rel)
                )
            ]
            if (
                rel.hops is not None
                or rel.direction == "both"
                or len(edges) != 1
                or rel_at(k, i) in out.tables
            ):
                return
            e = self.checker.table(edges[0])
            key, other = ("src", "dst") if rel.direction == "out" else ("dst", "src")
            props = _with_inline(self.usage, rel.var, rel.props)
            hop, nxt = self.names.fresh("hop"), self.names.fresh("f")
            out.prefetch.append(
                Prefetch(
                    hop, e.name, key, frontier, _columns(e, ("id", "src", "dst"), props), other, nxt
                )
            )
            out.tables[rel_at(k, i)] = hop
            node = chain.nodes[i + 1]
            ntypes = node_types[node_at(k, i + 1)]
            if node.var in scope or node.var in out.new or len(ntypes) != 1:
                return
            rows = self.names.fresh("rows")
            props = _with_inline(self.usage, node.var, node.props)
            out.prefetch.append(
                Prefetch(
                    rows,
                    ntypes[0],
                    "id",
                    nxt,
                    _columns(self.checker.table(ntypes[0]), ("id",), props),
                )
            )
            out.tables[node_at(k, i + 1)] = rows
            frontier = nxt

    def _lookup(self, node: syntax.NodePat, table: str, anchors) -> tuple | None:
        """(table, column = value pairs) for a node selected by literal or parameter
        properties only (its SQL seed was checked already: the values have the right
        types); None otherwise."""
        if node.var in anchors or node.props is None:
            return None
        pairs = []
        for key, value in node.props.entries:
            if isinstance(value, syntax.Lit):
                v = value.value
            elif isinstance(value, syntax.Param):
                v = self.checker.peek(value)  # a type decision; the value is read at run
            else:
                return None
            if v is None or isinstance(v, list | tuple | dict):
                return None  # `= null` matches nothing in SQL; leave those to the SQL seed
            column = "id" if self._is_text_key(Binding(NODE, (table,)), key) else key
            pairs.append((column, value if isinstance(value, syntax.Param) else v))
        return table, tuple(pairs)

    def _seed(
        self,
        node: syntax.NodePat,
        alias: str,
        scope,
        out,
        anchors,
        source,
        subquery,
        types: tuple[str, ...] | None = None,
    ) -> str:
        """The rows a walk starts from (or, for shortestPath, the nodes it must reach): a
        bound node's distinct ids, or the node table filtered by the pattern's inline
        properties and the WHERE conditions on that node alone."""
        if node.var is not None and node.var in scope:
            return sqlgen.bound_seed(node.var, source)
        if types is None:
            types = (
                out.new[node.var].types if node.var in out.new else self.checker.node_types(node)
            )
        # Only constant properties select seed rows (a seed runs before other variables
        # exist); the rest are checked where the pattern is joined.
        conds = self._inline(alias, node, Binding(NODE, types), constant=True)
        if node.var is not None:
            ec = ExprCompiler(self.checker, self.bound, subquery)
            conds += [ec.condition(c, at) for c, at in anchors.get(node.var, ())]
        return sqlgen.selected_seed(alias, self.node_source(types, self._seed_props(node)), conds)

    def _walk(
        self,
        rel,
        types,
        start,
        start_alias,
        scope,
        out,
        anchors,
        source,
        hops,
        subquery,
        targets: str | None = None,
    ) -> Walk:
        """A recursive CTE of paths from the seed rows. With `targets` (shortestPath) a
        breadth-first search instead: each (start, node) pair is kept once, at its first
        (shortest) depth, and the search stops once every start reached every target."""
        cte = self.names.fresh("walk")
        seed = self._seed(start, start_alias, scope, out, anchors, source, subquery)
        all_nodes = tuple(self.checker.schema.nodes)
        edges = self.edge_source(types, rel, all_nodes, all_nodes, set())
        sql = sqlgen.walk(cte, seed, edges, hops[1], targets)
        kind = "walk" if targets is None else "shortest paths"
        out.ctes.append(
            PlanStep(
                cte,
                "walk",
                f"{kind} {'|'.join(types)} "
                f"*{hops[0]}..{hops[1]} from {start.var or 'an anonymous node'}",
                sql,
                key=() if targets is None else sqlgen.SEARCH_KEY,
            )
        )
        return Walk(cte, self.names.fresh("w"), types)

    def _shortest(
        self, pattern: syntax.Pattern, k: int, node_types, scope, out, anchors, source, subquery
    ) -> str:
        """shortestPath((a)-[:T*..n]->(b)) between bound or selected nodes: the SQL of
        its path struct."""
        chain = pattern.chain  # its shape and ends checked by the binder
        rel = chain.rels[0]
        low, high = rel.hops or (1, 1)
        ends = chain.nodes
        aliases = [self._node(n, node_at(k, i), node_types, scope, out) for i, n in enumerate(ends)]
        types = self.checker.edge_types(rel)
        targets = self._seed(ends[1], aliases[1], scope, out, anchors, source, subquery)
        walk = self._walk(
            rel,
            types,
            ends[0],
            aliases[0],
            scope,
            out,
            anchors,
            source,
            (low, high or MAX_HOPS),
            subquery,
            targets=targets,
        )
        # A path search over one edge type between nodes this MATCH selects, of one node
        # type (between two, ids cannot mix: the CTE answers it, with no seeds to read).
        e = self.checker.table(types[0]) if len(types) == 1 else None
        if isinstance(e, EdgeType) and e.src == e.dst and not any(n.var in scope for n in ends):
            seeds = [
                self._end_seed(
                    n, node_at(k, i), alias, node_types, scope, out, anchors, source, subquery
                )
                for i, (n, alias) in enumerate(zip(ends, aliases, strict=True))
            ]
            out.seeds += seeds
            out.searches.append(
                PathSearch(
                    walk.cte,
                    seeds[0].frontier,
                    seeds[1].frontier,
                    e.name,
                    rel.direction,
                    (e.src, e.dst),
                    high or MAX_HOPS,
                )
            )
        out.items.append(sqlgen.walk_item(walk.cte, low, walk.alias))
        out.conditions += sqlgen.walk_ends(walk.alias, aliases[0], aliases[1])
        if rel.var is not None:
            self._bind(rel.var, Binding(EDGES, types), out)
            out.outputs[rel.var] = sqlgen.walk_lists(walk.alias, False)[1]
        return sqlgen.shortest_path(walk.alias)

    def _end_seed(
        self,
        n: syntax.NodePat,
        at: Element,
        alias: str,
        node_types,
        scope,
        out,
        anchors,
        source,
        subquery,
    ) -> Seed:
        """A shortestPath end's seed; one selected by constants is read by a Lance lookup
        (no DuckDB statement before the search)."""
        types = out.new[n.var].types if n.var in out.new else node_types[at]
        lookup = self._lookup(n, types[0], anchors) if len(types) == 1 else None
        return Seed(
            self.names.fresh("f"),
            self._seed(n, alias, scope, out, anchors, source, subquery),
            frozenset(types),
            lookup,
        )

    def _seed_props(self, n: syntax.NodePat) -> set[str] | None:
        return _with_inline(self.usage, n.var, n.props)


# --- the MATCH's patterns, from its operators ------------------------------------------------


def patterns_of(ops: Sequence[Op]) -> tuple[syntax.Pattern, ...]:
    """The patterns a MATCH's operators (query.logical: NodeScan, Lookup or Argument
    first, then Expand, VarExpand, ShortestPath, NamePath and Filters, as `build` lays
    them out) match, in the order written, as `PatternCompiler.compile` takes them:
    each node with its labels and inline map (its inline Filters; a Lookup's key entry),
    each relationship with its types, direction, hops and inline map; a chain read
    `backwards` (anchoring) turned back to the way it is written, so each element is at
    the binder's `Element` of it (`node_at`, `rel_at`). A ShortestPath takes the two
    starts before it as its ends; NamePath names the pattern before it. The WHERE
    conjuncts' Filters are not read here (the MATCH's WHERE is its step's condition)."""
    built: list[_PatternOf] = []
    for op in ops:
        if isinstance(op, NodeScan | Lookup | Argument):
            built.append(_PatternOf([_start_node(op)], []))
        elif isinstance(op, Expand | VarExpand):
            current = built[-1]
            current.rels.append(_hop_rel(op))
            current.nodes.append(_NodeOf(op.dst_pos, op.dst, op.dst_labels))
            current.backwards = op.backwards
        elif isinstance(op, ShortestPath):
            start, end = built.pop(-2), built.pop()
            assert not start.rels and not end.rels, "shortestPath's ends are two starts"
            rel = _RelOf(op.pos, op.rel, op.types, op.direction, op.hops)
            built.append(_PatternOf(start.nodes + end.nodes, [rel], op.path, shortest=True))
        elif isinstance(op, NamePath):
            built[-1].path = op.var
        else:
            assert isinstance(op, Filter), f"{type(op).__name__} in a MATCH"
            if op.inline:
                _take_inline(built[-1], op)
    return tuple(b.pattern() for b in built)


@dataclass
class _NodeOf:
    pos: syntax.Pos
    name: str  # the operator's name of it (`#...`: anonymous)
    labels: tuple[str, ...]
    entries: list[tuple[str, syntax.Expr]] = field(default_factory=list)

    def pattern(self) -> syntax.NodePat:
        var = None if self.name.startswith("#") else self.name
        return syntax.NodePat(self.pos, var, self.labels, _map(self.pos, self.entries))


@dataclass
class _RelOf:
    pos: syntax.Pos
    var: str | None
    types: tuple[str, ...]
    direction: str
    hops: tuple[int, int | None] | None
    entries: list[tuple[str, syntax.Expr]] = field(default_factory=list)

    def pattern(self, backwards: bool) -> syntax.RelPat:
        direction = _TURNED.get(self.direction, "both") if backwards else self.direction
        props = _map(self.pos, self.entries)
        return syntax.RelPat(self.pos, self.var, self.types, direction, self.hops, props)


_TURNED = {"out": "in", "in": "out"}


@dataclass
class _PatternOf:
    nodes: list[_NodeOf]
    rels: list[_RelOf]
    path: str | None = None
    shortest: bool = False
    backwards: bool = False

    def pattern(self) -> syntax.Pattern:
        nodes = [n.pattern() for n in self.nodes]
        rels = [r.pattern(self.backwards) for r in self.rels]
        if self.backwards:  # read from its end: the chain as written runs the other way
            nodes, rels = nodes[::-1], rels[::-1]
        return syntax.Pattern(
            nodes[0].pos, self.path, syntax.Chain(tuple(nodes), tuple(rels)), self.shortest
        )


def _start_node(op: NodeScan | Lookup | Argument) -> _NodeOf:
    if isinstance(op, NodeScan):
        return _NodeOf(op.pos, op.var, op.labels)
    if isinstance(op, Argument):
        return _NodeOf(op.pos, op.var, op.labels)
    node = _NodeOf(op.pos, op.var, (op.label,))
    place = op.value.place
    if place is not None and place[0] == "inline":  # `{key: constant}`, its one entry
        node.entries.append((op.key, op.value.expr))
    return node


def _hop_rel(op: Expand | VarExpand) -> _RelOf:
    if isinstance(op, Expand):
        hops: tuple[int, int | None] | None = None
    else:
        hops = (op.low, None if op.capped else op.high)
    return _RelOf(op.pos, op.rel, op.types, op.direction, hops)


def _take_inline(b: _PatternOf, f: Filter) -> None:
    """An inline map entry's Filter (`name.key = value`) onto its element: the last
    relationship when it names that (an anonymous one is `#rel`), else the last node."""
    c = f.condition.expr
    assert isinstance(c, syntax.Binary) and isinstance(c.left, syntax.Prop)
    assert isinstance(c.left.subject, syntax.Var)
    name, entry = c.left.subject.name, (c.left.name, c.right)
    rel = b.rels[-1] if b.rels else None
    node = b.nodes[-1]
    if rel is not None and name != node.name and name == (rel.var or "#rel"):
        rel.entries.append(entry)
    else:
        assert name == node.name, (name, node.name)
        node.entries.append(entry)


def _map(pos: syntax.Pos, entries: list[tuple[str, syntax.Expr]]) -> syntax.MapLit | None:
    return syntax.MapLit(pos, tuple(entries)) if entries else None


class FreshNames:
    """Fresh SQL aliases (`__stem1`, `__stem2`, ...) shared by one query's planner and
    pattern compiler, so no two of its CTEs or subqueries collide."""

    def __init__(self) -> None:
        self.n = 0

    def fresh(self, stem: str) -> str:
        self.n += 1
        return f"__{stem}{self.n}"


def _with_inline(usage: dict, var: str | None, props: syntax.MapLit | None) -> set[str] | None:
    """The properties a pattern element reads: those the query uses and its inline map's."""
    used = props_of(usage, var)
    inline = {k for k, _ in props.entries} if props is not None else set()
    return None if used is None else used | inline


def _columns(t, fixed: tuple[str, ...], props: set[str] | None) -> tuple[str, ...]:
    return fixed + tuple(p for p in t.property_names if props is None or p in props)


def _uniqueness(rels: list[_Rel]) -> list[str]:
    """No relationship twice in one MATCH (openCypher's relationship isomorphism)."""
    conds = []
    for i, r1 in enumerate(rels):
        for r2 in rels[i + 1 :]:
            if not set(r1.types) & set(r2.types):
                continue
            conds.append(sqlgen.different(r1.alias, bool(r1.walk), r2.alias, bool(r2.walk)))
    return conds
