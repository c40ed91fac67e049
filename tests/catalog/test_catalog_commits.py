"""Commits: content-addressed ids, serialisation, corruption detection, the store."""

from __future__ import annotations

import hashlib
import json
import pickle
from pathlib import Path

import pytest

from graphlake.catalog.commits import Commit, CommitStore, TableState, is_commit_id
from graphlake.catalog.store import ObjectStore
from graphlake.errors import CommitNotFoundError, GraphLakeError, InvalidNameError

T0 = "2025-01-02T03:04:05.000000Z"
PERSON = TableState("person", "main", 3, "01JOWNER")
KNOWS = TableState("knows", "b-01JX", 1, "01JOTHER")


def make(**overrides: object) -> Commit:
    args: dict[str, object] = {
        "parents": [],
        "message": "m",
        "schema_id": "s1",
        "tables": {"Person": PERSON, "Knows": KNOWS},
        "meta": {"run": "r1", "rows": 3},
        "time": T0,
    }
    args.update(overrides)
    return Commit.create(**args)  # type: ignore[arg-type]


@pytest.fixture
def commits(tmp_path: Path) -> CommitStore:
    return CommitStore(ObjectStore(str(tmp_path / "g")))


# --- ids ---------------------------------------------------------------------------------


def test_id_is_deterministic_and_hex() -> None:
    a, b = make(), make()
    assert a.id == b.id and a == b
    assert is_commit_id(a.id) and len(a.id) == 40


def test_id_is_sha256_of_canonical_content() -> None:
    commit = make()
    stored = json.loads(commit.to_json())
    content = {k: v for k, v in stored.items() if k != "id"}
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert commit.id == hashlib.sha256(canonical.encode()).hexdigest()[:40]


def test_key_order_does_not_matter() -> None:
    a = make(tables={"Person": PERSON, "Knows": KNOWS}, meta={"x": 1, "y": {"b": 2, "a": 1}})
    b = make(tables={"Knows": KNOWS, "Person": PERSON}, meta={"y": {"a": 1, "b": 2}, "x": 1})
    assert a.id == b.id


@pytest.mark.parametrize(
    "change",
    [
        {"message": "other"},
        {"schema_id": "s2"},
        {"time": "2025-01-02T03:04:05.000001Z"},
        {"meta": {"run": "r2", "rows": 3}},
        {"tables": {"Person": PERSON}},
        {"tables": {"Person": TableState("person", "main", 4, "01JOWNER"), "Knows": KNOWS}},
        {"tables": {"Person": TableState("person", "b-2", 3, "01JOWNER"), "Knows": KNOWS}},
        {"tables": {"Person": TableState("person", "main", 3, "01JOTHER"), "Knows": KNOWS}},
        {"parents": ["0" * 40]},
    ],
)
def test_every_field_is_covered_by_the_id(change: dict[str, object]) -> None:
    assert make(**change).id != make().id


def test_parent_order_matters() -> None:
    p1, p2 = "1" * 40, "2" * 40
    assert make(parents=[p1, p2]).id != make(parents=[p2, p1]).id


def test_time_is_normalised_to_utc() -> None:
    commit = make(time="2025-01-02T05:04:05+02:00")
    assert commit.time == "2025-01-02T03:04:05.000000Z"
    assert commit.id == make(time=T0).id
    fresh = make(time=None)
    assert fresh.time.endswith("Z") and len(fresh.time) == len(T0)


@pytest.mark.parametrize(
    "bad",
    [
        {"parents": ["nothex"]},
        {"parents": ["1" * 40, "1" * 40]},
        {"tables": {"Person": ("person", "main", 1, "o")}},
        {"meta": {"x": float("nan")}},
        {"meta": {"x": object()}},
        {"time": "yesterday"},
    ],
)
def test_create_rejects_bad_input(bad: dict[str, object]) -> None:
    with pytest.raises((ValueError, TypeError)):
        make(**bad)


@pytest.mark.parametrize(
    "args",
    [
        ("person", "main", True, "o"),
        ("person", "main", -1, "o"),
        ("person", "main", "1", "o"),
        ("person", "", 1, "o"),
        ("person", "main", 1, ""),
    ],
)
def test_table_state_validation(args: tuple[object, ...]) -> None:
    with pytest.raises(ValueError):
        TableState(*args)  # type: ignore[arg-type]


def test_table_state_rejects_unsafe_table_id() -> None:
    with pytest.raises(InvalidNameError, match="table id"):
        TableState("../x", "main", 1, "o")


# --- serialisation ------------------------------------------------------------------------


def test_json_round_trip_and_pickle() -> None:
    commit = make(parents=["a" * 40], meta={"list": [1, [2, 3]], "nested": {"k": None}})
    again = Commit.from_json(commit.to_json())
    assert again == commit and again.id == commit.id
    assert again.tables["Person"] == PERSON
    assert pickle.loads(pickle.dumps(commit)) == commit
    assert hash(again) == hash(commit)


def test_commits_are_read_only() -> None:
    commit = make(meta={"list": [1, 2], "nested": {"k": 1}})
    with pytest.raises(TypeError):
        commit.tables["Person"] = KNOWS  # type: ignore[index]
    with pytest.raises(TypeError):
        commit.meta["nested"]["k"] = 2  # type: ignore[index]
    with pytest.raises(AttributeError):
        commit.list = [3]  # type: ignore[attr-defined]
    assert commit.meta["list"] == (1, 2)
    # Deriving a new commit from an old one's tables works as with a dict.
    derived = make(tables={**commit.tables, "Person": TableState("person", "main", 9, "o")})
    assert derived.tables["Person"].version == 9 and derived.tables["Knows"] == KNOWS


def _tampered(commit: Commit, **changes: object) -> bytes:
    obj = json.loads(commit.to_json())
    obj.update(changes)
    return json.dumps(obj).encode()


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(lambda c: _tampered(c, message="evil"), id="content-changed"),
        pytest.param(lambda c: _tampered(c, id="0" * 40), id="id-changed"),
        pytest.param(lambda c: _tampered(c, format=99), id="unknown-format"),
        pytest.param(lambda c: c.to_json()[:-5], id="truncated"),
        pytest.param(lambda c: b"\xff\xfe", id="not-json"),
        pytest.param(lambda c: _tampered(c, tables={"P": {"table_id": "../x"}}), id="bad-table"),
    ],
)
def test_corruption_is_detected(data) -> None:  # type: ignore[no-untyped-def]
    commit = make()
    with pytest.raises(GraphLakeError, match="is corrupt"):
        Commit.from_json(data(commit), expected_id=commit.id)


def test_stored_under_the_wrong_id_is_corrupt() -> None:
    a, b = make(), make(message="b")
    with pytest.raises(GraphLakeError, match=f"commit {b.id} is corrupt"):
        Commit.from_json(a.to_json(), expected_id=b.id)


# --- store -------------------------------------------------------------------------------


def test_put_get_exists(commits: CommitStore) -> None:
    commit = make()
    assert not commits.exists(commit.id)
    commits.put(commit)
    commits.put(commit)  # identical object already there: fine
    assert commits.exists(commit.id)
    fresh = CommitStore(commits.store)  # no cache
    assert fresh.get(commit.id) == commit
    key = f"_graphlake/commits/{commit.id[:2]}/{commit.id}.json"
    assert commits.store.list("_graphlake/commits") == [key]


def test_get_missing(commits: CommitStore) -> None:
    with pytest.raises(CommitNotFoundError, match="no commit"):
        commits.get("0" * 40)
    with pytest.raises(CommitNotFoundError, match="not a commit id"):
        commits.get("main")
    assert not commits.exists("main")


def test_put_refuses_to_bless_a_corrupt_object(commits: CommitStore) -> None:
    commit = make()
    commits.store.put(CommitStore.key(commit.id), _tampered(commit, message="evil"))
    with pytest.raises(GraphLakeError, match="corrupt"):
        commits.put(commit)


def test_get_detects_a_corrupt_object(commits: CommitStore) -> None:
    commit = make()
    commits.store.put(CommitStore.key(commit.id), _tampered(commit, message="evil"))
    with pytest.raises(GraphLakeError, match="corrupt"):
        commits.get(commit.id)


def test_prefix_lookup(commits: CommitStore) -> None:
    commit = make()
    commits.put(commit)
    assert CommitStore(commits.store).get(commit.id[:7]) == commit
    assert commits.resolve(commit.id[:12]) == commit.id
    with pytest.raises(CommitNotFoundError, match="not a commit id"):
        commits.get(commit.id[:6])
    other = ("f" if commit.id[7] != "f" else "e") * 33
    with pytest.raises(CommitNotFoundError, match="no commit"):
        commits.get(commit.id[:7] + other[:5])


def test_ambiguous_prefix(commits: CommitStore) -> None:
    # Two ids sharing 8 hex characters; only the names matter for prefix resolution.
    for suffix in ("a" * 32, "b" * 32):
        cid = "abcdef12" + suffix
        commits.store.put(CommitStore.key(cid), b"{}")
    with pytest.raises(CommitNotFoundError, match="ambiguous"):
        commits.resolve("abcdef12")
    assert commits.resolve("abcdef12a") == "abcdef12" + "a" * 32


def test_cache_serves_immutable_commits_and_evicts(commits: CommitStore) -> None:
    small = CommitStore(commits.store, cache_size=1)
    a, b = make(message="a"), make(message="b")
    small.put(a)
    small.put(b)  # evicts a
    commits.store.delete(CommitStore.key(a.id))
    commits.store.delete(CommitStore.key(b.id))
    assert small.get(b.id) == b  # from the cache, no read
    with pytest.raises(CommitNotFoundError):
        small.get(a.id)


def test_get_many(commits: CommitStore) -> None:
    made = [make(message=str(i)) for i in range(20)]
    for commit in made:
        commits.put(commit)
    fresh = CommitStore(commits.store)
    ids = [c.id for c in reversed(made)] + [made[0].id]
    assert [c.id for c in fresh.get_many(ids)] == ids
