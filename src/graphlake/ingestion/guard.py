"""The missing `if __name__ == "__main__":` guard, told in one line instead of a crash.

Worker processes are spawned (lance is not fork-safe), and a spawned process first
imports the caller's main script. A script that calls `gl.ingest` at module level, without
the guard, calls it again in every worker while that worker is still starting; Python
then kills the worker, and the orchestrator would only see a dead process. So an ingest
called in a worker that is still importing the main module leaves a marker for its
parent (named by the parent's pid) and raises; the parent turns the marker into
`MainGuardError`, whose message says what to add.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import tempfile
from pathlib import Path

from graphlake.ingestion.errors import IngestError

ADVICE = (
    "gl.ingest ran again in a spawned worker process, which re-imports your main "
    'script: put the script\'s ingest code under `if __name__ == "__main__":`'
)


class MainGuardError(IngestError):
    """The caller's main script lacks `if __name__ == "__main__":` around `gl.ingest`."""


def _marker(parent_pid: int) -> Path:
    return Path(tempfile.gettempdir()) / f"graphlake-ingest-noguard-{parent_pid}"


def refuse_in_spawned_bootstrap() -> None:
    """Raise `MainGuardError` (and leave the marker) when called while this process is a
    spawned child still importing the main module (what multiprocessing itself checks)."""
    if not getattr(multiprocessing.current_process(), "_inheriting", False):
        return
    # `multiprocessing.parent_process()` is not set yet while the main module is imported;
    # the orchestrator spawned this process itself, so it is the OS parent.
    with contextlib.suppress(OSError):
        _marker(os.getppid()).touch()
    raise MainGuardError(ADVICE)


def marker_left() -> bool:
    """Whether a worker of this process hit the missing guard."""
    return _marker(os.getpid()).exists()


def clear_marker() -> None:
    _marker(os.getpid()).unlink(missing_ok=True)
