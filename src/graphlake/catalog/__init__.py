"""The control plane: commits and branch refs stored under the graph root.

Everything here is plain objects in an object store (local folder or S3); branches move
by conditional create, so no lock server is needed.
"""

from graphlake.catalog.commits import (
    Commit,
    CommitStore,
    TableState,
    format_time,
    is_commit_id,
    utc_now,
)
from graphlake.catalog.history import History, is_ancestor, log, merge_bases, merge_bases_many
from graphlake.catalog.names import (
    decode_name,
    encode_name,
    validate_branch_name,
    validate_identifier,
)
from graphlake.catalog.refs import RefEntry, RefStore
from graphlake.catalog.store import ObjectStore

__all__ = [
    "Commit",
    "CommitStore",
    "History",
    "ObjectStore",
    "RefEntry",
    "RefStore",
    "TableState",
    "decode_name",
    "encode_name",
    "format_time",
    "is_ancestor",
    "is_commit_id",
    "log",
    "merge_bases",
    "merge_bases_many",
    "utc_now",
    "validate_branch_name",
    "validate_identifier",
]
