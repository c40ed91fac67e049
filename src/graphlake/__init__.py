"""graphlake: a versioned, branchable property-graph store on Lance, with branch merge."""

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
    LoadFormatError,
    MergeConflictError,
    MergeError,
    MissingEndpointError,
    NodeHasEdgesError,
    NotAGraphError,
    NullValueError,
    QueryError,
    SchemaError,
    TypeMismatchError,
    UniqueViolationError,
    UnknownPropertyError,
    UnknownTableError,
    ValueConstraintError,
)
from graphlake.graph import Graph
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
    "InvalidNameError",
    "KeyNotFoundError",
    "LoadFormatError",
    "MergeConflictError",
    "MergeError",
    "MergeResult",
    "MissingEndpointError",
    "NodeHasEdgesError",
    "NotAGraphError",
    "NullValueError",
    "QueryError",
    "SchemaError",
    "TableDiff",
    "TypeMismatchError",
    "UniqueViolationError",
    "UnknownPropertyError",
    "UnknownTableError",
    "ValueConstraintError",
    "__version__",
]
