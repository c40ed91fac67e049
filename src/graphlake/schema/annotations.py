"""The registry of constraint kinds: one description per kind, read by every part of the
schema that handles constraints.

A table's constraints are one typed list (`TableType.constraints`, entries
`model.Constraint`). Each kind's `Kind` says, in one place:

- how its annotation parses (`inline` after a property's type, or `type_level` naming
  its properties; `is_inline` tells the two apart by shape) - read by `parser`;
- how it prints (`placement`, `text`, `lines`) - read by `text` (the printer);
- how a schema diff names it (`written`, `detail`) and what adding it costs
  (`add_cost`, `add_note`) - read by `changes`;
- how it merges three-way (`merge`: "set", "keyed" or "single"; `records_added`: an
  addition by one side is listed for the engine to check against the other side's rows)
  - read by `merge3`;
- how a schema conflict shows it on a property (`in_property`) - read by `merge3` and
  the web UI (`server/ui/schema_view.py`).

Adding a kind: a name in `model.ConstraintKind` / `CONSTRAINT_KINDS` (its canonical
place in a table's list, and a view on `TableType` if lower layers read it), and a `Kind`
here, registered in `KINDS` (and `SYNTAX` if it has an annotation name of its own).
Checking data against it is the constraint checkers' part (`graphlake.constraints`).
`@key`, `@default` and `@renamed_from` are not constraints (they set the node type's key
and a property's default or former name) and stay in `parser` and `text`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from typing import Literal

from lark import Token

from graphlake.regex import pattern_problem
from graphlake.schema.model import (
    CONSTRAINT_KINDS,
    NUMERIC_KINDS,
    VECTOR_METRICS,
    Cardinality,
    Constraint,
    ConstraintKind,
    Property,
    Range,
)
from graphlake.schema.syntax import (
    INT_LIMITS,
    Arg,
    RawAnnotation,
    RawKwarg,
    RawRange,
    TableScope,
    arg_pos,
    date_bound,
    is_name,
    numeric_value,
    options_of,
    schema_error,
    shown,
    string_value,
)

__all__ = ["KINDS", "QUIET_IN_PROPERTY", "SYNTAX", "Kind", "bound_text", "canonical", "kind_of"]

Placement = Literal["inline", "type"]  # after the property's type, or in the type's body
MergeRule = Literal["set", "keyed", "single"]
AddCost = Literal["metadata", "column", "check"]  # `changes.Cost` values


class Kind:
    """One constraint kind. Subclasses set the class attributes and override what differs."""

    kind: ConstraintKind
    written: str  # the annotation's name in `.pg` text
    usage: str = ""  # how to write it, for "malformed" errors
    placement: Placement = "type"
    # How two sides' versions merge: "set" (members both kept plus each side's additions),
    # "keyed" (one entry per property at most: range, check, ANN index; a value changed
    # differently conflicts; such entries sit in property order in a table's list), or
    # "single" (one per table: card; conflicts like the table's other fields).
    merge: MergeRule = "set"
    records_added: bool = False
    add_cost: AddCost = "check"
    add_note: str = "checks every row"
    # How a schema conflict's property description lists it: "list" (every entry covering
    # the property, shown only when there is one), "value" (its value), or not at all.
    in_property: Literal["list", "value"] | None = None

    # -- parsing (annotations this kind owns: `SYNTAX`)

    def is_inline(self, ann: RawAnnotation) -> bool:
        """Whether `ann` belongs to the property before it, judged by its shape."""
        return False

    def inline(self, scope: TableScope, prop: Property, ann: RawAnnotation) -> None:
        raise NotImplementedError

    def type_level(self, scope: TableScope, ann: RawAnnotation) -> None:
        raise NotImplementedError

    # -- printing

    def args(self, c: Constraint) -> str:
        """What goes between the parentheses in the type-level form."""
        return ", ".join(c.columns)

    def text(self, c: Constraint) -> str:
        """The annotation as printed: inline kinds omit the property."""
        return f"@{self.written}({self.args(c)})"

    def lines(self, cs: Sequence[Constraint]) -> list[str]:
        """A type-level kind's lines in a table's body."""
        return [self.text(c) for c in cs]

    # -- diffing

    def detail(self, c: Constraint) -> str:
        """What a schema diff compares besides the columns, as text."""
        return ""


# --- @unique, @index, @search: names of properties ---------------------------------------


class _Names(Kind):
    banned: tuple[str, ...] = ("Blob",)

    def is_inline(self, ann: RawAnnotation) -> bool:
        # `@index(metric="l2")` right after a Vector's type is inline too.
        return not ann.has_parens or (
            bool(ann.args) and all(isinstance(a, RawKwarg) for a in ann.args)
        )

    def inline(self, scope: TableScope, prop: Property, ann: RawAnnotation) -> None:
        self.add(scope, [prop], ann)

    def type_level(self, scope: TableScope, ann: RawAnnotation) -> None:
        names_args = [a for a in ann.args if not isinstance(a, RawKwarg)]
        if not names_args:
            raise schema_error(f"@{self.written}(...) needs at least one property name", ann.at)
        props = [scope.prop(a) for a in names_args]
        names = [p.name for p in props]
        for i, name in enumerate(names):
            if name in names[:i]:
                raise schema_error(
                    f"'{name}' appears twice in @{self.written}", arg_pos(names_args[i])
                )
        self.add(scope, props, ann)

    def add(self, scope: TableScope, props: Sequence[Property], ann: RawAnnotation) -> None:
        """Record `@unique` / `@index` over one or more properties."""
        if options_of(ann):
            raise schema_error(
                f"@{self.written} takes no options here; metric=... is for an @index on a "
                f"Vector property",
                ann.at,
            )
        for p in props:
            if p.type.kind in self.banned:
                raise schema_error(
                    f"@{self.written} does not apply to {p.type} property '{p.name}'", ann.at
                )
        names = tuple(p.name for p in props)
        if any(set(c.columns) == set(names) for c in scope.declared(self.kind)):
            raise schema_error(
                f"duplicate @{self.written}({', '.join(names)}) on {scope.what}", ann.at
            )
        scope.constraints.append(Constraint(self.kind, names))


class UniqueKind(_Names):
    kind = "unique"
    written = "unique"
    usage = "@unique after a property's type, or @unique(prop, ...)"
    banned = ("Blob", "Vector", "List")
    records_added = True
    in_property = "list"


class IndexKind(_Names):
    kind = "index"
    written = "index"
    usage = "@index after a property's type, or @index(prop, ...)"
    add_cost = "column"
    add_note = "indexes the column"
    in_property = "list"

    def add(self, scope: TableScope, props: Sequence[Property], ann: RawAnnotation) -> None:
        options = options_of(ann)
        if any(p.type.kind == "Vector" for p in props):
            return VECTOR_INDEX.add_vector(scope, props, options, ann)
        return super().add(scope, props, ann)


class VectorIndexKind(Kind):
    """`@index(embedding, metric="cosine")`: an ANN index over one Vector property (parsed
    by `@index`, which hands a Vector property here)."""

    kind = "vector_index"
    written = "index"
    merge = "keyed"
    records_added = True
    add_cost = "metadata"
    add_note = "its index is built by the next optimize"

    def add_vector(
        self,
        scope: TableScope,
        props: Sequence[Property],
        options: dict[str, Token],
        ann: RawAnnotation,
    ) -> None:
        if len(props) != 1:
            raise schema_error(
                "an @index on a Vector property names that one property only", ann.at
            )
        (prop,) = props
        unknown = set(options) - {"metric"}
        if unknown:
            raise schema_error(
                f"unknown @index option '{sorted(unknown)[0]}' (known: metric)", ann.at
            )
        metric = VECTOR_METRICS[0]
        if "metric" in options:
            tok = options["metric"]
            metric = string_value(tok) if tok.type == "STRING" else str(tok)
            if metric not in VECTOR_METRICS:
                raise schema_error(
                    f"unknown metric '{metric}'; metrics are {', '.join(VECTOR_METRICS)}", tok
                )
        if any(c.columns == (prop.name,) for c in scope.declared(self.kind)):
            raise schema_error(f"duplicate @index({prop.name}) on {scope.what}", ann.at)
        scope.constraints.append(Constraint(self.kind, (prop.name,), metric))

    def args(self, c: Constraint) -> str:
        return f'{c.columns[0]}, metric="{c.value}"'

    def detail(self, c: Constraint) -> str:
        return f'metric="{c.value}"'


class SearchKind(_Names):
    """`@search(title, body)`: a full-text (BM25) index on each String property."""

    kind = "search"
    written = "search"
    usage = "@search after a String property's type, or @search(prop, ...)"
    add_cost = "metadata"
    add_note = "its index is built by the next optimize"

    def add(self, scope: TableScope, props: Sequence[Property], ann: RawAnnotation) -> None:
        options_of(ann)  # a repeated option is refused; others are ignored
        for p in props:
            if p.type.kind != "String":
                raise schema_error(
                    f"@search applies to String properties; '{p.name}' is {p.type}", ann.at
                )
            if any(c.columns == (p.name,) for c in scope.declared(self.kind)):
                raise schema_error(f"'{p.name}' already has @search on {scope.what}", ann.at)
            scope.constraints.append(Constraint(self.kind, (p.name,)))

    def lines(self, cs: Sequence[Constraint]) -> list[str]:
        # One `@search(a, b)` for all of a table's full-text properties.
        return [f"@search({', '.join(c.columns[0] for c in cs)})"] if cs else []


# --- @range, @check: one property and a value ---------------------------------------------


class _Valued(Kind):
    placement = "inline"
    merge = "keyed"
    records_added = True
    in_property = "value"

    def is_inline(self, ann: RawAnnotation) -> bool:
        return not (ann.args and is_name(ann.args[0]))

    def inline(self, scope: TableScope, prop: Property, ann: RawAnnotation) -> None:
        if len(ann.args) != 1:
            raise schema_error(f"malformed @{self.written}; write {self.usage}", ann.at)
        self.add(scope, prop, ann.args[0], ann)

    def type_level(self, scope: TableScope, ann: RawAnnotation) -> None:
        if len(ann.args) != 2:
            raise schema_error(f"malformed @{self.written}; write {self.usage}", ann.at)
        self.add(scope, scope.prop(ann.args[0]), ann.args[1], ann)

    def add(self, scope: TableScope, prop: Property, arg: Arg, ann: RawAnnotation) -> None:
        if not self.well_formed(arg):
            raise schema_error(f"malformed @{self.written}; write {self.usage}", arg_pos(arg))
        if any(c.columns == (prop.name,) for c in scope.declared(self.kind)):
            raise schema_error(f"property '{prop.name}' already has a @{self.written}", ann.at)
        value = self.value(scope, prop, arg, ann)
        scope.constraints.append(Constraint(self.kind, (prop.name,), value))

    def well_formed(self, arg: Arg) -> bool:
        raise NotImplementedError

    def value(self, scope: TableScope, prop: Property, arg: Arg, ann: RawAnnotation) -> Range | str:
        raise NotImplementedError

    def value_text(self, c: Constraint) -> str:
        raise NotImplementedError

    def args(self, c: Constraint) -> str:
        return f"{c.columns[0]}, {self.value_text(c)}"

    def text(self, c: Constraint) -> str:  # inline: the property is implied
        return f"@{self.written}({self.value_text(c)})"


class RangeKind(_Valued):
    kind = "range"
    written = "range"
    usage = "@range(min..max) after a property's type, or @range(prop, min..max)"

    def well_formed(self, arg: Arg) -> bool:
        return isinstance(arg, RawRange)

    def value(self, scope: TableScope, prop: Property, arg: Arg, ann: RawAnnotation) -> Range:
        assert isinstance(arg, RawRange)
        return _range(arg, prop, ann)

    def value_text(self, c: Constraint) -> str:
        r = c.value
        assert isinstance(r, Range)
        lo = "" if r.min is None else bound_text(r.min)
        hi = "" if r.max is None else bound_text(r.max)
        return f"{lo}..{hi}"

    def detail(self, c: Constraint) -> str:
        r = c.value
        assert isinstance(r, Range)
        return f"{'' if r.min is None else r.min}..{'' if r.max is None else r.max}"


class CheckKind(_Valued):
    kind = "check"
    written = "check"
    usage = '@check("regex") after a property\'s type, or @check(prop, "regex")'

    def well_formed(self, arg: Arg) -> bool:
        return isinstance(arg, Token) and arg.type == "STRING"

    def value(self, scope: TableScope, prop: Property, arg: Arg, ann: RawAnnotation) -> str:
        assert isinstance(arg, Token)
        if prop.type.kind != "String":
            raise schema_error(
                f"@check applies to String properties; '{prop.name}' is {prop.type}", ann.at
            )
        pattern = string_value(arg)
        problem = pattern_problem(pattern)
        if problem is not None and not scope.stored:
            raise schema_error(f"invalid regex in @check: {problem} (patterns are RE2 syntax)", arg)
        return pattern

    def value_text(self, c: Constraint) -> str:
        return f'"{c.value}"'

    def detail(self, c: Constraint) -> str:
        return self.value_text(c)


# --- @card: edges per source node ---------------------------------------------------------


class CardKind(Kind):
    kind = "card"
    written = "card"
    usage = "@card(min..max) on an edge type"
    merge = "single"
    records_added = True

    def type_level(self, scope: TableScope, ann: RawAnnotation) -> None:
        if not scope.is_edge:
            raise schema_error("@card applies to edge types only", ann.at)
        if len(ann.args) != 1 or not isinstance(ann.args[0], RawRange):
            raise schema_error(f"malformed @card; write {self.usage}, e.g. @card(0..1)", ann.at)
        if scope.declared(self.kind):
            raise schema_error(f"{scope.what} already has a @card", ann.at)
        scope.constraints.append(Constraint(self.kind, (), _cardinality(ann.args[0])))

    def args(self, c: Constraint) -> str:
        return self.detail(c)

    def detail(self, c: Constraint) -> str:
        card = c.value
        assert isinstance(card, Cardinality)
        return f"{card.min}..{'' if card.max is None else card.max}"


# --- the registry -------------------------------------------------------------------------

VECTOR_INDEX = VectorIndexKind()
KINDS: dict[ConstraintKind, Kind] = {
    k.kind: k
    for k in (
        UniqueKind(),
        IndexKind(),
        RangeKind(),
        CheckKind(),
        VECTOR_INDEX,
        SearchKind(),
        CardKind(),
    )
}
assert tuple(KINDS) == CONSTRAINT_KINDS  # one description per kind, in canonical order
# Annotation name -> the kind that parses it (`@index` hands Vector properties on to the
# vector_index kind), in the order errors list the known annotations.
SYNTAX: dict[str, Kind] = {
    k: KINDS[k] for k in ("unique", "index", "range", "check", "card", "search")
}
# Property-description entries a conflict shows only when not empty.
QUIET_IN_PROPERTY = tuple(k.kind for k in KINDS.values() if k.in_property == "list")


def kind_of(c: Constraint) -> Kind:
    return KINDS[c.kind]


def canonical(
    properties: Iterable[Property], constraints: Iterable[Constraint]
) -> tuple[Constraint, ...]:
    """`constraints` in a table's canonical order: kinds in `CONSTRAINT_KINDS` order,
    keyed kinds (one entry per property) in property order, the others as declared."""
    position = {p.name: i for i, p in enumerate(properties)}
    rank = {k: i for i, k in enumerate(CONSTRAINT_KINDS)}

    def key(c: Constraint) -> tuple[int, int]:
        at = position.get(c.columns[0], len(position)) if KINDS[c.kind].merge == "keyed" else 0
        return rank[c.kind], at

    return tuple(sorted(constraints, key=key))


# --- value readers ------------------------------------------------------------------------


def _bound(tok: Token, prop: Property) -> int | float | date | datetime:
    kind = prop.type.kind
    if kind in ("Date", "DateTime"):
        if tok.type != "STRING":
            raise schema_error(
                f"a range on {kind} property '{prop.name}' takes quoted bounds like \"2020-01-01\"",
                tok,
            )
        return date_bound(tok, kind)
    if tok.type != "NUMBER":
        raise schema_error(f"a range on {kind} property '{prop.name}' takes number bounds", tok)
    return numeric_value(tok, prop, "bound")


def _range(rng: RawRange, prop: Property, ann: RawAnnotation) -> Range:
    kind = prop.type.kind
    if kind not in NUMERIC_KINDS and kind not in ("Date", "DateTime"):
        raise schema_error(
            f"@range applies to numeric, Date and DateTime properties; "
            f"'{prop.name}' is {prop.type}",
            ann.at,
        )
    if rng.lo is None and rng.hi is None:
        raise schema_error(
            "a range needs a minimum, a maximum or both, e.g. 0..10, 0.. or ..10", rng.dots
        )
    lo = _bound(rng.lo, prop) if rng.lo is not None else None
    hi = _bound(rng.hi, prop) if rng.hi is not None else None
    if lo is not None and hi is not None and lo > hi:  # type: ignore[operator]
        raise schema_error(f"range minimum {lo} is greater than its maximum {hi}", rng.dots)
    return Range(min=lo, max=hi)


def _cardinality(rng: RawRange) -> Cardinality:
    if rng.lo is None:
        raise schema_error("@card needs a minimum, e.g. @card(0..1) or @card(1..)", rng.dots)
    for tok in (rng.lo, rng.hi):
        if tok is not None and (tok.type != "NUMBER" or not re.fullmatch(r"[0-9]+", tok)):
            raise schema_error(
                f"@card bounds must be non-negative integers, found {shown(tok)}", tok
            )
        if tok is not None and (len(tok.lstrip("0")) > 19 or int(tok) > INT_LIMITS["I64"][1]):
            raise schema_error(
                f"@card bound {shown(tok)} is over the maximum, {INT_LIMITS['I64'][1]}", tok
            )
    low = int(rng.lo)
    high = int(rng.hi) if rng.hi is not None else None
    if high is not None and low > high:
        raise schema_error(f"@card minimum {low} is greater than its maximum {high}", rng.dots)
    return Cardinality(min=low, max=high)


def bound_text(value: float | int | date | datetime) -> str:
    """A bound or a default as `.pg` text: numbers in full, dates quoted."""
    if isinstance(value, datetime | date):
        return f'"{value.isoformat()}"'
    return repr(value)  # repr keeps every digit of a float (1e-05, 0.1)
