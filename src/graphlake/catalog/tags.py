"""Tags: names that mark one commit forever (a release, a known-good state).

Layout under the graph root::

    _graphlake/tags/<encode_name(tag)>.json    {"name", "commit", "time", "author", "message"}

A tag is created with a conditional create, so of two writers creating the same tag at
once exactly one succeeds, and it never moves afterwards: creating an existing tag is a
`TagExistsError`. Only deleting it (an admin operation over HTTP) frees the name. Tags
and branches share one namespace (the same name rules, see names.py): the `Graph` refuses
a tag named like a live branch and a branch named like a tag. Everything a tag reaches is
kept by `gc`, and a tag is a revision wherever one is taken (a branch or tag name first,
then a commit id).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from graphlake.catalog.authors import Author, current_author
from graphlake.catalog.commits import is_commit_id, utc_now
from graphlake.catalog.names import decode_name, encode_name, validate_branch_name
from graphlake.catalog.permissions import check_branch
from graphlake.catalog.store import ObjectStore
from graphlake.errors import (
    GraphLakeError,
    InvalidAuthorError,
    InvalidNameError,
    TagExistsError,
    TagNotFoundError,
)

__all__ = ["MAX_TAG_MESSAGE", "TAGS_DIR", "Tag", "TagStore", "tags_by_commit", "validate_tag_name"]

_log = logging.getLogger(__name__)

TAGS_DIR = "_graphlake/tags"
MAX_TAG_MESSAGE = 10_000


def validate_tag_name(name: str) -> str:
    """A tag name follows the branch name rules; the error says "tag"."""
    try:
        return validate_branch_name(name)
    except InvalidNameError as exc:
        raise InvalidNameError(
            str(exc).replace("invalid branch name", "invalid tag name", 1)
        ) from None


@dataclass(frozen=True)
class Tag:
    name: str
    commit: str
    time: str
    author: Author | None = None
    message: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "commit": self.commit,
            "time": self.time,
            "author": str(self.author) if self.author else "unknown",
            "message": self.message,
        }


class TagStore:
    """The tags of one graph, stored in an `ObjectStore`."""

    def __init__(self, store: ObjectStore) -> None:
        self._store = store

    @staticmethod
    def key(name: str) -> str:
        return f"{TAGS_DIR}/{encode_name(validate_tag_name(name))}.json"

    def get(self, name: str) -> Tag | None:
        """The tag `name`, None if there is none (or `name` cannot be a tag)."""
        try:
            key = self.key(name)
        except InvalidNameError:
            return None
        data = self._store.get(key)
        return _parse(data, key) if data is not None else None

    def create(
        self, name: str, commit_id: str, message: str | None = None, author: Author | None = None
    ) -> Tag:
        """Create tag `name` at `commit_id`; `TagExistsError` if it exists already."""
        if not is_commit_id(commit_id):
            raise ValueError(f"{commit_id!r} is not a full commit id")
        if message is not None and (not isinstance(message, str) or len(message) > MAX_TAG_MESSAGE):
            raise GraphLakeError(
                f"a tag message is a string of at most {MAX_TAG_MESSAGE} characters"
            )
        check_branch(name, "create tag")
        tag = Tag(name, commit_id, utc_now(), author or current_author(), message)
        body = {**tag.to_dict(), "author": (tag.author.to_dict() if tag.author else None)}
        data = json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")
        key = self.key(name)
        if not self._store.create(key, data) and self._store.get(key) != data:
            existing = self.get(name)
            if existing is None or existing != tag:
                at = f" (at {existing.commit[:12]})" if existing else ""
                raise TagExistsError(
                    f"tag {name!r} exists already{at}: a tag never "
                    "moves; delete it first to reuse the name"
                )
        return tag

    def delete(self, name: str) -> Tag:
        """Remove tag `name` (its commits stay while anything else reaches them)."""
        check_branch(name, "delete tag")
        tag = self.get(name)
        if tag is None:
            raise TagNotFoundError(f"no tag {name!r}")
        self._store.delete(self.key(name))
        return tag

    def names(self) -> list[str]:
        """Every tag's name, sorted: one listing, no object read."""
        out: list[str] = []
        for key in self._store.list(TAGS_DIR):
            leaf = key.rsplit("/", 1)[-1]
            if not leaf.endswith(".json"):
                continue
            try:
                out.append(decode_name(leaf.removesuffix(".json")))
            except InvalidNameError:
                _log.warning("ignoring unexpected object %s", key)
        return sorted(out)

    def list(self) -> dict[str, Tag]:
        """Every tag, name -> tag, sorted by name."""
        out: dict[str, Tag] = {}
        for name in self.names():
            tag = self.get(name)
            if tag is not None:
                out[name] = tag
        return dict(sorted(out.items()))


def tags_by_commit(tags: dict[str, Tag]) -> dict[str, list[str]]:
    """commit id -> the names of the tags on it, sorted (what `log` decorates with)."""
    out: dict[str, list[str]] = {}
    for name, tag in sorted(tags.items()):
        out.setdefault(tag.commit, []).append(name)
    return out


def _parse(data: bytes, where: str) -> Tag:
    try:
        obj = json.loads(data)
        author = Author.from_dict(obj["author"]) if obj.get("author") else None
        tag = Tag(str(obj["name"]), obj["commit"], str(obj["time"]), author, obj.get("message"))
    except (ValueError, KeyError, TypeError, AttributeError, InvalidAuthorError) as exc:
        raise GraphLakeError(f"tag {where} is corrupt: {exc}") from exc
    if not is_commit_id(tag.commit):
        raise GraphLakeError(f"tag {where} is corrupt: bad commit {tag.commit!r}")
    return tag
