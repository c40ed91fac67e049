"""What `gc` removed (or, in a dry run, would remove)."""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class TableGc:
    """One table's share: Lance versions (manifests), files (data, deletion, index and
    transaction files) and their bytes, and whole Lance branches."""

    table: str
    table_id: str
    versions: int = 0
    files: int = 0
    bytes: int = 0
    lance_branches: list[str] = field(default_factory=list)


@dataclass
class GcReport:
    dry_run: bool
    cutoff: dt.datetime | None = None  # nothing modified at or after this was touched
    tables: list[TableGc] = field(default_factory=list)
    commit_objects: int = 0
    commit_bytes: int = 0
    claims: int = 0
    # persisted adjacencies (graphlake.adjacency.persist) no live branch head's states
    adjacencies: int = 0
    adjacency_bytes: int = 0
    warnings: list[str] = field(default_factory=list)

    @property
    def versions(self) -> int:
        return sum(t.versions for t in self.tables)

    @property
    def files(self) -> int:
        return sum(t.files for t in self.tables)

    @property
    def bytes(self) -> int:
        return sum(t.bytes for t in self.tables) + self.commit_bytes

    @property
    def lance_branches(self) -> int:
        return sum(len(t.lance_branches) for t in self.tables)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "cutoff": self.cutoff.isoformat() if self.cutoff else None,
            "versions": self.versions,
            "files": self.files,
            "bytes": self.bytes,
            "lance_branches": self.lance_branches,
            "commit_objects": self.commit_objects,
            "claims": self.claims,
            "adjacencies": self.adjacencies,
            "adjacency_bytes": self.adjacency_bytes,
            "tables": [asdict(t) for t in self.tables],
            "warnings": list(self.warnings),
        }
