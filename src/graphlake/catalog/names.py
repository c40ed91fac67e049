"""Validation and storage encoding of user-chosen names (branches, runs, tables).

A branch name becomes one path segment under the graph root, so it must never be able to
escape the root or collide with another name. `encode_name` is injective, and also
injective *ignoring case*: every upper-case letter is percent-encoded, so `Main` and
`main` stay distinct folders on case-insensitive filesystems (macOS, Windows).
"""

from __future__ import annotations

import re

from graphlake.errors import InvalidNameError

__all__ = [
    "MAX_BRANCH_NAME_LENGTH",
    "decode_name",
    "encode_name",
    "validate_branch_name",
    "validate_identifier",
]

MAX_BRANCH_NAME_LENGTH = 200
# A path segment longer than 255 bytes is refused by common filesystems; keep a margin.
MAX_ENCODED_LENGTH = 250

_BRANCH_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._/-")
# Characters `encode_name` keeps as they are: lower-case only, see the module docstring.
_PLAIN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789._-")
_IDENTIFIER_RE = re.compile(r"[A-Za-z0-9_-]{1,128}")
_ESCAPE_RE = re.compile(r"%[0-9A-F]{2}")


def _fail(name: object, why: str) -> InvalidNameError:
    return InvalidNameError(f"invalid branch name {name!r}: {why}")


def _check_characters(name: str) -> None:
    for pos, ch in enumerate(name):
        if ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F or not ch.isprintable():
            raise _fail(name, f"whitespace or control character at position {pos}")
        if ch not in _BRANCH_CHARS:
            raise _fail(
                name,
                f"character {ch!r} at position {pos} is not allowed "
                "(use letters A-Z a-z, digits, '.', '_', '-' and '/')",
            )


def _check_segments(name: str) -> None:
    if name.startswith("/") or name.endswith("/"):
        raise _fail(name, "must not start or end with '/'")
    if "//" in name:
        raise _fail(name, "must not contain '//' (empty path segment)")
    for segment in name.split("/"):
        if segment in (".", ".."):
            raise _fail(name, f"must not contain a {segment!r} path segment")
        if segment.startswith("."):
            raise _fail(name, f"path segment {segment!r} must not start with '.'")


def validate_branch_name(name: str) -> str:
    """Return `name` if it is a valid branch name, else raise `InvalidNameError`.

    Branch names may contain `/` (e.g. `ingest/run1/w0`) but no empty, `.` or `..`
    segment, nothing that starts with `.`, and no `.lock` suffix (reserved, as in git).
    """
    if not isinstance(name, str):
        raise _fail(name, f"must be a string, not {type(name).__name__}")
    if name == "":
        raise _fail(name, "must not be empty")
    if len(name) > MAX_BRANCH_NAME_LENGTH:
        raise _fail(name, f"is {len(name)} characters long; the limit is {MAX_BRANCH_NAME_LENGTH}")
    _check_characters(name)
    _check_segments(name)
    if name.endswith(".lock"):
        raise _fail(name, "must not end with '.lock'")
    encoded = len(encode_name(name))
    if encoded > MAX_ENCODED_LENGTH:
        raise _fail(
            name,
            f"is {encoded} characters long once encoded (upper-case letters and '/' take 3); "
            f"the limit is {MAX_ENCODED_LENGTH}",
        )
    return name


def validate_identifier(name: str, what: str) -> str:
    """Return `name` if it matches `[A-Za-z0-9_-]{1,128}` (run ids, table ids, ...)."""
    if not isinstance(name, str) or not _IDENTIFIER_RE.fullmatch(name):
        raise InvalidNameError(
            f"invalid {what} {name!r}: use 1 to 128 characters from A-Z a-z 0-9 '_' '-'"
        )
    return name


def encode_name(name: str) -> str:
    """Encode any non-empty string as one safe path segment.

    Lower-case letters, digits, `_`, `-` and `.` stay as they are (except a leading `.`,
    so the segment is never hidden, `.` or `..`); every other character becomes `%XX`
    per UTF-8 byte, with upper-case hex digits. Because `%` itself is escaped the mapping
    is injective, and because no plain character is upper-case it stays injective on
    case-insensitive filesystems.
    """
    if not isinstance(name, str) or name == "":
        raise InvalidNameError(f"cannot encode {name!r}: a name must be a non-empty string")
    out: list[str] = []
    for pos, ch in enumerate(name):
        if ch in _PLAIN_CHARS and not (pos == 0 and ch == "."):
            out.append(ch)
        else:
            out.extend(f"%{byte:02X}" for byte in ch.encode("utf-8"))
    return "".join(out)


def decode_name(segment: str) -> str:
    """Invert `encode_name`. Refuses anything `encode_name` would not have produced."""
    try:
        raw = bytearray()
        pos = 0
        while pos < len(segment):
            if segment[pos] == "%":
                if not _ESCAPE_RE.match(segment, pos):
                    raise ValueError("bad escape")
                raw.append(int(segment[pos + 1 : pos + 3], 16))
                pos += 3
            else:
                raw.extend(segment[pos].encode("utf-8"))
                pos += 1
        name = raw.decode("utf-8")
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidNameError(f"{segment!r} is not an encoded name") from exc
    # Only the canonical spelling is accepted, so one name never maps to two folders.
    if name == "" or encode_name(name) != segment:
        raise InvalidNameError(f"{segment!r} is not an encoded name")
    return name
