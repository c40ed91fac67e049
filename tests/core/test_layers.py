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


# --- private names stay private ----------------------------------------------------------
# ruff's import-private-name (PLC2701, on for src/) skips imports inside one package, and
# every module here is in `graphlake`: this walk holds the rule between its modules. A
# name another module uses is public (no leading underscore) in the module defining it.
PRIVATE_ALLOWED: set[tuple[str, str]] = set()


def _module(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _private_uses(path: Path, root: Path, modules: set[str]) -> set[str]:
    """`module._name` for every private name `path` takes from another graphlake module:
    imported by name, or read off an imported module (`engine._finish`)."""
    me = _module(path, root)
    tree = ast.parse(path.read_text(), str(path))
    aliases: dict[str, str] = {}
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if not node.module.startswith("graphlake"):
                continue
            for a in node.names:
                full = f"{node.module}.{a.name}"
                if full in modules:
                    aliases[a.asname or a.name] = full
                elif a.name.startswith("_") and not a.name.startswith("__") and node.module != me:
                    found.add(full)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("graphlake") and a.asname:
                    aliases[a.asname] = a.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module = aliases.get(node.value.id)
            private = node.attr.startswith("_") and not node.attr.startswith("__")
            if module is not None and module != me and private:
                found.add(f"{module}.{node.attr}")
    return found


def test_no_module_uses_another_modules_private_names() -> None:
    files = sorted(ROOT.rglob("*.py"))
    modules = {_module(p, ROOT) for p in files}
    used = {(_module(p, ROOT), name) for p in files for name in _private_uses(p, ROOT, modules)}
    assert used - PRIVATE_ALLOWED == set()


def test_the_private_check_sees_both_forms(tmp_path: Path) -> None:
    pkg = tmp_path / "graphlake"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "sub" / "helper.py").write_text("def _hidden(): ...\n_LIMIT = 3\n")
    user = pkg / "user.py"
    user.write_text(
        "from graphlake.sub import helper\n"
        "from graphlake.sub.helper import _LIMIT\n"
        "def f():\n    return helper._hidden(), _LIMIT\n"
    )
    modules = {"graphlake.sub.helper", "graphlake.user"}
    assert _private_uses(user, pkg, modules) == {
        "graphlake.sub.helper._hidden",
        "graphlake.sub.helper._LIMIT",
    }
    # A module may use its own private names.
    own = pkg / "sub" / "helper.py"
    assert _private_uses(own, pkg, modules) == set()


# --- imports inside functions say why --------------------------------------------------
# An import in a function body hides a dependency from the top of the module; each one
# carries a comment (on its line or the line above: start-up time, a lazy name).
UNEXPLAINED_ALLOWED: set[str] = set()


def _unexplained_deferred_imports(path: Path) -> list[int]:
    text = path.read_text()
    lines = text.splitlines()
    found: set[int] = set()
    for fn in ast.walk(ast.parse(text, str(path))):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Import | ast.ImportFrom):
                span = lines[node.lineno - 1 : node.end_lineno]
                above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
                if not any("#" in ln for ln in span) and not above.startswith("#"):
                    found.add(node.lineno)
    return sorted(found)


def test_every_import_inside_a_function_says_why() -> None:
    unexplained = {
        str(p.relative_to(ROOT)): lines
        for p in sorted(ROOT.rglob("*.py"))
        if str(p.relative_to(ROOT)) not in UNEXPLAINED_ALLOWED
        and (lines := _unexplained_deferred_imports(p))
    }
    assert unexplained == {}


def test_the_deferred_check_sees_an_unexplained_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "def f():\n    import json\n\n"
        "def g():\n    # start-up time\n    import csv\n\n"
        "def h():\n    import re  # start-up time\n"
    )
    assert _unexplained_deferred_imports(probe) == [2]
