"""One "did you mean" (issue 24 item 3): `graphlake.hints` suggests for every error that
names a misspelt name, and no other module asks difflib itself."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphlake as gl
from graphlake import hints
from graphlake.errors import CypherError

ROOT = Path(gl.__file__).parent


def test_suggestions() -> None:
    assert hints.closest("Persn", ["Person", "Company"]) == "Person"
    assert hints.closest("string", ["String", "Bool"]) == "String"  # case-insensitive
    assert hints.closest("zzz", ["Person"]) is None
    assert hints.did_you_mean("Persn", ["Person"]) == " (did you mean 'Person'?)"
    assert hints.did_you_mean("zzz", ["Person"]) == ""
    assert hints.nearest("mian", ["main", "dev", "maint"], n=2)[0] == "main"


def test_every_layer_suggests_the_same_way(tmp_path: Path) -> None:
    with pytest.raises(gl.SchemaError, match=r"did you mean 'String'"):
        gl.Graph.init(tmp_path / "bad", "node P { name: Strng @key }")
    g = gl.Graph.init(tmp_path / "g", "node Person { name: String @key }")
    with pytest.raises(CypherError, match="did you mean 'Person'"):
        g.query("MATCH (p:Persn) RETURN p.name")
    with pytest.raises(gl.GraphLakeError, match="did you mean main"):
        g.nodes("Person", branch="mian")


def test_no_module_calls_difflib_itself() -> None:
    offenders = [
        str(p.relative_to(ROOT))
        for p in sorted(ROOT.rglob("*.py"))
        if p.name != "hints.py" and "get_close_matches" in p.read_text("utf-8")
    ]
    assert offenders == []
