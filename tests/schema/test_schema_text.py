"""`schema_text` prints a schema back as `.pg` text that parses to the same model.

Checked on every schema the test suite, the examples and the README declare: every
string constant in tests/ that parses as a schema, every `.pg` file and every README
code block that parses.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from graphlake.errors import SchemaError
from graphlake.schema.model import Schema
from graphlake.schema.parser import parse_schema
from graphlake.schema.text import schema_text

ROOT = Path(__file__).resolve().parents[2]


def _candidates() -> dict[str, str]:
    found: dict[str, str] = {}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            is_text = isinstance(node, ast.Constant) and isinstance(node.value, str)
            if is_text and re.search(r"\bnode\b", node.value) and "{" in node.value:
                found.setdefault(node.value, f"{path.relative_to(ROOT)}:{node.lineno}")
    for path in sorted(ROOT.rglob("*.pg")):
        if ".venv" not in path.parts:
            found.setdefault(path.read_text("utf-8"), str(path.relative_to(ROOT)))
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for page in pages:
        text = page.read_text("utf-8")
        for i, block in enumerate(re.findall(r"```[a-z]*\n(.*?)```", text, re.S)):
            found.setdefault(block, f"{page.relative_to(ROOT)} block {i}")
    return found


def _schemas() -> list[tuple[str, Schema]]:
    out = []
    for text, where in _candidates().items():
        try:
            out.append((where, parse_schema(text)))
        except SchemaError:
            continue  # not a schema, or one written to be refused
    return out


SCHEMAS = _schemas()


def _same(a: Schema, b: Schema) -> bool:
    return a.nodes == b.nodes and a.edges == b.edges


def test_many_schemas_are_found() -> None:
    assert len(SCHEMAS) >= 30  # the suite declares many; a broken collector finds none


@pytest.mark.parametrize(("where", "schema"), SCHEMAS, ids=[w for w, _ in SCHEMAS])
def test_schema_text_round_trips(where: str, schema: Schema) -> None:
    text = schema_text(schema)
    assert _same(parse_schema(text), schema), text
    assert schema_text(parse_schema(text)) == text  # and printing is stable


def test_every_annotation_round_trips() -> None:
    schema = parse_schema("""
        node Person @renamed_from(People) {
            name: String @key @check("[A-Z].*")
            age: I32? @range(0..150) @default(18)
            score: F64 @range(-1.5..) @default(0.25)
            born: Date? @range("1900-01-01"..)
            seen: DateTime @default("2020-01-01T10:00:00Z") @range(.."2030-01-01T00:00:00")
            kind: enum(a, b) @default(b)
            ok: Bool @default(false)
            nick: String? @default("x y") @renamed_from(nickname)
            tags: [String]?
            emb: Vector(4)?
            @unique(nick, age) @index(score) @unique(born)
        }
        edge Knows: Person -> Person @card(0..3) { since: I64 @default(-7) }
        edge Likes: Person -> Person @card(1..)
    """)
    text = schema_text(schema)
    assert _same(parse_schema(text), schema), text
    person = parse_schema(text).nodes["Person"]
    assert person.renamed_from == "People"
    assert person.property("nick").renamed_from == "nickname"
    assert person.property("age").default == 18
    assert person.uniques == (("nick", "age"), ("born",))
