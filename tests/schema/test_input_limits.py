"""Hard limits on schema text (issue 22, items 5-6): every attack is a typed `SchemaError`
at parse time, `@check` runs on RE2 in linear time, and a stored pattern RE2 refuses
leaves the graph readable while the writes that need it fail with a typed error."""

from __future__ import annotations

import re
import time

import pytest

import graphlake as gl
from graphlake import regex
from graphlake.constraints import values
from graphlake.errors import CheckPatternError
from graphlake.schema import annotations
from graphlake.schema.parser import MAX_VECTOR_DIM, parse_schema

BIG = "9" * 5000  # past Python's 4,300-digit int-str conversion limit
NODE = "node P {{ name: String @key\n  v: {} }}"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (f"Vector({BIG})", "over the maximum, 65536"),
        ("Vector(2147483648)", "over the maximum, 65536"),
        (f"Vector({MAX_VECTOR_DIM + 1})", "over the maximum, 65536"),
        ("Vector(0000)", "positive integer"),
        (f"I64 @range(0..{BIG})", "too large"),
        (f"I64 @range(-{BIG}..0)", "too large"),
        ("I64 @range(0..99999999999999999999999)", "not a I64 value"),
        (f"F64 @range(0..{BIG})", "too large"),
        ("F64 @range(0..1e999)", "too large"),
        (f"I32 @default({BIG})", "too large"),
        (f"U64 @default({BIG[:30]})", "not a U64 value"),
        ("F32 @default(1e300)", "not an F32 value"),
        ("[" * 500 + "String" + "]" * 500, "lists cannot be nested"),
        ("[" * 5000 + "String" + "]" * 5000, "lists cannot be nested"),
        ('String @check("' + "(" * 2000 + "a" + ")" * 2000 + '")', "characters long"),
        ('String @check("' + "(" * 51 + "a" + ")" * 51 + '")', "nest more than 50"),
        ('String @check("a{4294967296}")', "repetition count {4294967296} is over 1000"),
        ('String @check("a{2,1001}")', "over 1000"),
        ('String @check("(a{100}){100}")', "invalid repetition size"),
        ('String @check("[\\pL\\pN]{50}")', "RE2 instructions"),
        ('String @check("(a)\\1")', "invalid escape sequence"),
        ('String @check("(?=a)b")', "RE2 syntax"),
        ('String @check("' + "x" * 1001 + '")', "1001 characters long"),
    ],
)
def test_attacks_are_schema_errors(body: str, message: str) -> None:
    text = NODE.format(body)
    t0 = time.perf_counter()
    with pytest.raises(gl.SchemaError, match="line 2") as info:
        parse_schema(text)
    assert message in str(info.value)
    assert len(str(info.value)) < 400  # a 5,000-digit number is not echoed whole
    # A hang guard, not a benchmark: each attack takes ~50 ms on an idle 2-core machine,
    # but a CI run under four test processes once took 1.25 s for one of them.
    assert time.perf_counter() - t0 < 10.0


def test_card_bounds_are_capped() -> None:
    text = f"node P {{ name: String @key }}\nedge E: P -> P @card(0..{BIG})"
    with pytest.raises(gl.SchemaError, match=r"@card bound .* over the maximum"):
        parse_schema(text)


@pytest.mark.parametrize(
    "body",
    [
        f"Vector({MAX_VECTOR_DIM})",
        "I64 @range(-9223372036854775808..9223372036854775807)",
        "U64 @default(18446744073709551615)",
        "F32 @default(3.4e38)",
        'String @check("(a+)+")',
        'String @check("' + "(" * 50 + "a" + ")" * 50 + '")',
        'String @check("a{1000}")',
        'String @check("[[:alpha:]]{3}[(]{2}")',
    ],
)
def test_values_at_the_caps_are_accepted(body: str) -> None:
    parse_schema(NODE.format(body))


def test_check_is_linear_in_time(tmp_path) -> None:
    # Python's `re` took 13.6 s on this (and doubled with each extra "a").
    g = gl.Graph.init(tmp_path / "g", NODE.format('String @check("(a+)+")'))
    t0 = time.perf_counter()
    with pytest.raises(gl.ValueConstraintError, match="does not match"), g.write() as w:
        w.insert("P", [{"name": "x", "v": "a" * 40 + "!"}])
    assert time.perf_counter() - t0 < 5.0  # `re` would take 13.6 s (and double per "a")
    with g.write() as w:
        w.insert("P", [{"name": "y", "v": "a" * 100_000}])
    assert g.nodes("P", columns=["name"]).column("name").to_pylist() == ["y"]


def test_check_uses_re2_semantics_like_cypher(tmp_path) -> None:
    # One engine for `@check` and `=~`: a value passes the check exactly when `=~` holds.
    # RE2's `\\d` is ASCII only where Python's `re` also took "٣" (an Arabic-Indic three).
    pattern = "[a-z]+\\d?"
    g = gl.Graph.init(tmp_path / "g", NODE.format(f'String? @check("{pattern}")'))
    values = ["abc", "abc1", "abc\u0663", "ABC", "abc12", "é", ""]
    accepted = []
    for i, v in enumerate(values):
        try:
            with g.write() as w:
                w.insert("P", [{"name": f"n{i}", "v": v}])
            accepted.append(v)
        except gl.ValueConstraintError:
            pass
    assert accepted == ["abc", "abc1"]
    matched = [
        g.query("RETURN $v =~ $p AS m", {"v": v, "p": pattern}).column("m")[0].as_py()
        for v in values
    ]
    assert [v for v, m in zip(values, matched, strict=True) if m] == accepted
    many = [{"name": f"m{i}", "v": ("abc" if i % 2 else "ABC")} for i in range(3000)]
    with pytest.raises(gl.ValueConstraintError) as info, g.write() as w:
        w.insert("P", many)
    assert "'ABC' does not match" in str(info.value)


def test_stored_pattern_re2_refuses_keeps_the_graph_readable(tmp_path, monkeypatch) -> None:
    # A graph written by an older version, whose @check accepted Python `re` syntax.
    old = NODE.format('String? @check("(x)\\1")')
    with monkeypatch.context() as m:
        m.setattr(annotations, "pattern_problem", lambda pattern: None)
        m.setattr(values, "_regex", lambda *args: [])
        old_g = gl.Graph.init(tmp_path / "g", old)
        with old_g.write() as w:
            w.insert("P", [{"name": "old", "v": "xx"}])
    g = gl.Graph.open(tmp_path / "g")
    with g.write() as w:  # rows without a value need no check
        w.insert("P", [{"name": "a"}])
    assert g.schema.nodes["P"].checks == {"v": "(x)\\1"}
    assert sorted(g.nodes("P").column("name").to_pylist()) == ["a", "old"]
    written = re.escape('P.v has @check("(x)\\1")')
    with pytest.raises(CheckPatternError, match=written) as info, g.write() as w:
        w.insert("P", [{"name": "b", "v": "xx"}])
    assert info.value.pattern == "(x)\\1"
    assert isinstance(info.value, gl.SchemaError)
    assert sorted(g.nodes("P").column("name").to_pylist()) == ["a", "old"]
    problems = [pr.message for pr in g.fsck().problems]  # reported, not raised
    assert any("cannot run" in m and "(x)\\1" in m for m in problems), problems
    # Keeping the pattern in a schema change is refused; replacing it repairs the writes.
    with pytest.raises(gl.SchemaError, match="invalid regex in @check"):
        g.apply_schema(old.replace("String?", "String? @index"))
    g.apply_schema(NODE.format('String? @check("(x)x")'))
    with g.write() as w:
        w.insert("P", [{"name": "b", "v": "xx"}])
    assert sorted(g.nodes("P").column("name").to_pylist()) == ["a", "b", "old"]


def test_regex_caps_are_documented_constants() -> None:
    assert (regex.MAX_PATTERN_CHARS, regex.MAX_NESTING, regex.MAX_REPEAT) == (1000, 50, 1000)
    assert regex.pattern_problem("(a+)+") is None
