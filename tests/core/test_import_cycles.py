"""No circle of imports among graphlake's modules.

In a circle (a imports b and b imports a, directly or through other modules) neither
module can be read, tested or moved without the other. The layer contracts in
`pyproject.toml` keep the packages apart; this test keeps the modules apart, inside a
package too. The import graph is grimp's (what import-linter reads), and it counts every
import statement in the code:

- module-level imports, imports in function bodies and imports under
  `if TYPE_CHECKING:`. A deferred import still ties two modules together (the function
  needs the other module to be read, and loaded to run), and moving an import into a
  function to hide a circle is exactly what this rule is against; the imports deferred
  for start-up time point down, so they close no circle. A circle of type hints is a
  circle for the reader all the same.
- `from graphlake.pkg import name` imports the package's `__init__`: a submodule that
  takes a name from its own package while the `__init__` imports that submodule is a
  circle.

Not counted: the parent packages Python runs before a submodule (importing
`graphlake.read.scan` runs `graphlake/read/__init__.py` first; that is how packages
load, not a dependency the code states), and modules loaded by name at run time
(`importlib.import_module`: `graphlake`'s lazy public names, the worker entry points of
`isolation.py`), which no import statement names.

A circle is broken by moving the piece both modules need into the one below
(docs/architecture.md, "The layers"). import-linter's `acyclic_siblings` contract is not
used instead: it does not see the `__init__` kind of circle (it compares a package's
children only), and it would also forbid circles between sibling subpackages whose
modules form none.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import grimp
import pytest


def circles(package: str) -> list[str]:
    """Each group of `package`'s modules that import one another in a circle (a strongly
    connected component of the import graph, found once), described as its members and
    the shortest circle through its first module, each import with its line."""
    graph = grimp.build_graph(package, cache_dir=None)
    seen: set[str] = set()
    found: list[str] = []
    for module in sorted(graph.modules):
        if module in seen:
            continue
        # What `module` imports, transitively, that also imports it: the rest of its group.
        group = graph.find_upstream_modules(module) & graph.find_downstream_modules(module)
        if not group:
            continue
        seen |= group
        chains = [
            graph.find_shortest_chain(importer=imported, imported=module)
            for imported in sorted(graph.find_modules_directly_imported_by(module) & group)
        ]
        circle = [module, *min((c for c in chains if c), key=len)]
        steps = [
            f"  {a} -> {b} ("
            + "; ".join(
                f"line {d['line_number']}: {d['line_contents']}"
                for d in graph.get_import_details(importer=a, imported=b)
            )
            + ")"
            for a, b in pairwise(circle)
        ]
        members = ", ".join(sorted({module, *group}))
        found.append(f"a circle of {len(group) + 1} modules ({members}):\n" + "\n".join(steps))
    return found


def test_no_module_of_graphlake_imports_in_a_circle() -> None:
    found = circles("graphlake")
    assert not found, "modules that import each other:\n" + "\n".join(found)


PROBE = {
    "__init__.py": "from circles_probe.core import THING\n",
    "core.py": "import json\n\nTHING = json.dumps(1)\n",
    # Down only, deferred: no circle.
    "top.py": "def f():\n    from circles_probe import core\n\n    return core\n",
    # A circle closed by an import in a function body.
    "high.py": "import circles_probe.low\n",
    "low.py": "def f():\n    from circles_probe import high\n\n    return high\n",
    # A circle of type hints.
    "a.py": (
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
        "    from circles_probe.b import B\n\n\nclass A:\n    b: B\n"
    ),
    "b.py": "from circles_probe.a import A\n\n\nclass B(A):\n    pass\n",
    # A submodule taking a name from its own package, whose __init__ imports it.
    "sub/__init__.py": "from circles_probe.sub.x import X\n\nHELP = 1\n",
    "sub/x.py": "from circles_probe.sub import HELP\n\nX = HELP\n",
    # A submodule of a package that imports it, importing nothing back: no circle
    # (Python runs deep/__init__.py before deep.leaf; that is not counted).
    "deep/__init__.py": "from circles_probe.deep.leaf import LEAF\n",
    "deep/leaf.py": "from circles_probe.core import THING\n\nLEAF = THING\n",
}


def test_the_check_finds_each_kind_of_circle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, text in PROBE.items():
        path = tmp_path / "circles_probe" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    found = circles("circles_probe")
    assert [f.splitlines()[0] for f in found] == [
        "a circle of 2 modules (circles_probe.a, circles_probe.b):",
        "a circle of 2 modules (circles_probe.high, circles_probe.low):",
        "a circle of 2 modules (circles_probe.sub, circles_probe.sub.x):",
    ]
    # Each import of the circle is named with its line.
    assert found[1].splitlines()[1:] == [
        "  circles_probe.high -> circles_probe.low (line 1: import circles_probe.low)",
        "  circles_probe.low -> circles_probe.high (line 2: from circles_probe import high)",
    ]
    assert "line 4: from circles_probe.b import B" in found[0]
