"""Running the `graphlake` CLI as a real subprocess, shared by the CLI tests.

Each run costs about a second of interpreter and library start-up, so independent
commands run side by side (`run_all`) and setup that is not under test uses the library.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

SCHEMA = """
node Person { name: String @key  age: I32?  embedding: Vector(2)? }
node Company { name: String @key }
edge Knows: Person -> Person { since: Date? }
edge WorksAt: Person -> Company @card(0..1)
"""
RECORDS = [
    {"type": "Person", "data": {"name": "Alice", "age": 30, "embedding": [0.5, 1.0]}},
    {"type": "Person", "data": {"name": "Bob", "age": 40}},
    {"type": "Person", "data": {"name": "Carol"}},
    {"type": "Company", "data": {"name": "Acme"}},
    {"edge": "Knows", "from": "Alice", "to": "Bob", "data": {"since": "2020-05-01"}},
    {"edge": "WorksAt", "from": "Alice", "to": "Acme"},
]
_TERMINAL_VARS = ("TTY_COMPATIBLE", "TTY_INTERACTIVE", "FORCE_COLOR")

Proc = subprocess.CompletedProcess[str]


def run(*args: object, env: dict[str, str] | None = None) -> Proc:
    # A wide, colourless, non-terminal console keeps rich's tables on one line per row.
    full_env = {k: v for k, v in os.environ.items() if k not in _TERMINAL_VARS}
    full_env.update({"COLUMNS": "200", "NO_COLOR": "1", **(env or {})})
    return subprocess.run(
        [sys.executable, "-m", "graphlake.cli.app", *map(str, args)],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=120,
    )


def concurrently(*calls: Callable[[], Proc]) -> list[Proc]:
    """Independent runs, side by side; results in order."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(lambda call: call(), calls))


def run_all(*commands: tuple[object, ...], env: dict[str, str] | None = None) -> list[Proc]:
    return concurrently(*(partial(run, *args, env=env) for args in commands))


def stdout(proc: Proc) -> str:
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def parsed(proc: Proc, code: int = 0) -> Any:
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    return json.loads(proc.stdout)


def error(proc: Proc, code: int = 1) -> str:
    """The failure policy: exit `code` (1; 2 for merge), exactly one `error: ...` line on
    stderr, no traceback."""
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


def ok(*args: object) -> str:
    return stdout(run(*args))


def as_json(*args: object) -> Any:
    return parsed(run(*args, "--json"))


def failed(*args: object) -> str:
    return error(run(*args))


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path
