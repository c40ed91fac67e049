"""The parsed form of a Cypher read query: plain immutable values.

Every node carries `pos`, the 1-based (line, column) of its first character, so the
checker and planner can point at the exact place of a problem.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Pos = tuple[int, int]


# --- expressions ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Expr:
    pos: Pos


@dataclass(frozen=True)
class Lit(Expr):
    value: Any


@dataclass(frozen=True)
class Param(Expr):
    name: str


@dataclass(frozen=True)
class Var(Expr):
    name: str


@dataclass(frozen=True)
class Prop(Expr):
    subject: Expr
    name: str


@dataclass(frozen=True)
class Index(Expr):
    subject: Expr
    index: Expr


@dataclass(frozen=True)
class Unary(Expr):
    op: str  # "-" or "+" or "NOT"
    operand: Expr


@dataclass(frozen=True)
class Binary(Expr):
    # + - * / % ^ = <> < <= > >= AND OR XOR IN STARTS ENDS CONTAINS =~
    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class IsNull(Expr):
    operand: Expr
    negated: bool


@dataclass(frozen=True)
class Func(Expr):
    name: str  # lower case
    args: tuple[Expr, ...]
    distinct: bool = False
    star: bool = False  # count(*)


@dataclass(frozen=True)
class Case(Expr):
    subject: Expr | None
    whens: tuple[tuple[Expr, Expr], ...]
    default: Expr | None


@dataclass(frozen=True)
class ListLit(Expr):
    items: tuple[Expr, ...]


@dataclass(frozen=True)
class MapLit(Expr):
    entries: tuple[tuple[str, Expr], ...]


@dataclass(frozen=True)
class PatternPred(Expr):
    chain: Chain


@dataclass(frozen=True)
class Exists(Expr):
    patterns: tuple[Pattern, ...]
    where: Expr | None


# --- patterns --------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodePat:
    pos: Pos
    var: str | None
    labels: tuple[str, ...]
    props: MapLit | None


@dataclass(frozen=True)
class RelPat:
    pos: Pos
    var: str | None
    types: tuple[str, ...]
    direction: str  # "out" (->), "in" (<-) or "both" (-)
    hops: tuple[int, int | None] | None  # None: exactly one; (min, max); max None: the cap
    props: MapLit | None


@dataclass(frozen=True)
class Chain:
    nodes: tuple[NodePat, ...]
    rels: tuple[RelPat, ...]


@dataclass(frozen=True)
class Pattern:
    pos: Pos
    path_var: str | None
    chain: Chain
    shortest: bool = False


# --- clauses ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Match:
    pos: Pos
    optional: bool
    patterns: tuple[Pattern, ...]
    where: Expr | None


@dataclass(frozen=True)
class Unwind:
    pos: Pos
    expr: Expr
    name: str


@dataclass(frozen=True)
class Item:
    expr: Expr
    alias: str  # the `AS` name, or the expression's text
    explicit: bool  # written with AS


@dataclass(frozen=True)
class Projection:
    """`WITH` (is_return False) or `RETURN`."""

    pos: Pos
    is_return: bool
    distinct: bool
    star: bool
    items: tuple[Item, ...]
    order: tuple[tuple[Expr, bool], ...]  # (expression, descending)
    skip: Expr | None
    limit: Expr | None
    where: Expr | None


@dataclass(frozen=True)
class Call:
    """`CALL name(args) YIELD column [AS alias], ... [WHERE ...]`: a graph algorithm."""

    pos: Pos
    name: str  # as written (dotted parts joined by ".")
    args: tuple[Expr, ...]
    yields: tuple[tuple[str, str], ...] | None  # (column, alias); None: every column
    where: Expr | None


Clause = Match | Unwind | Projection | Call


@dataclass(frozen=True)
class Query:
    clauses: tuple[Clause, ...]
