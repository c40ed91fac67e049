"""log, is_ancestor and merge bases over hand-built and random commit graphs."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from graphlake.catalog.commits import Commit, CommitStore, TableState
from graphlake.catalog.history import (
    History,
    is_ancestor,
    log,
    merge_bases,
    merge_bases_many,
)
from graphlake.catalog.store import ObjectStore
from graphlake.errors import CommitNotFoundError

EPOCH = datetime(2025, 1, 1, tzinfo=UTC)
TABLES = {"Person": TableState("person", "main", 1, "01JOWNER")}


class Dag:
    """Builds commits by name; `minute` is the commit time (default: one per commit)."""

    def __init__(self, commits: CommitStore) -> None:
        self.commits = commits
        self.ids: dict[str, str] = {}
        self.names: dict[str, str] = {}
        self.parents: dict[str, tuple[str, ...]] = {}

    def add(self, name: str, *parents: str, minute: float | None = None) -> str:
        when = EPOCH + timedelta(minutes=len(self.ids) if minute is None else minute)
        commit = Commit.create([self.ids[p] for p in parents], name, "s", TABLES, time=when)
        self.commits.put(commit)
        self.ids[name] = commit.id
        self.names[commit.id] = name
        self.parents[name] = parents
        return commit.id

    def __getitem__(self, name: str) -> str:
        return self.ids[name]

    def bases(self, *heads: str) -> list[str]:
        return sorted(self.names[c] for c in merge_bases_many(self.commits, self.ids_of(heads)))

    def ids_of(self, names: Iterable[str]) -> list[str]:
        return [self.ids[n] for n in names]

    def log(self, head: str, limit: int | None = None) -> list[str]:
        return [c.message for c in log(self.commits, self.ids[head], limit)]

    def is_ancestor(self, a: str, b: str) -> bool:
        return is_ancestor(self.commits, self.ids[a], self.ids[b])

    # Brute force, for cross-checking on random graphs.
    def ancestors(self, name: str) -> set[str]:
        seen: set[str] = set()
        stack = [name]
        while stack:
            node = stack.pop()
            if node not in seen:
                seen.add(node)
                stack.extend(self.parents[node])
        return seen

    def brute_bases(self, *heads: str) -> list[str]:
        common = set.intersection(*(self.ancestors(h) for h in heads))
        return sorted(c for c in common if not any(c in self.ancestors(o) - {o} for o in common))


class CountingStore(ObjectStore):
    def __init__(self, root_uri: str) -> None:
        super().__init__(root_uri)
        self.gets = 0

    def get(self, path: str) -> bytes | None:
        self.gets += 1
        return super().get(path)


@pytest.fixture
def dag(tmp_path: Path) -> Dag:
    return Dag(CommitStore(ObjectStore(str(tmp_path / "g"))))


# --- linear -------------------------------------------------------------------------------


def test_linear(dag: Dag) -> None:
    for i in range(5):
        dag.add(f"c{i}", *([f"c{i - 1}"] if i else []))
    assert dag.log("c4") == ["c4", "c3", "c2", "c1", "c0"]
    assert dag.log("c4", limit=2) == ["c4", "c3"]
    assert dag.log("c4", limit=0) == []
    assert dag.log("c2") == ["c2", "c1", "c0"]
    assert dag.is_ancestor("c1", "c4") and dag.is_ancestor("c4", "c4")
    assert not dag.is_ancestor("c4", "c1")
    assert dag.bases("c1", "c4") == ["c1"] and dag.bases("c4", "c1") == ["c1"]
    assert dag.bases("c3", "c3") == ["c3"]


def test_unrelated_histories_have_no_base(dag: Dag) -> None:
    dag.add("a0")
    dag.add("a1", "a0")
    dag.add("b0")
    dag.add("b1", "b0")
    assert dag.bases("a1", "b1") == []
    assert not dag.is_ancestor("a0", "b1")


# --- forks and merges ---------------------------------------------------------------------


def test_fork(dag: Dag) -> None:
    dag.add("root")
    dag.add("base", "root")
    dag.add("x1", "base")
    dag.add("x2", "x1")
    dag.add("y1", "base")
    assert dag.bases("x2", "y1") == ["base"]
    assert not dag.is_ancestor("x1", "y1") and not dag.is_ancestor("y1", "x2")
    dag.add("m", "x2", "y1")
    assert dag.log("m") == ["m", "y1", "x2", "x1", "base", "root"]
    assert dag.is_ancestor("y1", "m") and dag.is_ancestor("x1", "m")
    assert dag.bases("m", "y1") == ["y1"]


def test_repeated_merges(dag: Dag) -> None:
    dag.add("m1")
    dag.add("f1", "m1")
    dag.add("m2", "m1")
    dag.add("f2", "f1", "m2")  # feature takes main
    dag.add("m3", "m2")
    dag.add("f3", "f2")
    dag.add("f4", "f3", "m3")  # and again
    dag.add("m4", "m3")
    dag.add("f5", "f4")
    assert dag.bases("m4", "f5") == ["m3"]  # the last main commit merged in
    assert dag.bases("m4", "f3") == ["m2"]
    dag.add("m5", "m4", "f5")  # main takes feature
    dag.add("f6", "f5")
    assert dag.bases("m5", "f6") == ["f5"]
    assert dag.brute_bases("m5", "f6") == ["f5"]


def test_criss_cross_has_two_bases(dag: Dag) -> None:
    dag.add("base")
    dag.add("a1", "base")
    dag.add("b1", "base")
    dag.add("a2", "a1", "b1")
    dag.add("b2", "b1", "a1")
    assert dag.bases("a2", "b2") == ["a1", "b1"]
    dag.add("a3", "a2")
    dag.add("b3", "b2")
    assert dag.bases("a3", "b3") == ["a1", "b1"]
    log_a3 = dag.log("a3")
    assert log_a3[:2] == ["a3", "a2"] and log_a3[-1] == "base"
    assert sorted(log_a3) == sorted(["a3", "a2", "a1", "b1", "base"])


def test_many_heads(dag: Dag) -> None:
    dag.add("r")
    dag.add("a", "r")
    dag.add("b", "a")
    dag.add("c", "b")
    dag.add("p1", "a")
    dag.add("q1", "b")
    assert dag.bases("c", "p1", "q1") == ["a"]
    assert dag.bases("c", "q1") == ["b"]
    assert dag.bases("c", "q1", "q1", "c") == ["b"]  # duplicates do not matter
    assert dag.bases("c") == ["c"]
    dag.add("z")
    assert dag.bases("c", "p1", "z") == []
    with pytest.raises(ValueError):
        merge_bases_many(dag.commits, [])


def test_many_heads_criss_cross(dag: Dag) -> None:
    dag.add("base")
    dag.add("a1", "base")
    dag.add("b1", "base")
    dag.add("a2", "a1", "b1")
    dag.add("b2", "b1", "a1")
    dag.add("c2", "a1", "b1")
    assert dag.bases("a2", "b2", "c2") == ["a1", "b1"]
    dag.add("d", "a1")
    assert dag.bases("a2", "b2", "d") == ["a1"]


# --- clocks that lie ----------------------------------------------------------------------


def test_log_is_topological_despite_clock_skew(dag: Dag) -> None:
    dag.add("root", minute=50)
    dag.add("left", "root", minute=10)  # older than its parent
    dag.add("right", "root", minute=60)
    dag.add("merge", "left", "right", minute=0)  # the oldest of all
    assert dag.log("merge") == ["merge", "right", "left", "root"]


def test_merge_bases_despite_clock_skew(dag: Dag) -> None:
    # The true base has the newest timestamp; the walk must not stop early.
    dag.add("root", minute=0)
    dag.add("base", "root", minute=1000)
    dag.add("x1", "base", minute=1)
    dag.add("x2", "x1", minute=2)
    dag.add("y1", "base", minute=3)
    dag.add("y2", "y1", "root", minute=4)
    assert dag.bases("x2", "y2") == ["base"]
    assert dag.is_ancestor("base", "y2") and not dag.is_ancestor("x1", "y2")


@pytest.mark.parametrize("seed", range(25))
def test_random_graphs_match_brute_force(dag: Dag, seed: int) -> None:
    rng = random.Random(seed)
    skew = 0 if seed % 2 == 0 else 30  # odd seeds: clocks off by up to 30 minutes
    names: list[str] = []
    for i in range(70):
        if not names or rng.random() < 0.04:
            parents: list[str] = []
        else:
            recent = names[-12:]
            parents = rng.sample(recent, k=min(len(recent), rng.choice([1, 1, 2, 2, 3])))
        names.append(f"n{i}")
        dag.add(f"n{i}", *parents, minute=i + rng.uniform(-skew, skew))
    for _ in range(12):
        k = rng.choice([2, 2, 2, 3, 4])
        heads = rng.sample(names[20:], k=k)
        assert dag.bases(*heads) == dag.brute_bases(*heads), heads
        a, b = rng.sample(names, 2)
        assert dag.is_ancestor(a, b) == (a in dag.ancestors(b)), (a, b)
    head = names[-1]
    order = dag.log(head)
    assert sorted(order) == sorted(dag.ancestors(head)) and len(order) == len(set(order))
    position = {name: i for i, name in enumerate(order)}
    # The lazy log reads ahead only by the skew it has seen, so children come first
    # whenever clocks are sane; skews that add up along unread chains can break that
    # (only reading the whole history could rule them out).
    for name in order if not skew else ():
        assert all(position[name] < position[p] for p in dag.parents[name]), name
    assert dag.log(head, limit=10) == order[:10]


# --- cost ---------------------------------------------------------------------------------


def test_close_heads_do_not_read_the_whole_history(tmp_path: Path) -> None:
    dag = Dag(CommitStore(ObjectStore(str(tmp_path / "g"))))
    dag.add("c0")
    for i in range(1, 300):
        dag.add(f"c{i}", f"c{i - 1}")
    dag.add("x1", "c299")
    dag.add("x2", "x1")
    dag.add("y1", "c299")
    dag.add("y2", "y1")
    counting = CountingStore(str(tmp_path / "g"))
    fresh = History(CommitStore(counting))
    assert fresh.merge_bases(dag["x2"], dag["y2"]) == [dag["c299"]]
    assert fresh.is_ancestor(dag["c297"], dag["x2"])
    assert not fresh.is_ancestor(dag["x1"], dag["y2"])
    assert fresh.merge_bases_many(dag.ids_of(["x2", "y2", "c295"])) == [dag["c295"]]
    assert counting.gets < 20  # 305 commits exist


def test_unknown_commits(dag: Dag) -> None:
    dag.add("a")
    missing = "f" * 40
    with pytest.raises(CommitNotFoundError):
        merge_bases(dag.commits, dag["a"], missing)
    with pytest.raises(CommitNotFoundError):
        is_ancestor(dag.commits, missing, missing)
    with pytest.raises(CommitNotFoundError):
        log(dag.commits, missing)


def test_prefixes_are_accepted(dag: Dag) -> None:
    dag.add("a")
    dag.add("b", "a")
    history = History(dag.commits)
    assert history.is_ancestor(dag["a"][:8], dag["b"][:10])
    assert [c.message for c in history.log(dag["b"][:7])] == ["b", "a"]
    assert Counter(history.merge_bases(dag["a"][:9], dag["b"])) == Counter([dag["a"]])


def test_merge_bases_of_more_heads_than_a_machine_word(tmp_path) -> None:
    """70 branches off one commit: the base is found however many heads there are."""
    from graphlake.catalog.commits import Commit, CommitStore
    from graphlake.catalog.history import merge_bases_many
    from graphlake.catalog.store import ObjectStore

    commits = CommitStore(ObjectStore(str(tmp_path / "root")))
    root = Commit.create(parents=(), message="root", schema_id="s", tables={})
    commits.put(root)
    heads = []
    for i in range(70):
        c = Commit.create(parents=(root.id,), message=f"h{i}", schema_id="s", tables={})
        commits.put(c)
        heads.append(c.id)
    assert merge_bases_many(commits, heads) == [root.id]


def test_log_first_page_reads_about_what_it_lists(tmp_path: Path) -> None:
    """A long history's first page must not read every commit (README limitation)."""
    dag = Dag(CommitStore(ObjectStore(str(tmp_path / "g"))))
    dag.add("c0")
    for i in range(1, 300):
        dag.add(f"c{i}", f"c{i - 1}", *([f"c{i - 7}"] if i % 10 == 0 else []))
    counting = CountingStore(str(tmp_path / "g"))
    page = History(CommitStore(counting)).log(dag["c299"], limit=5)
    assert [c.message for c in page] == ["c299", "c298", "c297", "c296", "c295"]
    assert counting.gets < 20  # 300 commits exist
    assert dag.log("c299") == [f"c{i}" for i in range(299, -1, -1)]


def test_log_reads_ahead_by_the_skew_it_has_seen(dag: Dag) -> None:
    # `head` names x and y as parents, both far newer than it (190 minutes of skew seen);
    # x is also reached through a -> b. Only reading ahead by that skew finds b (and so
    # that x has a child still to list) before x would be listed.
    dag.add("y", minute=200)
    dag.add("x", minute=50)
    dag.add("b", "x", minute=8)
    dag.add("a", "b", minute=9)
    dag.add("head", "a", "x", "y", minute=10)
    assert dag.log("head") == ["head", "y", "a", "b", "x"]
