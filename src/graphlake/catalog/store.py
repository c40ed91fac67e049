"""A small key/value view of the graph root: a local folder or an S3 prefix.

The control plane only needs whole-object reads and writes, listings, and one primitive
for coordination: *conditional create* (write only if the key does not exist yet). Both
`LocalStore` (hard-link of a staged file) and S3 (`If-None-Match: *`) give that
atomically, so refs can be moved by compare-and-swap without a lock server.

Keys are relative, `/`-separated paths under the root. They are checked here, once, so no
caller can address anything outside the root.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import re
import stat
import urllib.parse
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import obstore
from obstore.exceptions import AlreadyExistsError, NotFoundError, UnknownConfigurationKeyError
from obstore.store import LocalStore, S3Store

from graphlake.errors import GraphLakeError

if TYPE_CHECKING:
    from obstore.store import ClientConfig, S3Config

__all__ = ["ObjectInfo", "ObjectStore"]

# obstore raises Python's FileNotFoundError for a missing object; keep its own class too
# in case a backend surfaces that one instead.
_NOT_FOUND = (FileNotFoundError, NotFoundError)

# Lance storage option name -> obstore S3 config key. Lance accepts the short names used
# in the docs (`endpoint`, `region`) and the `aws_`-prefixed ones; obstore knows both
# spellings for most keys, but mapping the documented ones explicitly keeps us
# independent of that.
_S3_KEY_MAP = {
    "endpoint": "endpoint",
    "aws_endpoint": "endpoint",
    "aws_endpoint_url": "endpoint",
    "region": "region",
    "aws_region": "region",
    "aws_access_key_id": "access_key_id",
    "access_key_id": "access_key_id",
    "aws_secret_access_key": "secret_access_key",
    "secret_access_key": "secret_access_key",
    "aws_session_token": "session_token",
    "session_token": "session_token",
    "virtual_hosted_style_request": "virtual_hosted_style_request",
    "aws_virtual_hosted_style_request": "virtual_hosted_style_request",
}

# HTTP client settings live in obstore's `client_options`, not in the S3 config.
_CLIENT_KEYS = {
    "allow_http",
    "allow_invalid_certificates",
    "connect_timeout",
    "timeout",
    "proxy_url",
    "user_agent",
}

# Options that only mean something to Lance's own reader; the control plane ignores them
# so the same dict can be handed to both.
_LANCE_ONLY_KEYS = {"download_retry_count"}

# What a key may not contain: a backslash or a control character.
_BAD_KEY_CHARS = re.compile(r"[\\\x00-\x1f\x7f]")
# obstore's local store stages a write at `<key>#<n>` and refuses such keys itself.
_STAGED = re.compile(r"#\d+$")

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _as_bool(key: str, value: str) -> bool:
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise GraphLakeError(f"storage option {key!r} must be true or false, got {value!r}")


def _s3_options(options: dict[str, str]) -> tuple[S3Config, ClientConfig]:
    """Split Lance-style storage options into obstore (config, client_options). The keys
    are the caller's, so the dicts are built untyped; obstore checks them on open."""
    config: dict[str, Any] = {}
    client: dict[str, Any] = {}
    for key, value in options.items():
        name = key.lower()
        if name in _LANCE_ONLY_KEYS:
            continue
        if name in _CLIENT_KEYS:
            is_flag = name.startswith("allow_")
            client[name] = _as_bool(key, value) if is_flag else value
        elif name in _S3_KEY_MAP:
            config[_S3_KEY_MAP[name]] = value
        else:
            # Anything else goes through unchanged; obstore rejects unknown keys and we turn
            # that into a message naming the option (see `_open_s3`).
            config[name] = value
    return cast("S3Config", config), cast("ClientConfig", client)


def _check_key(path: str) -> str:
    """Refuse keys that could leave the root or that object stores treat inconsistently."""
    if not isinstance(path, str) or path == "":
        raise GraphLakeError(f"invalid storage key {path!r}: must be a non-empty string")
    if path.startswith("/") or path.endswith("/"):
        raise GraphLakeError(f"invalid storage key {path!r}: no leading or trailing '/'")
    if _BAD_KEY_CHARS.search(path):
        raise GraphLakeError(f"invalid storage key {path!r}: no backslash or control characters")
    for segment in path.split("/"):
        if segment in ("", ".", ".."):
            raise GraphLakeError(f"invalid storage key {path!r}: empty, '.' or '..' segment")
    return path


def _prefix_arg(prefix: str) -> str | None:
    """A listing prefix: '' (or '/') means the whole root."""
    prefix = prefix.strip("/")
    return _check_key(prefix) if prefix else None


class ObjectInfo(NamedTuple):
    """One listed object: its key, size in bytes and last-modified time (aware, UTC)."""

    key: str
    size: int
    modified: datetime


class ObjectStore:
    """Whole-object access to the keys under one graph root.

    `root_uri` is a local path (relative, absolute, or `file://`) or `s3://bucket[/prefix]`.
    `storage_options` are the ones Lance takes (`endpoint`, `allow_http`,
    `aws_access_key_id`, `aws_secret_access_key`, `region`, ...); they are ignored for
    local roots. Local root folders are created if missing.
    """

    def __init__(
        self, root_uri: str | os.PathLike[str], storage_options: dict[str, str] | None = None
    ) -> None:
        root_uri = os.fspath(root_uri)
        self._options = dict(storage_options or {})
        parsed = urllib.parse.urlparse(root_uri)
        scheme = parsed.scheme.lower()
        # A single letter "scheme" is a Windows drive (C:\...), i.e. a local path.
        if scheme in ("", "file") or len(scheme) == 1:
            self._open_local(root_uri, parsed)
        elif scheme == "s3":
            self._open_s3(parsed)
        else:
            raise GraphLakeError(
                f"unsupported graph root {root_uri!r}: use a local path, file:// or s3://"
            )

    # --- construction --------------------------------------------------------------------

    def _open_local(self, root_uri: str, parsed: urllib.parse.ParseResult) -> None:
        if parsed.scheme.lower() == "file":
            if parsed.netloc not in ("", "localhost"):
                raise GraphLakeError(f"file URI {root_uri!r} names a remote host")
            raw = urllib.parse.unquote(parsed.path)
        else:
            raw = root_uri
        path = os.path.abspath(os.path.expanduser(raw))
        os.makedirs(path, exist_ok=True)
        self._local_root: str | None = path
        self._root_uri = path
        self._store: Any = LocalStore(prefix=path)

    def _open_s3(self, parsed: urllib.parse.ParseResult) -> None:
        bucket = parsed.netloc
        if not bucket:
            raise GraphLakeError(f"S3 URI {parsed.geturl()!r} has no bucket")
        prefix = parsed.path.strip("/")
        if prefix:
            _check_key(prefix)
        config, client = _s3_options(self._options)
        try:
            self._store = S3Store(
                bucket, prefix=prefix or None, config=config, client_options=client or None
            )
        except UnknownConfigurationKeyError as exc:
            raise GraphLakeError(f"unsupported storage option for S3: {exc}") from exc
        self._local_root = None
        self._root_uri = f"s3://{bucket}/{prefix}" if prefix else f"s3://{bucket}"

    # --- identity ----------------------------------------------------------------------

    @property
    def root_uri(self) -> str:
        """Normalised root: an absolute local path, or `s3://bucket[/prefix]`."""
        return self._root_uri

    @property
    def storage_options(self) -> dict[str, str]:
        """The options this store was opened with (to hand the same ones to Lance)."""
        return dict(self._options)

    @property
    def is_local(self) -> bool:
        return self._local_root is not None

    def uri_for(self, path: str) -> str:
        """Full location of a key: a local filesystem path, or an `s3://` URI.

        `uri_for("")` is the root itself (what Lance needs to open tables under it).
        """
        if path == "":
            return self._root_uri
        _check_key(path)
        if self._local_root is not None:
            return os.path.join(self._local_root, *path.split("/"))
        return f"{self._root_uri}/{path}"

    def __repr__(self) -> str:
        return f"ObjectStore({self._root_uri!r})"

    # --- objects -----------------------------------------------------------------------

    def get(self, path: str) -> bytes | None:
        """The object's bytes, or None if there is no such object."""
        try:
            return bytes(obstore.get(self._store, _check_key(path)).bytes())
        except _NOT_FOUND:
            return None

    def put(self, path: str, data: bytes) -> None:
        """Write (or overwrite) an object atomically."""
        obstore.put(self._store, _check_key(path), data, use_multipart=False)

    def create(self, path: str, data: bytes) -> bool:
        """Write only if absent: True if this call created it, False if it existed.

        This is the control plane's compare-and-swap primitive. Note that a False after a
        transport-level retry can also mean our own first attempt landed; callers that
        need to tell the two apart read the object back and compare (see refs.py).
        """
        try:
            obstore.put(self._store, _check_key(path), data, mode="create", use_multipart=False)
        except AlreadyExistsError:
            return False
        return True

    def exists(self, path: str) -> bool:
        """Whether an object is at `path` (a folder is none)."""
        if self._local_root is not None and not _STAGED.search(path):
            # A stat, as obstore's head does on a local root, without its ~30 us of
            # overhead: a branch's head is found by one such check per query (refs.py).
            local = os.path.join(self._local_root, *_check_key(path).split("/"))
            try:
                mode = os.stat(local).st_mode
            except (FileNotFoundError, NotADirectoryError):
                return False
            return stat.S_ISREG(mode)
        try:
            obstore.head(self._store, _check_key(path))
        except _NOT_FOUND:
            return False
        return True

    def delete(self, path: str) -> None:
        """Remove an object; a missing object is not an error."""
        with contextlib.suppress(*_NOT_FOUND):
            obstore.delete(self._store, _check_key(path))

    # --- listings ----------------------------------------------------------------------

    def list(self, prefix: str = "") -> builtins.list[str]:
        """All keys under `prefix` (recursive), sorted.

        The prefix is matched by whole path segments: `a/b` lists `a/b/x`, not `a/bc`.
        """
        arg = _prefix_arg(prefix)
        keys = [meta["path"] for batch in obstore.list(self._store, arg) for meta in batch]
        return sorted(keys)

    def list_info(self, prefix: str = "") -> builtins.list[ObjectInfo]:
        """Like `list`, with each object's size and last-modified time (for `gc`)."""
        arg = _prefix_arg(prefix)
        infos = [
            ObjectInfo(meta["path"], int(meta["size"]), meta["last_modified"])
            for batch in obstore.list(self._store, arg)
            for meta in batch
        ]
        return sorted(infos)

    def list_dirs(self, prefix: str = "") -> builtins.list[str]:
        """Keys of the immediate child "directories" of `prefix` (full keys, sorted).

        `list_dirs("a")` with objects `a/b/x` and `a/c/d/y` gives `["a/b", "a/c"]`.
        """
        arg = _prefix_arg(prefix)
        result = obstore.list_with_delimiter(self._store, arg)
        return sorted(p.rstrip("/") for p in result["common_prefixes"])
