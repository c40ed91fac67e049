"""Configuration parsing and token matching (in-process: no server needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphlake.server.auth import TokenTable
from graphlake.server.config import (
    ConfigError,
    Limits,
    Scope,
    ServerConfig,
    load_config,
    parse_token_list,
)


def test_toml_config(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        'protected_branches = ["main", "release/1"]\n'
        '[[tokens]]\ntoken = "t-read"\nscope = "read"\n'
        '[[tokens]]\ntoken = "t-admin"\nscope = "ADMIN"\nname = "ops"\n'
        "[limits]\nmax_upload_bytes = 1024\nsql_timeout_s = 2\n"
    )
    config = load_config(path, env={})
    assert config.tokens == {"t-read": Scope.read, "t-admin": Scope.admin}
    assert config.protected_branches == {"main", "release/1"}
    assert config.limits == Limits(max_upload_bytes=1024, sql_timeout_s=2.0)
    assert "t-read" not in repr(config) and "t-admin" not in repr(config)


def test_json_config_and_environment_tokens(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"tokens": [{"token": "file", "scope": "write"}]}))
    config = load_config(path, env={"GRAPHLAKE_TOKENS": " a:read, b:c:admin ,file:read"})
    # The scope follows the last colon, a name precedes the first (issue 25: entries
    # may be NAME:TOKEN:SCOPE); the environment wins over the file.
    assert config.tokens == {"a": Scope.read, "c": Scope.admin, "file": Scope.read}
    assert config.token_names == {"c": "b"}
    assert config.protected_branches == frozenset()


def test_no_tokens_needs_no_auth() -> None:
    with pytest.raises(ConfigError, match="--no-auth"):
        load_config(env={}).check()
    load_config(env={}, no_auth=True).check()
    ServerConfig(tokens={"x" * 16: Scope.read}).check()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[tokens]]\ntoken = "x"\nscope = "root"\n', "unknown token scope 'root'"),
        ('[[tokens]]\ntoken = ""\nscope = "read"\n', "non-empty string"),
        ('[[tokens]]\ntoken = "x"\nscope = "read"\nrole = 1\n', "use the keys"),
        ("tokenz = []\n", "unknown config key"),
        ("[limits]\nsql_max_rows = 0\n", "positive number"),
        ("[limits]\nrows = 5\n", "unknown limit"),
        ('protected_branches = "main"\n', "list of branch names"),
        ('tokens = [ "secret-in-a-broken-line\n', "not valid TOML"),
    ],
)
def test_bad_config_files(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as info:
        load_config(path, env={})
    assert "secret-in-a-broken-line" not in str(info.value)


def test_bad_environment_tokens_are_not_echoed() -> None:
    with pytest.raises(ConfigError, match="entry 2 is not TOKEN:SCOPE") as info:
        parse_token_list("a:read,secret-without-scope")
    assert "secret-without-scope" not in str(info.value)
    with pytest.raises(ConfigError):
        parse_token_list("a:superuser")


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(tmp_path / "absent.toml", env={})


def test_token_table_takes_the_highest_scope_and_matches_exactly() -> None:
    table = TokenTable({"abc": Scope.read, "abd": Scope.admin})
    assert table.scope_of("abc") is Scope.read
    assert table.scope_of("abd") is Scope.admin
    for near in ("ab", "abcd", "ABC", "", "abc "):
        assert table.scope_of(near) is None


def test_the_adjacency_budget_is_its_own_limit(tmp_path: Path) -> None:
    """`adjacency_memory_mb` (default 512: sized for 10M edges) bounds the adjacency a
    Cypher query may build, not DuckDB's `sql_memory_limit_mb`, and a query worker's
    memory is the query's plus the adjacencies'."""
    from graphlake.server.queries import sql_limits

    assert Limits().adjacency_memory_mb == 512
    assert Limits().adjacency_memory_mb * 2**20 >= 32 * 10_000_000  # load.EDGE_BYTES
    path = tmp_path / "c.toml"
    path.write_text("[limits]\nadjacency_memory_mb = 2048\nsql_memory_limit_mb = 64\n")
    limits = load_config(path, env={}).limits
    carried = sql_limits(limits, None)
    assert (carried.adjacency_memory_mb, carried.memory_limit_mb) == (2048, 64)
    path.write_text("[limits]\nadjacency_memory_mb = 0\n")
    with pytest.raises(ConfigError, match="adjacency_memory_mb"):
        load_config(path, env={})


def test_algorithm_runs_have_one_memory_rule_and_a_thread_cap(tmp_path: Path) -> None:
    """A graph algorithm run, through POST /algo or Cypher's CALL, is held to
    query_memory_mb (not DuckDB's sql_memory_limit_mb) and algo_threads (default 2)."""
    from graphlake.server.queries import sql_limits

    assert Limits().algo_threads == 2
    path = tmp_path / "c.toml"
    path.write_text("[limits]\nquery_memory_mb = 300\nsql_memory_limit_mb = 64\nalgo_threads = 1\n")
    carried = sql_limits(load_config(path, env={}).limits, None)
    assert (carried.algo_memory_mb, carried.algo_threads) == (300, 1)
    assert (carried.memory_limit_mb, carried.threads) == (64, 2)
    path.write_text("[limits]\nalgo_threads = 0\n")
    with pytest.raises(ConfigError, match="algo_threads"):
        load_config(path, env={})
