"""graphlake: a versioned, branchable property-graph store on Lance, with branch merge."""

# `ingest` is the package `graphlake.ingest`, which is callable: `gl.ingest(graph, ...)`
# runs an ingest and `graphlake.ingest.worker` stays reachable as a module.
import graphlake.ingest as ingest
from graphlake.errors import (
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
    SchemaError,
    StaleReadError,
    TypeMismatchError,
    UniqueViolationError,
    UnknownPropertyError,
    UnknownTableError,
    ValueConstraintError,
)
from graphlake.graph import Graph
from graphlake.ingest import IngestError, IngestResult
from graphlake.merge.conflicts import Conflict
from graphlake.merge.diff import TableDiff
from graphlake.merge.result import MergeResult

__version__ = "0.1.0"

__all__ = [
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
    "SchemaError",
    "StaleReadError",
    "TableDiff",
    "TypeMismatchError",
    "UniqueViolationError",
    "UnknownPropertyError",
    "UnknownTableError",
    "ValueConstraintError",
    "__version__",
    "ingest",
]
