"""Run as a script by test_missing_extras.py: graphlake with no optional extra installed.

A meta-path wrapper hides every extra's packages (as if `pip install graphlake` alone
had run): their imports fail with ModuleNotFoundError and `importlib.util.find_spec`
answers None, as for a package that is not there. Then the script imports graphlake
and its public entry points, uses the core, and calls each extra's entry point, noting
what each raised and which hidden packages it asked for. It prints one JSON object.

    python extras_absent_probe.py WORKDIR
"""

from __future__ import annotations

import importlib
import json
import sys
import traceback
from collections.abc import Callable
from typing import Any

# extra (pyproject.toml) -> the packages it installs that nothing else does
HIDDEN = {
    "torch": ("torch",),
    "ray": ("ray",),
    "hf": ("datasets",),
    "polars": ("polars",),
    "algo": ("igraph", "networkit"),
    "server": ("fastapi", "uvicorn", "jinja2", "httpx"),
    "pandas": ("pandas",),
}
_OWNER = {pkg: extra for extra, pkgs in HIDDEN.items() for pkg in pkgs}
asked: list[str] = []  # hidden packages some import asked for, in order


class _Hiding:
    """Wraps one meta-path finder: hidden packages are not found; the rest as before."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        top = name.partition(".")[0]
        if top in _OWNER:
            asked.append(top)
            return None
        return self._inner.find_spec(name, path, target)

    def __getattr__(self, attr: str) -> Any:  # invalidate_caches, find_distributions, ...
        return getattr(self._inner, attr)


already: list[str] = []  # hidden packages imported before the finders went in


def hide() -> None:
    """Wrap every meta-path finder in `_Hiding`. Only when run as a script:
    test_missing_extras imports this module for `HIDDEN`, and that process must keep
    every package it has."""
    already[:] = sorted(m for m in sys.modules if m.partition(".")[0] in _OWNER)
    sys.meta_path[:] = [_Hiding(finder) for finder in sys.meta_path]


def attempt(fn: Callable[[], Any]) -> dict[str, Any]:
    """Run `fn`; what it raised (class names up its MRO, message) and what it asked for."""
    start = len(asked)
    out: dict[str, Any] = {"raised": None, "mro": [], "message": "", "asked": []}
    try:
        fn()
    except BaseException as exc:  # the test reads whatever came out
        out["raised"] = type(exc).__name__
        out["mro"] = [cls.__name__ for cls in type(exc).__mro__]
        out["message"] = str(exc)
        out["trace"] = traceback.format_exc(limit=4)
    out["asked"] = sorted(set(asked[start:]))
    return out


def main(workdir: str) -> dict[str, Any]:
    report: dict[str, Any] = {"already_imported": already}

    def public_imports() -> None:
        import graphlake as gl

        for name in gl.__all__:
            getattr(gl, name)
        for module in (
            "graphlake.errors",
            "graphlake.readers",
            "graphlake.readers.extras",
            "graphlake.read.scan",
            "graphlake.algo",
            "graphlake.ingestion",
            "graphlake.cli.app",
        ):
            importlib.import_module(module)

    report["imports"] = attempt(public_imports)

    import graphlake as gl

    root = f"{workdir}/g"
    schema = "node Person { name: String @key  age: I32? }\nedge Knows: Person -> Person"

    def core() -> None:
        g = gl.Graph.init(root, schema)
        with g.write(message="seed") as w:
            w.insert("Person", [{"name": "a", "age": 1}, {"name": "b"}])
            w.insert("Knows", [{"src": "a", "dst": "b"}])
        assert g.nodes("Person").num_rows == 2
        assert g.sql("SELECT count(*) AS n FROM Knows").column("n").to_pylist() == [2 - 1]
        with g.snapshot("main").scan("Person") as scan:
            assert scan.to_table().num_rows == 2

    report["core"] = attempt(core)
    g = gl.Graph.open(root)

    def serve_cli() -> None:
        from typer.testing import CliRunner

        from graphlake.cli.app import app

        result = CliRunner().invoke(app, ["serve", root])
        raise SystemExit(f"exit {result.exit_code}: {result.output.strip()}")

    def import_server() -> None:
        import graphlake.server  # noqa: F401

    report["uses"] = {
        "torch": {"to_torch": attempt(lambda: g.to_torch("Person"))},
        "ray": {
            "to_ray": attempt(lambda: g.to_ray("Person")),
            "ingest": attempt(lambda: gl.ingest(g, f"{workdir}/none.jsonl", engine="ray")),
        },
        "hf": {"to_hf": attempt(lambda: g.to_hf("Person"))},
        "polars": {"to_polars": attempt(lambda: g.to_polars("Person"))},
        "algo": {
            "pagerank": attempt(lambda: g.algo.pagerank("Knows")),
            "louvain": attempt(lambda: g.algo.louvain("Knows")),
        },
        "server": {"import": attempt(import_server), "cli": attempt(serve_cli)},
    }
    report["leases_left"] = g.repo.store.list("_graphlake/leases")
    return report


if __name__ == "__main__":
    hide()
    print(json.dumps(main(sys.argv[1])))
