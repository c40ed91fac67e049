"""Cypher text to `syntax.Query`: lark (cypher.lark) checks the syntax, a transformer builds
the AST. Every failure is a `CypherSyntaxError` or, for a write clause, a
`CypherWriteError` naming the API and commands that write; no lark exception escapes. A
syntax error gives the line and column, what was found and what was expected, in words a
user knows (keywords; "an operator", "an expression"; never a grammar rule's name), a
"did you mean" for a misspelt keyword, and names an unsupported clause (UNION, a `CALL {}`
subquery) or a SQL statement as such. `CALL name(args) YIELD ...` is parsed here; which
procedures exist (graph algorithms) is the planner's to check (query/calls.py). Integer
literals (values, `LIMIT`/`SKIP`, hop bounds) are I64s: a longer one is a syntax error at
its token, never Python's 4,300-digit int-str conversion error."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable
from typing import Any

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import (
    LarkError,
    UnexpectedCharacters,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from graphlake.errors import CypherSyntaxError, CypherWriteError
from graphlake.grammar import lark_parser
from graphlake.query import syntax
from graphlake.query.checker import closest

__all__ = ["MAX_INT", "parse_query"]

MAX_INT = 2**63 - 1  # integer literals are I64 values (a minus sign is an operator)

# Clauses that would change the graph, and the API and commands that do it instead.
_WRITES = {
    "CREATE": "w.insert in `with g.write() as w:` / `graphlake insert` or `graphlake load`",
    "MERGE": "w.upsert / `graphlake upsert`",
    "SET": "w.update / `graphlake update` (one property of many rows: `graphlake backfill`)",
    "DELETE": "w.delete / `graphlake delete`",
    "DETACH": "w.delete(..., cascade=True) / `graphlake delete --cascade`",
    "REMOVE": "w.update with the property set to null / `graphlake update`",
    "LOAD": "g.load / `graphlake load` (many files in parallel: `graphlake ingest`)",
    "FOREACH": "a transaction, `with g.write() as w:` / `graphlake insert`, `graphlake "
    "upsert`, `graphlake update` or `graphlake delete`",
    "DROP": "`graphlake schema plan` and `graphlake schema apply`",
}
# Clauses of openCypher (or of SQL) the subset does not have, named when the parser
# meets one where a clause could go (elsewhere the word is an ordinary name).
_SQL = "`graphlake sql` / g.sql"
_UNSUPPORTED = {
    "UNION": f"UNION is not supported: run the queries one by one, or combine them in SQL ({_SQL})",
    "EXPLAIN": "EXPLAIN is not part of the query text: pass explain=True "
    "(`graphlake query --explain`)",
    "PROFILE": "PROFILE is not supported: explain=True (`graphlake query --explain`) "
    "gives each step's rows and seconds",
    "SELECT": f"this looks like SQL: run it with {_SQL} (tables are named after their "
    f"types); a Cypher query starts with MATCH, UNWIND, WITH or RETURN",
}
_WRITE_WORD = re.compile(r"(?<![\w`$.])(" + "|".join(_WRITES) + r")(?![\w`])", re.IGNORECASE)
_STRING_OR_COMMENT = re.compile(
    r"'(\\.|[^'\\])*'|\"(\\.|[^\"\\])*\"|`[^`]*`|//[^\n]*|/\*.*?\*/", re.DOTALL
)

_TERMINAL_WORDS: dict[str, str] = {
    "MATCH": "MATCH",
    "WHERE": "WHERE",
    "RETURN": "RETURN",
    "WITH": "WITH",
    "UNWIND": "UNWIND",
    "AS": "AS",
    "ORDER": "ORDER BY",
    "SKIP": "SKIP",
    "LIMIT": "LIMIT",
    "NAME": "a name",
    "QUOTED_NAME": "a name",
    "INT": "a number",
    "STRING": "a string",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "COLON": "':'",
    "COMMA": "','",
    "DOLLAR": "'$'",
    "MINUS": "'-'",
    "RELDASH": "'-'",
    "FLOAT": "a number",
    "LARROW": "'<-'",
    "RARROW": "'->'",
    "EQ": "'='",
    "STAR": "'*'",
    "OPTIONAL": "OPTIONAL MATCH",
    "MUL_OP": "'/' or '%'",
    "$END": "end of input",
}


def _lark() -> Lark:
    return lark_parser(
        "graphlake.query",
        "cypher.lark",
        "cypher",
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
    )


# Parsed queries are kept by text (the AST is immutable, frozen dataclasses): a repeated
# query text skips lark (~6 ms of a ~7 ms compile on the 2-core machine; the planner takes
# under 1 ms). Bounded in entries and in text length, so memory stays small whatever
# clients send; parse errors are not kept (lru_cache does not cache exceptions).
PARSE_CACHE_ENTRIES = 256
PARSE_CACHE_MAX_CHARS = 8_192


def parse_query(text: str) -> syntax.Query:
    if len(text) <= PARSE_CACHE_MAX_CHARS:
        return _parse_cached(text)
    return _parse(text)


@functools.lru_cache(maxsize=PARSE_CACHE_ENTRIES)
def _parse_cached(text: str) -> syntax.Query:
    return _parse(text)


def _parse(text: str) -> syntax.Query:
    _refuse_writes(text)
    try:
        tree = _lark().parse(text)
    except UnexpectedInput as exc:
        raise _syntax_error(exc, text) from None
    except LarkError as exc:  # anything else lark raises is still a syntax problem
        raise CypherSyntaxError(str(exc).splitlines()[0]) from None
    try:
        return _Build(text).transform(tree)
    except VisitError as exc:  # a check made while building the AST
        if isinstance(exc.orig_exc, CypherSyntaxError):
            raise exc.orig_exc from None
        raise


def _refuse_writes(text: str) -> None:
    # Blank out strings, quoted names and comments (same length: positions stay right).
    blanked = _STRING_OR_COMMENT.sub(lambda m: " " * len(m.group(0)), text)
    m = _WRITE_WORD.search(blanked)
    if m:
        word = m.group(1).upper()
        line = text.count("\n", 0, m.start()) + 1
        column = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
        raise CypherWriteError(
            f"{word} would change the graph; Cypher queries are read-only (use {_WRITES[word]})",
            line,
            column,
        )


# Terminals that continue an expression, and those that start one: an error expecting
# several of them says "an operator" / "an expression" instead of listing each.
_OPERATORS = {
    "STAR",
    "PLUS",
    "MINUS",
    "DOT",
    "LSQB",
    "EQ",
    "NE",
    "LT",
    "LE",
    "GT",
    "GE",
    "REGEX",
    "POW",
    "MUL_OP",
    "AND",
    "OR",
    "XOR",
    "IN",
    "IS",
    "STARTS",
    "ENDS",
    "CONTAINS",
}
_STARTS = {
    "NAME",
    "QUOTED_NAME",
    "INT",
    "FLOAT",
    "STRING",
    "DOLLAR",
    "LPAR",
    "LSQB",
    "LBRACE",
    "PLUS",
    "MINUS",
    "NOT",
    "CASE",
    "EXISTS",
    "TRUE",
    "FALSE",
    "NULL",
}
# Keywords in the order a query uses them (listed first, in this order).
_KEYWORD_ORDER = (
    "WHERE",
    "AS",
    "DISTINCT",
    "ORDER",
    "SKIP",
    "LIMIT",
    "MATCH",
    "OPTIONAL",
    "WITH",
    "UNWIND",
    "CALL",
    "RETURN",
)


def _expected(terminals: Iterable[str]) -> tuple[str, list[str]]:
    """What the parser expected, in words, and the keywords among it."""
    names = set(terminals)
    groups = []
    if len(names & _STARTS) >= 5 and {"NAME", "INT", "STRING"} <= names:
        names -= _STARTS
        groups.append("an expression")
    if len(names & _OPERATORS) >= 3:
        names -= _OPERATORS
        groups.append("an operator")
    keywords = [k for k in _KEYWORD_ORDER if k in names]
    keywords += sorted(t for t in names - set(keywords) if _is_keyword(t))
    rest = sorted(
        {_TERMINAL_WORDS.get(t, _literal(t)) for t in names - set(keywords) if t != "$END"}
    )
    words = [_TERMINAL_WORDS.get(k, k) for k in keywords]
    words = [*words, *rest, *groups] + (["end of input"] if "$END" in names else [])
    if not words:
        return "nothing more", []
    text = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]
    return text, [_TERMINAL_WORDS.get(k, k) for k in keywords]


def _is_keyword(terminal: str) -> bool:
    try:
        pattern = _lark().get_terminal(terminal).pattern
    except KeyError:
        return False
    return pattern.type == "str" and str(pattern.value).isalpha()


def _literal(terminal: str) -> str:
    try:
        pattern = _lark().get_terminal(terminal).pattern
    except KeyError:  # "$END" and other names lark keeps outside the grammar's terminals
        return "end of input" if terminal == "$END" else terminal.lower()
    value = getattr(pattern, "value", terminal)
    return f"'{value}'" if pattern.type == "str" else terminal.lower()


def _syntax_error(exc: UnexpectedInput, text: str) -> CypherSyntaxError:
    if isinstance(exc, UnexpectedToken):
        tok = exc.token
        expected, keywords = _expected(exc.accepts or exc.expected)
        if tok.type == "$END":
            lines = text.split("\n")
            return CypherSyntaxError(
                f"expected {expected}, found end of input", len(lines), len(lines[-1]) + 1
            )
        before = _previous(exc)
        if tok.type == "LBRACE" and before is not None and before.type == "CALL":
            return CypherSyntaxError(_CALL_SUBQUERY, before.line, before.column)
        glued = _glued_word(exc, text)
        if glued is not None:
            return glued
        word = str(tok).upper()
        if (
            tok.type == "NAME"
            and word in _UNSUPPORTED
            and any(k in keywords for k in ("MATCH", "RETURN", "WITH"))
        ):  # where a clause fits
            return CypherSyntaxError(_UNSUPPORTED[word], tok.line, tok.column)
        close = closest(word, [k.split()[0] for k in keywords]) if tok.type == "NAME" else None
        if close is not None:
            close = next(k for k in keywords if k.split()[0] == close)
            return CypherSyntaxError(
                f"found '{tok}'; did you mean {close}? (expected {expected})", tok.line, tok.column
            )
        return CypherSyntaxError(f"expected {expected}, found '{tok}'", tok.line, tok.column)
    if isinstance(exc, UnexpectedCharacters):
        ch = text[exc.pos_in_stream or 0]  # always set on UnexpectedCharacters
        what = "an unterminated string" if ch in "'\"" else f"'{ch}'"
        return CypherSyntaxError(f"unexpected {what}", exc.line, exc.column)
    lines = text.split("\n")
    expected, _ = _expected(getattr(exc, "expected", ()) or ())
    return CypherSyntaxError(
        f"expected {expected}, found end of input", len(lines), len(lines[-1]) + 1
    )


_CALL_SUBQUERY = (
    "CALL { ... } subqueries are not supported; CALL runs a graph algorithm, e.g. "
    f"CALL pagerank('Knows') YIELD node, rank (for the rest, use SQL: {_SQL})"
)


def _previous(exc: UnexpectedToken) -> Token | None:
    """The token before the unexpected one, when lark kept it."""
    history = getattr(exc, "token_history", None) or []
    return history[-1] if history else None


def _glued_word(exc: UnexpectedToken, text: str) -> CypherSyntaxError | None:
    """The lexer reads a keyword off the front of a longer word where only the keyword
    fits (`SKIPP 3` is SKIP, then a name P): the error then names that word."""
    tokens = [*(getattr(exc, "token_history", None) or [])[-1:], exc.token]
    starts = [
        t.start_pos
        for t in tokens
        if t is not None
        and t.type in ("NAME", "INT")
        and t.start_pos
        and _WORD.match(text[t.start_pos - 1])
    ]
    if not starts:
        return None
    m = next(m for m in _WORD_RUN.finditer(text) if m.start() < starts[0] <= m.end())
    line = text.count("\n", 0, m.start()) + 1
    column = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
    keywords = [
        t.pattern.value.upper()
        for t in _lark().terminals
        if t.pattern.type == "str" and str(t.pattern.value).isalpha()
    ]
    close = closest(m.group(0).upper(), keywords)
    hint = f"; did you mean {close}?" if close is not None else ""
    return CypherSyntaxError(f"unexpected '{m.group(0)}'{hint}", line, column)


_WORD = re.compile(r"\w")
_WORD_RUN = re.compile(r"\w+")


def _unescape(s: str) -> str:
    body = s[1:-1]
    out, i = [], 0
    escapes = {
        "n": "\n",
        "t": "\t",
        "r": "\r",
        "\\": "\\",
        "'": "'",
        '"': '"',
        "b": "\b",
        "f": "\f",
    }
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(escapes.get(body[i + 1], body[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _int(tok: Token) -> int:
    """An INT token's value; more than an I64 holds is a syntax error at the token."""
    digits = str(tok).lstrip("0")
    if len(digits) > len(str(MAX_INT)) or int(digits or "0") > MAX_INT:
        shown = digits if len(digits) <= 40 else f"{digits[:40]}... ({len(digits)} digits)"
        raise CypherSyntaxError(
            f"integer {shown} is too large (at most {MAX_INT})", tok.line, tok.column
        )
    return int(digits or "0")


def _float(tok: Token) -> float:
    value = float(tok)
    if not math.isfinite(value):
        shown = tok if len(tok) <= 40 else f"{tok[:40]}... ({len(tok)} characters)"
        raise CypherSyntaxError(f"number {shown} is too large", tok.line, tok.column)
    return value


def _pos(meta: Any) -> syntax.Pos:
    return (getattr(meta, "line", 1), getattr(meta, "column", 1))


def _tokens(children: list, kind: str | None = None) -> list[Token]:
    return [c for c in children if isinstance(c, Token) and (kind is None or c.type == kind)]


def _exprs(children: list) -> list[syntax.Expr]:
    return [c for c in children if isinstance(c, syntax.Expr)]


@v_args(meta=True)
class _Build(Transformer):
    """Parse tree to AST; the source text gives a projection its default column name."""

    def __init__(self, text: str):
        super().__init__()
        self.text = text

    # --- names and literals
    def name(self, meta, ch):
        t = ch[0]
        return str(t)[1:-1] if t.type == "QUOTED_NAME" else str(t)

    def int_lit(self, meta, ch):
        return syntax.Lit(_pos(meta), _int(ch[0]))

    def float_lit(self, meta, ch):
        return syntax.Lit(_pos(meta), _float(ch[0]))

    def string_lit(self, meta, ch):
        return syntax.Lit(_pos(meta), _unescape(str(ch[0])))

    def true_lit(self, meta, ch):
        return syntax.Lit(_pos(meta), True)

    def false_lit(self, meta, ch):
        return syntax.Lit(_pos(meta), False)

    def null_lit(self, meta, ch):
        return syntax.Lit(_pos(meta), None)

    def param(self, meta, ch):
        return syntax.Param(_pos(meta), ch[0])

    def var(self, meta, ch):
        return syntax.Var(_pos(meta), ch[0])

    def list_lit(self, meta, ch):
        return syntax.ListLit(_pos(meta), tuple(_exprs(ch)))

    def map_entry(self, meta, ch):
        return (ch[0], ch[1])

    def map_lit(self, meta, ch):
        return syntax.MapLit(_pos(meta), tuple(ch))

    # --- operators
    def _binary(self, meta, ch, op):
        left, right = _exprs(ch)
        return syntax.Binary(_pos(meta), op, left, right)

    def or_(self, meta, ch):
        return self._binary(meta, ch, "OR")

    def xor_(self, meta, ch):
        return self._binary(meta, ch, "XOR")

    def and_(self, meta, ch):
        return self._binary(meta, ch, "AND")

    def not_(self, meta, ch):
        return syntax.Unary(_pos(meta), "NOT", _exprs(ch)[0])

    def cmp_op(self, meta, ch):
        return str(ch[0])

    def compare(self, meta, ch):
        return syntax.Binary(_pos(meta), ch[1], ch[0], ch[2])

    def in_(self, meta, ch):
        return self._binary(meta, ch, "IN")

    def starts_with(self, meta, ch):
        return self._binary(meta, ch, "STARTS")

    def ends_with(self, meta, ch):
        return self._binary(meta, ch, "ENDS")

    def contains(self, meta, ch):
        return self._binary(meta, ch, "CONTAINS")

    def regex(self, meta, ch):
        return self._binary(meta, ch, "=~")

    def is_null(self, meta, ch):
        return syntax.IsNull(_pos(meta), _exprs(ch)[0], False)

    def is_not_null(self, meta, ch):
        return syntax.IsNull(_pos(meta), _exprs(ch)[0], True)

    def arith(self, meta, ch):
        return syntax.Binary(_pos(meta), str(ch[1]), ch[0], ch[2])

    def unary(self, meta, ch):
        return syntax.Unary(_pos(meta), str(ch[0]), ch[1])

    def prop(self, meta, ch):
        return syntax.Prop(_pos(meta), ch[0], ch[1])

    def index(self, meta, ch):
        return syntax.Index(_pos(meta), ch[0], ch[1])

    def count_star(self, meta, ch):
        return syntax.Func(_pos(meta), ch[0].lower(), (), star=True)

    def func_call(self, meta, ch):
        return syntax.Func(
            _pos(meta), ch[0].lower(), tuple(_exprs(ch)), distinct=bool(_tokens(ch, "DISTINCT"))
        )

    def when(self, meta, ch):
        return (ch[1], ch[3])

    def case_expr(self, meta, ch):
        subject = ch[1] if isinstance(ch[1], syntax.Expr) else None
        whens = tuple(c for c in ch if isinstance(c, tuple))
        default = ch[-2] if _tokens(ch, "ELSE") else None
        return syntax.Case(_pos(meta), subject, whens, default)

    def pred_var(self, meta, ch):
        e = ch[0]
        if not isinstance(e, syntax.Var):
            raise CypherSyntaxError(
                "a pattern must start with a node, like (a) or (:Label)", *_pos(meta)
            )
        return syntax.NodePat(_pos(meta), e.name, (), None)

    def pred_node(self, meta, ch):
        return self.node_pat(meta, ch)

    def pattern_pred(self, meta, ch):
        return syntax.PatternPred(_pos(meta), self.chain(meta, ch))

    def exists_sub(self, meta, ch):
        patterns = tuple(c for c in ch if isinstance(c, syntax.Pattern))
        patterns += tuple(
            syntax.Pattern(_pos(meta), None, c)
            for c in ch  # EXISTS ( chain )
            if isinstance(c, syntax.Chain)
        )
        where = next((c[1] for c in ch if isinstance(c, tuple) and c[0] == "where"), None)
        return syntax.Exists(_pos(meta), patterns, where)

    # --- patterns
    def labels(self, meta, ch):
        return tuple(c for c in ch if isinstance(c, str) and not isinstance(c, Token))

    def node_pat(self, meta, ch):
        var = next((c for c in ch if type(c) is str), None)
        labels = next((c for c in ch if isinstance(c, tuple)), ())
        props = next((c for c in ch if isinstance(c, syntax.MapLit)), None)
        return syntax.NodePat(_pos(meta), var, labels, props)

    def hops(self, meta, ch):
        ints = [_int(t) for t in ch if isinstance(t, Token) and t.type == "INT"]
        ranged = bool(_tokens(ch, "RANGE"))
        if not ranged:
            return (ints[0], ints[0]) if ints else (1, None)
        parts = [t.type for t in ch]
        low = ints[0] if parts[1] == "INT" else 1
        high = _int(ch[-1]) if parts[-1] == "INT" else None
        return (low, high)

    def rel_detail(self, meta, ch):
        var = next((c for c in ch if type(c) is str), None)
        labels = next((c for c in ch if isinstance(c, tuple) and isinstance(c[0], str)), ())
        hops = next((c for c in ch if isinstance(c, tuple) and isinstance(c[0], int)), None)
        props = next((c for c in ch if isinstance(c, syntax.MapLit)), None)
        return {"var": var, "types": labels, "hops": hops, "props": props}

    def _rel(self, meta, ch, direction):
        detail = next((c for c in ch if isinstance(c, dict)), {})
        return syntax.RelPat(
            _pos(meta),
            detail.get("var"),
            detail.get("types", ()),
            direction,
            detail.get("hops"),
            detail.get("props"),
        )

    def rel_left(self, meta, ch):
        return self._rel(meta, ch, "in")

    def rel_right(self, meta, ch):
        return self._rel(meta, ch, "out")

    def rel_both(self, meta, ch):
        return self._rel(meta, ch, "both")

    def chain(self, meta, ch):
        nodes = tuple(c for c in ch if isinstance(c, syntax.NodePat))
        rels = tuple(c for c in ch if isinstance(c, syntax.RelPat))
        return syntax.Chain(nodes, rels)

    def pattern(self, meta, ch):
        path_var = ch[0] if type(ch[0]) is str else None
        chain = next(c for c in ch if isinstance(c, syntax.Chain))
        return syntax.Pattern(_pos(meta), path_var, chain, bool(_tokens(ch, "SHORTESTPATH")))

    # --- clauses
    def where_clause(self, meta, ch):
        return ("where", ch[1])

    def match_clause(self, meta, ch):
        patterns = tuple(c for c in ch if isinstance(c, syntax.Pattern))
        where = next((c[1] for c in ch if isinstance(c, tuple) and c[0] == "where"), None)
        return syntax.Match(_pos(meta), bool(_tokens(ch, "OPTIONAL")), patterns, where)

    def unwind_clause(self, meta, ch):
        return syntax.Unwind(_pos(meta), ch[1], ch[3])

    def proj_item(self, meta, ch):
        if len(ch) == 3:
            return syntax.Item(ch[0], ch[2], True)
        text = self.text[meta.start_pos : meta.end_pos]
        return syntax.Item(ch[0], text, False)

    def proj_items(self, meta, ch):
        return (
            "items",
            bool(_tokens(ch, "STAR")),
            tuple(c for c in ch if isinstance(c, syntax.Item)),
        )

    def sort_item(self, meta, ch):
        desc = any(isinstance(t, Token) and t.type in ("DESC", "DESCENDING") for t in ch)
        return (ch[0], desc)

    def order_by(self, meta, ch):
        return ("order", tuple(c for c in ch if isinstance(c, tuple)))

    def skip(self, meta, ch):
        return ("skip", ch[1])

    def limit(self, meta, ch):
        return ("limit", ch[1])

    def _projection(self, meta, ch, is_return):
        parts = {c[0]: c[1:] for c in ch if isinstance(c, tuple)}
        star, items = parts["items"]
        return syntax.Projection(
            _pos(meta),
            is_return,
            bool(_tokens(ch, "DISTINCT")),
            star,
            items,
            parts.get("order", ((),))[0],
            parts.get("skip", (None,))[0],
            parts.get("limit", (None,))[0],
            parts.get("where", (None,))[0],
        )

    def proc_name(self, meta, ch):
        return ".".join(ch)

    def yield_item(self, meta, ch):
        names = [c for c in ch if type(c) is str]
        return ("yield", names[0], names[-1])

    def call_clause(self, meta, ch):
        name = next(c for c in ch if type(c) is str)
        yields = tuple(c[1:] for c in ch if isinstance(c, tuple) and c[0] == "yield")
        where = next((c[1] for c in ch if isinstance(c, tuple) and c[0] == "where"), None)
        return syntax.Call(
            _pos(meta),
            name,
            tuple(_exprs(ch)),
            yields if _tokens(ch, "YIELD") else None,
            where,
        )

    def with_clause(self, meta, ch):
        return self._projection(meta, ch, False)

    def return_clause(self, meta, ch):
        return self._projection(meta, ch, True)

    def start(self, meta, ch):
        return syntax.Query(tuple(ch))
