"""Start-up cost: heavy modules are imported only where a command needs them.

Each check runs in a fresh interpreter (this test process has imported everything
already) and looks at `sys.modules`: what was imported, not how long it took, so the
tests do not depend on the machine's load. `bench/cli.py` measures the times.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import graphlake as gl

# Lance pulls in pyarrow.dataset, which imports pandas when installed (~0.5 s together);
# igraph is imported only when a graph algorithm runs (graphlake.algo).
HEAVY = ("lance", "duckdb", "pyarrow.dataset", "pandas", "igraph")
# The CLI's --help and --version need none of the data stack.
CLI_HEAVY = (*HEAVY, "pyarrow", "lark", "fastapi", "uvicorn", "ray", "numpy")


def _imported_after(code: str, watch: tuple[str, ...]) -> list[str]:
    """Run `code` in a fresh interpreter; the modules of `watch` it left imported."""
    script = textwrap.dedent(code) + textwrap.dedent(f"""
        import json, sys
        print(json.dumps([m for m in {list(watch)!r} if m in sys.modules]))
    """)
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_graphlake_imports_no_heavy_module() -> None:
    assert _imported_after("import graphlake", HEAVY) == []


def test_public_names_still_resolve_and_import_on_use() -> None:
    code = """
        import sys
        import graphlake as gl
        from graphlake import Conflict, IngestError, IngestResult, MergeResult, TableDiff
        assert gl.ingest.__name__ == "run_ingest"
        assert "Graph" in dir(gl) and gl.Graph.__name__ == "Graph"
    """
    # Using `ingest` and `TableDiff` needs Lance; the import happens then, not before.
    assert "lance" in _imported_after(code, HEAVY)
    assert set(gl.__all__) <= set(dir(gl))


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        gl.no_such_name  # noqa: B018
    assert not hasattr(gl, "no_such_name")


def test_cli_app_imports_no_data_stack() -> None:
    """What `graphlake --help` and `--version` load: typer, rich and the catalog."""
    assert _imported_after("import graphlake.cli.app", CLI_HEAVY) == []


def test_version_answers_before_the_cli_is_imported() -> None:
    """The script's entry point prints `--version` without typer, rich or the commands."""
    code = """
        import sys
        sys.argv = ["graphlake", "--version"]
        from graphlake.cli.entry import main
        main()
    """
    out = _imported_after(code, ("typer", "rich", "graphlake.cli.app", *CLI_HEAVY))
    assert out == []
    proc = subprocess.run(
        [sys.executable, "-m", "graphlake.cli.entry", "--version"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.stdout == f"graphlake {gl.__version__}\n", proc.stderr


@pytest.mark.slow  # over 10 s: outside `make test-fast`
def test_server_starts_without_the_data_stack_and_warms_it_up(
    tmp_path: Path, schema_text: str
) -> None:
    """`graphlake serve` answers /health before pyarrow, Lance and DuckDB are loaded; its
    start-up then imports them in the background (so a data request need not wait)."""
    pytest.importorskip("fastapi")
    assert _imported_after("import graphlake.server, uvicorn", (*HEAVY, "pyarrow")) == []
    root = tmp_path / "g"
    gl.Graph.init(root, schema_text)
    code = f"""
        import threading
        from fastapi.testclient import TestClient
        from graphlake.server import ServerConfig, create_app
        app = create_app({str(root)!r}, ServerConfig(no_auth=True))
        with TestClient(app) as client:
            assert client.get("/health").status_code == 200
            for t in threading.enumerate():
                if t.name == "graphlake-warm-up":
                    t.join()
    """
    assert "lance" in _imported_after(code, HEAVY)


@pytest.mark.parametrize(
    "argv",
    [
        ["log", "{root}"],
        ["log", "{root}", "--branch", "dev", "--json"],
        ["branch", "list", "{root}"],
    ],
)
def test_log_and_branch_list_read_only_the_catalog(
    tmp_path: Path, schema_text: str, argv: list[str]
) -> None:
    root = tmp_path / "g"
    g = gl.Graph.init(root, schema_text)
    g.load([{"type": "Person", "data": {"name": "ada"}}])
    g.create_branch("dev")
    args = [a.format(root=root) for a in argv]
    code = f"""
        from graphlake.cli.app import app
        try:
            app({args!r}, prog_name="graphlake")
        except SystemExit as exc:
            assert exc.code in (0, None), exc.code
    """
    assert _imported_after(code, (*HEAVY, "lark")) == []
