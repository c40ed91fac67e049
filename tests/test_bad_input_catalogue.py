"""The bad-input catalogue (issue 7): one table of malformed inputs, each refused cleanly.

Every case names what it expects (a typed `GraphLakeError` subclass, a CLI exit code, or
an HTTP status with its error type) and, after it, the graph must be exactly as it was:
the same branch list, the same head of every branch, the same rows on every branch
(`state`), and not one file added, removed or resized under the graph root (so a refused
write published nothing: no commit object, no Lance version, no recovery record).

One seeded graph serves the whole module (the cases change nothing, which is what they
check); a real `graphlake serve` process on 127.0.0.1 answers the HTTP cases and the CLI
runs in process (typer's runner: the same exit codes and stderr, without a second of
start-up per case). Local backend only. The scattered tests these cases summarise stay
where they are (tests/core/test_bad_input.py, tests/schema, tests/cli, tests/server).
"""

from __future__ import annotations

import http.client
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import Result
from typer.testing import CliRunner

import graphlake as gl
from graphlake.cli.app import app
from graphlake.errors import SchemaChangeRefusedError, SchemaDataError, SchemaUnchangedError
from tests.conftest import SOCIAL, seed_people, state
from tests.server.harness import READ_TOKEN, WRITE_TOKEN, Server, write_config

UPLOAD_LIMIT = 8 * 1024
BODY_LIMIT = 16 * 1024

# --- expectations -------------------------------------------------------------------------


@dataclass(frozen=True)
class Raises:
    """The library raises exactly this class (or a subclass) with a matching message."""

    error: type[gl.GraphLakeError]
    match: str | None = None


@dataclass(frozen=True)
class Exits:
    """The CLI exits `code`; `error_line`: stderr is exactly one `error: ...` line."""

    code: int
    match: str | None = None
    error_line: bool = True


USAGE = Exits(2, error_line=False)  # click/typer usage errors: exit 2, no traceback


@dataclass(frozen=True)
class Http:
    """The server answers `status` with the one error body shape and this error type."""

    status: int
    type: str
    match: str | None = None


# --- the world the cases run in -----------------------------------------------------------


class Place(Enum):
    """A folder of the world that a table row names before the world exists."""

    ROOT = "root"  # the seeded graph
    FRESH = "fresh"  # where a refused `init` must create nothing
    INPUTS = "files"  # the folder of input files


ROOT, FRESH, INPUTS = Place.ROOT, Place.FRESH, Place.INPUTS


@dataclass(frozen=True)
class F:
    """A table row's input file: `name` in the world's folder of inputs."""

    name: str


@dataclass
class World:
    g: gl.Graph
    root: Path
    files: Path  # inputs the cases read (outside the graph root)
    fresh: Path  # where refused `init`s must create nothing
    server: Server
    anon: httpx.Client
    reader: httpx.Client
    writer: httpx.Client
    baseline: dict[str, Any] = field(default_factory=dict)

    def cli(self, *args: object) -> Result:
        return CliRunner().invoke(app, [str(a) for a in args])

    def tx(self, fn: Callable[[Any], object], branch: str = "main") -> None:
        with self.g.write(branch, message="bad input") as w:
            fn(w)

    def init_fresh(self, schema: str | Path) -> None:
        gl.Graph.init(self.fresh, schema)

    def raw_get(self, path: str) -> httpx.Response:
        """GET `path` exactly as written (httpx would normalise `..` segments)."""
        host, port = self.server.url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        try:
            conn.request("GET", path, headers={"Authorization": f"Bearer {READ_TOKEN}"})
            r = conn.getresponse()
            return httpx.Response(
                r.status,
                content=r.read(),
                headers={"content-type": r.getheader("content-type", "")},
            )
        finally:
            conn.close()

    def f(self, name: str) -> Path:
        return self.files / name

    def resolve(self, value: Any) -> Any:
        """A table row's argument, its places and files made paths of this world."""
        if isinstance(value, Place):
            return getattr(self, value.value)
        if isinstance(value, F):
            return self.f(value.name)
        return value


def _jsonl(*records: object) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


# Client input Python's json parser cannot take (issue 12): 1,000 levels of nesting
# (RecursionError) and an integer literal past the 4,300-digit limit (ValueError).
DEEP_LINE = b'{"type": "Person", "data": {"name": "D", "age": ' + b"[" * 1000 + b"]" * 1000 + b"}}"
HUGE_INT_LINE = b'{"type": "Person", "data": {"name": "H", "age": 1' + b"0" * 5000 + b"}}"
FAR_DAYS = 3_000_000  # a Date of year 10183: Arrow stores it, Python cannot read it back
FAR_DATE = "founded=10183-09-21 is outside the supported Date range"

FILES: dict[str, bytes] = {
    "not-json.jsonl": b'{"type": "Person", "data": {"name": "Q1"}}\n{not json}\n',
    "no-type.jsonl": _jsonl({"type": "Person", "data": {"name": "Q2"}}, {"data": {}}),
    "not-utf8.jsonl": b'{"type": "Person", "data": {"name": "Q3"}}\n\xff\xfe{}\n',
    "array-record.jsonl": b"[1, 2]\n",
    "edge-no-to.jsonl": _jsonl({"edge": "Knows", "from": "Alice"}),
    "unknown-type.jsonl": _jsonl({"type": "Pet", "data": {"name": "Rex"}}),
    "late-range.jsonl": _jsonl(
        {"type": "Person", "data": {"name": "Q4"}},
        {"type": "Person", "data": {"name": "Q5", "age": 999}},
    ),
    "dup-key.jsonl": _jsonl({"type": "Person", "data": {"name": "Alice"}}),
    "orphan-edge.jsonl": _jsonl(
        {"type": "Person", "data": {"name": "Q6"}}, {"edge": "Knows", "from": "Q6", "to": "Ghost"}
    ),
    "ok.jsonl": _jsonl({"type": "Person", "data": {"name": "Q7"}}),
    "empty-key.jsonl": _jsonl(
        {"type": "Person", "data": {"name": "Q10"}}, {"type": "Person", "data": {"name": ""}}
    ),
    "edge-empty-from.jsonl": _jsonl({"edge": "Knows", "from": "", "to": "Bob"}),
    "deep.jsonl": DEEP_LINE + b"\n",
    "huge-int.jsonl": HUGE_INT_LINE + b"\n",
    "far-date.jsonl": _jsonl({"type": "Company", "data": {"name": "Far", "founded": FAR_DAYS}}),
    "garbage.parquet": b"PAR1 this is not parquet",
    "bad.pg": b"node A { name: String @key }\nnode B { x: Strin @key }\n",
}
SCHEMAS = {
    "syntax": "node A { name: String @key",
    "unknown-type": "node A { name: Strng @key }",
    "reserved-property": "node A { k: String @key  id: I32 }",
    "reserved-type-name": "node _A { k: String @key }",
    "no-key": "node A { name: String }",
    "nullable-key": "node A { name: String? @key }",
    "unknown-annotation": "node A { k: String @key  a: I32 @foo }",
    "range-on-string": "node A { k: String @key  a: String @range(0..1) }",
    "bad-regex": 'node A { k: String @key  a: String @check("(") }',
    "card-on-node": "node A @card(0..1) { k: String @key }",
    "unknown-endpoint": "node A { k: String @key }\nedge E: A -> B",
    "empty": "// nothing but a comment\n",
}


def _far_company() -> pa.Table:
    return pa.table({"name": ["Far"], "founded": pa.array([FAR_DAYS], pa.date32())})


# Derived state (persisted adjacencies, graphlake.adjacency.persist) is a cache a read
# may write: an algorithm refusing an unknown node key has built the head's adjacency
# first, which is right. It is not data or history, so "changes nothing" leaves it out.
DERIVED = os.path.join("_graphlake", "derived") + os.sep


def _tree(root: Path) -> dict[str, int]:
    out = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if not rel.startswith(DERIVED):
                out[rel] = p.stat().st_size
    return out


def _seed(g: gl.Graph) -> None:
    seed_people(g)
    g.create_branch("dev")
    # left/right: divergent updates of Bob's age (a data conflict).
    for name, age in (("left", 41), ("right", 42)):
        g.create_branch(name)
        with g.write(name, message=f"Bob is {age}") as w:
            w.update("Person", [{"name": "Bob", "age": age}])
    # u1/u2: different people take the same email (a constraint violation once merged).
    for name, who in (("u1", "Bob"), ("u2", "Carol")):
        g.create_branch(name)
        with g.write(name, message=f"{who} takes shared@x.org") as w:
            w.update("Person", [{"name": who, "email": "shared@x.org"}])


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("catalogue")
    root, files = tmp / "graph", tmp / "files"
    files.mkdir()
    for name, data in FILES.items():
        (files / name).write_bytes(data)
    (files / "good.pg").write_text(SOCIAL)
    pq.write_table(pa.table({"name": ["Q8"], "age": ["old"]}), files / "bad-type.parquet")
    pq.write_table(pa.table({"name": ["Q9"], "shoe": [44]}), files / "unknown-col.parquet")
    pq.write_table(_far_company(), files / "far-date.parquet")
    g = gl.Graph.init(root, SOCIAL)
    _seed(g)
    config = write_config(
        tmp / "server.toml",
        protected=["main"],
        limits={
            "max_upload_bytes": UPLOAD_LIMIT,
            "max_body_bytes": BODY_LIMIT,
            "sql_max_rows": 100,
            "sql_timeout_s": 10,
        },
    )
    server = Server(root, tmp, ["--config", str(config)]).start()
    try:
        with (
            server.client() as anon,
            server.client(READ_TOKEN) as reader,
            server.client(WRITE_TOKEN) as writer,
        ):
            w = World(g, root, files, tmp / "fresh", server, anon, reader, writer)
            w.baseline = _everything(w)
            yield w
    finally:
        server.stop()


# --- the catalogue ------------------------------------------------------------------------

Action = Callable[[World], Any]


def case(id_: str, action: Action, expect: Raises | Exits | Http) -> Any:
    return pytest.param(action, expect, id=id_)


def ins(table: str, *rows: dict) -> Callable[[Any], None]:
    return lambda w: w.insert(table, list(rows))


def mutation(branch: str, *operations: dict) -> Action:
    return lambda w: w.writer.post(
        f"/branches/{branch}/mutations", json={"message": "bad", "operations": list(operations)}
    )


def op(kind: str, table: str, *rows: dict) -> dict:
    return {"op": kind, "table": table, "rows": list(rows)}


def _write(method: str, args: tuple[Any, ...]) -> Action:
    """A table row of WRITES as an action: one `w.<method>(*args)` in one transaction."""
    return lambda w: w.tx(lambda t: getattr(t, method)(*args))


def _load(source: Any, options: dict[str, Any]) -> Action:
    """A table row of LOADS as an action: `g.load(source, **options)`."""
    return lambda w: w.g.load(w.resolve(source), **options)


def _cli(args: tuple[Any, ...]) -> Action:
    """A table row of CLI_RUNS as an action: `graphlake *args` in process."""
    return lambda w: w.cli(*map(w.resolve, args))


SCHEMA_CASES = [
    *(
        case(
            f"schema/{name}",
            lambda w, text=text: w.init_fresh(text),
            Raises(gl.SchemaError, "schema error"),
        )
        for name, text in SCHEMAS.items()
    ),
    case(
        "schema/error-names-line",
        lambda w: w.init_fresh(w.f("bad.pg")),
        Raises(gl.SchemaError, "line 2.*Strin"),
    ),
    case(
        "schema/file-not-found",
        lambda w: w.init_fresh(w.f("missing.pg")),
        Raises(gl.SchemaError, "not found"),
    ),
    case(
        "schema/init-over-existing-graph",
        lambda w: gl.Graph.init(w.root, SOCIAL),
        Raises(gl.GraphExistsError, "already"),
    ),
    # Schema changes (`apply_schema`, its CLI and HTTP forms): refused, nothing published.
    case(
        "schema/apply-unparsable",
        lambda w: w.g.apply_schema("node A {", "dev"),
        Raises(gl.SchemaError, "line 1"),
    ),
    case(
        "schema/apply-equal",
        lambda w: w.g.apply_schema(SOCIAL, "dev"),
        Raises(SchemaUnchangedError, "nothing was published"),
    ),
    case(
        "schema/apply-key-change",
        lambda w: w.g.apply_schema(
            SOCIAL.replace("node Company { name: String @key", "node Company { name: I64 @key"),
            "dev",
        ),
        Raises(SchemaChangeRefusedError, "key"),
    ),
    case(
        "schema/apply-violated-by-rows",
        lambda w: w.g.apply_schema(SOCIAL.replace("email: String?", "email: String"), "dev"),
        Raises(SchemaDataError, "Bob"),
    ),
    case(
        "schema/apply-unknown-branch",
        lambda w: w.g.apply_schema(SOCIAL, "nope"),
        Raises(gl.BranchNotFoundError, "nope"),
    ),
    case(
        "cli/schema-apply-error-names-line",
        lambda w: w.cli("schema", "apply", w.root, w.f("bad.pg"), "--branch", "dev"),
        Exits(1, "line 2"),
    ),
    case(
        "http/403-schema-on-protected-branch",
        lambda w: w.writer.post("/branches/main/schema", json={"schema": SOCIAL}),
        Http(403, "ProtectedBranchError", "protected"),
    ),
    case(
        "http/422-schema-violated-by-rows",
        lambda w: w.writer.post(
            "/branches/dev/schema",
            json={"schema": SOCIAL.replace("email: String?", "email: String")},
        ),
        Http(422, "SchemaDataError", "Bob"),
    ),
]

# One operation in one transaction on main: (id, transaction method, its arguments, expected).
WRITES: list[tuple[str, str, tuple[Any, ...], Raises]] = [
    (
        "data/unknown-table",
        "insert",
        ("Pet", [{"name": "Rex"}]),
        Raises(gl.UnknownTableError, "Pet"),
    ),
    (
        "data/unknown-property",
        "insert",
        ("Person", [{"name": "X", "height": 2}]),
        Raises(gl.UnknownPropertyError, "height"),
    ),
    (
        "data/wrong-type",
        "insert",
        ("Person", [{"name": "X", "age": "old"}]),
        Raises(gl.TypeMismatchError, r"Person\.age"),
    ),
    (
        "data/int-overflow",
        "insert",
        ("Person", [{"name": "X", "age": 2**40}]),
        Raises(gl.TypeMismatchError, "I32"),
    ),
    (
        "data/bool-for-int",
        "insert",
        ("Person", [{"name": "X", "age": True}]),
        Raises(gl.TypeMismatchError, "age"),
    ),
    (
        "data/wrong-key-type",
        "insert",
        ("Person", [{"name": 1.5}]),
        Raises(gl.TypeMismatchError, "Person.name"),
    ),
    (
        "data/bad-date",
        "insert",
        ("Company", [{"name": "C", "founded": "soon"}]),
        Raises(gl.TypeMismatchError, "founded"),
    ),
    (
        "data/date-out-of-range",
        "insert",
        ("Company", _far_company()),
        Raises(gl.ValueConstraintError, f"^Company: 'Far': {FAR_DATE}"),
    ),
    (
        "data/date-out-of-range-as-days-in-upsert",
        "upsert",
        ("Company", [{"name": "Acme", "founded": FAR_DAYS}]),
        Raises(gl.ValueConstraintError, f"^Company: 'Acme': {FAR_DATE}"),
    ),
    (
        "data/row-not-a-dict",
        "insert",
        ("Person", ["Alice"]),
        Raises(gl.DataError, "expected a dict"),
    ),
    (
        "data/missing-required-key",
        "insert",
        ("Person", [{"age": 5}]),
        Raises(gl.NullValueError, "name"),
    ),
    ("data/null-key", "insert", ("Person", [{"name": None}]), Raises(gl.NullValueError, "name")),
    (
        "data/edge-without-src",
        "insert",
        ("Knows", [{"dst": "Bob"}]),
        Raises(gl.NullValueError, "src"),
    ),
    # An empty string is no key, edge id or endpoint (spaces and NUL are: see
    # tests/core/test_bad_input.py).
    (
        "data/empty-key",
        "insert",
        ("Person", [{"name": ""}]),
        Raises(gl.ValueConstraintError, r"Person\.name \(the key\).*empty string"),
    ),
    (
        "data/empty-key-among-good-rows",
        "insert",
        ("Person", [{"name": "Fine"}, {"name": ""}]),
        Raises(gl.ValueConstraintError, "empty string"),
    ),
    (
        "data/empty-key-in-upsert",
        "upsert",
        ("Person", [{"name": "", "age": 3}]),
        Raises(gl.ValueConstraintError, "empty string"),
    ),
    (
        "data/empty-key-in-update",
        "update",
        ("Person", [{"name": "", "age": 3}]),
        Raises(gl.ValueConstraintError, "empty string"),
    ),
    (
        "data/empty-key-in-overwrite",
        "overwrite",
        ("Company", [{"name": ""}]),
        Raises(gl.ValueConstraintError, "empty string"),
    ),
    (
        "data/empty-edge-src",
        "insert",
        ("Knows", [{"src": "", "dst": "Bob"}]),
        Raises(gl.ValueConstraintError, r"Knows\.src .*empty string"),
    ),
    (
        "data/empty-edge-dst",
        "insert",
        ("Knows", [{"src": "Alice", "dst": ""}]),
        Raises(gl.ValueConstraintError, r"Knows\.dst .*empty string"),
    ),
    (
        "data/empty-edge-id",
        "insert",
        ("Knows", [{"id": "", "src": "Carol", "dst": "Alice"}]),
        Raises(gl.ValueConstraintError, r"Knows\.id .*empty string"),
    ),
    (
        "data/empty-edge-endpoint-in-update",
        "update",
        ("Knows", [{"id": "k1", "dst": ""}]),
        Raises(gl.ValueConstraintError, r"Knows\.dst .*empty string"),
    ),
    (
        "data/duplicate-key-in-batch",
        "insert",
        ("Person", [{"name": "Zoe"}, {"name": "Zoe"}]),
        Raises(gl.DuplicateKeyError, "more than once"),
    ),
    (
        "data/duplicate-key-on-branch",
        "insert",
        ("Person", [{"name": "Alice"}]),
        Raises(gl.DuplicateKeyError, "already exist"),
    ),
    (
        "data/duplicate-edge-id",
        "insert",
        ("Knows", [{"id": "k1", "src": "Carol", "dst": "Alice"}]),
        Raises(gl.DuplicateKeyError, "k1"),
    ),
    (
        "data/range",
        "insert",
        ("Person", [{"name": "X", "age": 200}]),
        Raises(gl.ValueConstraintError, "range"),
    ),
    (
        "data/check-regex",
        "insert",
        ("Person", [{"name": "X", "email": "nope"}]),
        Raises(gl.ValueConstraintError, "check"),
    ),
    (
        "data/enum",
        "insert",
        ("Person", [{"name": "X", "role": "ceo"}]),
        Raises(gl.ValueConstraintError, "ceo"),
    ),
    (
        "data/enum-in-upsert",
        "upsert",
        ("Person", [{"name": "Bob", "role": "ceo"}]),
        Raises(gl.ValueConstraintError, "ceo"),
    ),
    (
        "data/unique-vs-branch",
        "insert",
        ("Person", [{"name": "X", "email": "alice@x.org"}]),
        Raises(gl.UniqueViolationError, "email"),
    ),
    (
        "data/unique-in-batch",
        "insert",
        ("Person", [{"name": "X", "email": "a@b"}, {"name": "Y", "email": "a@b"}]),
        Raises(gl.UniqueViolationError, "email"),
    ),
    (
        "data/missing-edge-endpoint",
        "insert",
        ("Knows", [{"src": "Alice", "dst": "Ghost"}]),
        Raises(gl.MissingEndpointError, "Ghost"),
    ),
    (
        "data/delete-node-with-edges",
        "delete",
        ("Person", ["Bob"]),
        Raises(gl.NodeHasEdgesError, "cascade"),
    ),
    (
        "data/overwrite-orphans-edges",
        "overwrite",
        ("Person", [{"name": "Solo"}]),
        Raises(gl.NodeHasEdgesError, "cascade"),
    ),
    (
        "data/update-missing-key",
        "update",
        ("Person", [{"name": "Ghost", "age": 1}]),
        Raises(gl.KeyNotFoundError, "Ghost"),
    ),
    (
        "data/delete-missing-key",
        "delete",
        ("Person", ["Ghost"]),
        Raises(gl.KeyNotFoundError, "Ghost"),
    ),
    ("data/delete-non-key", "delete", ("Person", [{"n": 1}]), Raises(gl.DataError, "keys")),
    ("data/cascade-on-edge", "delete", ("Knows", ["k1"], True), Raises(gl.DataError, "cascade")),
]

DATA_CASES = [
    *(case(id_, _write(method, args), expect) for id_, method, args, expect in WRITES),
    case(
        "data/card-exceeded",
        lambda w: w.tx(
            lambda t: (
                t.insert("Company", [{"name": "Beta"}]),
                t.insert("WorksAt", [{"src": "Alice", "dst": "Beta"}]),
            )
        ),
        Raises(gl.CardinalityError, "Alice"),
    ),
    case(
        "data/late-error-discards-earlier-ops",
        lambda w: w.tx(
            lambda t: (
                t.insert("Person", [{"name": "Fine"}]),
                t.update("Person", [{"name": "Bob", "age": 41}]),
                t.insert("Knows", [{"src": "Fine", "dst": "Ghost"}]),
            )
        ),
        Raises(gl.MissingEndpointError, "Ghost"),
    ),
    case(
        "data/bad-write-on-a-branch",
        lambda w: w.tx(ins("Person", {"name": "Alice"}), branch="dev"),
        Raises(gl.DuplicateKeyError, "Alice"),
    ),
]

# `g.load(source, **options)` on main: (id, source, options, expected).
LOADS: list[tuple[str, Any, dict[str, Any], Raises]] = [
    (
        "load/jsonl-not-json",
        F("not-json.jsonl"),
        {},
        Raises(gl.LoadFormatError, r"not-json\.jsonl:2"),
    ),
    (
        "load/jsonl-record-without-type",
        F("no-type.jsonl"),
        {},
        Raises(gl.LoadFormatError, r":2.*needs"),
    ),
    ("load/jsonl-not-utf8", F("not-utf8.jsonl"), {}, Raises(gl.LoadFormatError, "UTF-8")),
    (
        "load/jsonl-record-not-object",
        F("array-record.jsonl"),
        {},
        Raises(gl.LoadFormatError, "JSON object"),
    ),
    ("load/jsonl-edge-without-to", F("edge-no-to.jsonl"), {}, Raises(gl.LoadFormatError, '"to"')),
    ("load/jsonl-unknown-type", F("unknown-type.jsonl"), {}, Raises(gl.UnknownTableError, "Pet")),
    (
        "load/jsonl-violation-on-line-2",
        F("late-range.jsonl"),
        {},
        Raises(gl.ValueConstraintError, "range"),
    ),
    (
        "load/jsonl-orphan-edge",
        F("orphan-edge.jsonl"),
        {},
        Raises(gl.MissingEndpointError, "Ghost"),
    ),
    (
        "load/records-duplicate-key",
        [{"type": "Person", "data": {"name": "Alice"}}],
        {},
        Raises(gl.DuplicateKeyError, "Alice"),
    ),
    (
        "load/jsonl-empty-key",
        F("empty-key.jsonl"),
        {},
        Raises(gl.ValueConstraintError, "empty string"),
    ),
    (
        "load/jsonl-edge-empty-from",
        F("edge-empty-from.jsonl"),
        {},
        Raises(
            gl.ValueConstraintError,
            r"edge-empty-from\.jsonl:1: Knows '' -> 'Bob': src .*empty string",
        ),
    ),
    (
        "load/records-empty-key",
        [{"type": "Company", "data": {"name": ""}}],
        {"mode": "merge"},
        Raises(gl.ValueConstraintError, "empty string"),
    ),
    (
        "load/arrow-empty-key",
        pa.table({"name": ["Q11", ""]}),
        {"table": "Company"},
        Raises(gl.ValueConstraintError, r"Company\.name .*empty string"),
    ),
    (
        "load/jsonl-nested-too-deep",
        F("deep.jsonl"),
        {},
        Raises(gl.LoadFormatError, r"deep\.jsonl:1: .*nested too deeply"),
    ),
    (
        "load/jsonl-integer-too-long",
        F("huge-int.jsonl"),
        {},
        Raises(gl.LoadFormatError, r"huge-int\.jsonl:1: .*more than 4300 digits"),
    ),
    (
        "load/jsonl-date-out-of-range",
        F("far-date.jsonl"),
        {},
        Raises(gl.ValueConstraintError, rf"far-date\.jsonl:1: Company: 'Far': {FAR_DATE}"),
    ),
    (
        "load/parquet-date-out-of-range",
        F("far-date.parquet"),
        {"table": "Company"},
        Raises(gl.ValueConstraintError, f"^Company: 'Far': {FAR_DATE}"),
    ),
    ("load/missing-file", F("missing.jsonl"), {}, Raises(gl.LoadFormatError, "no such file")),
    ("load/a-directory", INPUTS, {}, Raises(gl.LoadFormatError, "file")),
    (
        "load/parquet-garbage",
        F("garbage.parquet"),
        {"table": "Person"},
        Raises(gl.LoadFormatError, "Parquet"),
    ),
    (
        "load/parquet-without-table",
        F("bad-type.parquet"),
        {},
        Raises(gl.DataError, "needs a table"),
    ),
    (
        "load/parquet-wrong-type",
        F("bad-type.parquet"),
        {"table": "Person"},
        Raises(gl.TypeMismatchError, "age"),
    ),
    (
        "load/parquet-unknown-column",
        F("unknown-col.parquet"),
        {"table": "Person"},
        Raises(gl.UnknownPropertyError, "shoe"),
    ),
    (
        "load/arrow-unknown-table",
        pa.table({"name": ["Q"]}),
        {"table": "Pet"},
        Raises(gl.UnknownTableError, "Pet"),
    ),
    (
        "load/table-with-jsonl",
        F("ok.jsonl"),
        {"table": "Person"},
        Raises(gl.DataError, "Parquet or Arrow"),
    ),
    ("load/bad-mode", F("ok.jsonl"), {"mode": "replace"}, Raises(gl.DataError, "mode")),
    (
        "load/unknown-branch",
        F("ok.jsonl"),
        {"branch": "nope"},
        Raises(gl.BranchNotFoundError, "nope"),
    ),
    ("load/not-loadable", 5, {}, Raises(gl.DataError, "int")),
]

LOAD_CASES = [case(id_, _load(source, options), expect) for id_, source, options, expect in LOADS]

API_CASES = [
    case(
        "api/algo-damping-out-of-range",
        lambda w: w.g.algo.pagerank("Knows", damping=1.0),
        Raises(gl.AlgorithmError, "damping"),
    ),
    case(
        "api/algo-unknown-source",
        lambda w: w.g.algo.shortest_paths("Knows", "Nobody"),
        Raises(gl.KeyNotFoundError, "Nobody"),
    ),
    case(
        "api/algo-memory-limit-not-an-integer",
        lambda w: w.g.algo.louvain("Knows", max_memory_mb=0.5),
        Raises(gl.AlgorithmError, "max_memory_mb"),
    ),
    case(
        "api/write-unknown-branch",
        lambda w: w.g.write("nope"),
        Raises(gl.BranchNotFoundError, "nope"),
    ),
    case(
        "api/read-unknown-branch",
        lambda w: w.g.nodes("Person", branch="nope"),
        Raises(gl.BranchNotFoundError, "nope"),
    ),
    *(
        case(
            f"api/bad-branch-name-{label}",
            lambda w, n=name: w.g.create_branch(n),
            Raises(gl.InvalidNameError),
        )
        for label, name in (
            ("dotdot", "../escape"),
            ("absolute", "/etc"),
            ("empty", ""),
            ("space", "a b"),
            ("nul", "a\x00b"),
            ("lock", "x.lock"),
            ("not-a-string", 5),
        )
    ),
    case(
        "api/write-path-traversal",
        lambda w: w.g.write("a/../../b"),
        Raises(gl.InvalidNameError, ".."),
    ),
    case(
        "api/branch-exists", lambda w: w.g.create_branch("dev"), Raises(gl.BranchExistsError, "dev")
    ),
    case(
        "api/branch-from-unknown",
        lambda w: w.g.create_branch("x", from_="nope"),
        Raises(gl.BranchNotFoundError, "nope"),
    ),
    case(
        "api/delete-unknown-branch",
        lambda w: w.g.delete_branch("nope"),
        Raises(gl.BranchNotFoundError, "nope"),
    ),
    case(
        "api/delete-default-branch",
        lambda w: w.g.delete_branch("main"),
        Raises(gl.GraphLakeError, "default"),
    ),
    # An unknown (well-formed) commit id is reported as an unknown branch: `resolve`
    # tries the branch first; a malformed one is an invalid name.
    case(
        "api/unknown-commit-id",
        lambda w: w.g.log("01ARZ3NDEKTSV4RRFFQ69G5FAV"),
        Raises(gl.BranchNotFoundError, "01ARZ3NDEKTSV4RRFFQ69G5FAV"),
    ),
    case(
        "api/unknown-full-commit-id",
        lambda w: w.g.log("ab" * 20),
        Raises(gl.CommitNotFoundError, "abab"),
    ),
    case(
        "api/malformed-commit-id",
        lambda w: w.g.snapshot("deadbeef!"),
        Raises(gl.InvalidNameError, "!"),
    ),
    case(
        "api/diff-unknown-branch",
        lambda w: w.g.diff("main", "nope"),
        Raises(gl.BranchNotFoundError, "nope"),
    ),
    case(
        "api/merge-into-itself",
        lambda w: w.g.merge("main", into="main"),
        Raises(gl.MergeError, "itself"),
    ),
    case(
        "api/merge-unknown-source",
        lambda w: w.g.merge("nope"),
        Raises(gl.BranchNotFoundError, "nope"),
    ),
    case(
        "api/merge-unknown-strategy",
        lambda w: w.g.merge("dev", strategy="mine"),
        Raises(gl.MergeError, "strategy"),
    ),
    case(
        "api/merge-bad-lineage",
        lambda w: w.g.merge("dev", lineage="maybe"),
        Raises(gl.MergeError, "lineage"),
    ),
    case(
        "api/merge-tiny-memory-budget",
        lambda w: w.g.merge("dev", memory_budget=1024),
        Raises(gl.MergeError, "memory_budget"),
    ),
    case(
        "api/merge-divergent-update",
        lambda w: w.g.merge("left", into="right"),
        Raises(gl.MergeConflictError, "divergent_update"),
    ),
    case(
        "api/merge-unique-violation",
        lambda w: w.g.merge("u1", into="u2"),
        Raises(gl.MergeConflictError, "unique_violation"),
    ),
    case(
        "api/merge-many-duplicate-source",
        lambda w: w.g.merge_many(["dev", "dev"]),
        Raises(gl.MergeError, "twice"),
    ),
    case("api/merge-many-empty", lambda w: w.g.merge_many([]), Raises(gl.MergeError, "non-empty")),
    case("api/merge-many-a-string", lambda w: w.g.merge_many("dev"), Raises(gl.MergeError, "list")),
    case(
        "api/merge-many-target-among-sources",
        lambda w: w.g.merge_many(["dev", "main"]),
        Raises(gl.MergeError, "itself"),
    ),
    case(
        "api/merge-many-conflict",
        lambda w: w.g.merge_many(["left", "right"], into="dev"),
        Raises(gl.MergeConflictError, "divergent_update"),
    ),
    *(
        case(f"api/sql-{label}", lambda w, q=query: w.g.sql(q), Raises(gl.QueryError, match))
        for label, query, match in (
            ("delete", "DELETE FROM Person", "read-only"),
            ("insert", "INSERT INTO Person (id) VALUES ('x')", "read-only"),
            ("create", "CREATE TABLE t (a INT)", "read-only"),
            ("attach", "ATTACH 'other.db'", "read-only"),
            ("copy-to-file", "COPY Person TO 'leak.csv'", "read-only"),
            ("set-config", "SET enable_external_access = true", "read-only"),
            ("install", "INSTALL httpfs", "read-only"),
            ("read-file", "SELECT * FROM read_csv('/etc/passwd')", "disabled"),
            ("glob-files", "SELECT * FROM glob('/etc/*')", "disabled"),
            ("explain-analyze-copy", "EXPLAIN ANALYZE COPY Person TO 'leak.csv'", "disabled"),
            ("two-statements", "SELECT 1; SELECT 2", "exactly one"),
            ("syntax", "SELEC nonsense", "SQL error"),
        )
    ),
    case(
        "api/bad-filter",
        lambda w: w.g.nodes("Person", where="age >>> 3"),
        Raises(gl.QueryError, "filter"),
    ),
    case(
        "api/unknown-column",
        lambda w: w.g.nodes("Person", columns=["nope"]),
        Raises(gl.UnknownPropertyError, "nope"),
    ),
    case(
        "api/edge-type-read-as-nodes",
        lambda w: w.g.nodes("Knows"),
        Raises(gl.UnknownTableError, "node type"),
    ),
    case(
        "api/get-unknown-type", lambda w: w.g.get("Pet", "x"), Raises(gl.UnknownTableError, "Pet")
    ),
    case(
        "api/get-bad-key-type",
        lambda w: w.g.get("Person", 5.5),
        Raises(gl.TypeMismatchError, "key"),
    ),
    case(
        "api/open-not-a-graph",
        lambda w: gl.Graph.open(w.files),
        Raises(gl.NotAGraphError, "not a graphlake graph"),
    ),
    case(
        "api/transaction-reused",
        lambda w: (lambda t: (t.commit_now(), t.insert("Person", [{"name": "Late"}])))(
            w.g.write(message="empty")
        ),
        Raises(gl.GraphLakeError, "already been committed"),
    ),
]

# `graphlake ARGS...`, run in process: (id, arguments, expected exit).
CLI_RUNS: list[tuple[str, tuple[Any, ...], Exits]] = [
    ("cli/algo-unknown-name", ("algo", ROOT, "closeness", "Knows"), Exits(1, "known: pagerank")),
    # GraphLakeErrors: exit 1 and one `error:` line.
    (
        "cli/load-malformed-jsonl",
        ("load", ROOT, F("not-json.jsonl")),
        Exits(1, r"not-json\.jsonl:2"),
    ),
    ("cli/load-not-utf8", ("load", ROOT, F("not-utf8.jsonl")), Exits(1, "UTF-8")),
    ("cli/load-duplicate-key", ("load", ROOT, F("dup-key.jsonl")), Exits(1, "Alice")),
    ("cli/load-empty-key", ("load", ROOT, F("empty-key.jsonl")), Exits(1, "empty string")),
    (
        "cli/load-parquet-wrong-type",
        ("load", ROOT, F("bad-type.parquet"), "--table", "Person"),
        Exits(1, "age"),
    ),
    ("cli/load-nested-too-deep", ("load", ROOT, F("deep.jsonl")), Exits(1, "nested too deeply")),
    ("cli/load-integer-too-long", ("load", ROOT, F("huge-int.jsonl")), Exits(1, "4300 digits")),
    (
        "cli/load-parquet-date-out-of-range",
        ("load", ROOT, F("far-date.parquet"), "--table", "Company"),
        Exits(1, FAR_DATE),
    ),
    (
        "cli/load-unknown-branch",
        ("load", ROOT, F("ok.jsonl"), "--branch", "nope"),
        Exits(1, "nope"),
    ),
    ("cli/branch-bad-name", ("branch", "create", ROOT, "../x"), Exits(1, "invalid branch name")),
    ("cli/branch-exists", ("branch", "create", ROOT, "dev"), Exits(1, "dev")),
    ("cli/delete-default-branch", ("branch", "delete", ROOT, "main"), Exits(1, "default")),
    ("cli/show-unknown-table", ("show", ROOT, "Pet"), Exits(1, "Pet")),
    ("cli/show-bad-filter", ("show", ROOT, "Person", "--where", "age >>> 3"), Exits(1, "filter")),
    ("cli/log-unknown-branch", ("log", ROOT, "--branch", "nope"), Exits(1, "nope")),
    ("cli/sql-write", ("sql", ROOT, "DELETE FROM Person"), Exits(1, "read-only")),
    (
        "cli/sql-read-file",
        ("sql", ROOT, "SELECT * FROM read_csv('/etc/passwd')"),
        Exits(1, "disabled"),
    ),
    ("cli/init-bad-schema", ("init", FRESH, "--schema", F("bad.pg")), Exits(1, "line 2")),
    ("cli/init-over-existing", ("init", ROOT, "--schema", F("good.pg")), Exits(1, "already")),
    ("cli/not-a-graph", ("show", INPUTS, "Person"), Exits(1, "not a graphlake graph")),
    (
        "cli/insert-row-not-json",
        ("insert", ROOT, "Person", '{"name": "Q1"}', '{"name": Q2}'),
        Exits(1, "argument 2: not valid JSON"),
    ),
    (
        "cli/insert-rows-not-objects",
        ("insert", ROOT, "Person", "--rows", '[{"name": "Q1"}, 7]'),
        Exits(1, "--rows item 2"),
    ),
    (
        "cli/insert-file-not-json",
        ("insert", ROOT, "Person", "--file", F("not-json.jsonl")),
        Exits(1, "not-json.jsonl:"),
    ),
    (
        "cli/insert-existing-key",
        ("insert", ROOT, "Person", '{"name": "Alice"}'),
        Exits(1, "graphlake upsert"),
    ),
    (
        "cli/insert-wrong-type",
        ("insert", ROOT, "Person", '{"name": "Q1", "age": "3"}'),
        Exits(1, "Person.age"),
    ),
    (
        "cli/update-unknown-key",
        ("update", ROOT, "Person", '{"name": "Nobody", "age": 3}'),
        Exits(1, "Nobody"),
    ),
    ("cli/delete-node-with-edges", ("delete", ROOT, "Person", "Alice"), Exits(1, "--cascade")),
    ("cli/delete-no-keys", ("delete", ROOT, "Person"), Exits(1, "no keys")),
    (
        "cli/export-over-existing-file",
        ("export", ROOT, "Person", "-o", F("ok.jsonl")),
        Exits(1, "--force"),
    ),
    (
        "cli/export-table-and-query",
        ("export", ROOT, "Person", "-q", "SELECT 1", "-o", F("x.csv")),
        Exits(1, "exactly one"),
    ),
    (
        "cli/export-write-query",
        ("export", ROOT, "-q", "DELETE FROM Person", "-o", F("x.csv")),
        Exits(1, "read-only"),
    ),
    # merge and merge-many: 1 conflicts, 2 any other error (both with one error line).
    ("cli/merge-into-itself", ("merge", ROOT, "main", "--into", "main"), Exits(2, "itself")),
    ("cli/merge-unknown-source", ("merge", ROOT, "nope"), Exits(2, "nope")),
    ("cli/merge-conflict", ("merge", ROOT, "left", "--into", "right"), Exits(1, "conflict")),
    ("cli/merge-many-duplicate", ("merge-many", ROOT, "dev", "dev"), Exits(2, "twice")),
    # Usage errors: exit 2 from click/typer.
    ("cli/usage-unknown-command", ("frobnicate", ROOT), USAGE),
    ("cli/usage-unknown-option", ("log", ROOT, "--colour"), USAGE),
    ("cli/usage-missing-argument", ("show", ROOT), USAGE),
    ("cli/usage-bad-mode", ("load", ROOT, F("ok.jsonl"), "--mode", "replace"), USAGE),
    ("cli/usage-missing-file", ("load", ROOT, F("missing.jsonl")), USAGE),
    ("cli/usage-bad-strategy", ("merge", ROOT, "dev", "--strategy", "mine"), USAGE),
    ("cli/usage-negative-limit", ("show", ROOT, "Person", "--limit", "-1"), USAGE),
]

CLI_CASES = [case(id_, _cli(args), expect) for id_, args, expect in CLI_RUNS]

HTTP_CASES = [
    case(
        "http/400-algo-iterations-past-cap",
        lambda w: w.reader.post(
            "/branches/main/algo/leiden",
            json={"edge_type": "Knows", "params": {"iterations": 10**6}},
        ),
        Http(400, "AlgorithmError", "iterations"),
    ),
    case(
        "http/400-bad-json",
        lambda w: w.writer.post(
            "/branches/dev/mutations",
            content=b'{"operations": [',
            headers={"Content-Type": "application/json"},
        ),
        Http(400, "BadRequest", "not valid JSON"),
    ),
    case(
        "http/400-bad-branch-name",
        lambda w: w.writer.post("/branches", json={"name": "../escape"}),
        Http(400, "InvalidNameError"),
    ),
    case(
        "http/400-path-traversal",
        lambda w: w.raw_get("/branches/..%2F..%2Fetc/log"),
        Http(400, "RevisionSyntaxError"),
    ),  # reads take revisions; a bad one is a bad name
    case(
        "http/400-sql-write",
        lambda w: w.reader.post("/branches/main/sql", json={"query": "DELETE FROM Person"}),
        Http(400, "QueryError", "read-only"),
    ),
    case(
        "http/400-sql-read-file",
        lambda w: w.reader.post(
            "/branches/main/sql", json={"query": "SELECT * FROM read_text('/etc/hosts')"}
        ),
        Http(400, "QueryError"),
    ),
    case(
        "http/400-load-malformed",
        lambda w: w.writer.post("/branches/dev/load", content=b'{"type": "Person"}\n{oops\n'),
        Http(400, "LoadFormatError", "^upload:2:"),
    ),
    case(
        "http/400-load-not-utf8",
        lambda w: w.writer.post("/branches/dev/load", content=b"\xff\xfe{}\n"),
        Http(400, "LoadFormatError", "^upload: not valid UTF-8"),
    ),
    case(
        "http/400-load-nested-too-deep",
        lambda w: w.writer.post("/branches/dev/load", content=DEEP_LINE),
        Http(400, "LoadFormatError", "^upload:1: .*nested too deeply"),
    ),
    case(
        "http/400-load-integer-too-long",
        lambda w: w.writer.post("/branches/dev/load", content=HUGE_INT_LINE),
        Http(400, "LoadFormatError", "^upload:1: .*4300 digits"),
    ),
    case(
        "http/400-mutation-nested-too-deep",
        lambda w: w.writer.post(
            "/branches/dev/mutations",
            headers={"Content-Type": "application/json"},
            content=b'{"operations": ' + b"[" * 1000 + b"]" * 1000 + b"}",
        ),
        Http(400, "BadRequest"),
    ),
    case(
        "http/400-mutation-integer-too-long",
        lambda w: w.writer.post(
            "/branches/dev/mutations",
            headers={"Content-Type": "application/json"},
            content=b'{"operations": [{"op": "insert", '
            b'"table": "Person", "rows": [{"name": "H", "age": 1' + b"0" * 5000 + b"}]}]}",
        ),
        Http(400, "BadRequest"),
    ),
    case(
        "http/400-merge-into-itself",
        lambda w: w.writer.post("/merge", json={"source": "dev", "into": "dev"}),
        Http(400, "MergeError", "itself"),
    ),
    case(
        "http/400-merge-many-duplicate",
        lambda w: w.writer.post("/merge_many", json={"sources": ["dev", "dev"], "into": "left"}),
        Http(400, "MergeError", "twice"),
    ),
    case(
        "http/401-no-token", lambda w: w.anon.get("/branches"), Http(401, "Unauthorized", "missing")
    ),
    case(
        "http/401-unknown-token",
        lambda w: w.anon.get("/branches", headers={"Authorization": "Bearer not-a-token"}),
        Http(401, "Unauthorized", "unknown"),
    ),
    case(
        "http/403-read-token-writes",
        lambda w: w.reader.post(
            "/branches/dev/mutations", json={"operations": [op("insert", "Person", {"name": "R"})]}
        ),
        Http(403, "Forbidden", "write"),
    ),
    case(
        "http/403-protected-branch",
        mutation("main", op("insert", "Person", {"name": "P"})),
        Http(403, "ProtectedBranchError", "protected"),
    ),
    case(
        "http/404-unknown-branch",
        lambda w: w.reader.get("/branches/nope/log"),
        Http(404, "UnknownRevisionError", "nope"),
    ),
    case(
        "http/404-unknown-table",
        lambda w: w.reader.get("/branches/main/tables/Pet"),
        Http(404, "UnknownTableError", "Pet"),
    ),
    case(
        "http/404-write-unknown-branch",
        mutation("nope", op("insert", "Person", {"name": "N"})),
        Http(404, "BranchNotFoundError", "nope"),
    ),
    case(
        "http/409-branch-exists",
        lambda w: w.writer.post("/branches", json={"name": "dev"}),
        Http(409, "BranchExistsError", "dev"),
    ),
    case(
        "http/409-merge-conflict",
        lambda w: w.writer.post("/merge", json={"source": "left", "into": "right"}),
        Http(409, "MergeConflictError", "divergent_update"),
    ),
    case(
        "http/413-body-too-large",
        mutation(
            "dev",
            op("insert", "Person", *({"name": f"big{i}", "email": "e" * 200} for i in range(100))),
        ),
        Http(413, "PayloadTooLarge"),
    ),
    case(
        "http/413-upload-too-large",
        lambda w: w.writer.post(
            "/branches/dev/load",
            content=_jsonl(*({"type": "Person", "data": {"name": "x" * 90}} for _ in range(120))),
        ),
        Http(413, "PayloadTooLarge"),
    ),
    case(
        "http/422-type-mismatch",
        mutation("dev", op("insert", "Person", {"name": "T", "age": "old"})),
        Http(422, "TypeMismatchError", "age"),
    ),
    case(
        "http/422-duplicate-key",
        mutation("dev", op("insert", "Person", {"name": "Alice"})),
        Http(422, "DuplicateKeyError", "Alice"),
    ),
    case(
        "http/422-missing-endpoint",
        mutation("dev", op("insert", "Knows", {"src": "Alice", "dst": "Ghost"})),
        Http(422, "MissingEndpointError", "Ghost"),
    ),
    case(
        "http/422-card-exceeded",
        mutation("dev", op("insert", "WorksAt", {"id": "w2", "src": "Alice", "dst": "Acme"})),
        Http(422, "CardinalityError"),
    ),
    case(
        "http/422-late-op-fails-whole-batch",
        mutation(
            "dev",
            op("insert", "Person", {"name": "Early"}),
            op("insert", "Person", {"name": "Late", "age": 999}),
        ),
        Http(422, "ValueConstraintError", "range"),
    ),
    case(
        "http/422-empty-key",
        mutation("dev", op("upsert", "Person", {"name": ""})),
        Http(422, "ValueConstraintError", "empty string"),
    ),
    case(
        "http/422-empty-edge-endpoint",
        mutation("dev", op("insert", "Knows", {"src": "Alice", "dst": ""})),
        Http(422, "ValueConstraintError", r"Knows\.dst"),
    ),
    case(
        "http/422-load-empty-key",
        lambda w: w.writer.post("/branches/dev/load", content=FILES["empty-key.jsonl"]),
        Http(422, "ValueConstraintError", "empty string"),
    ),
    case(
        "http/422-date-out-of-range",
        mutation("dev", op("upsert", "Company", {"name": "Acme", "founded": FAR_DAYS})),
        Http(422, "ValueConstraintError", f"^Company: 'Acme': {FAR_DATE}"),
    ),
    case(
        "http/422-load-date-out-of-range",
        lambda w: w.writer.post("/branches/dev/load", content=FILES["far-date.jsonl"]),
        Http(422, "ValueConstraintError", f"^upload:1: Company: 'Far': {FAR_DATE}"),
    ),
    case(
        "http/422-request-validation",
        mutation("dev", {"op": "drop", "table": "Person", "rows": []}),
        Http(422, "RequestValidationError"),
    ),
]

# Data checks (issue 26): refused when set, through every door.
DATA_CHECK_CASES = [
    case(
        "api/data-check-not-a-read-query",
        lambda w: w.g.set_data_checks({"c": "CREATE (p:Person {name: 'x'})"}, "dev"),
        Raises(gl.errors.DataCheckError, "read"),
    ),
    case(
        "api/data-check-bad-name",
        lambda w: w.g.set_data_checks({"no good": "SELECT 1"}, "dev"),
        Raises(gl.errors.DataCheckError, "name"),
    ),
    case(
        "cli/data-check-does-not-parse",
        lambda w: w.cli("data-check", "set", w.root, "c", "SELEC name FROM Person", "-b", "dev"),
        Exits(1, "Cypher .* or SQL"),
    ),
    case(
        "http/400-data-check-sql-write",
        lambda w: w.writer.put(
            "/branches/dev/data-checks", json={"checks": {"c": "DELETE FROM Person"}}
        ),
        Http(400, "DataCheckError", "read"),
    ),
]

CATALOGUE = [
    *SCHEMA_CASES,
    *DATA_CASES,
    *LOAD_CASES,
    *API_CASES,
    *CLI_CASES,
    *HTTP_CASES,
    *DATA_CHECK_CASES,
]


def _everything(w: World) -> dict[str, Any]:
    branches = w.g.branches()
    return {
        "branches": branches,
        "states": {b: state(w.g, b) for b in branches},
        "files": _tree(w.root),
    }


@pytest.mark.parametrize(("action", "expect"), CATALOGUE)
def test_bad_input_is_refused_and_changes_nothing(
    world: World, action: Action, expect: Raises | Exits | Http
) -> None:
    before = world.baseline  # what the graph showed after the previous case
    if isinstance(expect, Raises):
        with pytest.raises(expect.error, match=expect.match):
            action(world)
    elif isinstance(expect, Exits):
        _check_exit(action(world), expect)
    else:
        _check_http(action(world), expect)
    after = _everything(world)
    world.baseline = after  # a failing case must not fail the ones after it
    assert after["branches"] == before["branches"], "the branch list changed"
    for b in before["branches"]:
        assert after["states"][b]["head"] == before["states"][b]["head"], f"{b} head moved"
        assert after["states"][b] == before["states"][b], f"rows of {b} changed"
    added = sorted(set(after["files"]) - set(before["files"]))
    removed = sorted(set(before["files"]) - set(after["files"]))
    assert not added and not removed, f"files added {added[:5]}, removed {removed[:5]}"
    assert after["files"] == before["files"], "a file under the graph root changed size"
    assert not world.fresh.exists(), "a refused init left files behind"


def _check_exit(result: Result, expect: Exits) -> None:
    out = f"exit {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    assert result.exit_code == expect.code, out
    # A Python exception escaping the command shows up as `result.exception`, not SystemExit.
    assert result.exception is None or isinstance(result.exception, SystemExit), out
    assert "Traceback" not in result.stderr, out
    if expect.error_line:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), out
        if expect.match:
            assert _search(expect.match, lines[0]), out


def _check_http(r: httpx.Response, expect: Http) -> None:
    assert r.status_code == expect.status, r.text
    body = r.json()
    assert set(body) <= {"error", "merge_conflicts"} and "error" in body, body
    assert set(body["error"]) == {"type", "message"}, body
    assert body["error"]["type"] == expect.type, body
    if expect.match:
        assert _search(expect.match, body["error"]["message"]), body


def _search(pattern: str, text: str) -> bool:
    import re

    return re.search(pattern, text) is not None


def test_catalogue_size_and_coverage() -> None:
    ids = [p.id for p in CATALOGUE]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    assert len(CATALOGUE) >= 40
    areas = {i.split("/")[0] for i in ids}
    assert areas == {"schema", "data", "load", "api", "cli", "http"}
    statuses = {p.values[1].status for p in CATALOGUE if isinstance(p.values[1], Http)}
    assert statuses >= {400, 401, 403, 404, 409, 413, 422}
    for p in CATALOGUE:
        expect = p.values[1]
        if isinstance(expect, Raises):
            assert issubclass(expect.error, gl.GraphLakeError), p.id
