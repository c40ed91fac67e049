"""The Makefile's install logic: `make demo` installs the core and server extras only,
`make test` the test tooling, Ray and the readers' extras as well, each extras set has
its own stamp, and a newer pyproject.toml installs again. Run against a fake `python3`
whose venv tools only log their arguments, so nothing is downloaded."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FAKE_PYTHON = """#!/bin/sh
# python3 -m venv DIR: a venv whose tools append their name and arguments to ./log
[ "$1" = "-m" ] && [ "$2" = venv ] || exit 9
mkdir -p "$3/bin"
for t in pip graphlake ruff lint-imports mypy mkdocs pytest python; do
  printf '#!/bin/sh\\necho "%s $*" >> "%s/log"\\n' "$t" "$PWD" > "$3/bin/$t"
  chmod +x "$3/bin/$t"
done
echo "venv $3" >> log
"""

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    fake = tmp_path / "fakepy"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    return tmp_path


def make(checkout: Path, *args: str) -> list[str]:
    """Run make; the tool calls it made, one per line (the log is emptied)."""
    subprocess.run(
        ["make", "-s", "PYTHON=./fakepy", *args],
        cwd=checkout,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    log = checkout / "log"
    lines = log.read_text().splitlines() if log.exists() else []
    log.write_text("")
    return lines


def installs(lines: list[str]) -> list[str]:
    return [
        ln.removeprefix("pip install --quiet -e ")
        for ln in lines
        if ln.startswith("pip install --quiet -e ")
    ]


def test_demo_installs_core_and_server_only_then_test_adds_the_rest(checkout: Path) -> None:
    first = make(checkout, "demo")
    assert first[0] == "venv .venv"
    assert installs(first) == [".[server]"]
    assert first[-1] == "graphlake demo demo-graph --fresh"
    assert installs(make(checkout, "demo")) == []  # up to date: no install
    test = make(checkout, "test")
    assert installs(test) == [".[dev,server,ray,torch,hf,polars,algo]"]
    assert "venv .venv" not in test  # the venv is reused
    assert test[-6:] == [
        "ruff check src tests bench",
        "ruff format --check --quiet src tests bench docs/hooks.py",
        "lint-imports --no-cache",
        "mypy ",  # no arguments: [tool.mypy] in pyproject.toml names the files
        "mkdocs build --strict --quiet -d site",
        "pytest -q -n 4 --dist loadfile --durations=30",
    ]
    assert installs(make(checkout, "test")) == []
    assert installs(make(checkout, "demo")) == []  # its stamp is still current


def test_a_newer_pyproject_or_other_extras_install_again(checkout: Path) -> None:
    make(checkout, "demo")
    pyproject = checkout / "pyproject.toml"
    later = pyproject.stat().st_mtime + 10
    os.utime(pyproject, (later, later))
    assert installs(make(checkout, "demo")) == [".[server]"]
    assert installs(make(checkout, "demo", "DEMO_EXTRAS=server,pandas")) == [".[server,pandas]"]
