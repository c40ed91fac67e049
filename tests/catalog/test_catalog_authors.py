"""Authors: parsed and checked, part of a commit's hashed content, old commits unchanged,
the default chain (context, $GRAPHLAKE_AUTHOR, config file, OS user), and every
committing `Graph` call recording the author it is given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import graphlake as gl
from graphlake.catalog import authors
from graphlake.catalog.authors import Author, acting_as, current_author, parse_author
from graphlake.catalog.commits import Commit, TableState
from graphlake.errors import GraphLakeError, InvalidAuthorError

# A commit as graphlake wrote it before authors existed (its id was computed then).
OLD_COMMIT = (
    b'{"format":1,"id":"8aa5b3e9b074fcd94c0609783430fea13053c338","message":"init",'
    b'"meta":{"k":1},"parents":[],"schema_id":"ssssssss","tables":{"Person":'
    b'{"lance_branch":"main","owner":"o1","table_id":"person-1","version":3}},'
    b'"time":"2025-01-02T03:04:05.000000Z"}'
)
TABLES = {"Person": TableState("person-1", "main", 3, "o1")}
SCHEMA = "node Person { name: String @key\n age: I32? }\n"


@pytest.fixture(autouse=True)
def _no_ambient_author(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(authors.AUTHOR_ENV, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def _commit(author: Author | None = None) -> Commit:
    return Commit.create(
        (), "init", "ssssssss", TABLES, {"k": 1}, time="2025-01-02T03:04:05Z", author=author
    )


def test_parse_author_forms() -> None:
    assert parse_author("Ada Lovelace <ada@example.org>") == Author(
        "Ada Lovelace", "ada@example.org"
    )
    assert parse_author("  bob  ") == Author("bob")
    assert str(Author("Ada", "ada@x.org")) == "Ada <ada@x.org>"


@pytest.mark.parametrize("bad", ["", "   ", "<ada@x.org>", "a\nb", "a <b", "x" * 201, 7])
def test_malformed_authors_are_typed_errors(bad: object) -> None:
    with pytest.raises(InvalidAuthorError):
        parse_author(bad)  # type: ignore[arg-type]


def test_old_commits_keep_their_ids_and_read_as_unknown() -> None:
    old = Commit.from_json(OLD_COMMIT, expected_id="8aa5b3e9b074fcd94c0609783430fea13053c338")
    assert old.author is None and old.author_text == "unknown"
    assert old.to_json() == OLD_COMMIT


def test_the_author_is_hashed_content() -> None:
    ada, bob = _commit(Author("Ada", "ada@x.org")), _commit(Author("bob"))
    assert ada.id != bob.id
    assert ada.id != "8aa5b3e9b074fcd94c0609783430fea13053c338"
    again = Commit.from_json(ada.to_json(), expected_id=ada.id)
    assert again.author == Author("Ada", "ada@x.org") and again == ada
    forged = json.loads(ada.to_json())
    forged["author"] = {"name": "Mallory"}
    with pytest.raises(GraphLakeError, match="corrupt"):
        Commit.from_json(json.dumps(forged).encode(), expected_id=ada.id)


def test_default_chain(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(authors, "_os_user", lambda: "osuser")
    assert current_author() == Author("osuser")
    config = tmp_path / "xdg" / "graphlake" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('author = "Conf <conf@x.org>"\n')
    assert current_author() == Author("Conf", "conf@x.org")
    monkeypatch.setenv(authors.AUTHOR_ENV, "Env <env@x.org>")
    assert current_author() == Author("Env", "env@x.org")
    with acting_as("Ctx"):
        assert current_author() == Author("Ctx")
        with acting_as(None):
            assert current_author() == Author("Ctx")
    assert current_author() == Author("Env", "env@x.org")
    monkeypatch.delenv(authors.AUTHOR_ENV)
    config.write_text("author = [1]\n")
    with pytest.raises(InvalidAuthorError, match=r"config\.toml"):
        current_author()


def test_every_committing_call_records_its_author(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA, author="Init <i@x.org>")
    assert g.head().author == Author("Init", "i@x.org")
    with g.write(author="W") as w:
        w.insert("Person", [{"name": "a", "age": 1}])
    assert g.head().author == Author("W")
    g.transact(lambda w: w.upsert("Person", [{"name": "b"}]), author="T")
    assert g.head().author == Author("T")
    g.create_branch("dev")
    g.load([{"type": "Person", "data": {"name": "c"}}], branch="dev", author="L")
    assert g.head("dev").author == Author("L")
    with g.write(author="M2") as w:
        w.insert("Person", [{"name": "d"}])
    result = g.merge("dev", author="Merger")
    assert g.repo.commits.get(result.commit).author == Author("Merger")
    plan = g.apply_schema(SCHEMA + "node Extra { name: String @key }\n", author="S")
    assert plan.commit is not None and g.head().author == Author("S")
    with pytest.raises(InvalidAuthorError):
        g.write(author="<nobody>")
    assert g.head().author == Author("S")  # nothing changed
