"""Nodes and relationships as FROM items, struct values and join conditions.

A node variable reads `NodeRows` (`id`, `_label` and the properties the query reads; one
per label, `UNION ALL BY NAME`); a relationship variable reads `EdgeRows`, oriented so
`_a` is the endpoint on the pattern's left and `_b` the one on its right (`_al`, `_bl`
their labels, `_key` the edge's type and id: unique across types), and its value is a
`struct_pack` of `id`, `src`, `dst`, `_type` and properties (`edge_struct`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphlake.query.sqlgen.quote import ident, literal
from graphlake.query.sqlgen.select import FALSE

__all__ = [
    "EDGE_FIELDS",
    "EdgeRows",
    "NodeRows",
    "different",
    "edge_rows",
    "edge_struct",
    "hop",
    "key_equals",
    "label_in",
    "node_rows",
    "property_equals",
]

EDGE_FIELDS = ("id", "src", "dst", "_type")  # a relationship value's fields before its properties
_NO_NODES = "(SELECT NULL::VARCHAR AS id, NULL::VARCHAR AS _label)"
_NO_EDGES = (
    "(SELECT NULL::VARCHAR AS id, NULL::VARCHAR AS src, NULL::VARCHAR AS dst, "
    "NULL::VARCHAR AS _type, NULL::VARCHAR AS _key, NULL::VARCHAR AS _a, "
    "NULL::VARCHAR AS _b, NULL::VARCHAR AS _al, NULL::VARCHAR AS _bl "
    "WHERE FALSE)"
)
_UNION = " UNION ALL BY NAME "


@dataclass(frozen=True)
class NodeRows:
    """The rows of one node type: `label`'s, read from `table` (the type's own, or a
    frontier's prefetched rows), with `properties`."""

    label: str
    table: str
    properties: Sequence[str]

    def sql(self) -> str:
        cols = ["id", f"{literal(self.label)} AS _label", *(ident(p) for p in self.properties)]
        return f"SELECT {', '.join(cols)} FROM {ident(self.table)}"


@dataclass(frozen=True)
class EdgeRows:
    """The rows of one edge type read one way: `forward` (`src` on the left) or back,
    from `table`, with `properties`; the backward reading of an undirected pattern
    (`skip_loops`) leaves out self-loops, which the forward one has."""

    edge_type: str
    table: str
    forward: bool
    left_label: str
    right_label: str
    properties: Sequence[str]
    skip_loops: bool = False

    def sql(self) -> str:
        a, b = ("src", "dst") if self.forward else ("dst", "src")
        cols = [
            "id",
            "src",
            "dst",
            f"{literal(self.edge_type)} AS _type",
            f"{literal(self.edge_type + ':')} || id AS _key",
            f"{a} AS _a",
            f"{b} AS _b",
            f"{literal(self.left_label)} AS _al",
            f"{literal(self.right_label)} AS _bl",
            *(ident(p) for p in self.properties),
        ]
        loop = " WHERE src <> dst" if self.skip_loops else ""
        return f"SELECT {', '.join(cols)} FROM {ident(self.table)}{loop}"


def node_rows(parts: Sequence[NodeRows]) -> str:
    """A node variable's FROM item: its types' rows (none: an empty row of nulls)."""
    if not parts:
        return _NO_NODES
    return "(" + _UNION.join(p.sql() for p in parts) + ")"


def edge_rows(parts: Sequence[EdgeRows]) -> str:
    """A relationship's FROM item: the rows of each way it reads (none: no rows)."""
    if not parts:
        return _NO_EDGES
    return "(" + _UNION.join(p.sql() for p in parts) + ")"


def edge_struct(alias: str, properties: Sequence[str]) -> str:
    """A relationship variable's value: `EDGE_FIELDS` and `properties` of its FROM item
    `alias`, without the columns that orient and key it inside the match."""
    a = ident(alias)
    fields = (*EDGE_FIELDS, *properties)
    return "struct_pack(" + ", ".join(f"{ident(f)} := {a}.{ident(f)}" for f in fields) + ")"


def label_in(var: str, labels: Sequence[str]) -> str:
    """The node `var` has one of `labels`."""
    if not labels:
        return FALSE
    return f"{ident(var)}._label IN ({', '.join(literal(t) for t in labels)})"


def property_equals(alias: str, prop: str, value: str) -> str:
    """An inline property condition: `alias.prop` equals the SQL `value`."""
    return f"({ident(alias)}.{ident(prop)} = {value})"


def key_equals(alias: str, value: str) -> str:
    """The node `alias`'s key text (`id`) equals the SQL `value` (Lance's index on id
    answers it)."""
    return f"({ident(alias)}.id = {value})"


def hop(rel: str, left: str, right: str, left_label: bool, right_label: bool) -> list[str]:
    """A relationship `rel` joined to its end nodes `left` and `right` (by label too
    where an end can be of several types)."""
    r, a, b = ident(rel), ident(left), ident(right)
    out = [f"{r}._a = {a}.id", f"{r}._b = {b}.id"]
    if left_label:
        out.append(f"{r}._al = {a}._label")
    if right_label:
        out.append(f"{r}._bl = {b}._label")
    return out


def different(first: str, first_walk: bool, second: str, second_walk: bool) -> str:
    """The relationships of two FROM items are not the same one (openCypher's
    relationship isomorphism); a walk's are its `edges` list."""
    a, b = ident(first), ident(second)
    if first_walk and second_walk:
        return f"NOT list_has_any({a}.edges, {b}.edges)"
    if first_walk or second_walk:
        w, r = (a, b) if first_walk else (b, a)
        return f"NOT list_contains({w}.edges, {r}._key)"
    return f"{a}._key <> {b}._key"
