"""Row filters (`where=`): a small, safe grammar, checked before anything is read.

A filter compares columns and literals: `=`, `!=`, `<>`, `<`, `<=`, `>`, `>=`,
`[NOT] IN (...)`, `[NOT] LIKE '...'`, `[NOT] BETWEEN a AND b`, `IS [NOT] NULL`, combined
with `AND`, `OR`, `NOT` and parentheses. Literals are numbers, `'strings'` (`''` escapes
a quote), `TRUE`, `FALSE`, `NULL`, `DATE '...'` and `TIMESTAMP '...'`; columns are bare
names or `"quoted"` / `` `quoted` ``. No functions, no arithmetic, nothing after the
expression: a filter cannot make the scan compute anything but comparisons, so its cost
is that of reading the columns it names.

`compile_filter` returns the filter re-written canonically (every column back-quoted and
checked against the table, every sub-expression parenthesised) for Lance's parser, so
what Lance evaluates is exactly what was checked here.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import LarkError, VisitError

from graphlake.errors import QueryError

MAX_FILTER_CHARS = 4096
MAX_FILTER_DEPTH = 32  # nesting of AND / OR / NOT / parentheses

_GRAMMAR = r"""
?start: or_
?or_: and_ (OR and_)*
?and_: not_ (AND not_)*
?not_: NOT not_ -> negate
     | predicate
?predicate: operand COMPARE operand          -> compare
          | operand IS NULL                  -> is_null
          | operand IS NOT NULL              -> is_not_null
          | operand IN list                  -> in_
          | operand NOT IN list              -> not_in
          | operand LIKE STRING              -> like
          | operand NOT LIKE STRING          -> not_like
          | operand BETWEEN operand AND operand      -> between
          | operand NOT BETWEEN operand AND operand  -> not_between
          | "(" or_ ")"                      -> group
          | operand
list: "(" literal ("," literal)* ")"
?operand: column | literal
column: NAME | QUOTED_NAME | BACKTICK_NAME
literal: NUMBER        -> number
       | STRING        -> string
       | TRUE          -> true
       | FALSE         -> false
       | NULL          -> null
       | DATE STRING   -> date
       | TIMESTAMP STRING -> timestamp

COMPARE: "<=" | ">=" | "<>" | "!=" | "=" | "<" | ">"
NUMBER: /[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/
STRING: /'([^']|'')*'/
NAME: /[A-Za-z_][A-Za-z0-9_]*/
QUOTED_NAME: /"([^"]|"")+"/
BACKTICK_NAME: /`[^`]+`/
AND.2: /and\b/i
OR.2: /or\b/i
NOT.2: /not\b/i
IS.2: /is\b/i
IN.2: /in\b/i
LIKE.2: /like\b/i
BETWEEN.2: /between\b/i
NULL.2: /null\b/i
TRUE.2: /true\b/i
FALSE.2: /false\b/i
DATE.2: /date\b/i
TIMESTAMP.2: /timestamp\b/i

%import common.WS
%ignore WS
"""


@cache
def _parser() -> Lark:
    return Lark(_GRAMMAR, parser="lalr", maybe_placeholders=False)


def compile_filter(where: str, table: str, columns: Sequence[str]) -> str:
    """The canonical form of `where` over a table with `columns`, or a `QueryError`."""

    def refuse(reason: str) -> QueryError:
        return QueryError(f"{table}: cannot apply filter {_excerpt(where)}: {reason}")

    if len(where) > MAX_FILTER_CHARS:
        raise refuse(f"a filter is at most {MAX_FILTER_CHARS} characters")
    try:
        tree = _parser().parse(where)
    except LarkError as exc:
        raise refuse(_syntax_reason(exc)) from None
    try:
        text, depth = _Render(set(columns)).transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, _UnknownColumn):
            raise refuse(
                f"unknown column {exc.orig_exc.args[0]!r} (columns: {', '.join(columns)})"
            ) from None
        raise
    except RecursionError:
        depth = MAX_FILTER_DEPTH + 1
    if depth > MAX_FILTER_DEPTH:
        raise refuse(f"a filter nests at most {MAX_FILTER_DEPTH} levels")
    return text


class _UnknownColumn(Exception):
    pass


Rendered = tuple[str, int]  # canonical text, nesting depth


@v_args(inline=True)
class _Render(Transformer):
    """Parse tree -> (canonical filter text, depth)."""

    def __init__(self, columns: set[str]):
        super().__init__()
        self._columns = columns

    # --- operands ---------------------------------------------------------------------
    def column(self, tok: Token) -> Rendered:
        name = str(tok)
        if name[0] in '"`':
            name = name[1:-1].replace('""', '"') if name[0] == '"' else name[1:-1]
        if name not in self._columns:
            raise _UnknownColumn(name)
        return f"`{name}`", 0

    def number(self, tok: Token) -> Rendered:
        return str(tok), 0

    def string(self, tok: Token) -> Rendered:
        return str(tok), 0  # the grammar admits only '...' with '' escapes

    def true(self, _: Token) -> Rendered:
        return "TRUE", 0

    def false(self, _: Token) -> Rendered:
        return "FALSE", 0

    def null(self, _: Token) -> Rendered:
        return "NULL", 0

    def date(self, _: Token, value: Token) -> Rendered:
        return f"DATE {value}", 0

    def timestamp(self, _: Token, value: Token) -> Rendered:
        return f"TIMESTAMP {value}", 0

    def list(self, *items: Rendered) -> Rendered:
        return "(" + ", ".join(text for text, _ in items) + ")", 0

    # --- predicates ---------------------------------------------------------------------
    def compare(self, a: Rendered, op: Token, b: Rendered) -> Rendered:
        return f"{a[0]} {op} {b[0]}", 1

    def is_null(self, a: Rendered, *_: Token) -> Rendered:
        return f"{a[0]} IS NULL", 1

    def is_not_null(self, a: Rendered, *_: Token) -> Rendered:
        return f"{a[0]} IS NOT NULL", 1

    def in_(self, a: Rendered, _: Token, items: Rendered) -> Rendered:
        return f"{a[0]} IN {items[0]}", 1

    def not_in(self, a: Rendered, _n: Token, _i: Token, items: Rendered) -> Rendered:
        return f"{a[0]} NOT IN {items[0]}", 1

    def like(self, a: Rendered, _: Token, pattern: Token) -> Rendered:
        return f"{a[0]} LIKE {pattern}", 1

    def not_like(self, a: Rendered, _n: Token, _l: Token, pattern: Token) -> Rendered:
        return f"{a[0]} NOT LIKE {pattern}", 1

    def between(self, a: Rendered, _b: Token, low: Rendered, _a: Token, high: Rendered) -> Rendered:
        return f"{a[0]} BETWEEN {low[0]} AND {high[0]}", 1

    def not_between(
        self, a: Rendered, _n: Token, _b: Token, low: Rendered, _a: Token, high: Rendered
    ) -> Rendered:
        return f"{a[0]} NOT BETWEEN {low[0]} AND {high[0]}", 1

    def group(self, inner: Rendered) -> Rendered:
        return inner[0], inner[1] + 1

    def negate(self, _: Token, inner: Rendered) -> Rendered:
        return f"NOT ({inner[0]})", inner[1] + 1

    def and_(self, *parts: Rendered | Token) -> Rendered:
        return self._join("AND", parts)

    def or_(self, *parts: Rendered | Token) -> Rendered:
        return self._join("OR", parts)

    @staticmethod
    def _join(op: str, parts: tuple[Rendered | Token, ...]) -> Rendered:
        operands = [p for p in parts if not isinstance(p, Token)]
        text = f" {op} ".join(f"({t})" for t, _ in operands)
        return text, max(d for _, d in operands) + 1


def _syntax_reason(exc: LarkError) -> str:
    column = getattr(exc, "column", None)
    where = f" at character {column}" if isinstance(column, int) and column > 0 else ""
    return (
        f"not a valid filter{where} (use columns, literals, comparisons, IN, LIKE, "
        f"BETWEEN, IS [NOT] NULL, AND, OR, NOT; no functions, no ';')"
    )


def _excerpt(where: str, width: int = 80) -> str:
    return repr(where if len(where) <= width else where[:width] + "...")
