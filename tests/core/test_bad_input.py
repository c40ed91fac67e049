"""Bad input: a typed error with an actionable message, and the graph exactly as it was."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import graphlake as gl
from tests.conftest import state


def unchanged(
    g: gl.Graph, action: Callable[[], object], error: type[Exception], match: str
) -> None:
    before = {b: state(g, b) for b in g.branches()}
    with pytest.raises(error, match=match):
        action()
    assert {b: state(g, b) for b in g.branches()} == before


def tx(
    g: gl.Graph, fn: Callable[[gl.graph.Transaction], None], branch: str = "main"
) -> Callable[[], None]:
    def run() -> None:
        with g.write(branch) as w:
            fn(w)

    return run


CASES = [
    ("unknown type", lambda w: w.insert("Pet", [{"name": "x"}]), gl.UnknownTableError, "Pet"),
    (
        "unknown property",
        lambda w: w.insert("Person", [{"name": "x", "height": 2}]),
        gl.UnknownPropertyError,
        "height",
    ),
    (
        "wrong type",
        lambda w: w.insert("Person", [{"name": "x", "age": "old"}]),
        gl.TypeMismatchError,
        r"Person\.age.*'old'",
    ),
    (
        "wrong key type",
        lambda w: w.insert("Person", [{"name": 5}]),
        gl.TypeMismatchError,
        "Person.name",
    ),
    ("missing key", lambda w: w.insert("Person", [{"age": 5}]), gl.NullValueError, "name"),
    ("null key", lambda w: w.insert("Person", [{"name": None}]), gl.NullValueError, "name"),
    (
        "duplicate in batch",
        lambda w: w.insert("Person", [{"name": "Zoe"}, {"name": "Zoe"}]),
        gl.DuplicateKeyError,
        "Zoe.*more than once",
    ),
    (
        "duplicate against branch",
        lambda w: w.insert("Person", [{"name": "Alice"}]),
        gl.DuplicateKeyError,
        "Alice.*already exist",
    ),
    (
        "enum",
        lambda w: w.insert("Person", [{"name": "x", "role": "ceo"}]),
        gl.ValueConstraintError,
        "ceo",
    ),
    (
        "range",
        lambda w: w.insert("Person", [{"name": "x", "age": 200}]),
        gl.ValueConstraintError,
        "range",
    ),
    (
        "regex",
        lambda w: w.insert("Person", [{"name": "x", "email": "nope"}]),
        gl.ValueConstraintError,
        "check",
    ),
    (
        "unique",
        lambda w: w.insert("Person", [{"name": "x", "email": "alice@x.org"}]),
        gl.UniqueViolationError,
        "email",
    ),
    (
        "unique in batch",
        lambda w: w.insert(
            "Person", [{"name": "x", "email": "a@b"}, {"name": "y", "email": "a@b"}]
        ),
        gl.UniqueViolationError,
        "email",
    ),
    (
        "edge to missing node",
        lambda w: w.insert("Knows", [{"src": "Alice", "dst": "Ghost"}]),
        gl.MissingEndpointError,
        "Ghost",
    ),
    (
        "card exceeded",
        lambda w: (
            w.insert("Company", [{"name": "Beta"}])
            or w.insert("WorksAt", [{"src": "Alice", "dst": "Beta"}])
        ),
        gl.CardinalityError,
        "Alice",
    ),
    (
        "delete node with edges",
        lambda w: w.delete("Person", ["Bob"]),
        gl.NodeHasEdgesError,
        "cascade",
    ),
    (
        "update missing key",
        lambda w: w.update("Person", [{"name": "Ghost", "age": 1}]),
        gl.KeyNotFoundError,
        "Ghost",
    ),
    ("delete missing key", lambda w: w.delete("Person", ["Ghost"]), gl.KeyNotFoundError, "Ghost"),
    (
        "unknown property in update",
        lambda w: w.update("Person", [{"name": "Alice", "nme": 1}]),
        gl.UnknownPropertyError,
        "nme",
    ),
    (
        "wrong type in update",
        lambda w: w.update("Person", [{"name": "Alice", "age": 1.5}]),
        gl.TypeMismatchError,
        "age",
    ),
    (
        "bad date",
        lambda w: w.insert("Company", [{"name": "C", "founded": "yesterday"}]),
        gl.TypeMismatchError,
        "founded",
    ),
    (
        "edge with missing src",
        lambda w: w.insert("Knows", [{"dst": "Bob"}]),
        gl.NullValueError,
        "src",
    ),
    (
        "empty key",
        lambda w: w.insert("Person", [{"name": "Ann"}, {"name": ""}]),
        gl.ValueConstraintError,
        r"Person\.name \(the key\) may not be the empty string",
    ),
    (
        "empty key in upsert",
        lambda w: w.upsert("Company", [{"name": ""}]),
        gl.ValueConstraintError,
        "empty string",
    ),
    (
        "edge to empty key",
        lambda w: w.insert("Knows", [{"src": "", "dst": "Bob"}]),
        gl.ValueConstraintError,
        r"Knows\.src .*empty string",
    ),
    (
        "empty edge id",
        lambda w: w.insert("Knows", [{"id": "", "src": "Bob", "dst": "Alice"}]),
        gl.ValueConstraintError,
        r"Knows\.id .*omit it",
    ),
]


@pytest.mark.parametrize(("label", "fn", "error", "match"), CASES, ids=[c[0] for c in CASES])
def test_bad_write_changes_nothing(people: gl.Graph, label, fn, error, match) -> None:
    unchanged(people, tx(people, fn), error, match)


def test_every_error_is_a_graphlake_error() -> None:
    for _, _, error, _ in CASES:
        assert issubclass(error, gl.GraphLakeError)


def test_bad_write_on_a_branch_changes_nothing(people: gl.Graph) -> None:
    people.create_branch("dev")
    unchanged(
        people,
        tx(people, lambda w: w.insert("Person", [{"name": "Alice"}]), "dev"),
        gl.DuplicateKeyError,
        "Alice",
    )


@pytest.mark.parametrize(
    "name",
    [
        "",
        "..",
        "a/../b",
        "/a",
        "a/",
        "a b",
        "a\tb",
        "a\x00b",
        "a//b",
        ".hidden",
        "x.lock",
        "semi;colon",
    ],
)
def test_invalid_branch_names(people: gl.Graph, name: str) -> None:
    unchanged(people, lambda: people.create_branch(name), gl.InvalidNameError, None)


def test_unknown_and_existing_branch(people: gl.Graph) -> None:
    unchanged(
        people, lambda: people.create_branch("x", from_="nope"), gl.BranchNotFoundError, "nope"
    )
    people.create_branch("dev")
    unchanged(people, lambda: people.create_branch("dev"), gl.BranchExistsError, "dev")
    unchanged(people, lambda: people.write("nope"), gl.BranchNotFoundError, "nope")
    unchanged(people, lambda: people.nodes("Person", branch="nope"), gl.BranchNotFoundError, "nope")
    unchanged(people, lambda: people.delete_branch("nope"), gl.BranchNotFoundError, "nope")


def test_open_folder_that_is_not_a_graph(tmp_path) -> None:
    with pytest.raises(gl.NotAGraphError):
        gl.Graph.open(tmp_path)
    with pytest.raises(gl.NotAGraphError):
        gl.Graph.open(tmp_path / "missing")


def test_init_twice_refused(people: gl.Graph, schema_text: str) -> None:
    unchanged(
        people,
        lambda: gl.Graph.init(people.uri, schema_text, people.storage_options),
        gl.GraphExistsError,
        "already",
    )


def test_malformed_schema_creates_nothing(tmp_path) -> None:
    with pytest.raises(gl.SchemaError, match="line 2"):
        gl.Graph.init(tmp_path / "g", "node A { name: String @key }\nnode B { x: Strin @key }")
    assert not (tmp_path / "g").exists() or not any((tmp_path / "g").iterdir())


def test_jsonl_line_that_is_not_json(people: gl.Graph, tmp_path) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_text('{"type": "Person", "data": {"name": "Q"}}\n{not json}\n')
    unchanged(people, lambda: people.load(f), gl.LoadFormatError, r"bad\.jsonl:2")


def test_jsonl_record_without_type(people: gl.Graph, tmp_path) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_text('{"type": "Person", "data": {"name": "Q"}}\n\n{"data": {}}\n')
    unchanged(people, lambda: people.load(f), gl.LoadFormatError, r":3.*needs")


def test_bad_filter_and_columns(people: gl.Graph) -> None:
    unchanged(people, lambda: people.nodes("Person", where="age >>> 3"), gl.QueryError, "filter")
    unchanged(
        people, lambda: people.nodes("Person", columns=["nope"]), gl.UnknownPropertyError, "nope"
    )
    unchanged(people, lambda: people.nodes("Knows"), gl.UnknownTableError, "node type")
    unchanged(people, lambda: people.edges("Person"), gl.UnknownTableError, "edge type")


def test_cannot_delete_default_branch(people: gl.Graph) -> None:
    unchanged(people, lambda: people.delete_branch("main"), gl.GraphLakeError, "default")


def test_load_unknown_mode(people: gl.Graph) -> None:
    unchanged(people, lambda: people.load([], mode="replace"), gl.DataError, "mode")


def test_messages_carry_no_dependency_source_paths(people: gl.Graph) -> None:
    with pytest.raises(gl.QueryError) as info:
        people.nodes("Person", where="nosuch > 3")
    assert "nosuch" in str(info.value)
    assert ".rs:" not in str(info.value) and "/home/" not in str(info.value)


def test_odd_but_real_keys_round_trip(people: gl.Graph) -> None:
    # Only "" is refused: a key of spaces or one holding a NUL is a string Lance, the key
    # index, SQL and merges all handle like any other (a schema that wants to refuse
    # them can say so with @check on the key).
    odd = ["  ", "a\x00b", " padded "]
    with people.write() as w:
        w.insert("Person", [{"name": k} for k in odd])
        w.insert("Knows", [{"src": "a\x00b", "dst": "  "}])
    for k in odd:
        assert people.get("Person", k) is not None
    with people.write() as w:
        w.update("Person", [{"name": "a\x00b", "age": 7}])
    assert people.get("Person", "a\x00b")["age"] == 7
    with people.write() as w:
        w.delete("Person", odd, cascade=True)
    assert all(people.get("Person", k) is None for k in odd)


def test_check_on_the_key_refuses_blank_keys(tmp_path) -> None:
    g = gl.Graph.init(tmp_path / "g", 'node Tag { name: String @key @check(".*\\S.*") }')
    unchanged(
        g, tx(g, lambda w: w.insert("Tag", [{"name": "   "}])), gl.ValueConstraintError, "check"
    )


def test_deleting_an_empty_key_is_not_refused_as_empty(people: gl.Graph) -> None:
    # Deletes skip the empty-key check so a "" written before it existed can be removed;
    # on a graph without one, deleting it is an ordinary missing key.
    unchanged(people, tx(people, lambda w: w.delete("Person", [""])), gl.KeyNotFoundError, "''")
