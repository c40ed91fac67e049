"""What the schema parser's semantic pass works on: annotation records that keep their
tokens, readers of their values (numbers, strings, dates, bounds), and the scope of one
table while its annotations are applied.

`parser` builds these from lark's tree; each annotation kind in `annotations` reads them
to build its constraints. Every failure is a `SchemaError` at the offending token.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from lark import Token

from graphlake.errors import SchemaError
from graphlake.hints import did_you_mean
from graphlake.schema.model import FLOAT_KINDS, Constraint, ConstraintKind, Property

__all__ = [
    "INT_LIMITS",
    "Arg",
    "RawAnnotation",
    "RawKwarg",
    "RawRange",
    "TableScope",
    "arg_pos",
    "arg_text",
    "date_bound",
    "is_name",
    "number",
    "numeric_value",
    "options_of",
    "schema_error",
    "shown",
    "string_value",
]

# An integer of more digits fits no I64/U64 (and would meet Python's int-str limit).
MAX_INT_DIGITS = 20
F32_MAX = 3.4028234663852886e38
INT_LIMITS = {
    "I32": (-(2**31), 2**31 - 1),
    "I64": (-(2**63), 2**63 - 1),
    "U32": (0, 2**32 - 1),
    "U64": (0, 2**64 - 1),
}


# --- raw annotation records ---------------------------------------------------------------


@dataclass
class RawRange:
    dots: Token
    lo: Token | None  # NUMBER or STRING
    hi: Token | None


@dataclass
class RawKwarg:
    name: Token  # `metric` in `metric="cosine"`
    value: Token  # STRING or NAME


Arg = Token | RawRange | RawKwarg  # NAME or STRING token, a range, or name=value


@dataclass
class RawAnnotation:
    at: Token  # '@'
    name: Token
    has_parens: bool
    args: list[Arg]


def schema_error(message: str, tok: Token) -> SchemaError:
    return SchemaError(message, tok.line, tok.column)


def is_name(arg: Arg) -> bool:
    return isinstance(arg, Token) and arg.type == "NAME"


def arg_pos(arg: Arg) -> Token:
    if isinstance(arg, RawKwarg):
        return arg.name
    return arg.dots if isinstance(arg, RawRange) else arg


def arg_text(arg: Arg) -> str:
    if isinstance(arg, RawKwarg):
        return f"'{arg.name}={arg.value}'"
    return "a range" if isinstance(arg, RawRange) else f"'{arg}'"


def options_of(ann: RawAnnotation) -> dict[str, Token]:
    """The `name=value` arguments of an annotation (each name at most once)."""
    options: dict[str, Token] = {}
    for arg in ann.args:
        if isinstance(arg, RawKwarg):
            if str(arg.name) in options:
                raise schema_error(f"option '{arg.name}' is given twice", arg.name)
            options[str(arg.name)] = arg.value
    return options


# --- values -------------------------------------------------------------------------------


def shown(tok: Token, limit: int = 40) -> str:
    """A token as an error message shows it: a 5,000-digit number is cut short."""
    text = str(tok)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def number(tok: Token) -> int | float:
    """An integer when written as one and short enough to be an I64/U64 value; any other
    number as a float (a longer integer then fails the integer kinds' range check)."""
    if re.fullmatch(r"-?[0-9]+", tok) and len(tok.lstrip("-").lstrip("0")) <= MAX_INT_DIGITS:
        return int(tok)
    value = float(tok)
    if not math.isfinite(value):
        raise schema_error(f"number {shown(tok)} is too large", tok)
    return value


def string_value(tok: Token) -> str:
    # Strings are raw, like Python's r"...": the text between the quotes is kept exactly, so
    # regexes need no doubled backslashes. `\"` stays `\"`, which `re` reads as a quote.
    return str(tok)[1:-1]


def date_bound(tok: Token, kind: str) -> date | datetime:
    text = string_value(tok)
    try:
        if kind == "Date":
            return date.fromisoformat(text)
        value = datetime.fromisoformat(text)
    except ValueError:
        example = '"2020-01-01"' if kind == "Date" else '"2020-01-01T00:00:00Z"'
        raise schema_error(
            f"'{text}' is not a valid {kind}; write it like {example}", tok
        ) from None
    # DateTime columns are UTC; a bound without a zone is read as UTC too.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def numeric_value(tok: Token, prop: Property, what: str) -> int | float:
    """A NUMBER token as a value of the numeric property's type. Integer kinds take only
    integers within the type's limits: a value outside them could be neither stored nor
    compared with the column's values without a lossy cast."""
    value = number(tok)
    kind = prop.type.kind
    if kind in FLOAT_KINDS:
        if kind == "F32" and abs(value) > F32_MAX:
            raise schema_error(
                f"{what} {shown(tok)} is not an F32 value for property "
                f"'{prop.name}' (F32 reaches {F32_MAX:g})",
                tok,
            )
        return float(value)
    low, high = INT_LIMITS[kind]
    if not isinstance(value, int) or not low <= value <= high:
        raise schema_error(
            f"{what} '{shown(tok)}' is not a {kind} value for property '{prop.name}'", tok
        )
    return value


# --- one table while its annotations are applied ------------------------------------------


@dataclass
class TableScope:
    """One type's properties and what its annotations have declared so far."""

    keyword: str  # "node" or "edge"
    name: str
    is_edge: bool
    properties: dict[str, Property]
    stored: bool = False  # read back from storage: keep @check patterns the caps refuse
    key: str = ""
    constraints: list[Constraint] = field(default_factory=list)
    renamed_from: str | None = None

    @property
    def what(self) -> str:
        return f"{self.keyword} type {self.name}"

    def prop(self, tok: Arg) -> Property:
        """The property an annotation argument names; it must be declared in this type."""
        if not isinstance(tok, Token) or tok.type != "NAME":
            raise schema_error(f"expected a property name, found {arg_text(tok)}", arg_pos(tok))
        found = self.properties.get(str(tok))
        if found is None:
            hint = did_you_mean(str(tok), self.properties)
            raise schema_error(f"'{tok}' is not a property of {self.what}{hint}", tok)
        return found

    def declared(self, kind: ConstraintKind) -> list[Constraint]:
        return [c for c in self.constraints if c.kind == kind]
