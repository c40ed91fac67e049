"""Server configuration: bearer tokens with scopes, protected branches and limits.

A config file is TOML (`.toml`) or JSON (any other suffix):

    protected_branches = ["main"]

    [[tokens]]
    token = "a-long-random-secret"
    scope = "write"            # read | write | admin
    name = "ingest-bot"        # the author of its commits (default: token-<6 hex of its hash>)
    branches = ["dev/*", "ingest/*"]  # branches it may change (default: every branch)

    [limits]
    max_upload_bytes = 67108864   # JSONL upload to /load (413 beyond)
    max_body_bytes = 1048576      # any other request body (413 beyond)
    max_operations = 1000         # operations in one /mutations request (413 beyond)
    max_concurrent_loads = 1      # /load requests running at once (503 beyond)
    max_concurrent_reads = 4      # table reads and SQL queries running at once (503 beyond);
                                  # also the number of query worker processes
    query_memory_mb = 512         # memory one SQL or Cypher query, or one graph algorithm
                                  # run (POST /algo and Cypher's CALL alike: its estimate
                                  # is refused past it before it starts), may take in its
                                  # worker process (413 beyond); see graphlake/isolation.py
    adjacency_memory_mb = 512     # adjacencies a query worker keeps for Cypher traversals
                                  # (its cache's budget; the largest one a query may build,
                                  # larger ones run as SQL); sized for 10M edges (about
                                  # 32 bytes an edge); a worker may hold query_memory_mb +
                                  # adjacency_memory_mb
    sql_max_rows = 10000          # rows a SQL query may return (the client may ask fewer)
    sql_timeout_s = 10.0          # a SQL or Cypher request (parse to last row) is stopped
                                  # after this (408); its worker is killed 0.5 s later
    sql_max_query_chars = 16384   # length of a SQL query's text
    sql_max_result_bytes = 33554432  # Arrow bytes of a SQL result
    sql_memory_limit_mb = 256     # DuckDB's memory_limit per query (it never spills to disk)
    sql_threads = 2               # DuckDB threads per query
    algo_threads = 2              # the most threads one graph algorithm run may use (POST
                                  # /algo and CALL; a larger `threads` is 400; Louvain's
                                  # default there is 1, its repeatable run); each query
                                  # worker starts with OMP_NUM_THREADS set to it
    algo_cache_mb = 128           # completed graph algorithm answers kept for their next
                                  # pages (Arrow bytes; server/algo_cache.py)
    page_max_rows = 10000         # largest `limit` of a table read
    log_max_commits = 10000       # largest `limit` of a log
    ui_sessions_per_token = 100   # web UI sessions one token may hold (its oldest go first)

    [branches."main"]             # merge request rules of merges into main (server and UI)
    required_approvals = 1        # approvals by others than the author, at the current heads
    merge_only_via_request = true # POST /merge into main is refused (403): use a request

    [auto_optimize]               # background optimizer of search indexes (server/auto_optimize.py)
    enabled = false               # off unless asked for
    interval_s = 60.0             # pause between two checks of the branches
    branches = []                 # branches to keep optimized; empty: every branch
    uncovered_fraction = 0.1      # optimize a branch once an index's uncovered rows reach
    uncovered_rows = 100000       # this fraction of its indexed rows, or this many rows

    [[webhooks]]                  # signed JSON POSTs: commits, tags, requests (server/webhooks/)
    url = "https://ci.example.org/hook"   # http(s) only
    secret = "a-long-random-secret"       # HMAC-SHA256 key, at least 16 characters
    events = ["commit", "merge", "tag"]   # of commit, merge, tag, merge_request (default all)
    branches = ["main", "dev/*"]          # branch patterns (fnmatch; default every branch)
    name = "ci"                   # its id in the delivery log and its cursor (default: from url)
    timeout_s = 5.0               # one POST
    max_attempts = 5              # POSTs of one delivery before it is marked failed
    backoff_s = 0.5               # first pause between attempts; doubles, at most 30 s
    retry_pause_s = 60.0          # a failed delivery is tried again after this (never skipped)
    poll_interval_s = 1.0         # how often the branches, tags and merge requests are read
    log_size = 1000               # deliveries kept in its log

Tokens also come from the environment: `GRAPHLAKE_TOKENS="tok1:read,tok2:write,tok3:admin"`
(added to the file's); an entry may name its token: `ingest-bot:tok2:write` (a token
given this way cannot contain `:`). A server with no token at all refuses to start unless
auth is switched off explicitly (`--no-auth`); so does one with a token shorter than
`MIN_TOKEN_CHARS` (16) characters, unless `--allow-short-tokens` (for tests).
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import IntEnum
from pathlib import Path
from typing import Any

from graphlake.review.rules import BranchRules

TOKENS_ENV = "GRAPHLAKE_TOKENS"
MIN_TOKEN_CHARS = 16


class ConfigError(Exception):
    """The server configuration is unusable; the message says what to fix."""


class WebhookConfigError(ConfigError):
    """A `[[webhooks]]` entry is unusable; the message names the entry."""


class Scope(IntEnum):
    """Token scopes, ordered: a higher scope includes every lower one."""

    read = 1
    write = 2
    admin = 3

    @classmethod
    def parse(cls, value: object) -> Scope:
        if isinstance(value, str) and value.strip().lower() in cls.__members__:
            return cls[value.strip().lower()]
        raise ConfigError(f"unknown token scope {value!r} (use read, write or admin)")


@dataclass(frozen=True)
class Limits:
    max_upload_bytes: int = 64 * 1024 * 1024
    max_body_bytes: int = 1024 * 1024
    max_operations: int = 1000
    max_concurrent_loads: int = 1
    max_concurrent_reads: int = 4
    query_memory_mb: int = 512
    adjacency_memory_mb: int = 512
    sql_max_rows: int = 10_000
    sql_timeout_s: float = 10.0
    sql_max_query_chars: int = 16_384
    sql_max_result_bytes: int = 32 * 1024 * 1024
    sql_memory_limit_mb: int = 256
    sql_threads: int = 2
    algo_threads: int = 2
    algo_cache_mb: int = 128
    page_max_rows: int = 10_000
    log_max_commits: int = 10_000
    ui_sessions_per_token: int = 100

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Limits:
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ConfigError(f"unknown limit(s) {unknown} (known: {sorted(known)})")
        values: dict[str, Any] = {}
        for name, value in data.items():
            numeric = isinstance(value, int | float) and not isinstance(value, bool)
            if not numeric or value <= 0:
                raise ConfigError(f"limits.{name} must be a positive number, got {value!r}")
            values[name] = float(value) if name == "sql_timeout_s" else int(value)
        return cls(**values)


@dataclass(frozen=True)
class AutoOptimize:
    """The background optimizer's settings; the thresholds are `search.upkeep`'s defaults
    (repeated here so the config loads without Lance; a test pins them equal)."""

    enabled: bool = False
    interval_s: float = 60.0
    branches: tuple[str, ...] = ()
    uncovered_fraction: float = 0.10
    uncovered_rows: int = 100_000

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> AutoOptimize:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown auto_optimize key(s) {unknown} (known: {sorted(known)})")
        enabled = data.get("enabled", False)
        if not isinstance(enabled, bool):
            raise ConfigError(f"auto_optimize.enabled must be true or false, got {enabled!r}")
        branches = data.get("branches", [])
        if not isinstance(branches, list) or not all(isinstance(b, str) for b in branches):
            raise ConfigError("auto_optimize.branches must be a list of branch names")
        numbers: dict[str, Any] = {}
        for name in ("interval_s", "uncovered_fraction", "uncovered_rows"):
            value = data.get(name, getattr(cls, name))
            if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
                raise ConfigError(f"auto_optimize.{name} must be a positive number, got {value!r}")
            numbers[name] = int(value) if name == "uncovered_rows" else float(value)
        if numbers["uncovered_fraction"] > 100:
            raise ConfigError("auto_optimize.uncovered_fraction must be at most 100")
        return cls(enabled=enabled, branches=tuple(branches), **numbers)


WEBHOOK_EVENTS = ("commit", "merge", "tag", "merge_request")
MIN_SECRET_CHARS = 16
_HOOK_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


@dataclass(frozen=True)
class Webhook:
    """One `[[webhooks]]` entry (see server/webhooks/)."""

    name: str
    url: str
    secret: str = field(repr=False)
    events: tuple[str, ...] = WEBHOOK_EVENTS
    branches: tuple[str, ...] = ("*",)
    timeout_s: float = 5.0
    max_attempts: int = 5
    backoff_s: float = 0.5
    retry_pause_s: float = 60.0
    poll_interval_s: float = 1.0
    log_size: int = 1000

    @classmethod
    def from_mapping(cls, data: object, n: int) -> Webhook:
        if not isinstance(data, Mapping):
            raise WebhookConfigError(f"webhooks entry {n}: must be a table/object")
        url = data.get("url")
        where = f"webhooks entry {n}" + _hook_label(data.get("name"), url)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise WebhookConfigError(f"{where}: unknown key(s) {unknown} (known: {sorted(known)})")
        parsed = urllib.parse.urlsplit(url if isinstance(url, str) else "")
        if (
            not isinstance(url, str)
            or parsed.scheme.lower() not in ("http", "https")
            or not parsed.hostname
        ):
            raise WebhookConfigError(f"{where}: url must be an http:// or https:// URL with a host")
        secret = data.get("secret")
        if not isinstance(secret, str) or len(secret) < MIN_SECRET_CHARS:
            raise WebhookConfigError(
                f"{where}: secret must be a string of at least "
                f"{MIN_SECRET_CHARS} characters (the HMAC key)"
            )
        events = data.get("events", list(WEBHOOK_EVENTS))
        if (
            not isinstance(events, list)
            or not events
            or not all(isinstance(e, str) for e in events)
        ):
            raise WebhookConfigError(
                f"{where}: events must be a non-empty list of {', '.join(WEBHOOK_EVENTS)}"
            )
        bad = sorted(set(events) - set(WEBHOOK_EVENTS))
        if bad:
            raise WebhookConfigError(
                f"{where}: unknown event(s) {bad} (known: {', '.join(WEBHOOK_EVENTS)})"
            )
        branches = data.get("branches", ["*"])
        if (
            not isinstance(branches, list)
            or not branches
            or not all(isinstance(b, str) and b for b in branches)
        ):
            raise WebhookConfigError(
                f"{where}: branches must be a non-empty list of "
                'branch patterns, e.g. ["main", "dev/*"]'
            )
        name = data.get("name")
        if name is None:
            name = "hook-" + hashlib.sha256(url.encode()).hexdigest()[:12]
        elif (
            not isinstance(name, str)
            or not 0 < len(name) <= 64
            or not set(name) <= _HOOK_NAME_CHARS
            or name[0] == "."
        ):
            raise WebhookConfigError(
                f"{where}: name must be 1-64 letters, digits, '.', "
                "'_' or '-' (not starting with '.')"
            )
        numbers: dict[str, Any] = {}
        for key in (
            "timeout_s",
            "max_attempts",
            "backoff_s",
            "retry_pause_s",
            "poll_interval_s",
            "log_size",
        ):
            value = data.get(key, getattr(cls, key))
            if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
                raise WebhookConfigError(f"{where}: {key} must be a positive number, got {value!r}")
            numbers[key] = int(value) if key in ("max_attempts", "log_size") else float(value)
        return cls(
            name=name,
            url=url,
            secret=secret,
            events=tuple(dict.fromkeys(events)),
            branches=tuple(branches),
            **numbers,
        )


def _hook_label(name: object, url: object) -> str:
    """` (name)`, else ` (scheme://host/path)` of the URL: never its user:password part."""
    if isinstance(name, str) and name:
        return f" ({name[:64]})"
    if not isinstance(url, str):
        return ""
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ""
        return (
            f" ({parts.scheme}://{host}{parts.path})"[:120] if parts.scheme else f" ({url[:60]!r})"
        )
    except ValueError:
        return ""


def _webhooks(entries: object) -> tuple[Webhook, ...]:
    if not isinstance(entries, list):
        raise WebhookConfigError("webhooks must be a list of [[webhooks]] entries")
    hooks = tuple(Webhook.from_mapping(e, n) for n, e in enumerate(entries, start=1))
    seen: set[str] = set()
    for n, hook in enumerate(hooks, start=1):
        if hook.name in seen:
            raise WebhookConfigError(
                f"webhooks entry {n}{_hook_label(None, hook.url)}: "
                "another entry has "
                f"the name {hook.name!r}; give each a distinct name"
            )
        seen.add(hook.name)
    return hooks


@dataclass(frozen=True)
class ServerConfig:
    """Everything `create_app` needs besides the graph root."""

    tokens: dict[str, Scope] = field(default_factory=dict)
    protected_branches: frozenset[str] = frozenset()
    limits: Limits = field(default_factory=Limits)
    auto_optimize: AutoOptimize = field(default_factory=AutoOptimize)
    webhooks: tuple[Webhook, ...] = ()
    no_auth: bool = False  # every request is allowed; only when asked for explicitly
    allow_short_tokens: bool = False  # tokens under MIN_TOKEN_CHARS (tests only)
    # token -> its name (the author of the commits it makes); unnamed: `display_name`.
    token_names: dict[str, str] = field(default_factory=dict)
    # token -> the branch patterns (fnmatch) it may change; absent: every branch.
    token_branches: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # branch -> the merge request rules of merges into it (`[branches."NAME"]`).
    branch_rules: dict[str, BranchRules] = field(default_factory=dict)

    def rules_for(self, branch: str) -> BranchRules:
        """The rules of merges into `branch` (none: `BranchRules()`)."""
        return self.branch_rules.get(branch, BranchRules())

    def __repr__(self) -> str:  # never print the tokens themselves
        return (
            f"ServerConfig(tokens=<{len(self.tokens)}>, "
            f"protected_branches={sorted(self.protected_branches)}, limits={self.limits}, "
            f"no_auth={self.no_auth})"
        )

    def check(self) -> None:
        """Refuse a configuration that would silently serve everyone."""
        if not self.tokens and not self.no_auth:
            raise ConfigError(
                "no tokens configured: add [[tokens]] to the config file or set "
                f"{TOKENS_ENV}, or pass --no-auth to serve without authentication"
            )
        short = sum(1 for t in self.tokens if len(t) < MIN_TOKEN_CHARS)
        if short and not self.no_auth and not self.allow_short_tokens:
            # Never name the token: the count says enough to find it.
            raise ConfigError(
                f"{short} configured token(s) shorter than {MIN_TOKEN_CHARS} characters: "
                "use long random tokens (e.g. `python -c 'import secrets; "
                "print(secrets.token_urlsafe(32))'`), or pass --allow-short-tokens (tests)"
            )


def load_config(
    path: str | os.PathLike[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    no_auth: bool = False,
    allow_short_tokens: bool = False,
) -> ServerConfig:
    """The configuration from a file (optional) plus `GRAPHLAKE_TOKENS` from `env`."""
    data: Mapping[str, Any] = _read_file(Path(path)) if path is not None else {}
    known = {"tokens", "protected_branches", "limits", "auto_optimize", "branches", "webhooks"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"unknown config key(s) {unknown} (known: {', '.join(sorted(known))})")
    tokens = _file_tokens(data.get("tokens", []))
    names, branch_rules = _token_details(data.get("tokens", []))
    environ = os.environ if env is None else env
    tokens.update(parse_token_list(environ.get(TOKENS_ENV, "")))
    names.update(parse_token_names(environ.get(TOKENS_ENV, "")))
    protected = data.get("protected_branches", [])
    if not isinstance(protected, list) or not all(isinstance(b, str) for b in protected):
        raise ConfigError("protected_branches must be a list of branch names")
    limits = data.get("limits", {})
    if not isinstance(limits, Mapping):
        raise ConfigError("limits must be a table/object")
    auto = data.get("auto_optimize", {})
    if not isinstance(auto, Mapping):
        raise ConfigError("auto_optimize must be a table/object")
    return ServerConfig(
        tokens=tokens,
        protected_branches=frozenset(protected),
        limits=Limits.from_mapping(limits),
        auto_optimize=AutoOptimize.from_mapping(auto),
        webhooks=_webhooks(data.get("webhooks", [])),
        no_auth=no_auth,
        allow_short_tokens=allow_short_tokens,
        token_names=names,
        token_branches=branch_rules,
        branch_rules=_branch_rules(data.get("branches", {})),
    )


_RULE_KEYS = {"required_approvals", "require_checks", "merge_only_via_request"}


def _branch_rules(data: object) -> dict[str, BranchRules]:
    """`[branches."NAME"]` tables: the merge request rules of merges into NAME."""
    if not isinstance(data, Mapping):
        raise ConfigError('branches must be a table of [branches."NAME"] tables')
    out: dict[str, BranchRules] = {}
    for name, rules in data.items():
        if not isinstance(rules, Mapping) or set(rules) - _RULE_KEYS:
            raise ConfigError(f"branches.{name}: use the keys {', '.join(sorted(_RULE_KEYS))}")
        n = rules.get("required_approvals", 0)
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= 100:
            raise ConfigError(f"branches.{name}.required_approvals must be 0-100, got {n!r}")
        flags = {k: rules.get(k, False) for k in ("require_checks", "merge_only_via_request")}
        for key, value in flags.items():
            if not isinstance(value, bool):
                raise ConfigError(f"branches.{name}.{key} must be true or false")
        out[str(name)] = BranchRules(n, **flags)
    return out


def parse_token_list(text: str) -> dict[str, Scope]:
    """`"tok1:read,tok2:write"` -> {token: scope}. The scope follows the last `:`."""
    out: dict[str, Scope] = {}
    for n, item in enumerate(part.strip() for part in text.split(",")):
        if not item:
            continue
        token, sep, scope = item.rpartition(":")
        if not sep or not token:
            # Never echo the item: it is (part of) a secret.
            raise ConfigError(f"{TOKENS_ENV}: entry {n + 1} is not TOKEN:SCOPE")
        out[_split_name(token, n)[1]] = Scope.parse(scope)
    return out


def parse_token_names(text: str) -> dict[str, str]:
    """{token: name} of the `NAME:TOKEN:SCOPE` entries of `GRAPHLAKE_TOKENS`."""
    out: dict[str, str] = {}
    for n, item in enumerate(part.strip() for part in text.split(",")):
        token = item.rpartition(":")[0]
        name, secret = _split_name(token, n) if token else (None, token)
        if name is not None:
            out[secret] = name
    return out


def _split_name(token: str, n: int) -> tuple[str | None, str]:
    """(name, token) of `NAME:TOKEN`, (None, token) of a bare token."""
    name, sep, secret = token.partition(":")
    if not sep:
        return None, token
    if not secret or not check_name(name):
        raise ConfigError(
            f"{TOKENS_ENV}: entry {n + 1} is not [NAME:]TOKEN:SCOPE with a "
            "non-empty token and a name of letters, digits, '.', '_', '-', '@'"
        )
    return name, secret


_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-@ ")


def check_name(name: object) -> bool:
    """A token name: 1-100 of letters, digits, space, `.`, `_`, `-`, `@`."""
    return (
        isinstance(name, str)
        and len(name.strip()) > 0
        and len(name) <= 100
        and set(name) <= _NAME_CHARS
    )


def display_name(token: str, names: Mapping[str, str]) -> str:
    """The name a token acts under: its configured name, else `token-` and the first 6
    hex characters of its SHA-256 (which says nothing useful about the token)."""
    name = names.get(token)
    if name is not None:
        return name
    return "token-" + hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()[:6]


def _token_details(
    entries: object,
) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """The `name` and `branches` of the file's token entries (already checked for shape
    by `_file_tokens`)."""
    names: dict[str, str] = {}
    rules: dict[str, tuple[str, ...]] = {}
    for n, entry in enumerate(entries if isinstance(entries, list) else [], start=1):
        token = entry["token"]
        if "name" in entry:
            if not check_name(entry["name"]):
                raise ConfigError(
                    f"tokens entry {n}: name must be 1-100 letters, digits, "
                    "spaces, '.', '_', '-' or '@'"
                )
            names[token] = entry["name"].strip()
        if "branches" in entry:
            patterns = entry["branches"]
            if not isinstance(patterns, list) or not all(
                isinstance(p, str) and p for p in patterns
            ):
                raise ConfigError(
                    f"tokens entry {n}: branches must be a list of branch "
                    'patterns, e.g. ["dev/*", "ingest/*"]'
                )
            rules[token] = tuple(patterns)
    return names, rules


def _file_tokens(entries: object) -> dict[str, Scope]:
    if not isinstance(entries, list):
        raise ConfigError("tokens must be a list of {token, scope} entries")
    out: dict[str, Scope] = {}
    for n, entry in enumerate(entries, start=1):
        if not isinstance(entry, Mapping) or set(entry) - {"token", "scope", "name", "branches"}:
            raise ConfigError(f"tokens entry {n}: use the keys token, scope (and name, branches)")
        token = entry.get("token")
        if not isinstance(token, str) or not token.strip():
            raise ConfigError(f"tokens entry {n}: token must be a non-empty string")
        out[token] = Scope.parse(entry.get("scope"))
    return out


def _read_file(path: Path) -> Mapping[str, Any]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    try:
        data = (
            tomllib.loads(raw.decode("utf-8"))
            if path.suffix.lower() == ".toml"
            else json.loads(raw)
        )
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        # Both decoders name a position, never the file's text (which may hold tokens).
        raise ConfigError(f"config file {path} is not valid {_kind(path)}: {exc}") from None
    if not isinstance(data, Mapping):
        raise ConfigError(f"config file {path} must hold an object/table at the top level")
    return data


def _kind(path: Path) -> str:
    return "TOML" if path.suffix.lower() == ".toml" else "JSON"
