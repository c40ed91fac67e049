"""Sharded ingest: N workers load disjoint slices of the input into their own branches,
then one `merge_many` joins them (insert-only shards by zero-copy adoption).

    from graphlake.ingest import ingest
    result = ingest(graph, "data/", table="Doc", workers=4)

Ray is optional (`pip install graphlake[ray]`) and only imported for `engine="ray"`.
"""

from graphlake.ingest.errors import IngestError
from graphlake.ingest.orchestrator import ingest
from graphlake.ingest.result import IngestResult

__all__ = ["IngestError", "IngestResult", "ingest"]
