"""Walks: variable-length relationships and shortestPath searches as recursive CTEs.

A walk's rows are paths from its seed rows (`WALK_COLUMNS`: the start node, the node
reached and its label, the edge and node lists, the depth). It expands one hop per step
along an `EdgeRows` item's `_a`/`_b` columns and never reuses an edge on a path; with
targets (shortestPath) it is a breadth-first search instead: each (start, node) pair is
kept once (`USING KEY`, `SEARCH_KEY`), at its first depth, and it stops once every
start reached every target. A path search outside DuckDB registers rows of the same
columns, read by `found`.
"""

from __future__ import annotations

from collections.abc import Sequence

from graphlake.query.sqlgen.quote import ident
from graphlake.query.sqlgen.select import where

__all__ = [
    "ONE_HOP",
    "SEARCH_KEY",
    "WALK_COLUMNS",
    "bound_seed",
    "found",
    "node_list",
    "path",
    "rel_list",
    "selected_seed",
    "shortest_path",
    "walk",
    "walk_ends",
    "walk_item",
    "walk_lists",
]

WALK_COLUMNS = ("start", "node", "label", "edges", "nodes", "depth")
SEARCH_KEY = ("start", "node")  # a breadth-first search keeps each pair once
ONE_HOP = "1"  # a fixed relationship's length in a path


def bound_seed(var: str, source: str) -> str:
    """A walk's seed rows (`node`, `label`): the distinct nodes `var` of the rows so far."""
    v = ident(var)
    return f"SELECT DISTINCT {v}.id AS node, {v}._label AS label FROM {source}"


def selected_seed(alias: str, rows: str, conditions: Sequence[str]) -> str:
    """A walk's seed rows: the nodes of the FROM item `rows` that meet `conditions`."""
    a = ident(alias)
    return f"SELECT {a}.id AS node, {a}._label AS label FROM {rows} AS {a}{where(conditions)}"


def walk(cte: str, seed: str, edges: str, max_depth: int, targets: str | None = None) -> str:
    """The recursive CTE `cte`'s body: paths from the `seed` rows along the `edges` FROM
    item up to `max_depth` hops; with `targets` (seed rows too) a breadth-first search."""
    if targets is None:
        union = "UNION ALL"
        unique = "NOT list_contains(w.edges, e._key)"
    else:
        union = "UNION"
        unique = (
            f"NOT EXISTS (SELECT 1 FROM recurring.{cte} AS r WHERE r.start = w.start "
            f"AND r.node = e._b) AND (SELECT count(*) FROM recurring.{cte} AS r WHERE "
            f"r.node IN (SELECT node FROM ({targets}))) < (SELECT count(*) FROM ({seed})) "
            f"* (SELECT count(*) FROM ({targets}))"
        )
    return (
        f"SELECT node AS start, node, label, []::VARCHAR[] AS edges, [node] AS nodes, "
        f"0 AS depth FROM ({seed}) "
        f"{union} "
        f"SELECT w.start, e._b, e._bl, list_append(w.edges, e._key), "
        f"list_append(w.nodes, e._b), w.depth + 1 FROM {cte} AS w JOIN {edges} AS e "
        f"ON e._a = w.node AND e._al = w.label "
        f"WHERE w.depth < {max_depth} AND {unique}"
    )


def walk_item(cte: str, min_depth: int, alias: str) -> str:
    """The paths of walk `cte` at least `min_depth` long, as the FROM item `alias`."""
    return f"(SELECT * FROM {cte} WHERE depth >= {min_depth}) AS {ident(alias)}"


def walk_ends(alias: str, start: str, end: str, end_label: bool = False) -> list[str]:
    """The walk `alias` starts at node `start` and reaches node `end` (by label too,
    where `end` can be of several types)."""
    w, a, b = ident(alias), ident(start), ident(end)
    out = [f"{w}.start = {a}.id", f"{w}.node = {b}.id"]
    if end_label:
        out.append(f"{w}.label = {b}._label")
    return out


def walk_lists(alias: str, reverse: bool) -> tuple[str, str, str]:
    """A walk's length, edge list and inner node list in a path (the nodes after its
    start, before its end); `reverse`: the walk ran right to left."""
    w = ident(alias)
    edges, nodes = f"{w}.edges", f"{w}.nodes"
    if reverse:
        edges, nodes = f"list_reverse({edges})", f"list_reverse({nodes})"
    return f"{w}.depth", edges, f"list_slice({nodes}, 2, -1)"


def shortest_path(alias: str) -> str:
    """A shortestPath's path value from its walk `alias`."""
    w = ident(alias)
    return f"struct_pack(length := {w}.depth, nodes := {w}.nodes, rels := {w}.edges)"


def node_list(alias: str) -> str:
    """A node's part of a path's node list."""
    return f"[{ident(alias)}.id]"


def rel_list(alias: str) -> str:
    """A fixed relationship's part of a path's relationship list."""
    return f"[{ident(alias)}._key]"


def _concat(parts: Sequence[str]) -> str:
    if not parts:
        return ""
    return parts[0] if len(parts) == 1 else f"list_concat({', '.join(parts)})"


def path(lengths: Sequence[str], nodes: Sequence[str], rels: Sequence[str]) -> str:
    """A named path's value from its parts' lengths, node lists and relationship lists."""
    return (
        f"struct_pack(length := {' + '.join(lengths) or '0'}, "
        f"nodes := {_concat(nodes)}, rels := {_concat(rels) or '[]'})"
    )


def found(table: str) -> str:
    """A walk's rows as a path search registered them under `table`."""
    return f"SELECT {', '.join(WALK_COLUMNS)} FROM {table}"
