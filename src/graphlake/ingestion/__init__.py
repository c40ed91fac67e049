"""Sharded ingest: N workers load disjoint slices of the input into their own branches,
then one `merge_many` joins them (insert-only shards by zero-copy adoption).

    import graphlake as gl
    result = gl.ingest(graph, "data/", table="Doc", workers=4)

Ray is optional (`pip install graphlake[ray]`) and only imported for `engine="ray"`.

The package is `graphlake.ingestion`, not `graphlake.ingest`: the public function
`gl.ingest` lives on the `graphlake` package, and a subpackage of the same name would be
bound over it by `import graphlake.ingest.<module>` (or shadow it, so that `import
graphlake.ingest.worker as w` failed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphlake.ingestion.errors import IngestError
from graphlake.ingestion.result import IngestResult

if TYPE_CHECKING:
    from graphlake.ingestion.abort import IngestRunActiveError, abort_ingest
    from graphlake.ingestion.orchestrator import run_ingest

    ingest = run_ingest


def __getattr__(name: str) -> Any:
    # The orchestrator (and with it Lance and DuckDB) is imported on first use, so
    # `graphlake ingest-status` and spawned workers, which import this package, do not
    # pay for it.
    if name in ("ingest", "run_ingest"):  # `gl.ingest`, re-exported by the graphlake package
        # a lazy name of the package, as above
        from graphlake.ingestion.orchestrator import run_ingest

        return run_ingest
    if name in ("abort_ingest", "IngestRunActiveError"):
        # a lazy name of the package, as above
        from graphlake.ingestion import abort

        return getattr(abort, name)
    raise AttributeError(f"module 'graphlake.ingestion' has no attribute {name!r}")


__all__ = [
    "IngestError",
    "IngestResult",
    "IngestRunActiveError",
    "abort_ingest",
    "ingest",
    "run_ingest",
]
