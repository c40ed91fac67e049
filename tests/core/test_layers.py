"""The package layout is the architecture: layers below `graph.py` never import it.

`graph.py` is the public facade on top; `write/`, `merge/`, `read/`, `search/`,
`query/`, `recovery/`, `maintenance/`, `constraints/`, `storage/`, `catalog/` and
`schema/` take a `Repo` (or a snapshot, a schema) instead, even for type hints.
"""

from __future__ import annotations

import ast
from pathlib import Path

import graphlake

ROOT = Path(graphlake.__file__).parent
BELOW_GRAPH = (
    "adjacency",
    "algo",
    "catalog",
    "constraints",
    "maintenance",
    "merge",
    "query",
    "read",
    "readers",
    "recovery",
    "schema",
    "search",
    "storage",
    "write",
)
BOTTOM = ("errors.py", "faults.py", "probes.py", "retry.py", "repo.py")


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def _lower_modules() -> list[Path]:
    files = [p for pkg in BELOW_GRAPH for p in sorted((ROOT / pkg).rglob("*.py"))]
    return files + [ROOT / name for name in BOTTOM]


def test_nothing_below_graph_imports_it() -> None:
    offenders = {
        str(p.relative_to(ROOT)): sorted(
            m
            for m in _imports(p)
            if m == "graphlake.graph" or m == "graphlake.Graph" or m.startswith("graphlake.graph.")
        )
        for p in _lower_modules()
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_check_sees_an_import(tmp_path: Path) -> None:
    # The walk must find imports in function bodies and TYPE_CHECKING blocks too.
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from graphlake.graph import Graph\n"
        "def f():\n    import graphlake.graph\n"
    )
    assert {"graphlake.graph", "graphlake.graph.Graph"} <= _imports(probe)
    assert len(_lower_modules()) > 60
