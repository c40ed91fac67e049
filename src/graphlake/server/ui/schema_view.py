"""What the pages show of schemas: the steps a commit made, the `[schema]` mark, and a
schema conflict's side (a type's or property's definition) as readable text."""

from __future__ import annotations

import json
from typing import Any

from graphlake.catalog.commits import Commit, changes_schema
from graphlake.graph import Graph


def is_schema_commit(graph: Graph, commit: Commit) -> bool:
    """Whether `commit` changed the schema, by the rule `graphlake log` marks `[schema]`."""
    return changes_schema(graph.repo.commits, commit)


def commit_steps(graph: Graph, commit: Commit) -> list[tuple[str, str]]:
    """(description, cost) of each schema step from the first parent's schema to the
    commit's; empty when they share one (or the commit has no parent)."""
    if not commit.parents:
        return []
    parent = graph.repo.commits.get(commit.parents[0])
    if parent.schema_id == commit.schema_id:
        return []
    # on first use only: loads pyarrow, lark, re2 (start-up time)
    from graphlake.schema.changes import describe_changes

    steps = describe_changes(graph.repo.schemas.of(parent), graph.repo.schemas.of(commit))
    return [(s.describe(), str(s.cost)) for s in steps]


def definition(value: Any) -> str:
    """One side of a schema conflict as `.pg`-like lines: a type (`node Doc` and its
    properties), a property (`note: String?` and its constraints), or a plain value."""
    if value is None:
        return "(absent)"
    if not isinstance(value, dict):
        return str(value)
    if "properties" in value and "kind" in value:
        return _type_text(value)
    if "name" in value and "type" in value:
        return _property_text(value)
    return "\n".join(f"{k}: {_plain(v)}" for k, v in value.items())


def _type_text(d: dict[str, Any]) -> str:
    head = f"{d['kind']} {d.get('name', '')}"
    if d.get("src") is not None:
        head += f": {d['src']} -> {d['dst']}"
    if d.get("card"):
        head += f" {d['card']}"
    lines = [head + " {"]
    for name, kind in (d.get("properties") or {}).items():
        key = " @key" if d.get("key") == name else ""
        lines.append(f"  {name}: {kind}{key}")
    return "\n".join([*lines, "}"])


def _property_text(d: dict[str, Any]) -> str:
    # on first use only: the schema package loads pyarrow and lark (start-up time)
    from graphlake.schema.annotations import QUIET_IN_PROPERTY

    text = f"{d['name']}: {d['type']}{'?' if d.get('nullable') else ''}"
    # A constraint kind whose entry lists every constraint covering the property (a
    # property with no unique or index) says nothing when empty.
    extra = [
        f"{k} {_plain(v)}"
        for k, v in d.items()
        if k not in ("name", "type", "nullable") and not (k in QUIET_IN_PROPERTY and not v)
    ]
    return "\n".join([text, *(f"  {e}" for e in extra)])


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)
