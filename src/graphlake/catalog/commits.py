"""Immutable, content-addressed commits of the whole graph.

A commit pins the exact physical state of every table (a Lance branch and a version on
it) plus the schema, and names its parents. Its id is a hash of its content, so a commit
object can be written with a plain conditional create and cached forever.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from graphlake.catalog.authors import Author, current_author
from graphlake.catalog.names import validate_identifier
from graphlake.catalog.store import ObjectStore
from graphlake.errors import (
    CommitNotFoundError,
    GraphLakeError,
    InvalidAuthorError,
    InvalidNameError,
)

__all__ = [
    "COMMIT_ID_LENGTH",
    "Commit",
    "CommitStore",
    "TableEffect",
    "TableState",
    "bounded_effects",
    "format_time",
    "is_commit_id",
    "utc_now",
]

COMMIT_ID_LENGTH = 40
MIN_PREFIX_LENGTH = 7
# Bumped if the serialised form ever changes; it is part of the hashed content, so two
# formats can never produce the same id.
_FORMAT = 1
_COMMIT_ID_RE = re.compile(r"[0-9a-f]{40}")
_HEX_RE = re.compile(r"[0-9a-f]+")
_COMMITS_DIR = "_graphlake/commits"


def is_commit_id(value: object) -> bool:
    """True for a full commit id: 40 lower-case hex characters."""
    return isinstance(value, str) and _COMMIT_ID_RE.fullmatch(value) is not None


def format_time(moment: datetime) -> str:
    """Fixed-width ISO-8601 UTC (`2025-01-02T03:04:05.123456Z`): sorts as it orders."""
    if moment.tzinfo is None:
        # A naive time is taken to be UTC already; converting it as local time would make
        # the same call give different ids on differently configured machines.
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def utc_now() -> str:
    return format_time(datetime.now(UTC))


def _normalise_time(value: str | datetime | None) -> str:
    if value is None:
        return utc_now()
    if isinstance(value, datetime):
        return format_time(value)
    try:
        return format_time(datetime.fromisoformat(value))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"commit time {value!r} is not an ISO-8601 timestamp") from exc


def _freeze(value: Any) -> Any:
    """Deep read-only copy of JSON data (commits are cached and shared)."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


def _json_default(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _canonical(obj: Any) -> bytes:
    """The one byte string a JSON value hashes as: sorted keys, no spaces, UTF-8."""
    text = json.dumps(
        obj,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        default=_json_default,
    )
    return text.encode("utf-8")


@dataclass(frozen=True)
class TableState:
    """Exact physical state of one table.

    `lance_branch` is a Lance branch name (`"main"` for Lance's main branch) and `version`
    a version on it; versions repeat across Lance branches, so only the pair identifies a
    state. `owner` is the graph-branch incarnation allowed to append to that Lance branch;
    any other branch must fork before writing.
    """

    table_id: str
    lance_branch: str
    version: int
    owner: str

    def __post_init__(self) -> None:
        validate_identifier(self.table_id, "table id")
        if not isinstance(self.lance_branch, str) or not self.lance_branch:
            raise ValueError(f"lance_branch must be a non-empty string: {self.lance_branch!r}")
        # bool is an int subclass; a True version is a bug, not version 1.
        if isinstance(self.version, bool) or not isinstance(self.version, int):
            raise ValueError(f"version must be an int: {self.version!r}")
        if self.version < 0:
            raise ValueError(f"version must not be negative: {self.version}")
        if not isinstance(self.owner, str) or not self.owner:
            raise ValueError(f"owner must be a non-empty string: {self.owner!r}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "table_id": self.table_id,
            "lance_branch": self.lance_branch,
            "version": self.version,
            "owner": self.owner,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TableState:
        return cls(
            table_id=data["table_id"],
            lance_branch=data["lance_branch"],
            version=data["version"],
            owner=data["owner"],
        )


# The deleted keys a commit records per table (`TableEffect.deleted`), at most this many
# for one table and this many characters of keys for the whole commit; beyond either
# bound the table records only the count, and the change feed reads that commit by
# lineage (`timeline/batch.py`).
EFFECT_KEYS_PER_TABLE = 256
EFFECT_KEY_CHARS = 16_384


@dataclass(frozen=True)
class TableEffect:
    """What a write commit did to one table's rows, recorded at publish time (the
    change feed's batched path reads it: `timeline/batch.py`).

    `written` rows were appended (inserts and the new images of updates; an update also
    removes the key's old row, so it needs no further record); `deleted_count` keys were
    deleted outright, and `deleted` names them, sorted (None when there were more than
    the record holds: `EFFECT_KEYS_PER_TABLE`, `EFFECT_KEY_CHARS`)."""

    written: int
    deleted_count: int
    deleted: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        for n in (self.written, self.deleted_count):
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise ValueError(f"effect counts must be non-negative ints: {n!r}")
        if self.deleted is not None and (
            len(self.deleted) != self.deleted_count
            or not all(isinstance(k, str) for k in self.deleted)
        ):
            raise ValueError(f"deleted keys do not match their count {self.deleted_count}")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"written": self.written, "deleted_count": self.deleted_count}
        if self.deleted is not None:
            out["deleted"] = list(self.deleted)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TableEffect:
        keys = data.get("deleted")
        if keys is not None and not isinstance(keys, list):
            raise ValueError(f"deleted keys must be a list: {keys!r}")
        return cls(
            written=data["written"],
            deleted_count=data["deleted_count"],
            deleted=None if keys is None else tuple(keys),
        )


def bounded_effects(
    tables: Mapping[str, tuple[int, Sequence[str] | int]],
) -> dict[str, TableEffect]:
    """Effects from table name -> (rows written, deleted keys or only their count),
    keeping the keys of a table only within the bounds (`EFFECT_KEYS_PER_TABLE` per
    table, `EFFECT_KEY_CHARS` for the commit, tables in name order)."""
    out: dict[str, TableEffect] = {}
    chars = 0
    for name in sorted(tables):
        written, deleted = tables[name]
        if isinstance(deleted, int):
            out[name] = TableEffect(written, deleted)
            continue
        size = sum(len(k) for k in deleted)
        if len(deleted) <= EFFECT_KEYS_PER_TABLE and chars + size <= EFFECT_KEY_CHARS:
            chars += size
            out[name] = TableEffect(written, len(deleted), tuple(sorted(deleted)))
        else:
            out[name] = TableEffect(written, len(deleted))
    return out


def _content(
    parents: tuple[str, ...],
    message: str,
    time: str,
    schema_id: str,
    tables: Mapping[str, TableState],
    meta: Mapping[str, Any],
    author: Author | None,
    checks_id: str | None = None,
    effects: Mapping[str, TableEffect] | None = None,
) -> dict[str, Any]:
    """Everything a commit id covers. `author`, `checks_id` and `effects` are covered
    only when there is one, so commits written before authors (or data checks, or
    recorded effects) existed keep their ids."""
    content: dict[str, Any] = {
        "format": _FORMAT,
        "parents": list(parents),
        "message": message,
        "time": time,
        "schema_id": schema_id,
        "tables": {name: state.to_dict() for name, state in tables.items()},
        "meta": meta,
    }
    if author is not None:
        content["author"] = author.to_dict()
    if checks_id is not None:
        content["checks_id"] = checks_id
    if effects is not None:
        content["effects"] = {name: e.to_dict() for name, e in sorted(effects.items())}
    return content


def _compute_id(content: Mapping[str, Any]) -> str:
    return hashlib.sha256(_canonical(content)).hexdigest()[:COMMIT_ID_LENGTH]


@dataclass(frozen=True)
class Commit:
    """One immutable graph commit. Build with `Commit.create`, which computes `id`.

    `tables` and `meta` are read-only mappings (commits are cached and shared between
    callers); copy them with `dict(...)` to derive a new commit. `parents[0]` is the
    commit the branch was at; further parents are merged-in heads. `author` is who made
    it (None for commits written before authors were recorded: shown as `unknown`).
    `checks_id` names the data checks in force at it (storage/data_checks.py; None:
    none), carried forward by every commit like `schema_id`. `effects` is what a write
    commit did to each table it changed (`TableEffect`, table name -> effect; a revert or
    cherry-pick records them too when it applied plans of rows only, merge/effects.py
    `row_effects`; None: not recorded, as for merges, schema changes, optimize and every
    commit written before effects were recorded); never carried forward.
    """

    id: str
    parents: tuple[str, ...]
    message: str
    time: str
    schema_id: str
    tables: Mapping[str, TableState] = field(repr=False)
    meta: Mapping[str, Any] = field(repr=False)
    author: Author | None = None
    checks_id: str | None = None
    effects: Mapping[str, TableEffect] | None = field(default=None, repr=False)

    @property
    def author_text(self) -> str:
        """`Name <email>`, `Name`, or `unknown` for a commit without an author."""
        return str(self.author) if self.author is not None else "unknown"

    def __hash__(self) -> int:
        # The id already is a hash of everything else (and the mappings are unhashable).
        return hash(self.id)

    def __reduce__(self) -> tuple[Any, tuple[bytes]]:
        # Read-only mappings do not pickle; the JSON form does (and is verified on load).
        return (Commit.from_json, (self.to_json(),))

    @classmethod
    def create(
        cls,
        parents: Sequence[str],
        message: str,
        schema_id: str,
        tables: Mapping[str, TableState],
        meta: Mapping[str, Any] | None = None,
        time: str | datetime | None = None,
        author: Author | None = None,
        checks_id: str | None = None,
        effects: Mapping[str, TableEffect] | None = None,
    ) -> Commit:
        """Build a commit; the id is the first 40 hex chars of sha256(canonical JSON).

        `author` defaults to `current_author()` (see catalog/authors.py); `checks_id`
        names the commit's data checks (None: it has none); `effects` what it did to the
        rows of each table it changed (None: not recorded)."""
        parent_ids = tuple(parents)
        for parent in parent_ids:
            if not is_commit_id(parent):
                raise ValueError(f"parent {parent!r} is not a commit id")
        if len(set(parent_ids)) != len(parent_ids):
            raise ValueError(f"duplicate parents: {parent_ids}")
        if not isinstance(message, str) or not isinstance(schema_id, str):
            raise ValueError("message and schema_id must be strings")
        for name, state in tables.items():
            if not isinstance(name, str) or not name or not isinstance(state, TableState):
                raise ValueError(f"tables must map names to TableState: {name!r}")
        # Round-trip meta through JSON so a created commit equals its own reloaded copy
        # (tuples become lists, keys become strings) and non-JSON values fail here.
        plain_meta = json.loads(_canonical(dict(meta or {})))
        stamp = _normalise_time(time)
        who = author if author is not None else current_author()
        if not isinstance(who, Author):
            raise ValueError(f"author must be an Author: {who!r}")
        if checks_id is not None and not isinstance(checks_id, str):
            raise ValueError(f"checks_id must be a string: {checks_id!r}")
        if effects is not None:
            for name, effect in effects.items():
                if name not in tables or not isinstance(effect, TableEffect):
                    raise ValueError(f"effects must map table names to TableEffect: {name!r}")
        content = _content(
            parent_ids, message, stamp, schema_id, tables, plain_meta, who, checks_id, effects
        )
        return cls._build(
            _compute_id(content),
            parent_ids,
            message,
            stamp,
            schema_id,
            tables,
            plain_meta,
            who,
            checks_id,
            effects,
        )

    @classmethod
    def _build(
        cls,
        commit_id: str,
        parents: tuple[str, ...],
        message: str,
        time: str,
        schema_id: str,
        tables: Mapping[str, TableState],
        meta: Mapping[str, Any],
        author: Author | None,
        checks_id: str | None = None,
        effects: Mapping[str, TableEffect] | None = None,
    ) -> Commit:
        frozen_tables = MappingProxyType(dict(sorted(tables.items())))
        frozen_effects = (
            None if effects is None else MappingProxyType(dict(sorted(effects.items())))
        )
        return cls(
            commit_id,
            parents,
            message,
            time,
            schema_id,
            frozen_tables,
            _freeze(meta),
            author,
            checks_id,
            frozen_effects,
        )

    def to_json(self) -> bytes:
        content = _content(
            self.parents,
            self.message,
            self.time,
            self.schema_id,
            self.tables,
            self.meta,
            self.author,
            self.checks_id,
            self.effects,
        )
        return _canonical({**content, "id": self.id})

    @classmethod
    def from_json(cls, data: bytes, expected_id: str | None = None) -> Commit:
        """Parse and verify a stored commit: its content must hash to its id."""
        label = expected_id or "?"
        try:
            obj = json.loads(data)
            if obj.get("format") != _FORMAT:
                raise ValueError(f"unknown format {obj.get('format')!r}")
            tables = {name: TableState.from_dict(t) for name, t in obj["tables"].items()}
            parents = tuple(obj["parents"])
            author = Author.from_dict(obj["author"]) if "author" in obj else None
            checks_id = obj.get("checks_id")
            if checks_id is not None and not isinstance(checks_id, str):
                raise ValueError(f"checks_id {checks_id!r} is not a string")
            raw_effects = obj.get("effects")
            effects = (
                None
                if raw_effects is None
                else {name: TableEffect.from_dict(e) for name, e in raw_effects.items()}
            )
            if effects is not None and not set(effects) <= set(tables):
                raise ValueError("effects name a table the commit lacks")
            content = _content(
                parents,
                obj["message"],
                obj["time"],
                obj["schema_id"],
                tables,
                obj["meta"],
                author,
                checks_id,
                effects,
            )
            stored_id = obj["id"]
        except (
            ValueError,
            KeyError,
            TypeError,
            AttributeError,
            InvalidNameError,
            InvalidAuthorError,
        ) as exc:
            raise GraphLakeError(f"commit {label} is corrupt: {exc}") from exc
        actual = _compute_id(content)
        if stored_id != actual or (expected_id is not None and expected_id != actual):
            raise GraphLakeError(
                f"commit {label} is corrupt: its content hashes to {actual}, "
                f"but it is stored as {stored_id}"
            )
        return cls._build(
            actual,
            parents,
            obj["message"],
            obj["time"],
            obj["schema_id"],
            tables,
            obj["meta"],
            author,
            checks_id,
            effects,
        )


class CommitStore:
    """Commits under `_graphlake/commits/<id[:2]>/<id>.json`, with an in-memory LRU.

    Commits never change once written, so cached copies never go stale.
    """

    def __init__(self, store: ObjectStore, cache_size: int = 10_000) -> None:
        self._store = store
        self._cache: OrderedDict[str, Commit] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    @property
    def store(self) -> ObjectStore:
        return self._store

    @staticmethod
    def key(commit_id: str) -> str:
        return f"{_COMMITS_DIR}/{commit_id[:2]}/{commit_id}.json"

    # --- cache -------------------------------------------------------------------------

    def _cached(self, commit_id: str) -> Commit | None:
        with self._lock:
            commit = self._cache.get(commit_id)
            if commit is not None:
                self._cache.move_to_end(commit_id)
            return commit

    def _remember(self, commit: Commit) -> None:
        with self._lock:
            self._cache[commit.id] = commit
            self._cache.move_to_end(commit.id)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)

    # --- API ---------------------------------------------------------------------------

    def put(self, commit: Commit) -> None:
        """Store a commit. Storing one that exists already is a no-op (same id, same content)."""
        data = commit.to_json()
        if not self._store.create(self.key(commit.id), data):
            existing = self._store.get(self.key(commit.id))
            if existing is None:
                # Created and removed in between: not something graphlake ever does.
                raise GraphLakeError(f"commit {commit.id} vanished while being written")
            # Verifies the existing object; a valid one has exactly our content.
            Commit.from_json(existing, expected_id=commit.id)
        self._remember(commit)

    def get(self, commit_id: str) -> Commit:
        """The commit with this id (or unique id prefix of at least 7 hex characters)."""
        full_id = self.resolve(commit_id)
        cached = self._cached(full_id)
        if cached is not None:
            return cached
        data = self._store.get(self.key(full_id))
        if data is None:
            raise CommitNotFoundError(f"no commit {full_id}")
        commit = Commit.from_json(data, expected_id=full_id)
        self._remember(commit)
        return commit

    def get_many(self, commit_ids: Iterable[str]) -> list[Commit]:
        """Several commits, fetched concurrently (one round trip of latency on S3)."""
        ids = list(commit_ids)
        missing = [cid for cid in dict.fromkeys(ids) if self._cached(cid) is None]
        if len(missing) > 1:
            with ThreadPoolExecutor(max_workers=min(16, len(missing))) as pool:
                list(pool.map(self.get, missing))
        return [self.get(cid) for cid in ids]

    def exists(self, commit_id: str) -> bool:
        if not is_commit_id(commit_id):
            return False
        return self._cached(commit_id) is not None or self._store.exists(self.key(commit_id))

    def resolve(self, commit_id: str) -> str:
        """Full id for a full id or a unique prefix (>= 7 hex chars); else CommitNotFoundError.

        A full id is returned without checking that the commit exists.
        """
        if is_commit_id(commit_id):
            return commit_id
        if (
            not isinstance(commit_id, str)
            or not MIN_PREFIX_LENGTH <= len(commit_id) < COMMIT_ID_LENGTH
            or not _HEX_RE.fullmatch(commit_id)
        ):
            raise CommitNotFoundError(
                f"{commit_id!r} is not a commit id (40 hex characters, or a unique prefix "
                f"of at least {MIN_PREFIX_LENGTH})"
            )
        matches = self.matching(commit_id)
        if not matches:
            raise CommitNotFoundError(f"no commit {commit_id}")
        if len(matches) > 1:
            raise CommitNotFoundError(
                f"commit prefix {commit_id} is ambiguous: {', '.join(m[:12] for m in matches)}"
            )
        return matches[0]

    def matching(self, prefix: str) -> list[str]:
        """Full ids of the stored commits that start with `prefix` (>= 2 hex chars), sorted."""
        keys = self._store.list(f"{_COMMITS_DIR}/{prefix[:2]}")
        names = [k.rsplit("/", 1)[-1].removesuffix(".json") for k in keys]
        return sorted(n for n in names if n.startswith(prefix) and is_commit_id(n))


def changes_schema(commits: CommitStore, commit: Commit) -> bool:
    """Whether `commit` changed the schema (what `graphlake log` marks `[schema]` and the
    web UI tags): an `apply_schema` commit says so in its meta; a merge, which may bring a
    schema change, is compared with its first parent."""
    if "schema_change" in commit.meta:
        return True
    if len(commit.parents) < 2:
        return False
    return commits.get(commit.parents[0]).schema_id != commit.schema_id
