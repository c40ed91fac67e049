"""Which properties of each variable a query reads, so a MATCH projects only those columns
(a node or relationship table can hold wide vectors and blobs)."""

from __future__ import annotations

from dataclasses import fields

from graphlake.query import syntax

ALL = None  # the variable is used whole (returned, collected): read every property
# Functions that only need an entity's identity (or label/type), not its properties.
_IDENTITY_ONLY = (
    "id",
    "labels",
    "type",
    "count",
    "startnode",
    "endnode",
    "length",
    "size",
    "nodes",
    "relationships",
    "exists",
)


def property_usage(query: syntax.Query) -> dict[str, set[str] | None]:
    usage: dict[str, set[str] | None] = {}
    renames: list[tuple[str, str]] = []  # (old, new) from `WITH n AS m`
    for clause in query.clauses:
        if isinstance(clause, syntax.Projection):
            for item in clause.items:
                if isinstance(item.expr, syntax.Var) and not clause.is_return:
                    renames.append((item.expr.name, item.alias))
                    continue
                _walk(item.expr, usage, whole=True)
            if clause.star and clause.is_return:
                usage["*"] = ALL
            for e, _ in clause.order:
                _walk(e, usage, whole=True)
            for bound in (clause.skip, clause.limit, clause.where):
                _walk(bound, usage, whole=True)
        else:
            _walk(clause, usage, whole=True)
    # A renamed variable needs what its new name needs (repeat: renames can chain).
    for _ in range(len(renames)):
        for old, new in renames:
            _merge(usage, old, usage.get(new, set()))
    return usage


def props_of(usage: dict[str, set[str] | None], name: str | None) -> set[str] | None:
    if name is None:
        return set()
    if "*" in usage:
        return ALL
    return usage.get(name, set())


def _merge(usage: dict[str, set[str] | None], name: str, props: set[str] | None) -> None:
    current = usage.get(name, set())
    if current is ALL or props is ALL:
        usage[name] = ALL
    else:
        usage[name] = current | props


def _walk(node: object, usage: dict[str, set[str] | None], whole: bool) -> None:
    if node is None:
        return
    if isinstance(node, tuple):
        for x in node:
            _walk(x, usage, whole)
        return
    if isinstance(node, syntax.Prop) and isinstance(node.subject, syntax.Var):
        _merge(usage, node.subject.name, {node.name})
        return
    if isinstance(node, syntax.Var):
        if whole:
            _merge(usage, node.name, ALL)
        return
    if isinstance(node, syntax.Func) and node.name in _IDENTITY_ONLY:
        for a in node.args:
            _walk(a, usage, whole=not isinstance(a, syntax.Var))
        return
    if isinstance(node, syntax.Binary) and node.op in ("=", "<>"):
        # Entities compare by identity; values need no properties either way.
        for side in (node.left, node.right):
            _walk(side, usage, whole=not isinstance(side, syntax.Var))
        return
    if hasattr(node, "__dataclass_fields__"):
        for f in fields(node):  # type: ignore[arg-type]
            _walk(getattr(node, f.name), usage, whole)
