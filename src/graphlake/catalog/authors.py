"""Who made a commit: the `Author` every new commit records, and where it comes from.

An author is a name and an optional email (`Ada <ada@example.org>` or just `ada`). It is
part of a commit's hashed content; commits written before authors existed have none and
read as `unknown` (their ids are unchanged: the field is hashed only when present).

Every call that commits takes `author=`; without one the author is, in order:

1. the author the caller's context is acting as (`acting_as`, set by `Graph` methods
   around the publication they make, and by the server for the token's name);
2. `$GRAPHLAKE_AUTHOR`;
3. `author` in `$XDG_CONFIG_HOME/graphlake/config.toml` (default `~/.config/...`);
4. the OS user name.

The context is a `contextvars.ContextVar`, so concurrent requests on a server (threads)
each commit under their own author.
"""

from __future__ import annotations

import contextlib
import contextvars
import getpass
import os
import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphlake.errors import InvalidAuthorError

__all__ = [
    "AUTHOR_ENV",
    "MAX_AUTHOR_LENGTH",
    "UNKNOWN",
    "Author",
    "acting_as",
    "config_path",
    "current_author",
    "default_author",
    "parse_author",
]

AUTHOR_ENV = "GRAPHLAKE_AUTHOR"
UNKNOWN = "unknown"
MAX_AUTHOR_LENGTH = 200
_WITH_EMAIL = re.compile(r"(?P<name>[^<>]*?)\s*<(?P<email>[^<>\s]+)>")

_acting: contextvars.ContextVar[Author | None] = contextvars.ContextVar(
    "graphlake_author", default=None
)


@dataclass(frozen=True)
class Author:
    """A commit's author: `name` (non-empty, one line) and an optional `email`."""

    name: str
    email: str | None = None

    def __post_init__(self) -> None:
        _check_part("name", self.name)
        if self.email is not None:
            _check_part("email", self.email)

    def to_dict(self) -> dict[str, str]:
        return (
            {"name": self.name} if self.email is None else {"name": self.name, "email": self.email}
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Author:
        return cls(data["name"], data.get("email"))

    def __str__(self) -> str:
        return self.name if self.email is None else f"{self.name} <{self.email}>"


def _check_part(label: str, value: object) -> None:
    if not isinstance(value, str) or not value.strip():
        raise InvalidAuthorError(
            f"invalid author {label} {value!r}: it must be a non-empty "
            "string (write an author as 'Name <email>' or 'Name')"
        )
    if len(value) > MAX_AUTHOR_LENGTH or not value.isprintable() or "<" in value or ">" in value:
        raise InvalidAuthorError(
            f"invalid author {label} {value!r}: one printable line of at most "
            f"{MAX_AUTHOR_LENGTH} characters, without '<' or '>'"
        )


def parse_author(value: str | Author) -> Author:
    """`Author` from `"Name <email>"` or `"Name"`; `InvalidAuthorError` if malformed."""
    if isinstance(value, Author):
        return value
    if not isinstance(value, str):
        raise InvalidAuthorError(
            f"an author is a string like 'Ada <ada@example.org>', not {type(value).__name__}"
        )
    text = value.strip()
    match = _WITH_EMAIL.fullmatch(text)
    if match:
        return Author(match.group("name").strip(), match.group("email"))
    return Author(text)


def config_path() -> Path:
    """`$XDG_CONFIG_HOME/graphlake/config.toml` (`~/.config/graphlake/config.toml`)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "graphlake" / "config.toml"


def _from_config() -> Author | None:
    path = config_path()
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InvalidAuthorError(f"cannot read the author from {path}: {exc}") from exc
    value = data.get("author")
    if value is None:
        return None
    try:
        return parse_author(value)
    except InvalidAuthorError as exc:
        raise InvalidAuthorError(f"{path}: {exc}") from None


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name in the environment or password database
        return UNKNOWN


def default_author() -> Author:
    """The author without a context: `$GRAPHLAKE_AUTHOR`, the config file, the OS user."""
    env = os.environ.get(AUTHOR_ENV)
    if env and env.strip():
        return parse_author(env)
    return _from_config() or Author(_os_user())


def current_author() -> Author:
    """The author a commit made now records (see the module docstring for the order)."""
    acting = _acting.get()
    return acting if acting is not None else default_author()


@contextlib.contextmanager
def acting_as(author: str | Author | None) -> Iterator[Author | None]:
    """Commits made inside record `author` (None: keep the current one)."""
    if author is None:
        yield _acting.get()
        return
    parsed = parse_author(author)
    token = _acting.set(parsed)
    try:
        yield parsed
    finally:
        _acting.reset(token)
