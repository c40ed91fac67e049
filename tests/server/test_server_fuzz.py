"""Schemathesis over /openapi.json: generated requests (valid and invalid) never get a 5xx.

Bounded: a fixed number of examples per operation, on a server of its own (the fuzzer
creates, writes and deletes branches at random).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error

import graphlake as gl
from tests.server.harness import ADMIN_TOKEN, Server, seed, write_config

EXAMPLES_PER_OPERATION = 25
FUZZ_BRANCH = "fuzz"


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    d = tmp_path_factory.mktemp("fuzz")
    seed(d / "graph")
    gl.Graph.open(d / "graph").create_branch(FUZZ_BRANCH)
    config = write_config(
        d / "server.toml",
        protected=["main"],
        limits={
            "max_upload_bytes": 64 * 1024,
            "sql_max_rows": 1000,
            "sql_timeout_s": 5,
            "page_max_rows": 500,
        },
    )
    srv = Server(d / "graph", d, ["--config", str(config), "--log-level", "warning"]).start()
    yield srv
    srv.stop()


@schemathesis.serializer("application/x-ndjson")
def _ndjson(ctx: schemathesis.SerializationContext, value: object) -> bytes:
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8", "surrogatepass")


# Random branch names mostly meet 400/404; "pinned" runs aim the path at a real branch and
# table so generated bodies reach the library's validation and the write paths.
RUNS = {
    "positive": (schemathesis.GenerationMode.POSITIVE, {}),
    "negative": (schemathesis.GenerationMode.NEGATIVE, {}),
    "pinned": (schemathesis.GenerationMode.POSITIVE, {"branch": FUZZ_BRANCH, "table": "Person"}),
}


@pytest.mark.slow
@pytest.mark.parametrize("run_name", list(RUNS))
def test_no_server_errors(fuzz_server: Server, run_name: str) -> None:
    # schemathesis' pytest loaders (`from_fixture`) do not work with pytest 9, so each
    # operation's strategy runs under hypothesis here; failures are gathered per operation.
    mode, pinned = RUNS[run_name]
    api = schemathesis.openapi.from_url(f"{fuzz_server.url}/openapi.json")
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    failures: dict[str, str] = {}
    for result in api.get_all_operations():
        operation = result.ok()
        names = {p.name for p in operation.iter_parameters() if p.location == "path"}
        path_parameters = {k: v for k, v in pinned.items() if k in names}
        if pinned and not path_parameters:
            continue

        @given(
            case=operation.as_strategy(
                generation_mode=mode, path_parameters=path_parameters or None
            )
        )
        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.generate],
        )
        def run(case: schemathesis.Case) -> None:
            case.call_and_validate(headers=headers, checks=[not_a_server_error], timeout=60)

        try:
            run()
        except Unsatisfiable:  # nothing to make invalid (e.g. GET /health in negative mode)
            continue
        except Exception as exc:  # keep fuzzing the other operations
            failures[operation.label] = f"{type(exc).__name__}: {exc}"[:2000]
    assert not failures, "\n\n".join(f"{k}\n{v}" for k, v in failures.items())
    assert "unexpected error" not in fuzz_server.log()
