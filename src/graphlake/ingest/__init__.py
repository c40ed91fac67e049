"""Sharded ingest: N workers load disjoint slices of the input into their own branches,
then one `merge_many` joins them (insert-only shards by zero-copy adoption).

    import graphlake as gl
    result = gl.ingest(graph, "data/", table="Doc", workers=4)

Ray is optional (`pip install graphlake[ray]`) and only imported for `engine="ray"`.

`graphlake.ingest` is this package, and calling it runs `run_ingest`: the public
`gl.ingest(...)` must keep working, and binding the function to `graphlake.ingest`
instead would shadow the package, so that `import graphlake.ingest.worker as w` (and any
`graphlake.ingest.<module>` attribute path) failed. The package is made callable rather
than renamed so both names keep their meaning.
"""

from __future__ import annotations

import inspect
import sys
import types
from typing import Any

from graphlake.ingest.errors import IngestError
from graphlake.ingest.orchestrator import run_ingest
from graphlake.ingest.result import IngestResult

ingest = run_ingest  # `from graphlake.ingest import ingest` names the function

__all__ = ["IngestError", "IngestResult", "ingest", "run_ingest"]


class _CallablePackage(types.ModuleType):
    """A module type whose instances, called, run an ingest (`gl.ingest(graph, ...)`)."""

    def __call__(self, *args: Any, **kwargs: Any) -> IngestResult:
        return run_ingest(*args, **kwargs)


__signature__ = inspect.signature(run_ingest)  # help() and IDEs show the real parameters
sys.modules[__name__].__class__ = _CallablePackage
