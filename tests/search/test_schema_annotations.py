"""`@index(prop, metric=...)` on a Vector and `@search(...)` on Strings in `.pg` schemas."""

from __future__ import annotations

import pytest

from graphlake.errors import SchemaError
from graphlake.schema.parser import parse_schema


def test_vector_index_and_search_declarations():
    s = parse_schema("""
    node Doc {
      name: String @key
      title: String @search
      body: String?
      e1: Vector(8) @index
      e2: Vector(8) @index(metric="l2")
      e3: Vector(8)
      @index(e3, metric=dot) @search(body) @index(title)
    }""")
    doc = s.nodes["Doc"]
    assert doc.vector_indexes == {"e1": "cosine", "e2": "l2", "e3": "dot"}
    assert doc.search == ("title", "body")
    assert doc.indexes == (("title",),)  # BTREE indexes stay as they were


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('e: Vector(4) @index(metric="foo")', "unknown metric 'foo'; metrics are cosine, l2, dot"),
        ("e: Vector(4), n: I32, @index(e, n)", "names that one property only"),
        ("n: I32 @search", "@search applies to String properties; 'n' is I32"),
        ('n: I32 @index(metric="l2")', "takes no options here"),
        ('e: Vector(4) @index(e, size="3")', "unknown @index option 'size'"),
        ('e: Vector(4) @index(e, metric="l2", metric="dot")', "given twice"),
        ("t: String @search, @search(t)", "'t' already has @search"),
        ("e: Vector(4) @index, @index(e)", r"duplicate @index\(e\)"),
        ("@search()", "needs at least one property name"),
        ("@search(nope)", "'nope' is not a property"),
        ('e: Vector(4) @unique(metric="l2")', "takes no options here"),
    ],
)
def test_bad_declarations_are_schema_errors(text, match):
    with pytest.raises(SchemaError, match=match):
        parse_schema(f"node D {{ k: String @key, {text} }}")
