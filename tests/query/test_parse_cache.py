"""The parse cache: a repeated query text is parsed once; long texts and errors are not
kept, and a cached AST gives the same answers (it is immutable)."""

from __future__ import annotations

import dataclasses

import pytest

from graphlake.errors import CypherSyntaxError
from graphlake.query import parser


def test_repeated_text_is_parsed_once() -> None:
    text = "MATCH (a:P)-[:K]->(b:P) WHERE a.n = $x RETURN b.n ORDER BY b.n LIMIT 3"
    first = parser.parse_query(text)
    assert parser.parse_query(text) is first
    assert parser.parse_query(text + " ") is not first  # keyed by the exact text
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.clauses = ()  # type: ignore[misc]


def test_long_texts_and_errors_are_not_kept() -> None:
    long = "RETURN '" + "x" * parser.PARSE_CACHE_MAX_CHARS + "' AS x"
    assert len(long) > parser.PARSE_CACHE_MAX_CHARS
    before = parser._parse_cached.cache_info().currsize
    assert parser.parse_query(long) is not parser.parse_query(long)
    for _ in range(2):
        with pytest.raises(CypherSyntaxError):
            parser.parse_query("MATCH (a RETURN a")
    assert parser._parse_cached.cache_info().currsize == before
    assert parser._parse_cached.cache_info().maxsize == parser.PARSE_CACHE_ENTRIES


def test_cached_ast_answers_like_a_fresh_one(social) -> None:
    text = "MATCH (p:Person) RETURN p.name AS name ORDER BY name LIMIT 2"
    first = social.query(text).to_pylist()
    assert len(first) == 2 and social.query(text).to_pylist() == first
