"""Branch name rules, identifiers, and the path-segment encoding of names."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphlake.catalog.names import (
    decode_name,
    encode_name,
    validate_branch_name,
    validate_identifier,
)
from graphlake.errors import InvalidNameError


@pytest.mark.parametrize(
    "name",
    ["main", "dev", "ingest/run1/w0", "Feature-X_2.1", "a", "a.b/c-d/e_f", "x" * 200, "v1.lock2"],
)
def test_valid_branch_names(name: str) -> None:
    assert validate_branch_name(name) == name


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "must not be empty"),
        ("x" * 201, "201 characters long; the limit is 200"),
        ("a b", "whitespace or control character at position 1"),
        ("a\tb", "whitespace or control character at position 1"),
        ("ab\n", "whitespace or control character at position 2"),
        ("a\x00b", "whitespace or control character"),
        ("a\x7fb", "whitespace or control character"),
        ("naïve", "character 'ï' at position 2 is not allowed"),
        ("a:b", "character ':' at position 1 is not allowed"),
        ("a%2Fb", "character '%' at position 1 is not allowed"),
        ("a\\b", "character '\\\\' at position 1 is not allowed"),
        ("/main", "must not start or end with '/'"),
        ("main/", "must not start or end with '/'"),
        ("a//b", "must not contain '//'"),
        (".", "must not contain a '.' path segment"),
        ("a/./b", "must not contain a '.' path segment"),
        ("..", "must not contain a '..' path segment"),
        ("a/../b", "must not contain a '..' path segment"),
        (".hidden", "path segment '.hidden' must not start with '.'"),
        ("a/.git/b", "path segment '.git' must not start with '.'"),
        ("main.lock", "must not end with '.lock'"),
        ("a/b.lock", "must not end with '.lock'"),
        ("A" * 100, "once encoded"),
    ],
)
def test_invalid_branch_names_say_why(name: str, message: str) -> None:
    with pytest.raises(InvalidNameError, match="invalid branch name") as info:
        validate_branch_name(name)
    assert message in str(info.value)


def test_non_string_branch_name() -> None:
    with pytest.raises(InvalidNameError, match="must be a string"):
        validate_branch_name(42)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["run-1", "abc_DEF", "x" * 128, "0"])
def test_valid_identifiers(name: str) -> None:
    assert validate_identifier(name, "run id") == name


@pytest.mark.parametrize("name", ["", "x" * 129, "a.b", "a/b", "a b", "ü", "../x"])
def test_invalid_identifiers(name: str) -> None:
    with pytest.raises(InvalidNameError, match=r"invalid table id .*1 to 128 characters"):
        validate_identifier(name, "table id")


def test_encoding_examples() -> None:
    assert encode_name("main") == "main"
    assert encode_name("ingest/run1/w0") == "ingest%2Frun1%2Fw0"
    assert encode_name("Main") == "%4Dain"  # upper case escaped: safe on macOS/Windows
    assert encode_name("100%") == "100%25"
    assert encode_name(".x") == "%2Ex"
    assert encode_name("..") == "%2E."


@given(st.text(min_size=1))
def test_encode_round_trip_any_string(name: str) -> None:
    encoded = encode_name(name)
    assert "/" not in encoded and "\\" not in encoded
    assert not encoded.startswith(".")
    assert encoded.isascii() and encoded.isprintable()
    assert decode_name(encoded) == name


_branch_segment = st.text(alphabet="abcXYZ019._-", min_size=1, max_size=8).filter(
    lambda s: not s.startswith(".")
)
_branch_names = (
    st.lists(_branch_segment, min_size=1, max_size=4)
    .map("/".join)
    .filter(lambda s: not s.endswith(".lock"))
)


@given(_branch_names, _branch_names)
def test_encoding_is_injective_even_ignoring_case(a: str, b: str) -> None:
    validate_branch_name(a)
    validate_branch_name(b)
    if a != b:
        assert encode_name(a).lower() != encode_name(b).lower()
    assert decode_name(encode_name(a)) == a


@pytest.mark.parametrize("segment", ["", "A", "%2f", "%2", "%zz", "a%", "a/b", "%2Fx%FF", ".x"])
def test_decode_refuses_non_canonical_segments(segment: str) -> None:
    with pytest.raises(InvalidNameError, match="not an encoded name"):
        decode_name(segment)


def test_encode_refuses_empty() -> None:
    with pytest.raises(InvalidNameError):
        encode_name("")
