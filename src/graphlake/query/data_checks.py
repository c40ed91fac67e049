"""Data checks: named read queries (Cypher or SQL) that pass when they return no rows.

`normalise` validates a `{name: query}` mapping when it is set (a bad name, a query that
is not a read query or does not parse: `DataCheckError`, nothing is published): Cypher is
parsed by `query.parser`, SQL by DuckDB's parser (`read.sql.parse_select`). A bare string
is Cypher if it parses as Cypher, else SQL if DuckDB parses it as one SELECT; `{"language":
"cypher" | "sql", "query": text}` names the language. The stored form always names it
(storage/data_checks.py).

`run_checks` runs every check of a set on one snapshot and reports, per check, whether it
passed and up to `MAX_ROWS` offending rows. A check that cannot run on that snapshot (a
type the schema no longer has, a timeout) fails with its error. `runner` runs one query
(the server passes one that runs it in an isolated worker under its query limits); the
default runs it in this process under `limits`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphlake.errors import DataCheckError, GraphLakeError, QueryError
from graphlake.query import sqlgen

if TYPE_CHECKING:
    import pyarrow as pa

    from graphlake.read.snapshot import Snapshot
    from graphlake.read.sql import SqlLimits

__all__ = [
    "LANGUAGES",
    "MAX_ROWS",
    "CheckResult",
    "Runner",
    "failed",
    "normalise",
    "run_checks",
]

LANGUAGES = ("cypher", "sql")
MAX_ROWS = 20  # offending rows kept per failed check
MAX_CHECKS = 256
MAX_QUERY_CHARS = 100_000
_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,127}")

# (language, snapshot, query text) -> the rows
Runner = Callable[[str, "Snapshot", str], "pa.Table"]


@dataclass
class CheckResult:
    """One check's outcome on one state: `rows` holds up to MAX_ROWS offending rows,
    `more` says whether there were more; `error` is why the check could not run."""

    name: str
    language: str
    query: str
    passed: bool
    rows: list[dict[str, Any]] = field(default_factory=list)
    more: bool = False
    error: str | None = None
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "language": self.language,
            "query": self.query,
            "passed": self.passed,
            "rows": self.rows,
            "more": self.more,
            "error": self.error,
            "seconds": round(self.seconds, 4),
        }


def failed(results: list[CheckResult]) -> list[CheckResult]:
    return [r for r in results if not r.passed]


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise DataCheckError(
            f"invalid data check name {name!r}: a letter, then up to 127 characters from "
            "A-Z a-z 0-9 '_' '-' '.'"
        )
    return name


def _parses(language: str, text: str) -> None:
    if language == "cypher":
        # only when a check is validated or run: the parser, DuckDB and the executor load lazily
        from graphlake.query.parser import parse_query

        parse_query(text)
    else:
        # only when a check is validated or run: the parser, DuckDB and the executor load lazily
        from graphlake.read.sql import parse_select

        parse_select(text)


def _one(name: str, spec: object) -> dict[str, str]:
    if isinstance(spec, Mapping):
        unknown = set(spec) - {"language", "query"}
        language, text = spec.get("language"), spec.get("query")
        if unknown or language not in LANGUAGES:
            raise DataCheckError(
                f"data check {name!r}: give a query string, or "
                '{"language": "cypher" | "sql", "query": TEXT}'
            )
    else:
        language, text = None, spec
    if not isinstance(text, str) or not text.strip():
        raise DataCheckError(f"data check {name!r}: the query must be a non-empty string")
    if len(text) > MAX_QUERY_CHARS:
        raise DataCheckError(
            f"data check {name!r}: the query is longer than {MAX_QUERY_CHARS} characters"
        )
    if language is not None:
        try:
            _parses(language, text)
        except (QueryError, RecursionError) as exc:
            raise DataCheckError(
                f"data check {name!r}: not a read {language} query: {exc}"
            ) from None
        return {"language": language, "query": text}
    errors = {}
    for candidate in LANGUAGES:
        try:
            _parses(candidate, text)
        except (QueryError, RecursionError) as exc:
            errors[candidate] = str(exc)
            continue
        return {"language": candidate, "query": text}
    raise DataCheckError(
        f"data check {name!r} is not a read query in Cypher ({errors['cypher']}) "
        f"or SQL ({errors['sql']})"
    )


def normalise(checks: object) -> dict[str, dict[str, str]]:
    """The stored form of a `{name: query}` mapping, each query validated."""
    if not isinstance(checks, Mapping):
        raise DataCheckError(
            f"data checks are a mapping of names to queries, got a {type(checks).__name__}"
        )
    if len(checks) > MAX_CHECKS:
        raise DataCheckError(f"at most {MAX_CHECKS} data checks per branch")
    return {_check_name(name): _one(name, spec) for name, spec in sorted(checks.items())}


def _bounded_sql(text: str) -> str:
    """The check's SELECT, cut to MAX_ROWS + 1 rows (one more says there are more)."""
    # only when a check is validated or run: the parser, DuckDB and the executor load lazily
    from graphlake.read.sql import parse_select

    return sqlgen.bounded(parse_select(text), MAX_ROWS + 1)


def local_runner(limits: SqlLimits | None = None) -> Runner:
    """Runs a check's query in this process under `limits`."""

    def run(language: str, snapshot: Snapshot, text: str) -> pa.Table:
        if language == "sql":
            # only when a check is validated or run: the parser, DuckDB and the executor load lazily
            from graphlake.read.sql import run_sql

            return run_sql(snapshot, text, limits=limits)
        # only when a check is validated or run: the parser, DuckDB and the executor load lazily
        from graphlake.query.executor import run_query

        return run_query(snapshot, text, limits=limits)

    return run


def run_checks(
    snapshot: Snapshot,
    checks: Mapping[str, Mapping[str, str]],
    runner: Runner | None = None,
) -> list[CheckResult]:
    """Each check's result on `snapshot`, by name."""
    # only when a check is validated or run: the parser, DuckDB and the executor load lazily
    from graphlake.read.floats import shortest_floats

    # only when a check is validated or run: the parser, DuckDB and the executor load lazily
    from graphlake.read.jsonable import jsonable

    # only when a check is validated or run: the parser, DuckDB and the executor load lazily
    from graphlake.read.sql import DEFAULT_TIMEOUT_S, SqlLimits

    run = runner or local_runner(SqlLimits(timeout_s=DEFAULT_TIMEOUT_S))
    results = []
    for name, spec in sorted(checks.items()):
        language, text = spec["language"], spec["query"]
        started = time.perf_counter()
        result = CheckResult(name, language, text, passed=False)
        try:
            query = _bounded_sql(text) if language == "sql" else text
            table = run(language, snapshot, query)
        except GraphLakeError as exc:
            result.error = str(exc)
        else:
            rows = shortest_floats(table.slice(0, MAX_ROWS)).to_pylist()
            result.rows = jsonable(rows)
            result.more = table.num_rows > MAX_ROWS
            result.passed = table.num_rows == 0
        result.seconds = time.perf_counter() - started
        results.append(result)
    return results
