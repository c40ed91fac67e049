"""Listings in key order (issue 23, item 9): `g.nodes`, `show` and `export` list rows by
`id` (an updated row stays in its place, as in HTTP and UI pages), with `order_by` /
`--order-by` for other orders and an explicit unordered option for bulk reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import graphlake as gl
from graphlake.errors import UnknownPropertyError
from tests.cli.helpers import error, run_all, stdout

SCHEMA = "node P { k: String @key  age: I32? }"


def _graph(root: Path) -> gl.Graph:
    g = gl.Graph.init(root, SCHEMA)
    with g.write() as w:
        w.insert(
            "P", [{"k": "c", "age": 3}, {"k": "a", "age": 1}, {"k": "b"}, {"k": "d", "age": 2}]
        )
    with g.write() as w:
        w.update("P", [{"k": "a", "age": 9}])  # moves to the end of storage order
    return g


def test_python_listings_default_to_key_order(tmp_path: Path) -> None:
    g = _graph(tmp_path / "g")
    assert g.nodes("P")["k"].to_pylist() == ["a", "b", "c", "d"]
    assert g.nodes("P", limit=2)["k"].to_pylist() == ["a", "b"]
    assert g.nodes("P", columns=["k"], order_by="-age")["k"].to_pylist() == ["a", "c", "d", "b"]
    assert g.nodes("P", order_by=["age", "k"], where="age > 1").column_names == ["id", "k", "age"]
    assert sorted(g.nodes("P", order_by=None)["k"].to_pylist()) == ["a", "b", "c", "d"]
    with pytest.raises(UnknownPropertyError, match="no column 'nope' to order by"):
        g.nodes("P", order_by="nope")


def test_show_and_export_default_to_key_order(tmp_path: Path) -> None:
    root = tmp_path / "g"
    _graph(root)
    out = tmp_path / "p.jsonl"
    default, by_age, unordered, exported, bad, both = run_all(
        ("show", root, "P", "--json"),
        ("show", root, "P", "--json", "--order-by", "-age,k"),
        ("show", root, "P", "--json", "--unordered"),
        ("export", root, "P", "-o", out),
        ("show", root, "P", "--order-by", "nope"),
        ("show", root, "P", "--order-by", "age", "--unordered"),
    )
    assert [r["k"] for r in json.loads(stdout(default))] == ["a", "b", "c", "d"]
    assert [r["k"] for r in json.loads(stdout(by_age))] == ["a", "c", "d", "b"]
    assert sorted(r["k"] for r in json.loads(stdout(unordered))) == ["a", "b", "c", "d"]
    stdout(exported)
    assert [json.loads(line)["k"] for line in out.read_text().splitlines()] == ["a", "b", "c", "d"]
    assert "no column 'nope' to order by" in error(bad)
    assert both.returncode == 2 and "exclude each other" in both.stderr
