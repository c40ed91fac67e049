"""One table's sweep on Lance: remove the Lance versions and branches no kept commit needs.

Lance facts this relies on (pylance 14.0.2, measured; see the substrate notes):

* `cleanup_old_versions(versions=[...])` on a branch's head removes exactly those versions
  of that branch (never the head, never a version a child branch forked from) and the
  files only they referenced, in that branch's own directory. It does remove a branch's
  own copy of its fork version (its first version), which `ds.delta(begin=fork)` on the
  branch needs: lineage (`storage.lineage`) starts every segment on a branch there, so
  that version is kept for every branch on a pinned state's path to Lance main.
  Cleanup does not know that another branch reads a file through a base registered by
  zero-copy adoption: cleaning an adopted source branch's old versions deletes files the
  target still reads. So every candidate is checked against the files the kept
  manifests of *all* branches reference.
* `explain_cleanup_old_versions` lists the same candidates without deleting (the dry run,
  and the check above). With `delete_unverified=True` it also lists files no manifest
  references (a crashed or lost-race writer's data); those are removed here, by key,
  only when older than the cutoff (Lance's own rule is "older than 7 days", and its
  `unverified` flag then also marks young files of removed versions: not a guide).
* `branches.delete` removes `tree/<branch>` at once, refuses while a child branch forked
  from it exists, and does not check adopted bases: a branch is deleted only when no kept
  manifest references a file in its directory.
* `versions()` timestamps are naive local times.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import lance

from graphlake.catalog.commits import TableState
from graphlake.catalog.store import ObjectInfo
from graphlake.maintenance.report import TableGc
from graphlake.storage.tables import MAIN

if TYPE_CHECKING:
    from graphlake.repo import Repo

_MAX_EXPLAINED_FILES = 10**9
_NARROWING_ROUNDS = 3


@dataclass
class _Branch:
    name: str
    head: lance.LanceDataset
    versions: dict[int, dt.datetime]
    parent: str | None
    created: dt.datetime
    fork: int | None = None  # the parent's version this branch forked from (its first)


@dataclass
class _Refs:
    """Files (paths relative to the table's directory) some manifests reference; index
    segments as directory prefixes ending in '/'."""

    files: set[str] = field(default_factory=set)
    prefixes: set[str] = field(default_factory=set)

    def update(self, other: _Refs) -> None:
        self.files |= other.files
        self.prefixes |= other.prefixes

    def covers(self, rel: str) -> bool:
        return rel in self.files or any(rel.startswith(p) for p in self.prefixes)

    def owners(self) -> set[str]:
        return {_owner(p) for p in (*self.files, *self.prefixes)}


class TableUnsafe(Exception):
    """The table cannot be swept safely (something it needs cannot be read)."""


class TableSweep:
    def __init__(
        self,
        repo: Repo,
        table_id: str,
        name: str,
        pinned: dict[str, set[int]],
        cutoff: dt.datetime,
        warnings: list[str],
    ) -> None:
        self.repo = repo
        self.table_id = table_id
        self.pinned = pinned
        self.cutoff = cutoff
        self.warnings = warnings
        self.report = TableGc(table=name, table_id=table_id)
        self._marker = f"{table_id}.lance"
        self._prefix = f"tables/{table_id}.lance"

    # --- entry point ------------------------------------------------------------------

    def run(self, dry_run: bool) -> TableGc:
        try:
            self._run(dry_run)
        except TableUnsafe as exc:
            self.warnings.append(f"table {self.report.table}: skipped ({exc})")
        return self.report

    def _run(self, dry_run: bool) -> None:
        uri = self.repo.tables.uri(self.table_id)
        try:
            root = lance.dataset(uri, storage_options=self.repo.tables.storage_options)
        except (OSError, ValueError, RuntimeError) as exc:
            raise TableUnsafe(f"cannot open it: {exc}") from None
        branches = self._branches(root)
        listing = {self._rel(info.key): info for info in self.repo.store.list_info(self._prefix)}
        kept_refs = self._pinned_refs(branches)
        doomed = self._doomed(branches, kept_refs, listing)
        for name in _leaves_first(doomed, branches):
            self._drop_branch(root, name, listing, dry_run)
        lineage = _lineage_branches(set(self.pinned), branches)
        for name in sorted(set(branches) - doomed):
            b = branches[name]
            keep = {b.fork} if name in lineage and b.fork is not None else set()
            self._clean_branch(b, kept_refs, listing, dry_run, keep)

    # --- reading the table ------------------------------------------------------------

    def _branches(self, root: lance.LanceDataset) -> dict[str, _Branch]:
        try:
            listed = root.branches.list()
            out = {MAIN: self._branch(MAIN, root, None, _EPOCH)}
            for name, info in listed.items():
                head = root.checkout_version((name, None))
                created = dt.datetime.fromtimestamp(int(info.get("create_at") or 0), dt.UTC)
                out[name] = self._branch(name, head, info.get("parent_branch") or MAIN, created)
                out[name].fork = int(info["parent_version"])
        except (OSError, ValueError, RuntimeError) as exc:
            raise TableUnsafe(f"cannot read its Lance branches: {exc}") from None
        missing = sorted(set(self.pinned) - set(out))
        if missing:
            raise TableUnsafe(f"pinned Lance branches are missing: {', '.join(missing)}")
        return out

    @staticmethod
    def _branch(
        name: str, head: lance.LanceDataset, parent: str | None, created: dt.datetime
    ) -> _Branch:
        versions = {int(v["version"]): _utc(v["timestamp"]) for v in head.versions()}
        return _Branch(name, head, versions, parent, created)

    def _pinned_refs(self, branches: dict[str, _Branch]) -> _Refs:
        refs = _Refs()
        for lance_branch, versions in self.pinned.items():
            for version in versions:
                state = TableState(self.table_id, lance_branch, version, "gc")
                try:
                    ds = self.repo.tables.open(state)
                except (OSError, ValueError, RuntimeError) as exc:
                    raise TableUnsafe(
                        f"pinned version {version} of Lance branch {lance_branch} cannot be "
                        f"opened: {exc}"
                    ) from None
                refs.update(self._refs(ds, lance_branch))
        return refs

    def _refs(self, ds: lance.LanceDataset, lance_branch: str) -> _Refs:
        """Every file one manifest references, wherever it lives (own dir, a parent's
        through the fork base, an adopted source's through its base)."""
        own = "" if lance_branch == MAIN else f"tree/{lance_branch}"
        bases: dict[int, tuple[str | None, bool]] = {
            bid: (self._rel_or_none(str(b.path)), bool(b.is_dataset_root))
            for bid, b in ds.base_paths().items()
        }
        refs = _Refs()

        def where(base_id: Any) -> tuple[str | None, bool]:
            return (own, True) if base_id is None else bases.get(base_id, (None, True))

        for frag in ds.get_fragments():
            meta = frag.metadata.to_json()
            for f in meta["files"]:
                d, is_root = where(f.get("base_id"))
                if d is not None:
                    refs.files.add(_join(d, "data", f["path"]) if is_root else _join(d, f["path"]))
            deletion = meta.get("deletion_file")
            if deletion:
                d, _ = where(deletion.get("base_id"))
                ext = "arrow" if deletion.get("file_type") == "array" else "bin"
                name = f"{meta['id']}-{deletion['read_version']}-{deletion['id']}.{ext}"
                if d is not None:
                    refs.files.add(_join(d, "_deletions", name))
        for index in ds.describe_indices():
            for segment in index.segments:
                d, _ = where(segment.base_id)
                if d is not None:
                    refs.prefixes.add(_join(d, "_indices", str(segment.uuid)) + "/")
        return refs

    # --- whole branches ---------------------------------------------------------------

    def _doomed(
        self, branches: dict[str, _Branch], kept: _Refs, listing: dict[str, ObjectInfo]
    ) -> set[str]:
        """Lance branches nothing kept uses: no pinned version, nothing newer than the
        cutoff, no surviving child, no file a kept manifest (pinned versions and the
        heads of surviving branches, which Lance always keeps) reads."""
        doomed = {
            name
            for name, b in branches.items()
            if name != MAIN and not self.pinned.get(name) and self._all_old(b, listing)
        }
        head_refs: dict[str, _Refs] = {}
        while True:
            live = set(branches) - doomed
            needed = kept.owners()
            for name in live:
                if name not in head_refs:
                    head_refs[name] = self._refs(branches[name].head, name)
                needed |= head_refs[name].owners()
                needed.add(branches[name].parent or MAIN)
            rescued = doomed & needed
            if not rescued:
                return doomed
            doomed -= rescued

    def _all_old(self, b: _Branch, listing: dict[str, ObjectInfo]) -> bool:
        if b.created >= self.cutoff or any(t >= self.cutoff for t in b.versions.values()):
            return False
        prefix = f"tree/{b.name}/"
        return all(i.modified < self.cutoff for r, i in listing.items() if r.startswith(prefix))

    def _drop_branch(
        self, root: lance.LanceDataset, name: str, listing: dict[str, ObjectInfo], dry_run: bool
    ) -> None:
        prefix = f"tree/{name}/"
        mine = [(r, i) for r, i in listing.items() if r.startswith(prefix)]
        if not dry_run:
            try:
                root.branches.delete(name)
            except (OSError, ValueError, RuntimeError) as exc:
                self.warnings.append(
                    f"table {self.report.table}: Lance branch {name} not deleted: {exc}"
                )
                return
        self.report.lance_branches.append(name)
        for rel, info in mine:
            self.report.bytes += info.size
            if _is_manifest(rel):
                self.report.versions += 1
            elif not rel.startswith(f"{prefix}_versions/"):
                self.report.files += 1

    # --- versions of kept branches ----------------------------------------------------

    def _clean_branch(
        self,
        b: _Branch,
        kept: _Refs,
        listing: dict[str, ObjectInfo],
        dry_run: bool,
        keep: set[int],
    ) -> None:
        head = b.head.version
        pinned = self.pinned.get(b.name, set()) | keep
        removable = sorted(
            v for v, t in b.versions.items() if v != head and v not in pinned and t < self.cutoff
        )
        # What `cleanup_old_versions(versions=removable)` deletes (the `unverified` flag of
        # an explanation is no guide: with delete_unverified=True it marks young files
        # of removed versions too, so the two explanations are compared instead).
        verified: list[Any] = []
        stats = None
        for _ in range(_NARROWING_ROUNDS):
            if not removable:
                break
            explained = self._explain(b, removable, delete_unverified=False)
            verified, stats = list(explained.candidate_files), explained.stats
            clash = {r for c in verified if kept.covers(r := self._rel(c.path))}
            if not clash:
                break
            # A version of this branch still holds a file another branch reads through
            # an adopted base: keep every version that references such a file.
            holding = {
                v
                for v in removable
                if self._refs(b.head.checkout_version((b.name, v)), b.name).files & clash
            }
            removable = [v for v in removable if v not in holding] if holding else []
        if removable and any(kept.covers(self._rel(c.path)) for c in verified):
            removable = []
        if removable and any(
            (i := listing.get(self._rel(c.path))) is not None and i.modified >= self.cutoff
            for c in verified
        ):
            # Lance would also remove files newer than the cutoff (its own rule removes
            # unreferenced files older than 7 days): leave this branch's versions for now.
            self.warnings.append(
                f"table {self.report.table}: Lance branch {b.name}: old versions kept "
                f"(their cleanup would remove files newer than the cutoff)"
            )
            removable = []
        if not removable:
            verified, stats = [], None
        # Files no manifest of this branch references: a crashed or lost-race writer's.
        everything = self._explain(b, removable or [head], delete_unverified=True)
        planned = {self._rel(c.path) for c in verified}
        orphans = [
            (rel, info)
            for c in everything.candidate_files
            if (rel := self._rel(c.path)) not in planned
            and (info := listing.get(rel)) is not None
            and info.modified < self.cutoff
            and not kept.covers(rel)
        ]
        if stats is not None:
            self.report.versions += stats.old_versions
        for c in verified:
            self.report.bytes += c.size_bytes
            if c.kind != "manifest":
                self.report.files += 1
        for _, info in orphans:
            self.report.bytes += info.size
            self.report.files += 1
        if dry_run:
            return
        if removable:
            done = b.head.cleanup_old_versions(
                versions=removable,
                delete_unverified=False,
                error_if_tagged_old_versions=False,
            )
            if done.failed_deletes:
                self.warnings.append(
                    f"table {self.report.table}: Lance branch {b.name}: "
                    f"{done.failed_deletes} files could not be deleted"
                )
        for rel, _ in orphans:
            self.repo.store.delete(f"{self._prefix}/{rel}")

    def _explain(self, b: _Branch, versions: list[int], *, delete_unverified: bool) -> Any:
        return b.head.explain_cleanup_old_versions(
            versions=versions,
            delete_unverified=delete_unverified,
            error_if_tagged_old_versions=False,
            include_files=True,
            max_files=_MAX_EXPLAINED_FILES,
        )

    # --- paths ------------------------------------------------------------------------

    def _rel_or_none(self, path: str) -> str | None:
        """`path` (a URI, a local path or an object-store path) relative to the table's
        directory, or None when it lies elsewhere."""
        at = path.find(self._marker)
        if at < 0:
            return None
        return path[at + len(self._marker) :].strip("/")

    def _rel(self, path: str) -> str:
        rel = self._rel_or_none(path)
        if rel is None:
            raise TableUnsafe(f"Lance named a file outside the table: {path}")
        return rel


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _utc(moment: dt.datetime | int) -> dt.datetime:
    # Lance reports naive local times (measured: TZ=America/New_York shifts them); its
    # `Version` type also allows the raw nanoseconds it converts them from.
    if isinstance(moment, int):
        return dt.datetime.fromtimestamp(moment / 1e9, dt.UTC)
    return moment.astimezone(dt.UTC)


def _join(*parts: str) -> str:
    return "/".join(p.strip("/") for p in parts if p)


def _owner(rel: str) -> str:
    """The Lance branch whose directory holds `rel`."""
    if rel.startswith("tree/"):
        return rel.split("/", 2)[1]
    return MAIN


def _is_manifest(rel: str) -> bool:
    return "/_versions/" in f"/{rel}" and rel.endswith(".manifest")


def _lineage_branches(pinned: set[str], branches: dict[str, _Branch]) -> set[str]:
    """Lance branches on the path from a pinned branch up to Lance main: the ones a
    lineage path between two pinned states can cross. Each such path enters a branch at
    its fork version (`ds.delta(begin=fork, ...)` on the branch, and deleted row ids are
    mapped to keys there), so that version of the branch must stay (the parent's copy of
    it Lance keeps by itself)."""
    out: set[str] = set()
    for name in pinned:
        while name in branches and name != MAIN and name not in out:
            out.add(name)
            name = branches[name].parent or MAIN
    return out


def _leaves_first(names: set[str], branches: dict[str, _Branch]) -> list[str]:
    """Children before parents: Lance refuses to delete a branch a child forked from."""

    def depth(name: str) -> int:
        d, seen = 0, set()
        while name in branches and branches[name].parent and name not in seen:
            seen.add(name)
            name = branches[name].parent or MAIN
            d += 1
        return d

    return sorted(names, key=lambda n: (-depth(n), n))
