"""Queries from the command line that stop on time and on Ctrl-C.

`interruptible(work, timeout_s)` runs `work()` in a thread while the main thread waits in
short steps, so Ctrl-C (SIGINT) is handled within a second even while DuckDB or Lance run
native code that does not look at signals: the command prints one line, `interrupted`,
and exits with 130 (128 + SIGINT) at once, without waiting for that code. `timeout_s` is
the library's time limit of the query; should the query not have stopped _GRACE_S after
it (a Lance lookup cannot be interrupted; the grace covers opening the graph and the
imports before the library's clock starts), the command reports the timeout itself and
exits at once (exit 1).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Annotated, TypeVar

import typer

from graphlake.cli.output import EXIT_FAILED, fail
from graphlake.errors import QueryTimeoutError

T = TypeVar("T")

EXIT_INTERRUPTED = 130
_STEP_S = 0.1
_GRACE_S = 5.0

Timeout = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=0.001,
        help="Stop the query after this many seconds (default: the library's, 60).",
    ),
]


def interruptible(work: Callable[[], T], timeout_s: float) -> T:
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # handed to the main thread
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True, name="graphlake-cli-query")
    deadline = time.monotonic() + timeout_s + _GRACE_S
    try:
        thread.start()
        while thread.is_alive():
            thread.join(_STEP_S)
            if thread.is_alive() and time.monotonic() > deadline:
                fail(
                    QueryTimeoutError(
                        f"the query timed out after {timeout_s:g} s (the limit --timeout); "
                        f"narrow it or raise --timeout"
                    )
                )
                sys.stderr.flush()
                os._exit(EXIT_FAILED)  # the native query thread cannot be joined
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.stderr.flush()
        os._exit(EXIT_INTERRUPTED)  # native query threads cannot be joined in time
    error = box.get("error")
    if isinstance(error, QueryTimeoutError):
        raise _cli_words(error) from None
    if isinstance(error, BaseException):
        raise error
    return box["value"]  # type: ignore[return-value]


def _cli_words(exc: QueryTimeoutError) -> QueryTimeoutError:
    return QueryTimeoutError(str(exc).replace("timeout_s", "--timeout"))
