"""Per-conflict resolutions: a reviewer settles one conflict (or one property of it).

A resolution is `{"table", "key", "property": None | name, "take": "ours" | "theirs" |
"base" | SOURCE_NAME | "value", "value": ...}`. It acts as the strategy of that one
conflict, inside the per-key rule (merge.classify), so the row it produces goes into the
merge plan like any merged row and is validated with it (constraints of the merged
result); a `value` is checked against its property's type first, as a write would be.

- `property=None` decides the whole row: the target's ("ours"), the source's
  ("theirs"), the base's ("base": absent at the base means deleted), the row of the
  side a merge_many conflict names (SOURCE_NAME), or `value` (a full row, or None to
  delete).
- `property=name` decides one property of a divergent update or insert: the other
  properties merge as usual; the conflict stays unresolved until each of its clashing
  properties is decided.

A resolution without a `key` names a schema conflict (`schema.merge3`) as the conflict
names itself: `{"table", "property": None | name, "take": "ours" | "theirs"}` settles the
schema conflicts reported under that type (property None) or that property of it, the
way `strategy` would settle them alone (that side's definition); other schema conflicts
still block.

A resolution that names no conflict of the merge is a `ResolutionError`; so is one that
names a side the conflict does not have. Unresolved conflicts still block the merge.
"""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from graphlake.errors import DataError, ResolutionError, ResolutionTypeError, TypeMismatchError
from graphlake.merge.conflicts import (
    DIVERGENT_INSERT,
    DIVERGENT_UPDATE,
    Conflict,
)
from graphlake.merge.rows import KEEP, Decision, Row, merge_cells
from graphlake.schema.merge3 import STRATEGIES as SCHEMA_TAKES
from graphlake.schema.model import EdgeType, NodeType

__all__ = ["MANUAL", "Resolution", "Resolver", "parse_resolutions"]

MANUAL = "manual"  # Conflict.resolution of a conflict settled by a resolution
NAMED_TAKES = ("ours", "theirs", "base", "value")
_FIELDS = {"table", "key", "property", "take", "value"}
MAX_RESOLUTIONS = 10_000


@dataclass(frozen=True)
class Resolution:
    table: str
    key: str | None  # None: a schema conflict
    property: str | None
    take: str
    value: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "key": self.key,
            "property": self.property,
            "take": self.take,
            "value": _plain(self.value),
        }


def _plain(value: Any) -> Any:
    """A value as the merge commit's meta (JSON) records it."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return str(value)


def parse_resolutions(items: Any) -> tuple[Resolution, ...]:
    """Check the shape of caller resolutions (a list of dicts, or `Resolution`s)."""
    if items is None:
        return ()
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Iterable):
        raise ResolutionError("resolutions are a list of {table, key, property, take, value}")
    out: list[Resolution] = []
    seen: set[tuple[str, str | None, str | None]] = set()
    for n, item in enumerate(items, 1):
        if isinstance(item, Resolution):
            item = {**item.__dict__}
        if not isinstance(item, Mapping):
            raise ResolutionError(f"resolution {n} is not an object")
        unknown = set(item) - _FIELDS
        if unknown:
            raise ResolutionError(f"resolution {n}: unknown field(s) {sorted(unknown)}")
        table, key, prop, take = (item.get(k) for k in ("table", "key", "property", "take"))
        if not isinstance(table, str) or not table:
            raise ResolutionError(f"resolution {n}: 'table' is a table name")
        if key is not None and (not isinstance(key, str) or not key):
            raise ResolutionError(
                f"resolution {n}: 'key' is the key of a row in conflict "
                "(or null for a schema conflict)"
            )
        if prop is not None and (not isinstance(prop, str) or not prop):
            raise ResolutionError(f"resolution {n}: 'property' is null or a property name")
        if not isinstance(take, str) or not take:
            raise ResolutionError(
                f"resolution {n}: 'take' is one of {', '.join(NAMED_TAKES)}"
                " or the name of a merge_many conflict's side"
            )
        if take != "value" and item.get("value") is not None:
            raise ResolutionError(f"resolution {n}: 'value' goes with take='value' only")
        if take == "value" and "value" not in item:
            raise ResolutionError(f"resolution {n}: take='value' needs a 'value'")
        if key is None and take not in SCHEMA_TAKES:
            raise ResolutionError(
                f"resolution {n}: a schema conflict (no 'key') takes "
                f"{' or '.join(SCHEMA_TAKES)}, not {take!r}"
            )
        if (table, key, prop) in seen:
            what = ("schema of " if key is None else f"{key!r} ") + (
                f"property {prop}" if prop else "type" if key is None else "row"
            )
            raise ResolutionError(f"resolution {n}: {table} {what} is resolved twice")
        seen.add((table, key, prop))
        out.append(Resolution(table, key, prop, take, item.get("value")))
    if len(out) > MAX_RESOLUTIONS:
        raise ResolutionError(f"at most {MAX_RESOLUTIONS} resolutions per merge")
    return tuple(out)


class Resolver:
    """The resolutions of one merge attempt, by (table, key); records which it used."""

    def __init__(self, resolutions: tuple[Resolution, ...]) -> None:
        self.resolutions = resolutions
        self._by_key: dict[tuple[str, str], list[Resolution]] = {}
        self._schema: dict[tuple[str, str | None], Resolution] = {}
        for r in resolutions:
            if r.key is None:
                self._schema[(r.table, r.property)] = r
            else:
                self._by_key.setdefault((r.table, r.key), []).append(r)
        self.used: set[int] = set()  # id() of the resolutions that settled a conflict

    def has(self, table: str, key: str) -> bool:
        return (table, key) in self._by_key

    def schema_choices(self) -> dict[tuple[str, str | None], str]:
        """The schema conflicts' choices, for `schema.merge3` ((table, property) -> side)."""
        return {k: r.take for k, r in self._schema.items()}

    def schema_used(self, chosen: set[tuple[str, str | None]]) -> None:
        """Mark the schema resolutions whose choice settled a conflict."""
        self.used.update(id(r) for k, r in self._schema.items() if k in chosen)

    def unused(self) -> list[Resolution]:
        return [r for r in self.resolutions if id(r) not in self.used]

    def check_all_used(self, conflicts: list[Conflict], rows: bool = True) -> None:
        """A resolution that settled nothing is a mistake: say why, refuse the merge.
        `rows=False`: schema conflicts stopped the merge before its rows were merged, so
        only the schema resolutions can be judged."""
        for r in self.unused():
            if r.key is None:
                where = f"{r.table}" + (f" property {r.property!r}" if r.property else "")
                raise ResolutionError(
                    f"resolution for the schema of {where}: no such schema conflict in this "
                    "merge (a schema conflict is named by its table, and its property if it "
                    "has one)"
                )
            if not rows:
                continue
            where = f"{r.table} {r.key!r}" + (f" property {r.property!r}" if r.property else "")
            if any(c.table == r.table and c.entity_id == r.key for c in conflicts):
                raise ResolutionError(
                    f"resolution for {where}: that conflict cannot be "
                    "resolved by a resolution (a constraint violation: change the "
                    "data; a schema conflict is resolved without a 'key')"
                )
            raise ResolutionError(f"resolution for {where}: no such conflict in this merge")

    def decide(
        self,
        t_type: NodeType | EdgeType,
        conflict: Conflict,
        b: Row | None,
        s: Row | None,
        t: Row | None,
    ) -> tuple[Decision, Conflict] | None:
        """The decision for `conflict` by its resolutions, the resolved conflict
        (`resolution="manual"`); None while some clashing property is left undecided."""
        mine = self._by_key.get((conflict.table, conflict.entity_id), [])
        whole = [r for r in mine if r.property is None]
        per_prop = {r.property: r for r in mine if r.property is not None}
        if whole:
            if per_prop:
                raise ResolutionError(
                    f"{conflict.table} {conflict.entity_id!r}: resolve the "
                    "whole row or its properties, not both"
                )
            row = self._row(t_type, conflict, whole[0], b, s, t)
            self.used.add(id(whole[0]))
            return _decision(row, t), replace(conflict, resolution=MANUAL)
        if conflict.kind not in (DIVERGENT_UPDATE, DIVERGENT_INSERT) or s is None or t is None:
            raise ResolutionError(
                f"{conflict.table} {conflict.entity_id!r} is a {conflict.kind} conflict: "
                "resolve the whole row (property null)"
            )
        row = dict(merge_cells(b, s, t)[0] if b is not None else t)
        values = {}
        for name, r in per_prop.items():
            if name not in conflict.properties:
                raise ResolutionError(
                    f"resolution for {conflict.table} {conflict.entity_id!r} property "
                    f"{name!r}: that property is not in conflict (in conflict: "
                    f"{', '.join(conflict.properties)})"
                )
            if r.take == "value":  # checked now, even while the conflict stays open
                values[name] = _coerce_value(t_type, conflict.entity_id, row, name, r.value)
            self.used.add(id(r))
        if set(conflict.properties) - set(per_prop):
            return None  # still blocks: some clashing property is undecided
        for name, r in per_prop.items():
            if r.take == "value":
                row[name] = values[name]
            else:
                side = self._side(conflict, r, b, s, t)
                if side is None:
                    raise ResolutionError(
                        f"resolution for {conflict.table} "
                        f"{conflict.entity_id!r}: {r.take!r} has no such row"
                    )
                row[name] = side.get(name)
        return _decision(row, t), replace(conflict, resolution=MANUAL)

    def _row(
        self,
        t_type: NodeType | EdgeType,
        conflict: Conflict,
        r: Resolution,
        b: Row | None,
        s: Row | None,
        t: Row | None,
    ) -> Row | None:
        if r.take == "value":
            if r.value is None:
                return None
            return _coerce_row(t_type, conflict.entity_id, r.value)
        return self._side(conflict, r, b, s, t)

    @staticmethod
    def _side(
        conflict: Conflict, r: Resolution, b: Row | None, s: Row | None, t: Row | None
    ) -> Row | None:
        if conflict.between_sources:
            # Two sources of a merge_many disagree: name one of them (or the base).
            if r.take == "base":
                return b
            rows = conflict.rows or {}
            if r.take in rows:
                return rows[r.take]
            raise ResolutionError(
                f"{conflict.table} {conflict.entity_id!r} is a conflict between sources "
                f"{' and '.join(conflict.sides or ())}: take one of them by name, 'base' "
                f"or 'value', not {r.take!r}"
            )
        if r.take == "ours":
            return t
        if r.take == "theirs":
            return s
        if r.take == "base":
            return b
        if conflict.rows and r.take in conflict.rows:
            return conflict.rows[r.take]
        sides = ", ".join(conflict.sides or ())
        raise ResolutionError(
            f"resolution for {conflict.table} {conflict.entity_id!r}: unknown take "
            f"{r.take!r} (use ours, theirs, base, value"
            + (f" or a side's name: {sides})" if sides else ")")
        )


def _decision(row: Row | None, t: Row | None) -> Decision:
    if row == t:
        return KEEP
    if row is None:
        return Decision("delete")
    return Decision("put", row)


def _coerce_value(
    t_type: NodeType | EdgeType, key: str, current: Row, prop: str, value: Any
) -> Any:
    """`value` checked against `prop`'s type, in `current` (the row it goes into)."""
    # on first use only: loads lance, pyarrow (start-up time)
    from graphlake.write.coerce import coerce

    if prop == "id" or t_type.property(prop) is None:
        raise ResolutionError(f"{t_type.name} has no property {prop!r} to resolve")
    row: dict[str, Any] = {**current, prop: value}
    if not t_type.is_edge:
        row.pop("id", None)
    try:
        return coerce(t_type, [row], partial=True).column(prop).to_pylist()[0]
    except TypeMismatchError as exc:
        raise ResolutionTypeError(f"resolution for {t_type.name} {key!r}: {exc}") from None
    except DataError as exc:
        raise ResolutionError(f"resolution for {t_type.name} {key!r}: {exc}") from None


def _coerce_row(t_type: NodeType | EdgeType, key: str, value: Any) -> Row:
    # on first use only: loads lance, pyarrow (start-up time)
    from graphlake.write.coerce import coerce

    if not isinstance(value, Mapping):
        raise ResolutionError(
            f"resolution for {t_type.name} {key!r}: a whole-row value is "
            "an object of properties (or null to delete the row)"
        )
    row = dict(value)
    if t_type.is_edge:
        row.setdefault("id", key)
    try:
        out: dict[str, Any] = coerce(t_type, [row], partial=False).to_pylist()[0]
    except TypeMismatchError as exc:
        raise ResolutionTypeError(f"resolution for {t_type.name} {key!r}: {exc}") from None
    except DataError as exc:
        raise ResolutionError(f"resolution for {t_type.name} {key!r}: {exc}") from None
    if out["id"] != key:
        raise ResolutionError(
            f"resolution for {t_type.name} {key!r}: the value's key is "
            f"{out['id']!r}, not the key in conflict"
        )
    return out
