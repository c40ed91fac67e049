"""Print a `Schema` back as `.pg` text that parses to the same model.

Used to show the schema in force at a commit (`graphlake schema show`) and to store a
schema that was built rather than written (e.g. by a merge). Every constraint is written
in one canonical place: `@key`, `@range`, `@check`, `@default` and `@renamed_from` inline
after the property's type; `@unique(...)`/`@index(...)` type-level in their declared
order (the order is part of the model); `@card` in the edge's body.
"""

from __future__ import annotations

from datetime import date, datetime

from graphlake.schema.model import (
    DefaultValue,
    EdgeType,
    NodeType,
    Property,
    Range,
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
    extra = [f"@card({t.card.min}..{'' if t.card.max is None else t.card.max})"] if t.card else []
    return f"{head} {_body(t, key='', extra=extra)}"


def _renamed(old: str | None) -> str:
    return f" @renamed_from({old})" if old else ""


def _body(t: TableType, *, key: str, extra: list[str] | None = None) -> str:
    lines = [_property(t, p, is_key=p.name == key) for p in t.properties]
    lines += [f"@unique({', '.join(cols)})" for cols in t.uniques]
    lines += [f"@index({', '.join(cols)})" for cols in t.indexes]
    lines += extra or []
    if not lines:
        return "{}"
    return "{\n" + "".join(f"{_INDENT}{line}\n" for line in lines) + "}"


def _property(t: TableType, p: Property, *, is_key: bool) -> str:
    parts = [f"{p.name}: {p.type}{'?' if p.nullable else ''}"]
    if is_key:
        parts.append("@key")
    if p.name in t.ranges:
        parts.append(f"@range({_range(t.ranges[p.name])})")
    if p.name in t.checks:
        parts.append(f'@check("{t.checks[p.name]}")')
    if p.default is not None:
        parts.append(f"@default({_literal(p.default, p)})")
    if p.renamed_from:
        parts.append(f"@renamed_from({p.renamed_from})")
    return " ".join(parts)


def _range(r: Range) -> str:
    lo = "" if r.min is None else _bound(r.min)
    hi = "" if r.max is None else _bound(r.max)
    return f"{lo}..{hi}"


def _bound(value: float | int | date | datetime) -> str:
    if isinstance(value, datetime | date):
        return f'"{value.isoformat()}"'
    return repr(value)  # repr keeps every digit of a float (1e-05, 0.1)


def _literal(value: DefaultValue, p: Property) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | date | datetime):
        return _bound(value)
    if p.type.kind == "Enum":
        return value  # enum values are names
    return f'"{value}"'
