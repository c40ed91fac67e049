"""graphlake: a versioned, branchable property-graph store on Lance, with branch merge."""

import importlib
from typing import TYPE_CHECKING, Any

from graphlake.errors import (
    AlgorithmError,
    AlgorithmMemoryError,
    BranchExistsError,
    BranchNotFoundError,
    CardinalityError,
    CommitNotFoundError,
    ConcurrentWriteError,
    DataError,
    DuplicateKeyError,
    GraphExistsError,
    GraphLakeError,
    InvalidNameError,
    KeyNotFoundError,
    LineageMismatchError,
    LoadFormatError,
    MergeConflictError,
    MergeError,
    MergeMemoryError,
    MissingEndpointError,
    NodeHasEdgesError,
    NotAGraphError,
    NullValueError,
    QueryError,
    QueryTimeoutError,
    QueryTooLargeError,
    SchemaError,
    StaleReadError,
    TypeMismatchError,
    UniqueViolationError,
    UnknownPropertyError,
    UnknownTableError,
    ValueConstraintError,
)

if TYPE_CHECKING:
    from graphlake.graph import Graph
    from graphlake.ingestion import IngestError, IngestResult, abort_ingest, ingest
    from graphlake.merge.conflicts import Conflict
    from graphlake.merge.diff import TableDiff
    from graphlake.merge.result import MergeResult
    from graphlake.read.blobs import BlobRef, read_blobs

__version__ = "0.1.0"

# The public names below are imported on first use (PEP 562), so `import graphlake` (and
# so every `graphlake` command) does not pay for Lance, pyarrow.dataset, DuckDB or pandas
# until it needs them. The errors above are light and imported eagerly.
_LAZY = {
    "Graph": "graphlake.graph",
    "IngestError": "graphlake.ingestion",
    "IngestResult": "graphlake.ingestion",
    "ingest": "graphlake.ingestion",
    "abort_ingest": "graphlake.ingestion",
    "Conflict": "graphlake.merge.conflicts",
    "TableDiff": "graphlake.merge.diff",
    "MergeResult": "graphlake.merge.result",
    "BlobRef": "graphlake.read.blobs",
    "read_blobs": "graphlake.read.blobs",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'graphlake' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "AlgorithmError",
    "AlgorithmMemoryError",
    "BlobRef",
    "BranchExistsError",
    "BranchNotFoundError",
    "CardinalityError",
    "CommitNotFoundError",
    "ConcurrentWriteError",
    "Conflict",
    "DataError",
    "DuplicateKeyError",
    "Graph",
    "GraphExistsError",
    "GraphLakeError",
    "IngestError",
    "IngestResult",
    "InvalidNameError",
    "KeyNotFoundError",
    "LineageMismatchError",
    "LoadFormatError",
    "MergeConflictError",
    "MergeError",
    "MergeMemoryError",
    "MergeResult",
    "MissingEndpointError",
    "NodeHasEdgesError",
    "NotAGraphError",
    "NullValueError",
    "QueryError",
    "QueryTimeoutError",
    "QueryTooLargeError",
    "SchemaError",
    "StaleReadError",
    "TableDiff",
    "TypeMismatchError",
    "UniqueViolationError",
    "UnknownPropertyError",
    "UnknownTableError",
    "ValueConstraintError",
    "__version__",
    "abort_ingest",
    "ingest",
    "read_blobs",
]
