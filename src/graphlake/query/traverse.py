"""Anchored traversals answered on the adjacency (graphlake.adjacency), without DuckDB.

Which queries run here is the logical plan's executor rule (query.logical
`choose_executors`, `read_chain`): `MATCH` of one chain that starts (or ends) at a node
selected by its key (`{name: $s}` on a String `@key`, or `WHERE a.name = $s`) or at
every node of one type, each relationship of one type, fixed or variable length
(same-type edges only), optional comparisons of node properties with constants, then
`RETURN` of counts (`count(*)`, `count(v)`, `count(DISTINCT v)`) or of node properties
and fixed relationships' properties. A query that only starts with such a chain (WITH,
ORDER BY, any WHERE, relationship variables, later clauses, ...) runs that MATCH here and
the rest as SQL over its rows (`match_on_csr`, `bind`); anything else is planned as SQL.
This module builds the `Traversal` (`traversal_of`) or `MatchOnCsr` from the logical
operators the rule marked "csr", never from the AST. The planner runs first either way,
so errors and their positions are the SQL path's.

`run` expands the chain level by level in numpy over the CSR: every partial path is a row
of arrays (the node id at each pattern position, the edge row of each hop), so
openCypher's relationship uniqueness (no edge twice in one match) is a comparison of a
hop's new edge rows with the earlier hops' of the same type. Node properties come from
cached columns aligned with the adjacency's dense key index (`adjacency.node_values`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graphlake.adjacency.csr import Csr, find_key
from graphlake.adjacency.load import adjacency, edge_values, node_values
from graphlake.errors import QueryError
from graphlake.query import syntax
from graphlake.query.checker import Checker
from graphlake.query.logical import (
    Aggregate,
    Chain,
    Expand,
    LogicalPlan,
    Project,
    VarExpand,
    constant,
    csr_output,
    first_clause,
    read_chain,
)
from graphlake.query.pathsearch import ranges
from graphlake.schema.arrow import arrow_type
from graphlake.schema.model import NodeType

if TYPE_CHECKING:
    from graphlake.read.snapshot import Snapshot

MAX_PATHS = 5_000_000  # partial paths one traversal may hold (beyond: the SQL executor)
_OPS = {
    "=": pc.equal,
    "<>": pc.not_equal,
    "<": pc.less,
    "<=": pc.less_equal,
    ">": pc.greater,
    ">=": pc.greater_equal,
}


@dataclass(frozen=True)
class Hop:
    edge: str
    direction: str  # "out", "in" or "both", as written left to right
    low: int
    high: int
    var: str | None = None  # a relationship variable (bindings only, `match_on_csr`)


@dataclass(frozen=True)
class Cond:
    position: int  # node position in the chain
    prop: str
    op: str
    value: object
    expr: syntax.Expr | None = None  # the constant as written (a literal or a parameter)


@dataclass(frozen=True)
class Output:
    kind: str  # "count", "distinct" (count(DISTINCT v)), "prop" or "edge" (a relationship's)
    position: int | None  # count(*): None
    prop: str | None
    type: pa.DataType


@dataclass(frozen=True)
class Traversal:
    anchor: str | None  # the anchor node's key (position 0); None: every node of its type
    types: tuple[str, ...]  # node type at each position
    vars: tuple[str | None, ...]
    hops: tuple[Hop, ...]
    conds: tuple[Cond, ...]
    outputs: tuple[Output, ...]
    columns: tuple[str, ...]
    aggregate: bool
    anchor_expr: syntax.Expr | None = None

    def with_params(self, params: dict[str, object]) -> Traversal | None:
        """The same traversal with other values of its parameters (same names and
        types: the executor's plan cache keys on them), or None when a value does not
        fit (then the query is planned afresh)."""
        anchor: str | None = None
        if self.anchor_expr is not None:
            ok, value = _resolve(self.anchor_expr, params)
            if not ok or not isinstance(value, str):
                return None
            anchor = value
        conds = []
        for c in self.conds:
            ok, value = _resolve(c.expr, params)
            if not ok:
                return None
            conds.append(Cond(c.position, c.prop, c.op, value, c.expr))
        return dataclasses.replace(self, anchor=anchor, conds=tuple(conds))


def _resolve(e: syntax.Expr | None, params: dict[str, object]) -> tuple[bool, object]:
    if isinstance(e, syntax.Unary):
        ok, v = _resolve(e.operand, params)
        number = isinstance(v, int | float) and not isinstance(v, bool)
        return (ok and number), (-v if ok and number else None)  # type: ignore[operator]
    if isinstance(e, syntax.Lit):
        v = e.value
    elif isinstance(e, syntax.Param) and e.name in params:
        v = params[e.name]
    else:
        return False, None
    return (v is None or isinstance(v, str | int | float | bool)), v


def traversal_of(plan: LogicalPlan, checker: Checker) -> Traversal:
    """The traversal of a logical plan the executor rule put wholly on the adjacency
    (query.logical.choose_executors: a chain, then the RETURN)."""
    ops = plan.ops
    chain = read_chain(ops[:-1], checker)
    last = ops[-1]
    assert chain is not None and isinstance(last, Project | Aggregate), "not a csr plan"
    items = last.items if isinstance(last, Project) else last.aggregates
    outputs = []
    for _, typed in items:
        found = csr_output(typed.expr, chain, checker)
        assert found is not None, "not a csr plan"
        kind, at = found
        if kind in ("count", "distinct"):
            outputs.append(Output(kind, at, None, pa.int64()))
            continue
        assert isinstance(typed.expr, syntax.Prop) and at is not None
        prop = typed.expr.name
        owner = chain.types[at] if kind == "prop" else chain.hops[at].types[0]
        outputs.append(Output(kind, at, prop, _arrow_type(owner, prop, checker)))
    return dataclasses.replace(
        _traversal(chain, checker),
        outputs=tuple(outputs),
        columns=tuple(alias for alias, _ in items),
        aggregate=isinstance(last, Aggregate),
    )


def _traversal(chain: Chain, checker: Checker) -> Traversal:
    """The chain's traversal, without outputs."""
    anchor: str | None = None
    if chain.anchor is not None:
        value = constant(chain.anchor, checker)[1]
        assert isinstance(value, str)
        anchor = value
    conds = tuple(Cond(at, prop, op, constant(e, checker)[1], e) for at, prop, op, e in chain.conds)
    hops = tuple(Hop(op.types[0], op.direction, *_bounds(op), op.rel) for op in chain.hops)
    names = tuple(None if n.startswith("#") else n for n in chain.names)
    return Traversal(anchor, chain.types, names, hops, conds, (), (), False, chain.anchor)


def _bounds(op: Expand | VarExpand) -> tuple[int, int]:
    return (op.low, op.high) if isinstance(op, VarExpand) else (1, 1)


def _arrow_type(type_name: str, prop: str, checker: Checker) -> pa.DataType:
    if prop == "id":
        return pa.string()
    p = checker.table(type_name).property(prop)
    assert p is not None
    return arrow_type(p.type)


# --- execution ---------------------------------------------------------------------------


class TooManyPaths(Exception):
    """More partial paths than MAX_PATHS: the executor runs the query as SQL instead
    (which streams an aggregate and caps a result by its own limits)."""


@dataclass
class RunStep:
    operation: str
    rows: int
    seconds: float
    detail: str


class _Paths:
    """Partial paths: `nodes[p]` the node id at position p (bound positions only),
    `edges` the edge rows of every hop so far, with their edge type."""

    def __init__(self, starts: np.ndarray):
        self.nodes: dict[int, np.ndarray] = {0: starts}
        self.edges: list[tuple[str, np.ndarray]] = []
        self.end = self.nodes[0]

    def __len__(self) -> int:
        return len(self.end)

    def take(self, rows: np.ndarray) -> None:
        self.nodes = {p: a[rows] for p, a in self.nodes.items()}
        self.edges = [(t, a[rows]) for t, a in self.edges]
        self.end = self.end[rows]


def run(
    snapshot: Snapshot,
    t: Traversal,
    *,
    max_rows: int | None,
    max_bytes: int | None,
    check: Callable[[], None],
) -> tuple[pa.Table, list[RunStep]]:
    """The query's rows and, for explain, one step per operator run."""
    steps: list[RunStep] = []
    paths, csrs, columns = _expand(snapshot, t, max_bytes, check, steps)
    clock = time.perf_counter()
    table = _project(snapshot, paths, t, csrs, columns)
    if max_rows is not None and table.num_rows > max_rows:
        raise QueryError(f"query returned more than {max_rows} rows; add a LIMIT")
    steps.append(
        RunStep(
            "RETURN " + ", ".join(t.columns),
            table.num_rows,
            round(time.perf_counter() - clock, 6),
            "csr: project",
        )
    )
    return table, steps


def _expand(
    snapshot: Snapshot,
    t: Traversal,
    max_bytes: int | None,
    check: Callable[[], None],
    steps: list[RunStep],
) -> tuple[_Paths, list[Csr], list[tuple[int, int]]]:
    """The chain's paths, the adjacency of each hop and, per hop, (first, count) of its
    columns in `paths.edges` (a variable-length hop has one per depth)."""
    clock = time.perf_counter()

    def step(operation: str, rows: int, detail: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        steps.append(RunStep(operation, rows, round(now - clock, 6), detail))
        clock = now

    csrs = [adjacency(snapshot, h.edge, max_bytes=max_bytes) for h in t.hops]
    if not csrs:
        space = node_values(snapshot, t.types[0], "id")
    else:
        space = csrs[0].dst_keys if t.hops[0].direction == "in" else csrs[0].src_keys
    if t.anchor is None:
        paths = _Paths(np.arange(len(space), dtype=np.int64))
        how, what = f"every {t.types[0]}", f"csr: the {t.types[0]} key index"
    else:
        start = find_key(space, t.anchor)
        paths = _Paths(np.array([start] if start >= 0 else [], dtype=np.int64))
        how, what = repr(t.anchor), f"csr: binary search of the {t.types[0]} keys"
    step(f"start: {t.vars[0] or 'an anonymous node'} ({t.types[0]} {how})", len(paths), what)
    conds = {p: [c for c in t.conds if c.position == p] for p in range(len(t.types))}
    for c in conds[0]:
        paths = _filter(snapshot, paths, c, t.types[0])
        step(f"filter {t.vars[0] or '?'}.{c.prop} {c.op} {c.value!r}", len(paths), "csr")
    columns = []
    for i, (hop, csr) in enumerate(zip(t.hops, csrs, strict=True)):
        check()
        first = len(paths.edges)
        paths = _hop(paths, hop, csr, i + 1, check)
        columns.append((first, len(paths.edges) - first))
        fixed = (hop.low, hop.high) == (1, 1)
        what = f"expand {hop.edge}" if fixed else f"walk {hop.edge} *{hop.low}..{hop.high}"
        origin = t.vars[i] or "an anonymous node"
        step(
            f"{what} from {origin}",
            len(paths),
            f"csr: {hop.direction} adjacency of {hop.edge}, no edge twice in a path",
        )
        for c in conds[i + 1]:
            paths = _filter(snapshot, paths, c, t.types[i + 1])
            step(f"filter {t.vars[i + 1] or '?'}.{c.prop} {c.op} {c.value!r}", len(paths), "csr")
    return paths, csrs, columns


def _neighbours(
    csr: Csr, direction: str, ends: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(path row, next node, edge row) for every edge leaving `ends` that way; an
    undirected hop reads a self-loop once."""
    parts = []
    if direction in ("out", "both"):
        rows, index = ranges(csr.out_offsets[ends], csr.out_offsets[ends + 1])
        parts.append((rows, csr.out_targets[index], csr.out_edges[index]))
    if direction in ("in", "both"):
        rows, index = ranges(csr.in_offsets[ends], csr.in_offsets[ends + 1])
        other, edges = csr.in_sources[index], csr.in_edges[index]
        if direction == "both":
            keep = other != ends[rows]
            rows, other, edges = rows[keep], other[keep], edges[keep]
        parts.append((rows, other, edges))
    if len(parts) == 1:
        return parts[0]
    return tuple(np.concatenate([p[k] for p in parts]) for k in range(3))  # type: ignore[return-value]


def _step(paths: _Paths, hop: Hop, csr: Csr) -> _Paths:
    rows, nxt, edges = _neighbours(csr, hop.direction, paths.end)
    if len(rows) > MAX_PATHS:
        raise TooManyPaths(f"more than {MAX_PATHS} paths")
    keep = np.ones(len(rows), dtype=bool)
    for t, earlier in paths.edges:  # relationship uniqueness
        if t == hop.edge:
            keep &= earlier[rows] != edges
    rows, nxt, edges = rows[keep], nxt[keep], edges[keep]
    out = _Paths.__new__(_Paths)
    out.nodes = {p: a[rows] for p, a in paths.nodes.items()}
    out.edges = [(t, a[rows]) for t, a in paths.edges] + [(hop.edge, edges.astype(np.int64))]
    out.end = nxt.astype(np.int64)
    return out


def _hop(paths: _Paths, hop: Hop, csr: Csr, position: int, check: Callable[[], None]) -> _Paths:
    if (hop.low, hop.high) == (1, 1):
        out = _step(paths, hop, csr)
        out.nodes[position] = out.end
        return out
    found = [paths] if hop.low == 0 else []
    current = paths
    for depth in range(1, hop.high + 1):
        check()
        current = _step(current, hop, csr)
        if not len(current):
            break
        if depth >= hop.low:
            found.append(current)
    if not found:
        empty = _Paths.__new__(_Paths)
        empty.nodes, empty.edges, empty.end = dict(paths.nodes), list(paths.edges), paths.end
        empty.take(np.zeros(0, dtype=np.int64))
        empty.nodes[position] = empty.end
        return empty
    return _concat(found, position, len(paths.edges) + hop.high)


def _concat(parts: list[_Paths], position: int, width: int) -> _Paths:
    """Paths of several depths as one set; missing hops' edge rows are -1 (never equal
    to a real row, so uniqueness checks ignore them)."""
    out = _Paths.__new__(_Paths)
    keys = parts[0].nodes.keys()
    out.nodes = {p: np.concatenate([x.nodes[p] for x in parts]) for p in keys}
    out.end = np.concatenate([x.end for x in parts])
    out.nodes[position] = out.end
    types = [t for t, _ in max(parts, key=lambda x: len(x.edges)).edges]
    out.edges = []
    for k in range(min(width, len(types))):
        cols = [
            x.edges[k][1] if k < len(x.edges) else np.full(len(x), -1, dtype=np.int64)
            for x in parts
        ]
        out.edges.append((types[k], np.concatenate(cols)))
    return out


def _values(snapshot: Snapshot, type_name: str, prop: str, ids: np.ndarray, csr_keys) -> pa.Array:
    if prop == "id" or prop == _key_of(snapshot, type_name):
        values = csr_keys
    else:
        values = node_values(snapshot, type_name, prop)
    return values.take(pa.array(ids))


def _key_of(snapshot: Snapshot, type_name: str) -> str:
    t = snapshot.type(type_name, "node")
    assert isinstance(t, NodeType)
    return t.key


def _filter(snapshot: Snapshot, paths: _Paths, c: Cond, type_name: str) -> _Paths:
    ids = paths.nodes[c.position]
    keys = node_values(snapshot, type_name, "id")
    values = _values(snapshot, type_name, c.prop, ids, keys)
    scalar = pa.scalar(c.value) if c.value is not None else pa.scalar(None, values.type)
    keep = _OPS[c.op](values, scalar).fill_null(False)
    paths.take(np.flatnonzero(keep.to_numpy(zero_copy_only=False)))
    return paths


def _project(
    snapshot: Snapshot,
    paths: _Paths,
    t: Traversal,
    csrs: list[Csr],
    hop_columns: list[tuple[int, int]],
) -> pa.Table:
    columns = []
    for o in t.outputs:
        if o.kind == "edge":
            assert o.position is not None and o.prop is not None
            rows = pa.array(paths.edges[hop_columns[o.position][0]][1])
            edge = t.hops[o.position].edge
            if o.prop == "id":
                values = csrs[o.position].edge_ids.take(rows)
            else:
                values = edge_values(snapshot, edge, o.prop).take(rows)
            columns.append(values.cast(o.type))
        elif o.kind == "count":
            columns.append(pa.array([len(paths)], pa.int64()))
        elif o.kind == "distinct":
            assert o.position is not None
            ids = paths.nodes[o.position]
            columns.append(pa.array([len(np.unique(ids))], pa.int64()))
        else:
            assert o.position is not None and o.prop is not None
            keys = node_values(snapshot, t.types[o.position], "id")
            values = _values(snapshot, t.types[o.position], o.prop, paths.nodes[o.position], keys)
            columns.append(values.cast(o.type))
    return pa.Table.from_arrays(columns, names=list(t.columns))


# --- a MATCH whose rows go on to SQL -------------------------------------------------------

BINDINGS = "__csr_bindings"  # the name the executor registers a MATCH's bindings under


@dataclass(frozen=True)
class Var:
    """A variable the MATCH binds, as a column of its bindings."""

    name: str
    kind: str  # "node", "edge" (a fixed hop's relationship) or "edges" (a variable-length one's)
    index: int  # its position (a node) or hop (a relationship) in the traversal
    type: str  # the node or edge type
    props: tuple[str, ...]  # the properties its value carries, in the schema's order


@dataclass(frozen=True)
class MatchOnCsr:
    """The query's first MATCH run on the adjacency: its rows (one column per variable,
    valued as the SQL plan's MATCH step values it) are registered as BINDINGS, and the
    plan's step `step` reads them with `sql` (the rest of the plan, WHERE included, runs
    in DuckDB as before). The MATCH's own seeds, prefetches and searches (the first of
    the plan's) are not needed then."""

    traversal: Traversal
    vars: tuple[Var, ...]
    reverse: bool  # the traversal runs the pattern right to left
    step: str
    sql: str
    seeds: int
    prefetch: int
    searches: int


def match_on_csr(
    plan: LogicalPlan, checker: Checker, step: str, sql: str, counts: tuple[int, int, int]
) -> MatchOnCsr:
    """The query's first MATCH on the adjacency, from the operators of its first clause
    the executor rule put there (query.logical.choose_executors), with the plan's step
    that reads its rows (`step`, `sql`) and the numbers of the MATCH's own seeds,
    prefetches and searches (`counts`)."""
    chain = read_chain(first_clause(plan), checker, plan.usage)
    assert chain is not None, "not a first MATCH on the adjacency"
    out = [
        Var(name, "node", i, chain.types[i], chain.carried[name])
        for i, name in enumerate(chain.names)
        if not name.startswith("#")
    ]
    for i, op in enumerate(chain.hops):
        if op.rel is not None:
            kind = "edge" if isinstance(op, Expand) else "edges"
            out.append(Var(op.rel, kind, i, op.types[0], chain.carried[op.rel]))
    reverse = any(op.backwards for op in chain.hops)
    return MatchOnCsr(_traversal(chain, checker), tuple(out), reverse, step, sql, *counts)


def bind(
    snapshot: Snapshot,
    m: MatchOnCsr,
    *,
    max_bytes: int | None,
    check: Callable[[], None],
) -> tuple[pa.Table, list[RunStep]]:
    """The MATCH's rows: one column per variable (a node: a struct of `id`, `_label` and
    its properties; a relationship: `id`, `src`, `dst`, `_type` and its properties; a
    variable-length one: its `Type:id` keys in pattern order), and the steps run."""
    steps: list[RunStep] = []
    paths, csrs, columns = _expand(snapshot, m.traversal, max_bytes, check, steps)
    clock = time.perf_counter()
    n = len(paths)
    arrays: list[pa.Array] = []
    for v in m.vars:
        if v.kind == "node":
            ids = paths.nodes[v.index]
            fields = [_gather(node_values(snapshot, v.type, "id"), ids), _constant(v.type, n)]
            fields += [_gather(node_values(snapshot, v.type, p), ids) for p in v.props]
            arrays.append(pa.StructArray.from_arrays(fields, names=["id", "_label", *v.props]))
            continue
        csr = csrs[v.index]
        first, width = columns[v.index]
        if v.kind == "edge":
            rows = paths.edges[first][1]
            src = np.searchsorted(csr.out_offsets, rows, side="right") - 1
            fields = [
                _gather(csr.edge_ids, rows),
                _gather(csr.src_keys, src),
                _gather(csr.dst_keys, csr.out_targets[rows]),
                _constant(v.type, n),
            ]
            fields += [_gather(edge_values(snapshot, v.type, p), rows) for p in v.props]
            names = ["id", "src", "dst", "_type", *v.props]
            arrays.append(pa.StructArray.from_arrays(fields, names=names))
            continue
        hops = [paths.edges[k][1] for k in range(first, first + width)]
        matrix = np.stack(hops, axis=1) if hops else np.zeros((n, 0), dtype=np.int64)
        if m.reverse:  # the walk ran right to left: the pattern's order is the other way
            matrix = matrix[:, ::-1]
        real = matrix >= 0  # depths below the hop's longest are padded with -1
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(real.sum(axis=1), out=offsets[1:])
        keys = pc.binary_join_element_wise(
            f"{v.type}:", csr.edge_ids.take(pa.array(matrix[real])), ""
        )
        arrays.append(pa.ListArray.from_arrays(pa.array(offsets), keys))
    table = pa.Table.from_arrays(arrays, names=[v.name for v in m.vars])
    if max_bytes is not None and table.nbytes > max_bytes:
        raise TooManyPaths(f"bindings of {table.nbytes} bytes, more than the memory limit")
    steps.append(
        RunStep(
            "bind " + ", ".join(v.name for v in m.vars),
            n,
            round(time.perf_counter() - clock, 6),
            f"csr: the MATCH's rows as {BINDINGS} for the SQL steps",
        )
    )
    return table, steps


def _gather(values: pa.Array, rows: np.ndarray) -> pa.Array:
    """`values[rows]`; text, when there are at least as many rows as values, as a
    dictionary over `values` (no copy of the strings; DuckDB reads it as plain VARCHAR,
    but converts the whole dictionary: for fewer rows a copy costs less)."""
    text = pa.types.is_string(values.type) or pa.types.is_large_string(values.type)
    if text and len(rows) >= len(values):
        index = pa.int32() if len(values) < 2**31 else pa.int64()
        return pa.DictionaryArray.from_arrays(pa.array(rows, index), values)
    return values.take(pa.array(rows))


def _constant(value: str, n: int) -> pa.Array:
    one = pa.array([value], pa.string())
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), one).cast(pa.string())
