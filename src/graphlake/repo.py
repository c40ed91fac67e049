"""`Repo`: the storage context of one graph root, which every layer below `Graph` takes.

A `Repo` holds what a graph root *is*: its object store, commit objects, branch refs,
history, revision resolver, the schemas its commits name and its Lance tables. It knows
nothing of writing, merging or reading rows: `write/`, `merge/`, `read/`, `recovery/` and
`maintenance/` take a `Repo` (or a part of it) and `graph.py`, the public facade, opens
one and calls down. Nothing below `graph.py` imports `Graph`, not even for types.

The schema is a property of a commit, not of the repo: `schema_at` / `schemas.of(commit)`
give the schema a commit was written under.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING

from graphlake.catalog.commits import Commit, CommitStore
from graphlake.catalog.history import History
from graphlake.catalog.names import validate_branch_name
from graphlake.catalog.refs import RefEntry, RefStore
from graphlake.catalog.revisions import Resolver
from graphlake.catalog.store import ObjectStore
from graphlake.catalog.tags import TagStore
from graphlake.errors import InvalidNameError
from graphlake.storage import layout
from graphlake.storage.data_checks import DataCheckStore
from graphlake.storage.schemas import SchemaStore

# Lance loads with the first table access, not here: `graphlake log` and `branch list`
# read only the catalog (README "Start-up time").
if TYPE_CHECKING:
    from graphlake.schema.model import Schema
    from graphlake.storage.tables import TableStore


class Repo:
    """The object store, catalog, schemas and Lance tables under one root URI."""

    def __init__(
        self,
        uri: str | os.PathLike[str],
        storage_options: dict[str, str] | None,
        *,
        info: layout.GraphInfo | None = None,
    ) -> None:
        self.uri = str(uri)
        self.storage_options = storage_options
        self.store = ObjectStore(self.uri, storage_options)
        self.commits = CommitStore(self.store)
        self.refs = RefStore(self.store)
        self.history = History(self.commits)
        self.tags = TagStore(self.store)
        self.revisions = Resolver(self.refs, self.commits, self.history, self.tags)
        self.info = info or layout.read_info(self.store)
        self.schemas = SchemaStore(self.store)
        self.data_checks = DataCheckStore(self.store)

    # Built on first use, so commands that read only the catalog never import Lance.
    @functools.cached_property
    def tables(self) -> TableStore:
        # on first use only: loads lance, pyarrow, numpy (start-up time)
        from graphlake.storage.tables import TableStore

        return TableStore(self.store.uri_for(""), self.store, self.storage_options)

    def resolve(self, revision: str) -> Commit:
        """The commit a revision names (a branch, a commit id or prefix, `~N`/`^N`)."""
        return self.revisions.commit(revision)

    def schema_at(self, revision: str) -> Schema:
        """The schema in force at a revision."""
        return self.schemas.of(self.resolve(revision))

    def branch_ref(self, branch: str) -> RefEntry:
        """The ref of a branch that writing needs (a commit revision is refused)."""
        try:
            ref = self.refs.head(validate_branch_name(branch))
        except InvalidNameError:
            ref = None  # `branch_error` tells a commit revision from a malformed name
        if ref is None or ref.commit is None:
            raise self.revisions.branch_error(branch)
        return ref

    def branch_head(self, branch: str) -> tuple[RefEntry, Commit]:
        """A branch's ref and the commit it points at, read together."""
        ref = self.branch_ref(branch)
        assert ref.commit is not None
        return ref, self.commits.get(ref.commit)

    def head(self, branch: str) -> Commit:
        return self.branch_head(branch)[1]
