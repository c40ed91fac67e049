"""ObjectStore over a local folder and over S3 (moto): same behaviour on both."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from graphlake.catalog.store import ObjectStore
from graphlake.errors import GraphLakeError

if TYPE_CHECKING:
    from conftest import S3Server


def test_get_absent_is_none(store: ObjectStore) -> None:
    assert store.get("nope/x.json") is None
    assert not store.exists("nope/x.json")


def test_put_get_overwrite(store: ObjectStore) -> None:
    store.put("a/b.bin", b"one")
    assert store.get("a/b.bin") == b"one"
    store.put("a/b.bin", b"two")
    assert store.get("a/b.bin") == b"two"
    assert store.exists("a/b.bin")


def test_exists_is_true_for_objects_only(store: ObjectStore) -> None:
    # A local root answers with a stat (refs.py probes one key per query): it must agree
    # with S3, where a "folder" is only a prefix and a key below an object is absent.
    store.put("e/f%2Fx/1.json", b"1")
    assert store.exists("e/f%2Fx/1.json")
    assert not store.exists("e/f%2Fx")
    assert not store.exists("e")
    assert not store.exists("e/f%2Fx/1.json/below")
    assert not store.exists("e/f%2Fx/2.json")


def test_create_is_conditional(store: ObjectStore) -> None:
    assert store.create("c/x", b"first") is True
    assert store.create("c/x", b"second") is False
    assert store.get("c/x") == b"first"  # the losing create wrote nothing


def test_create_after_delete_succeeds(store: ObjectStore) -> None:
    assert store.create("d/x", b"1")
    store.delete("d/x")
    assert not store.exists("d/x")
    assert store.create("d/x", b"2")
    assert store.get("d/x") == b"2"


def test_delete_absent_is_fine(store: ObjectStore) -> None:
    store.delete("never/was")
    assert store.get("never/was") is None


def test_concurrent_creates_have_one_winner(store: ObjectStore) -> None:
    results: list[bool] = []
    barrier = threading.Barrier(8)

    def attempt(i: int) -> None:
        barrier.wait()
        results.append(store.create("race/key", str(i).encode()))

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 7 + [True]
    winner = store.get("race/key")
    assert winner is not None and int(winner) in range(8)


def test_list_is_recursive_sorted_and_segment_based(store: ObjectStore) -> None:
    for key in ["a/b/2", "a/b/1", "a/b/deep/x", "a/bc/y", "a/z", "top"]:
        store.put(key, b".")
    assert store.list("a/b") == ["a/b/1", "a/b/2", "a/b/deep/x"]  # not a/bc/...
    assert store.list("a/b/") == ["a/b/1", "a/b/2", "a/b/deep/x"]
    assert store.list("") == ["a/b/1", "a/b/2", "a/b/deep/x", "a/bc/y", "a/z", "top"]
    assert store.list("missing") == []


def test_list_dirs_gives_immediate_children(store: ObjectStore) -> None:
    for key in ["r/one/1", "r/one/sub/2", "r/two/3", "r/file", "other/4"]:
        store.put(key, b".")
    assert store.list_dirs("r") == ["r/one", "r/two"]
    assert store.list_dirs("") == ["other", "r"]
    assert store.list_dirs("missing") == []


def test_percent_in_keys_is_kept_literally(store: ObjectStore) -> None:
    # Branch folders are percent-encoded names; the store must not decode them.
    store.put("refs/feat%2Fx/1", b"a")
    store.put("refs/feat/x/1", b"b")
    assert store.list_dirs("refs") == ["refs/feat", "refs/feat%2Fx"]
    assert store.get("refs/feat%2Fx/1") == b"a"


@pytest.mark.parametrize(
    "key", ["", "/abs", "a/../b", "..", "a//b", "a/./b", "a/", "a\\b", "a\nb", "a\x7fb", "a\x00"]
)
def test_bad_keys_are_refused(store: ObjectStore, key: str) -> None:
    with pytest.raises(GraphLakeError, match="invalid storage key"):
        store.put(key, b"x")
    with pytest.raises(GraphLakeError, match="invalid storage key"):
        store.get(key)
    with pytest.raises(GraphLakeError, match="invalid storage key"):
        store.exists(key)


def test_local_root_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    relative = ObjectStore("rel/graph")
    assert relative.root_uri == str(tmp_path / "rel" / "graph")
    assert (tmp_path / "rel" / "graph").is_dir()  # created on open

    via_file_uri = ObjectStore((tmp_path / "rel" / "graph").as_uri())
    relative.put("k/v", b"1")
    assert via_file_uri.get("k/v") == b"1"
    assert via_file_uri.uri_for("k/v") == os.path.join(tmp_path, "rel", "graph", "k", "v")
    assert Path(via_file_uri.uri_for("k/v")).read_bytes() == b"1"
    assert via_file_uri.uri_for("") == str(tmp_path / "rel" / "graph")
    assert relative.is_local
    assert ObjectStore(tmp_path / "rel" / "graph").get("k/v") == b"1"  # a Path works too


def test_s3_uri_for_and_root(s3_server: S3Server) -> None:
    uri = s3_server.fresh_uri()
    store = ObjectStore(uri + "/", s3_server.options)
    assert store.root_uri == uri
    assert store.uri_for("_graphlake/x.json") == f"{uri}/_graphlake/x.json"
    assert store.uri_for("") == uri
    assert not store.is_local
    # Two stores on the same prefix see the same objects; another prefix does not.
    store.put("k", b"v")
    assert ObjectStore(uri, s3_server.options).get("k") == b"v"
    assert ObjectStore(s3_server.fresh_uri(), s3_server.options).get("k") is None


def test_s3_option_spellings(s3_server: S3Server) -> None:
    options = {
        "aws_endpoint": s3_server.endpoint,
        "allow_http": "TRUE",
        "access_key_id": "testing",
        "secret_access_key": "testing",
        "aws_region": "us-east-1",
        "download_retry_count": "3",  # Lance-only: ignored, not an error
    }
    store = ObjectStore(s3_server.fresh_uri(), options)
    assert store.create("x", b"1")
    assert store.get("x") == b"1"


def test_bad_storage_options(s3_server: S3Server) -> None:
    with pytest.raises(GraphLakeError, match="no_such_option"):
        ObjectStore(s3_server.fresh_uri(), {**s3_server.options, "no_such_option": "1"})
    with pytest.raises(GraphLakeError, match="allow_http"):
        ObjectStore(s3_server.fresh_uri(), {**s3_server.options, "allow_http": "maybe"})


@pytest.mark.parametrize("uri", ["gopher://x/y", "s3:///prefix-without-bucket"])
def test_unsupported_roots(uri: str) -> None:
    with pytest.raises(GraphLakeError):
        ObjectStore(uri)
