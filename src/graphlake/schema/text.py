"""Print a `Schema` back as `.pg` text that parses to the same model.

Used to show the schema in force at a commit (`graphlake schema show`) and to store a
schema that was built rather than written (e.g. by a merge). Every annotation is written
in one canonical place: `@key`, the inline constraint kinds (`@range`, `@check`),
`@default` and `@renamed_from` after the property's type; the type-level kinds in the
table's body in registry order (`@unique(...)`/`@index(...)` in their declared order, which
is part of the model, then search indexes, `@index(v, metric=...)` on a Vector and
`@search(...)`, then an edge's `@card`). How each constraint kind prints is its
description's (`annotations.KINDS`).
"""

from __future__ import annotations

from datetime import date, datetime

from graphlake.schema.annotations import KINDS, bound_text, kind_of
from graphlake.schema.model import (
    DefaultValue,
    EdgeType,
    NodeType,
    Property,
    Schema,
    TableType,
)

__all__ = ["schema_text"]

_INDENT = "    "


def schema_text(schema: Schema) -> str:
    """The `.pg` text of `schema`: node types first, then edge types, in model order."""
    blocks = [_node(t) for t in schema.nodes.values()]
    blocks += [_edge(t) for t in schema.edges.values()]
    return "\n\n".join(blocks) + "\n"


def _node(t: NodeType) -> str:
    return f"node {t.name}{_renamed(t.renamed_from)} {_body(t, key=t.key)}"


def _edge(t: EdgeType) -> str:
    head = f"edge {t.name}: {t.src} -> {t.dst}{_renamed(t.renamed_from)}"
    return f"{head} {_body(t, key='')}"


def _renamed(old: str | None) -> str:
    return f" @renamed_from({old})" if old else ""


def _body(t: TableType, *, key: str) -> str:
    lines = [_property(t, p, is_key=p.name == key) for p in t.properties]
    for kind, how in KINDS.items():
        if how.placement == "type":
            lines += how.lines(t.of_kind(kind))
    if not lines:
        return "{}"
    return "{\n" + "".join(f"{_INDENT}{line}\n" for line in lines) + "}"


def _property(t: TableType, p: Property, *, is_key: bool) -> str:
    parts = [f"{p.name}: {p.type}{'?' if p.nullable else ''}"]
    if is_key:
        parts.append("@key")
    parts += [
        kind_of(c).text(c)
        for c in t.constraints
        if kind_of(c).placement == "inline" and c.columns == (p.name,)
    ]
    if p.default is not None:
        parts.append(f"@default({_literal(p.default, p)})")
    if p.renamed_from:
        parts.append(f"@renamed_from({p.renamed_from})")
    return " ".join(parts)


def _literal(value: DefaultValue, p: Property) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | date | datetime):
        return bound_text(value)
    if p.type.kind == "Enum":
        return value  # enum values are names
    return f'"{value}"'
