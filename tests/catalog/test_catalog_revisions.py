"""Revisions (`main~2^2`, id prefixes, `A...B`) resolved over a hand-built commit graph.

r - a - b - m ---- o      main  (m: merge of b and x; o: 3-parent merge of m, y, z)
     \\      /    /|
      +--- x    / |       dev
      +------- y  |       feature
      +---------- z
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graphlake.catalog.commits import Commit, CommitStore, TableState
from graphlake.catalog.history import History
from graphlake.catalog.refs import RefStore
from graphlake.catalog.revisions import Resolver, parse_revision
from graphlake.errors import (
    AmbiguousRevisionError,
    AncestorNotFoundError,
    BranchNotFoundError,
    CommitNotFoundError,
    InvalidNameError,
    NotABranchError,
    RevisionError,
    RevisionSyntaxError,
    UnknownRevisionError,
)
from tests.catalog.conftest import Root

EPOCH = datetime(2025, 1, 1, tzinfo=UTC)
TABLES = {"Person": TableState("person", "main", 1, "01JOWNER")}
GRAPH = [
    ("r",),
    ("a", "r"),
    ("b", "a"),
    ("x", "a"),
    ("m", "b", "x"),
    ("y", "a"),
    ("z", "a"),
    ("o", "m", "y", "z"),
]


class Repo:
    def __init__(self, root: Root) -> None:
        store = root.open()
        self.commits = CommitStore(store)
        self.refs = RefStore(store)
        self.resolver = Resolver(self.refs, self.commits, History(self.commits))
        self.ids: dict[str, str] = {}
        for minute, (name, *parents) in enumerate(GRAPH):
            commit = Commit.create(
                [self.ids[p] for p in parents],
                name,
                "s",
                TABLES,
                time=EPOCH + timedelta(minutes=minute),
            )
            self.commits.put(commit)
            self.ids[name] = commit.id
        for branch, at in (("main", "o"), ("dev", "x"), ("feature", "y")):
            self.refs.create(branch, self.ids[at])

    def name(self, revision: str) -> str:
        """The hand-built name of the commit `revision` resolves to."""
        return self.resolver.commit(revision).message


@pytest.fixture
def repo(root: Root) -> Repo:
    return Repo(root)


@pytest.mark.parametrize(
    ("revision", "expected"),
    [
        ("main", "o"),
        ("dev", "x"),
        ("main~0", "o"),
        ("main~", "m"),
        ("main~1", "m"),
        ("main~2", "b"),
        ("main~3", "a"),
        ("main~4", "r"),
        ("main~~", "b"),
        ("main^", "m"),
        ("main^0", "o"),
        ("main^1", "m"),
        ("main^2", "y"),
        ("main^3", "z"),
        ("main~1^2", "x"),
        ("main~1^2~1", "a"),
        ("main^3~", "a"),
        ("main~2^", "a"),
        ("dev^", "a"),
        ("main^^2", "x"),
        ("main~1^1~1^1", "r"),
    ],
)
def test_branch_revisions(repo: Repo, revision: str, expected: str) -> None:
    assert repo.name(revision) == expected


def test_commit_ids_full_and_prefix_with_steps(repo: Repo) -> None:
    m = repo.ids["m"]
    assert repo.name(m) == "m"
    assert repo.name(m[:7]) == "m"
    assert repo.name(m[:12] + "^2") == "x"
    assert repo.name(repo.ids["o"][:9] + "~2") == "b"


def test_branch_name_wins_over_commit_prefix(repo: Repo) -> None:
    prefix = repo.ids["x"][:7]
    repo.refs.create(prefix, repo.ids["r"])
    assert repo.name(prefix) == "r"
    assert repo.name(prefix + "~0") == "r"
    assert repo.name(repo.ids["x"][:8]) == "x"


def test_past_the_root_and_missing_parents(repo: Repo) -> None:
    with pytest.raises(AncestorNotFoundError, match=r"past the root: main~4 .* no parent"):
        repo.resolver.commit("main~5")
    with pytest.raises(AncestorNotFoundError, match=r"only 3 parent"):
        repo.resolver.commit("main^4")
    with pytest.raises(AncestorNotFoundError, match=r"main~4 \(.*\) has no parent"):
        repo.resolver.commit("main~4^")
    with pytest.raises(AncestorNotFoundError, match=r"only 1 parent"):
        repo.resolver.commit("dev^2")
    assert issubclass(AncestorNotFoundError, CommitNotFoundError)


def test_unknown_revision_names_the_nearest_branches(repo: Repo) -> None:
    with pytest.raises(UnknownRevisionError, match=r"'mian~2'.*did you mean main\?") as err:
        repo.resolver.commit("mian~2")
    assert err.value.nearest == ["main"]
    with pytest.raises(UnknownRevisionError, match=r"did you mean feature\?"):
        repo.resolver.commit("featur")
    with pytest.raises(UnknownRevisionError, match=r"branches: dev, feature, main\)"):
        repo.resolver.commit("zzz")
    # Unknown ids, full or prefix, are unknown revisions too (and still "not found").
    for unknown in ("0" * 40, "0000000", "0" * 39 + "~1"):
        with pytest.raises(UnknownRevisionError) as err:
            repo.resolver.commit(unknown)
        assert isinstance(err.value, BranchNotFoundError | CommitNotFoundError)
    with pytest.raises(UnknownRevisionError, match=r"three dots"):
        repo.resolver.commit("dev..main")


def test_ambiguous_prefix_lists_candidates(repo: Repo, root: Root) -> None:
    # Two stored commit objects that share a 7-character prefix (hand-placed: finding a
    # real collision would take ~2^14 commits).
    store = root.open()
    twins = ["abcdef1" + "0" * 33, "abcdef1" + "1" * 33]
    for twin in twins:
        store.put(CommitStore.key(twin), b"{}")
    with pytest.raises(AmbiguousRevisionError, match=r"abcdef1.*ambiguous") as err:
        repo.resolver.commit("abcdef1~1")
    assert err.value.candidates == twins
    assert "abcdef10000" in str(err.value) and "abcdef11111" in str(err.value)


@pytest.mark.parametrize(
    "revision",
    [
        "",
        "~1",
        "^",
        "main~x",
        "main^-1",
        "main~1x",
        "main~1~-2",
        "ma!n",
        "main~1 ",
        "main~1234567890",
    ],
)
def test_malformed_revisions(repo: Repo, revision: str) -> None:
    with pytest.raises(RevisionSyntaxError) as err:
        repo.resolver.commit(revision)
    assert isinstance(err.value, InvalidNameError)  # what a bad name raised before
    assert repr(revision) in str(err.value)


def test_parse_revision_steps() -> None:
    rev = parse_revision("main~2^2~^")
    assert (rev.base, rev.steps) == ("main", (("~", 2), ("^", 2), ("~", 1), ("^", 1)))


def test_ranges(repo: Repo) -> None:
    span = repo.resolver.range("feature...dev")
    assert span is not None
    assert [b.message for b in span.bases] == ["a"] and span.end.message == "x"
    span = repo.resolver.range("dev...main~0")
    assert span is not None and span.single_base().message == "x"
    assert repo.resolver.range("main") is None
    assert repo.resolver.range("main~1") is None
    with pytest.raises(RevisionError, match=r"is a range; name one commit"):
        repo.resolver.commit("dev...main")
    for bad in ("main...", "...main", "a...b...c"):
        with pytest.raises(RevisionSyntaxError, match=r"A\.\.\.B"):
            repo.resolver.range(bad)
    with pytest.raises(UnknownRevisionError):
        repo.resolver.range("dev...nope")


def test_a_branch_called_like_a_range_is_that_branch(repo: Repo) -> None:
    repo.refs.create("dev...main", repo.ids["r"])
    assert repo.resolver.range("dev...main") is None
    assert repo.name("dev...main") == "r"


def test_criss_cross_range_has_no_single_base(root: Root) -> None:
    repo = Repo(root)
    ids = repo.ids
    c1 = Commit.create([ids["b"], ids["x"]], "c1", "s", TABLES, time=EPOCH)
    c2 = Commit.create([ids["x"], ids["b"]], "c2", "s", TABLES, time=EPOCH)
    for c in (c1, c2):
        repo.commits.put(c)
    span = repo.resolver.range(f"{c1.id}...{c2.id}")
    assert span is not None and sorted(b.message for b in span.bases) == ["b", "x"]
    with pytest.raises(RevisionError, match=r"2 merge bases"):
        span.single_base()


def test_writing_needs_a_branch(repo: Repo) -> None:
    for revision in ("main~1", "main^2", repo.ids["m"], repo.ids["m"][:7]):
        err = repo.resolver.branch_error(revision)
        assert isinstance(err, NotABranchError), revision
        assert "not a branch" in str(err) and "branch create" in str(err)
    err = repo.resolver.branch_error("mainn")
    assert type(err) is BranchNotFoundError and "did you mean main?" in str(err)
    with pytest.raises(InvalidNameError):
        repo.resolver.branch_error("ma!n")
