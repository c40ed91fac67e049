"""Parse `.pg` schema text into the `model` dataclasses.

Parsing runs in two stages. lark (LALR, grammar.lark) checks the syntax and its tree is
turned into small "raw" records that still carry their tokens. A semantic pass then
resolves types and annotations, checks every rule of the language and builds the frozen
model. Keeping the grammar loose and the checks here means every error can name the exact
token and say what is wrong in the schema's own terms. Every failure is a `SchemaError`
with a 1-based line and column; no lark exception escapes. Constraint annotations
(`@unique`, `@index`, `@range`, `@check`, `@search`, `@card`) are parsed by their kind's
description in `annotations` (`SYNTAX`); `@key`, `@default` and `@renamed_from` here.

Client text is bounded before Python works on it: integers longer than an I64/U64 (no
4,300-digit conversion error), `Vector` dimensions up to `MAX_VECTOR_DIM`, no list of
lists (refused at the first nested `[`, whatever the depth), and `@check` regexes that
RE2 compiles within the caps of `graphlake.regex`. A schema read back from storage
(`stored=True`) keeps a `@check` pattern those caps refuse, so a graph written by an
older version still opens and reads; the writes that need the check refuse it
(`graphlake.constraints.values`).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from graphlake.errors import SchemaError
from graphlake.grammar import lark_parser
from graphlake.hints import did_you_mean
from graphlake.schema.annotations import SYNTAX, canonical
from graphlake.schema.model import (
    KEY_KINDS,
    NUMERIC_KINDS,
    RESERVED_NAMES,
    RESERVED_PREFIX,
    SCALARS,
    DefaultValue,
    EdgeType,
    NodeType,
    Property,
    Schema,
    TypeKind,
    TypeRef,
)
from graphlake.schema.syntax import (
    Arg,
    RawAnnotation,
    RawKwarg,
    RawRange,
    TableScope,
    arg_pos,
    date_bound,
    is_name,
    numeric_value,
    schema_error,
    shown,
    string_value,
)

__all__ = ["MAX_VECTOR_DIM", "load_schema", "parse_schema"]

# The largest `Vector(n)`: Arrow's fixed-size lists allow 2**31 - 1, but one such row is
# 8 GiB; 65,536 float32 (256 KiB a row) is far above any embedding model's width.
MAX_VECTOR_DIM = 65_536

# --- lark ------------------------------------------------------------------------------


def _lark() -> Lark:
    return lark_parser(
        "graphlake.schema",
        "grammar.lark",
        "schema",
        parser="lalr",
        lexer="contextual",
        maybe_placeholders=False,
    )


# How each terminal reads in "expected ..." messages, in the order they are listed.
_TERMINAL_WORDS: dict[str, str] = {
    "NODE": "'node'",
    "EDGE": "'edge'",
    "NAME": "a name",
    "COLON": "':'",
    "ARROW": "'->'",
    "LBRACE": "'{'",
    "LPAR": "'('",
    "LSQB": "'['",
    "QMARK": "'?'",
    "DOTDOT": "'..'",
    "EQUALS": "'='",
    "NUMBER": "a number",
    "STRING": "a string",
    "COMMA": "','",
    "SEMICOLON": "';'",
    "RPAR": "')'",
    "RSQB": "']'",
    "RBRACE": "'}'",
    "AT": "an annotation",
    "$END": "end of input",
}


def _words(terminals: Iterable[str]) -> str:
    """`'{' or an annotation` for {"AT", "LBRACE"}: a stable, plain-English list."""
    names = set(terminals)
    # Separators are optional wherever '}' may come, so listing them there is only noise.
    if "RBRACE" in names:
        names -= {"COMMA", "SEMICOLON"}
    words = [w for t, w in _TERMINAL_WORDS.items() if t in names]
    if not words:
        return "nothing more"
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def _end_of(text: str) -> tuple[int, int]:
    """Line and column just past the last character of `text`."""
    lines = text.split("\n")
    return len(lines), len(lines[-1]) + 1


def _syntax_error(exc: UnexpectedInput, text: str) -> SchemaError:
    """Translate a lark error into a SchemaError that says what was expected."""
    if isinstance(exc, UnexpectedToken):
        tok = exc.token
        expected = _words(exc.accepts or exc.expected)
        if tok.type == "$END":
            # lark places $END on the last token; point just past it, where the missing
            # piece belongs.
            if tok.end_line is not None and tok.end_column is not None:
                line, column = tok.end_line, tok.end_column
            else:
                line, column = _end_of(text)
            return SchemaError(f"expected {expected}, found end of input", line, column)
        return SchemaError(f"expected {expected}, found '{tok}'", tok.line, tok.column)
    if isinstance(exc, UnexpectedCharacters):
        pos = exc.pos_in_stream or 0  # always set on UnexpectedCharacters
        if text.startswith("/*", pos):
            return SchemaError("unterminated block comment: '/*' has no '*/'", exc.line, exc.column)
        if text[pos] == '"':
            return SchemaError(
                "unterminated string: a '\"' string must close on the same line",
                exc.line,
                exc.column,
            )
        expected = _words(exc.allowed or ())
        return SchemaError(f"expected {expected}, found '{text[pos]}'", exc.line, exc.column)
    # UnexpectedEOF (not raised by LALR, but cheap to cover).
    line, column = _end_of(text)
    return SchemaError(
        f"expected {_words(getattr(exc, 'expected', ()))}, found end of input", line, column
    )


# --- raw syntax records ----------------------------------------------------------------
# The parse tree reduced to what the semantic pass needs, with tokens kept for positions.


@dataclass
class _RawType:
    at: Token  # the type's name, or '[' of a list
    name: str  # "String", "Vector", "enum", ..., or "[]" for a list
    lpar: Token | None = None  # set when the name was followed by "(...)"
    args: list[Token] = field(default_factory=list)  # NAME / NUMBER tokens inside "(...)"
    item: _RawType | None = None  # the item type of a list


@dataclass
class _RawProperty:
    name: Token
    type: _RawType
    nullable: bool
    annotations: list[RawAnnotation] = field(default_factory=list)  # inline ones


@dataclass
class _RawDecl:
    keyword: Token  # 'node' or 'edge'
    name: Token
    src: Token | None
    dst: Token | None
    header: list[RawAnnotation]
    items: list[_RawProperty | RawAnnotation | Token]  # Token = a ',' or ';' separator

    @property
    def is_edge(self) -> bool:
        return self.keyword.type == "EDGE"


def _tokens(tree: Tree[Token], *types: str) -> list[Token]:
    return [c for c in tree.children if isinstance(c, Token) and c.type in types]


def _trees(tree: Tree[Token], *names: str) -> list[Tree[Token]]:
    return [c for c in tree.children if isinstance(c, Tree) and c.data in names]


def _raw_type(tree: Tree[Token]) -> _RawType:
    if tree.data == "list_type":
        (lsqb,) = _tokens(tree, "LSQB")
        (item,) = _trees(tree, "named_type", "list_type")
        if item.data == "list_type":  # refused here, before anything recurses into it
            raise _error("lists cannot be nested", _tokens(item, "LSQB")[0])
        return _RawType(at=lsqb, name="[]", item=_raw_type(item))
    name = _tokens(tree, "NAME")[0]
    lpar = next(iter(_tokens(tree, "LPAR")), None)
    args: list[Token] = []
    for sub in _trees(tree, "type_args"):
        args = _tokens(sub, "NAME", "NUMBER")
    return _RawType(at=name, name=str(name), lpar=lpar, args=args)


def _raw_range(tree: Tree[Token]) -> RawRange:
    # Children are [lo] DOTDOT [hi]; the position of `..` tells which bounds are present.
    toks = [c for c in tree.children if isinstance(c, Token)]
    at = next(i for i, t in enumerate(toks) if t.type == "DOTDOT")
    lo = toks[at - 1] if at > 0 else None
    hi = toks[at + 1] if at + 1 < len(toks) else None
    return RawRange(dots=toks[at], lo=lo, hi=hi)


def _raw_annotation(tree: Tree[Token]) -> RawAnnotation:
    at, name = _tokens(tree, "AT")[0], _tokens(tree, "NAME")[0]
    args: list[Arg] = []
    for sub in _trees(tree, "ann_args"):
        for c in sub.children:
            if isinstance(c, Tree) and c.data == "kwarg":
                key, value = _tokens(c, "NAME")[0], c.children[-1]
                assert isinstance(value, Token)
                args.append(RawKwarg(name=key, value=value))
            elif isinstance(c, Tree):
                args.append(_raw_range(c))
            elif c.type != "COMMA":
                args.append(c)
    return RawAnnotation(at=at, name=name, has_parens=bool(_tokens(tree, "LPAR")), args=args)


def _raw_property(tree: Tree[Token]) -> _RawProperty:
    name = _tokens(tree, "NAME")[0]
    (type_tree,) = _trees(tree, "named_type", "list_type")
    return _RawProperty(name=name, type=_raw_type(type_tree), nullable=bool(_tokens(tree, "QMARK")))


def _raw_item(node: Tree[Token]) -> _RawProperty | RawAnnotation | Token:
    if node.data == "property":
        return _raw_property(node)
    if node.data == "annotation":
        return _raw_annotation(node)
    return _tokens(node, "COMMA", "SEMICOLON")[0]  # separator


def _raw_decl(tree: Tree[Token]) -> _RawDecl:
    keyword = _tokens(tree, "NODE", "EDGE")[0]
    names = _tokens(tree, "NAME")  # type name, then src and dst for edges
    header = [_raw_annotation(a) for a in _trees(tree, "header_annotation")]
    items: list[_RawProperty | RawAnnotation | Token] = []
    for body in _trees(tree, "body"):
        items = [_raw_item(c) for c in body.children if isinstance(c, Tree)]
    src, dst = (names[1], names[2]) if keyword.type == "EDGE" else (None, None)
    return _RawDecl(keyword=keyword, name=names[0], src=src, dst=dst, header=header, items=items)


def _parse_tree(text: str) -> list[_RawDecl]:
    try:
        tree = _lark().parse(text)
    except UnexpectedInput as exc:
        raise _syntax_error(exc, text) from None
    except LarkError as exc:  # anything else lark may raise; never let it escape
        raise SchemaError(f"could not parse schema: {exc}", 1, 1) from None
    return [_raw_decl(d) for d in tree.children if isinstance(d, Tree)]


# --- semantic checks -------------------------------------------------------------------

# The annotations that are no constraint: they set a node type's key, a property's
# default, or the name a property or type had before. Constraint annotations are the
# registry's (`annotations.SYNTAX`).
_OWN_USAGE = {
    "key": "@key after the key property's type",
    "default": "@default(value) after a property's type",
    "renamed_from": "@renamed_from(old_name) after a property's type or a type's name",
}
KNOWN_ANNOTATIONS = ("key", *SYNTAX, "default", "renamed_from")
_USAGE = {**_OWN_USAGE, **{name: kind.usage for name, kind in SYNTAX.items()}}

_error = schema_error
_did_you_mean = did_you_mean


def _is_inline(ann: RawAnnotation) -> bool:
    """Whether an annotation belongs to the property before it, judged by its shape.

    Inline forms never name a property (`@unique`, `@range(0..1)`); type-level forms always
    do (`@unique(a, b)`, `@range(p, 0..1)`), so the two never need a separator to tell apart.
    """
    name = str(ann.name)
    if name in _OWN_USAGE:
        return True
    return SYNTAX[name].is_inline(ann)


def _check_known(ann: RawAnnotation) -> None:
    if ann.name not in KNOWN_ANNOTATIONS:
        known = ", ".join(f"@{a}" for a in KNOWN_ANNOTATIONS)
        hint = _did_you_mean(str(ann.name), KNOWN_ANNOTATIONS)
        raise _error(
            f"unknown annotation '@{ann.name}'{hint}; known annotations are {known}", ann.at
        )


def _check_type_name(tok: Token) -> None:
    if tok.startswith("_"):
        raise _error(f"type name '{tok}' may not start with '_'", tok)


def _check_property_name(tok: Token) -> None:
    # Case-insensitive because SQL (DuckDB) does not tell `ID` from `id`.
    lowered = tok.lower()
    if lowered in RESERVED_NAMES or lowered.startswith(RESERVED_PREFIX):
        reserved = ", ".join(sorted(RESERVED_NAMES))
        raise _error(
            f"property name '{tok}' is reserved (reserved: {reserved} and names "
            f"starting with '{RESERVED_PREFIX}')",
            tok,
        )


# --- types -----------------------------------------------------------------------------


def _no_args(raw: _RawType) -> None:
    if raw.lpar is not None:
        raise _error(f"type {raw.name} takes no arguments", raw.lpar)


def _vector_type(raw: _RawType) -> TypeRef:
    where = raw.lpar or raw.at
    if len(raw.args) != 1:
        raise _error("Vector needs one dimension, e.g. Vector(32)", where)
    (dim,) = raw.args
    digits = dim.lstrip("0") if dim.type == "NUMBER" and re.fullmatch(r"[0-9]+", dim) else ""
    if not digits:  # not an integer, or zero
        raise _error(f"Vector dimension must be a positive integer, found '{shown(dim)}'", dim)
    if len(digits) > 6 or int(digits) > MAX_VECTOR_DIM:
        raise _error(f"Vector dimension {shown(dim)} is over the maximum, {MAX_VECTOR_DIM}", dim)
    return TypeRef("Vector", dim=int(dim))


def _enum_type(raw: _RawType) -> TypeRef:
    if not raw.args:
        raise _error("enum needs at least one value, e.g. enum(a, b)", raw.lpar or raw.at)
    seen: set[str] = set()
    for value in raw.args:
        if value.type != "NAME":
            raise _error(f"enum values must be names, found '{value}'", value)
        if value in seen:
            raise _error(f"duplicate enum value '{value}'", value)
        seen.add(str(value))
    return TypeRef("Enum", values=tuple(str(v) for v in raw.args))


def _list_type(raw: _RawType) -> TypeRef:
    assert raw.item is not None
    item = _resolve_type(raw.item)
    if item.kind == "List":
        raise _error("lists cannot be nested", raw.item.at)
    if item.kind in ("Vector", "Blob"):
        raise _error(f"a list cannot hold {item.kind}; use a scalar or enum item type", raw.item.at)
    return TypeRef("List", item=item)


# Kinds written as a bare name: the scalars and Blob.
_PLAIN_KINDS: dict[str, TypeKind] = {**{k: k for k in SCALARS}, "Blob": "Blob"}


def _resolve_type(raw: _RawType) -> TypeRef:
    if raw.name == "[]":
        return _list_type(raw)
    plain = _PLAIN_KINDS.get(str(raw.name))
    if plain is not None:
        _no_args(raw)
        return TypeRef(plain)
    if raw.name == "Vector":
        return _vector_type(raw)
    if raw.name == "enum":
        return _enum_type(raw)
    known = (*SCALARS, "Vector", "Blob", "enum")
    hint = _did_you_mean(raw.name, known)
    raise _error(f"unknown type '{raw.name}'{hint}; types are {', '.join(known)} and [T]", raw.at)


# --- annotations that are no constraint ------------------------------------------------


def _add_key(table: TableScope, prop: Property, ann: RawAnnotation) -> None:
    if ann.has_parens:
        raise _error("@key takes no arguments; write it after the key property's type", ann.at)
    if table.is_edge:
        raise _error("edge types have no key; @key is only for node types", ann.at)
    if table.key:
        raise _error(f"{table.what} already has @key property '{table.key}'", ann.at)
    if prop.nullable:
        raise _error(f"key property '{prop.name}' must not be nullable", ann.at)
    if prop.type.kind not in KEY_KINDS:
        raise _error(
            f"key property '{prop.name}' is {prop.type}; a key must be one of "
            f"{', '.join(KEY_KINDS)}",
            ann.at,
        )
    table.key = prop.name


def _set_default(table: TableScope, prop: Property, ann: RawAnnotation) -> None:
    current = table.properties[prop.name]  # earlier annotations may have replaced it
    if len(ann.args) != 1:
        raise _error(f"malformed @default; write {_USAGE['default']}", ann.at)
    if current.default is not None:
        raise _error(f"property '{prop.name}' already has a @default", ann.at)
    value = _default_value(ann.args[0], current, ann)
    table.properties[prop.name] = dataclasses.replace(current, default=value)


def _set_renamed(table: TableScope, prop: Property, ann: RawAnnotation) -> None:
    current = table.properties[prop.name]
    old = _renamed_from_name(ann, current.renamed_from)
    if old == prop.name:
        raise _error(f"property '{prop.name}' cannot be renamed from itself", ann.at)
    table.properties[prop.name] = dataclasses.replace(current, renamed_from=old)


def _set_type_renamed(table: TableScope, ann: RawAnnotation) -> None:
    old = _renamed_from_name(ann, table.renamed_from)
    if old == table.name:
        raise _error(f"{table.what} cannot be renamed from itself", ann.at)
    table.renamed_from = old


def _renamed_from_name(ann: RawAnnotation, already: str | None) -> str:
    if len(ann.args) != 1 or not is_name(ann.args[0]):
        raise _error(f"malformed @renamed_from; write {_USAGE['renamed_from']}", ann.at)
    if already is not None:
        raise _error("only one @renamed_from per property or type", ann.at)
    return str(ann.args[0])


def _default_value(arg: Arg, prop: Property, ann: RawAnnotation) -> DefaultValue:
    """The value of `@default(arg)`, checked against the property's type."""
    kind = prop.type.kind
    tok = arg_pos(arg)
    if kind in ("Vector", "Blob", "List"):
        raise _error(f"@default does not apply to {prop.type} property '{prop.name}'", ann.at)
    if isinstance(arg, RawRange | RawKwarg):
        raise _error(f"malformed @default; write {_USAGE['default']}", tok)
    if kind in NUMERIC_KINDS:
        if arg.type != "NUMBER":
            raise _error(f"a default for {kind} property '{prop.name}' is a number", tok)
        return numeric_value(arg, prop, "default")
    if kind == "Bool":
        if not (arg.type == "NAME" and str(arg) in ("true", "false")):
            raise _error(f"a default for Bool property '{prop.name}' is true or false", tok)
        return str(arg) == "true"
    if kind in ("Date", "DateTime"):
        if arg.type != "STRING":
            raise _error(
                f"a default for {kind} property '{prop.name}' is quoted, like \"2020-01-01\"", tok
            )
        return date_bound(arg, kind)
    if kind == "Enum":
        text = string_value(arg) if arg.type == "STRING" else str(arg)
        if text not in (prop.type.values or ()):
            raise _error(f"default '{text}' is not a value of {prop.type}", tok)
        return text
    if arg.type != "STRING":  # String
        raise _error(f"a default for String property '{prop.name}' is a quoted string", tok)
    return string_value(arg)


def _apply_inline(table: TableScope, prop: Property, ann: RawAnnotation) -> None:
    kind = str(ann.name)
    if kind == "key":
        _add_key(table, prop, ann)
    elif kind == "default":
        _set_default(table, prop, ann)
    elif kind == "renamed_from":
        _set_renamed(table, prop, ann)
    else:
        SYNTAX[kind].inline(table, prop, ann)


def _apply_type_level(table: TableScope, ann: RawAnnotation) -> None:
    if ann.name == "renamed_from":
        _set_type_renamed(table, ann)
    else:
        SYNTAX[str(ann.name)].type_level(table, ann)


def _misplaced(ann: RawAnnotation, where: str) -> SchemaError:
    return _error(
        f"@{ann.name} {where} must directly follow a property's type; "
        f"write {_USAGE[str(ann.name)]}",
        ann.at,
    )


def _group(decl: _RawDecl) -> tuple[list[_RawProperty], list[RawAnnotation]]:
    """Split a body into properties (each with its inline annotations) and type-level ones.

    An inline-shaped annotation attaches to the closest property before it, unless a `,` or
    `;` came in between (the separator ends the property).
    """
    for ann in decl.header:
        _check_known(ann)
        # `@renamed_from` is the one annotation both a type and a property may carry.
        if _is_inline(ann) and ann.name != "renamed_from":
            raise _misplaced(ann, "in a type header")
    props: list[_RawProperty] = []
    type_level = list(decl.header)
    current: _RawProperty | None = None
    for item in decl.items:
        if isinstance(item, _RawProperty):
            props.append(item)
            current = item
        elif isinstance(item, Token):
            current = None
        else:
            _check_known(item)
            if not _is_inline(item):
                type_level.append(item)
            elif current is None:
                raise _misplaced(item, "without a property name")
            else:
                current.annotations.append(item)
    return props, type_level


def _properties(raw_props: list[_RawProperty]) -> dict[str, Property]:
    props: dict[str, Property] = {}
    lowered: dict[str, str] = {}
    for raw in raw_props:
        _check_property_name(raw.name)
        # Case-insensitive for the same reason as reserved names: SQL folds case.
        if raw.name.lower() in lowered:
            first = lowered[raw.name.lower()]
            same = "" if first == raw.name else f" (same as '{first}' apart from case)"
            raise _error(f"duplicate property '{raw.name}'{same}", raw.name)
        lowered[raw.name.lower()] = str(raw.name)
        props[str(raw.name)] = Property(str(raw.name), _resolve_type(raw.type), raw.nullable)
    return props


def _table(decl: _RawDecl, stored: bool) -> TableScope:
    raw_props, type_level = _group(decl)
    table = TableScope(
        str(decl.keyword), str(decl.name), decl.is_edge, _properties(raw_props), stored
    )
    # Apply annotations in source order so uniques/indexes keep the order they were written.
    pending: list[tuple[RawAnnotation, Property | None]] = [(a, None) for a in type_level]
    for raw in raw_props:
        pending += [(a, table.properties[str(raw.name)]) for a in raw.annotations]
    for ann, prop in sorted(pending, key=lambda pair: pair[0].at.start_pos or 0):
        if prop is None:
            _apply_type_level(table, ann)
        else:
            _apply_inline(table, prop, ann)
    if not decl.is_edge and not table.key:
        raise _error(
            f"{table.what} needs exactly one @key property (e.g. `name: String @key`)", decl.name
        )
    return table


def _check_endpoint(tok: Token, kinds: dict[str, str]) -> None:
    kind = kinds.get(str(tok))
    if kind == "edge":
        raise _error(f"'{tok}' is an edge type; edge endpoints must be node types", tok)
    if kind is None:
        nodes = [n for n, k in kinds.items() if k == "node"]
        hint = _did_you_mean(str(tok), nodes)
        raise _error(f"unknown node type '{tok}'{hint}", tok)


def _build(decls: list[_RawDecl], text: str, stored: bool) -> Schema:
    if not decls:
        raise SchemaError("empty schema: declare at least one node type", 1, 1)
    # First come, first kept: the kind of every type name, so edges may name node types
    # declared after them.
    kinds: dict[str, str] = {}
    for d in decls:
        kinds.setdefault(str(d.name), str(d.keyword))
    nodes: dict[str, NodeType] = {}
    edges: dict[str, EdgeType] = {}
    seen: dict[str, str] = {}  # lower-cased name -> name as first written
    for d in decls:
        _check_type_name(d.name)
        # Node and edge types share one namespace (they are all tables), case-insensitively.
        if d.name.lower() in seen:
            raise _error(f"duplicate type name '{d.name}'", d.name)
        seen[d.name.lower()] = str(d.name)
        if d.src is not None and d.dst is not None:
            _check_endpoint(d.src, kinds)
            _check_endpoint(d.dst, kinds)
        t = _table(d, stored)
        properties = tuple(t.properties.values())
        common: dict[str, Any] = dict(
            name=str(d.name),
            renamed_from=t.renamed_from,
            properties=properties,
            constraints=canonical(properties, t.constraints),
        )
        if d.is_edge:
            edges[str(d.name)] = EdgeType(**common, src=str(d.src), dst=str(d.dst))
        else:
            nodes[str(d.name)] = NodeType(**common, key=t.key)
    return Schema(nodes=nodes, edges=edges, text=text)


# --- public API ------------------------------------------------------------------------


def parse_schema(text: str, *, stored: bool = False) -> Schema:
    """Parse schema text (the `.pg` language) into a `Schema`. Raises `SchemaError`.

    `stored`: the text was read back from a graph, not given by a client, so a `@check`
    pattern RE2 refuses (an older version accepted Python `re` syntax) is kept as written.
    """
    return _build(_parse_tree(text), text, stored)


def load_schema(text_or_path: str | os.PathLike[str]) -> Schema:
    """Parse a schema from a `.pg` file path or from schema text.

    A string ending in `.pg` is a path: no schema text can end that way (`.` only occurs
    in `..`), so a missing file is reported as such rather than as a syntax error.
    """
    if isinstance(text_or_path, os.PathLike) or text_or_path.rstrip().endswith(".pg"):
        return _load_file(Path(os.fspath(text_or_path).strip()))
    return parse_schema(text_or_path)


def _load_file(path: Path) -> Schema:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SchemaError(f"schema file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SchemaError(f"cannot read schema file {path}: {exc}") from None
    try:
        return parse_schema(text)
    except SchemaError as exc:
        exc.add_note(f"in schema file {path}")
        raise
