"""Scratch scope of a dry run: what it needs written is kept out of the graph root, or
removed from it when the dry run ends.

A dry-run merge across schemas evolves tables to the merged layout on forks it owns, and
names the merged schema, so it can classify the rows as the real merge would. Inside
`with repo.tables.dry_run_scope():` (`TableStore.dry_run_scope`, which enters `scope()`)

- schemas are not stored (`SchemaStore.put`): the text is kept in memory, by its id;
- version claims of the scope's own forks (`TableStore.cas_lock`) are kept in memory:
  no other writer ever sees those Lance branches, so there is nothing to arbitrate;
- the Lance branches the scope forks (`TableStore.fork`) are recorded and deleted when
  the scope ends, whether the dry run returned or raised. Lance writes a branch's
  manifests and data under the table's dataset (`tree/<branch>/`), so these live in the
  root while the dry run runs; nothing else reads them (their names are fresh), and a
  process killed meanwhile leaves them as any unpublished work is left, for `gc`.

So a dry run (a merge preview) leaves no file in the root. The scope is a context
variable: it covers the calling thread only, which is where merges fork and evolve. This
module holds the scope alone (what it owns and claims); the table store, the schema store
and the data checks store read it, and the table store deletes the scope's forks.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass
class Scratch:
    forks: list[tuple[str, str]] = field(default_factory=list)  # (table id, Lance branch)
    claims: set[tuple[str, str, int]] = field(default_factory=set)

    def owns(self, table_id: str, lance_branch: str) -> bool:
        return (table_id, lance_branch) in self.forks

    def claim(self, table_id: str, lance_branch: str, version: int) -> bool:
        key = (table_id, lance_branch, version)
        if key in self.claims:
            return False
        self.claims.add(key)
        return True


_current: ContextVar[Scratch | None] = ContextVar("graphlake_scratch", default=None)


def current() -> Scratch | None:
    """The scratch scope the calling thread is in, if any."""
    return _current.get()


@contextmanager
def scope() -> Iterator[Scratch]:
    """The calling thread in a new scratch scope until the block ends (deleting what the
    scope forked is the table store's: `TableStore.dry_run_scope`)."""
    entered = Scratch()
    token = _current.set(entered)
    try:
        yield entered
    finally:
        _current.reset(token)
