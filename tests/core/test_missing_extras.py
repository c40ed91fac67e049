"""Without its extra, each optional integration fails with its typed error, and only there.

One fresh interpreter (`extras_absent_probe.py`) hides every extra's packages behind a
meta-path wrapper, as a bare `pip install graphlake` would leave them, then imports
graphlake and its public entry points, uses the core, and calls each extra's entry
point. A module-level import of an extra anywhere on those paths (it happened once)
turns `import graphlake` or an unrelated call into a bare ModuleNotFoundError; these
tests fail then. The tests read the probe's one report.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

PROBE = Path(__file__).with_name("extras_absent_probe.py")
ROOT = Path(__file__).resolve().parents[2]

# (extra, entry point as the probe names it, the error class expected)
USES = [
    ("torch", "to_torch", "MissingExtraError"),
    ("ray", "to_ray", "MissingExtraError"),
    ("ray", "ingest", "IngestError"),  # gl.ingest(engine="ray"): the ingest error type
    ("hf", "to_hf", "MissingExtraError"),
    ("polars", "to_polars", "MissingExtraError"),
    ("algo", "pagerank", "MissingExtraError"),
    ("algo", "louvain", "MissingExtraError"),  # NetworKit's PLM
    ("server", "import", "MissingExtraError"),  # import graphlake.server
    ("server", "cli", "SystemExit"),  # `graphlake serve ROOT`: exit 1 and the message
]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    workdir = tmp_path_factory.mktemp("bare")
    out = subprocess.run(
        [sys.executable, str(PROBE), str(workdir)], capture_output=True, text=True, timeout=180
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _hidden() -> dict[str, tuple[str, ...]]:
    finders = list(sys.meta_path)
    sys.path.insert(0, str(PROBE.parent))
    try:
        from extras_absent_probe import HIDDEN  # the probe's table, read without running it
    finally:
        sys.path.remove(str(PROBE.parent))
    # Importing the probe must hide nothing here: it once did, and every later test in
    # this worker lost jinja2, datasets and ray (ModuleNotFoundError far from here).
    assert sys.meta_path == finders, "importing the probe changed this process's imports"
    return HIDDEN


def test_the_probe_hides_every_extra_of_pyproject() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = set(extras["optional-dependencies"]) - {"dev"}
    assert set(_hidden()) == declared
    assert {extra for extra, _, _ in USES} | {"pandas"} == declared  # pandas: core below


def test_graphlake_and_its_public_entry_points_import(report: dict[str, Any]) -> None:
    assert report["already_imported"] == []  # the hiding was in place before any import
    assert report["imports"]["raised"] is None, report["imports"].get("trace")


def test_the_core_works_without_any_extra(report: dict[str, Any]) -> None:
    # init, write dicts, nodes, SQL, a leased scan: no pandas, no reader, no server
    assert report["core"]["raised"] is None, report["core"].get("trace")
    assert report["core"]["asked"] == []


@pytest.mark.parametrize(("extra", "use", "error"), USES, ids=[f"{e}-{u}" for e, u, _ in USES])
def test_using_an_extra_without_it_names_the_pip_install(
    report: dict[str, Any], extra: str, use: str, error: str
) -> None:
    got = report["uses"][extra][use]
    assert got["raised"] == error, got.get("trace")
    if error != "SystemExit":
        assert "GraphLakeError" in got["mro"]
    else:
        assert got["message"].startswith("exit 1: error: graphlake serve:")
    assert f"pip install 'graphlake[{extra}]'" in got["message"]
    # It asked for its own extra's packages and no other extra's.
    assert got["asked"] and set(got["asked"]) <= set(_hidden()[extra])


def test_a_failed_reader_leaves_no_lease(report: dict[str, Any]) -> None:
    assert report["leases_left"] == []
