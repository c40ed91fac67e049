"""Branch refs: create / compare-and-swap / delete, races, and the head hint.

Every test runs on a local folder and on S3 (moto) through the `root` fixture.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest

from graphlake.catalog.refs import RefEntry, RefStore
from graphlake.catalog.store import ObjectStore
from graphlake.errors import (
    BranchExistsError,
    BranchNotFoundError,
    ConcurrentWriteError,
    InvalidNameError,
)

if TYPE_CHECKING:
    from conftest import Root

C1, C2, C3, C4 = ("1" * 40, "2" * 40, "3" * 40, "4" * 40)


def cid(i: int) -> str:
    return f"{i:040x}"


@pytest.fixture
def refs(store: ObjectStore) -> RefStore:
    return RefStore(store)


def hint_key(branch_folder: str) -> str:
    return f"_graphlake/refs/{branch_folder}/HEAD.hint"


# --- basic life cycle --------------------------------------------------------------------


def test_unknown_branch_has_no_head(refs: RefStore) -> None:
    assert refs.head("main") is None
    assert refs.history("main") == []
    assert refs.list() == {}


def test_create_and_advance(refs: RefStore) -> None:
    first = refs.create("main", C1)
    assert (first.seq, first.commit) == (1, C1)
    assert refs.head("main") == first
    second = refs.cas("main", first, C2)
    assert (second.seq, second.commit, second.incarnation) == (2, C2, first.incarnation)
    assert refs.head("main") == second
    assert second.time >= first.time


def test_create_existing_branch_fails(refs: RefStore) -> None:
    refs.create("main", C1)
    with pytest.raises(BranchExistsError, match="'main' exists already"):
        refs.create("main", C2)
    assert refs.head("main").commit == C1  # type: ignore[union-attr]


def test_stale_cas_fails_and_changes_nothing(refs: RefStore) -> None:
    first = refs.create("main", C1)
    second = refs.cas("main", first, C2)
    with pytest.raises(ConcurrentWriteError, match="moved since entry 1"):
        refs.cas("main", first, C3)
    assert refs.head("main") == second


def test_delete_writes_a_tombstone(refs: RefStore) -> None:
    live = refs.create("dev", C1)
    refs.create("main", C1)
    tomb = refs.delete("dev")
    assert tomb.commit is None and tomb.is_tombstone
    assert (tomb.seq, tomb.incarnation) == (2, live.incarnation)
    assert refs.head("dev") == tomb
    assert list(refs.list()) == ["main"]
    with pytest.raises(BranchNotFoundError):
        refs.cas("dev", tomb, C2)
    with pytest.raises(BranchNotFoundError):
        refs.delete("dev")
    with pytest.raises(BranchNotFoundError):
        refs.delete("never")


def test_cas_from_a_deleted_life_fails(refs: RefStore) -> None:
    live = refs.create("dev", C1)
    refs.delete("dev")
    with pytest.raises(ConcurrentWriteError):
        refs.cas("dev", live, C2)


def test_recreate_gives_new_incarnation(refs: RefStore) -> None:
    old = refs.create("dev", C1)
    refs.delete("dev")
    new = refs.create("dev", C2)
    assert new.seq == 3 and new.commit == C2
    assert new.incarnation != old.incarnation
    # The old life cannot move the new one.
    with pytest.raises(ConcurrentWriteError):
        refs.cas("dev", old, C3)
    assert [(e.seq, e.commit) for e in refs.history("dev")] == [(1, C1), (2, None), (3, C2)]


def test_delete_with_expected(refs: RefStore) -> None:
    first = refs.create("dev", C1)
    second = refs.cas("dev", first, C2)
    with pytest.raises(ConcurrentWriteError, match="not deleted"):
        refs.delete("dev", first)
    assert refs.head("dev") == second
    tomb = refs.delete("dev", second)
    assert tomb.seq == 3 and refs.head("dev") == tomb


def test_list_only_live_branches_sorted(refs: RefStore) -> None:
    heads = {name: refs.create(name, C1) for name in ["main", "ingest/run1/w0", "Zed", "a.b"]}
    heads["main"] = refs.cas("main", heads["main"], C2)
    refs.delete("a.b")
    listed = refs.list()
    assert list(listed) == ["Zed", "ingest/run1/w0", "main"]
    assert listed["main"] == heads["main"] and listed["Zed"] == heads["Zed"]


def test_branches_differing_only_in_case_are_separate(refs: RefStore) -> None:
    refs.create("feature", C1)
    refs.create("Feature", C2)
    assert refs.head("feature").commit == C1  # type: ignore[union-attr]
    assert refs.head("Feature").commit == C2  # type: ignore[union-attr]


def test_history_is_the_reflog(refs: RefStore) -> None:
    entry = refs.create("main", cid(0))
    for i in range(1, 6):
        entry = refs.cas("main", entry, cid(i))
    assert [e.seq for e in refs.history("main")] == list(range(1, 7))
    assert [e.commit for e in refs.history("main")] == [cid(i) for i in range(6)]


def test_bad_arguments(refs: RefStore) -> None:
    with pytest.raises(InvalidNameError):
        refs.create("../evil", C1)
    with pytest.raises(InvalidNameError):
        refs.head("a//b")
    with pytest.raises(ValueError, match="not a full commit id"):
        refs.create("main", "abc")
    first = refs.create("main", C1)
    with pytest.raises(ValueError, match="not a full commit id"):
        refs.cas("main", first, "HEAD")


def test_unexpected_folders_are_ignored_by_list(refs: RefStore, store: ObjectStore) -> None:
    refs.create("main", C1)
    store.put("_graphlake/refs/NOT-ENCODED/00000000000000000001.json", b"{}")
    assert list(refs.list()) == ["main"]


# --- the head hint ------------------------------------------------------------------------


class CountingStore(ObjectStore):
    """A real store that counts the requests head() makes."""

    def __init__(self, root_uri: str, storage_options: dict[str, str] | None = None) -> None:
        super().__init__(root_uri, storage_options)
        self.calls: Counter[str] = Counter()

    def get(self, path: str) -> bytes | None:
        self.calls["get"] += 1
        return super().get(path)

    def exists(self, path: str) -> bool:
        self.calls["exists"] += 1
        return super().exists(path)

    def list(self, prefix: str = "") -> list[str]:
        self.calls["list"] += 1
        return super().list(prefix)


def _advance(refs: RefStore, branch: str, times: int) -> RefEntry:
    entry = refs.head(branch) or refs.create(branch, cid(0))
    for _ in range(times):
        entry = refs.cas(branch, entry, cid(entry.seq + 1))
    return entry


def test_head_with_current_hint_costs_constant_requests(root: Root) -> None:
    refs = RefStore(root.open())
    last = _advance(refs, "feat/x", 40)
    counting = CountingStore(root.uri, root.options)
    assert RefStore(counting).head("feat/x") == last
    assert counting.calls == {"get": 2, "exists": 1}  # hint, entry, probe of seq+1


def test_head_with_stale_hint_probes_forward(root: Root) -> None:
    store = root.open()
    refs = RefStore(store)
    last = _advance(refs, "feat/x", 40)
    store.put(hint_key("feat%2Fx"), b"3")  # lagging by 38 entries
    counting = CountingStore(root.uri, root.options)
    assert RefStore(counting).head("feat/x") == last
    assert counting.calls["list"] == 0
    assert counting.calls["exists"] <= 2 * 6 + 1  # gallop + bisect: O(log lag)


@pytest.mark.parametrize("hint", [None, b"garbage", b"0", b"-4", b"999"])
def test_head_without_a_usable_hint_lists_once(root: Root, hint: bytes | None) -> None:
    store = root.open()
    refs = RefStore(store)
    last = _advance(refs, "main", 12)
    if hint is None:
        store.delete(hint_key("main"))
    else:
        store.put(hint_key("main"), hint)
    counting = CountingStore(root.uri, root.options)
    assert RefStore(counting).head("main") == last
    assert counting.calls["list"] == 1


def test_writes_after_a_stale_hint_land_on_the_real_head(
    refs: RefStore, store: ObjectStore
) -> None:
    last = _advance(refs, "main", 5)
    store.put(hint_key("main"), b"1")
    head = refs.head("main")
    assert head == last
    moved = refs.cas("main", head, C4)  # type: ignore[arg-type]
    assert moved.seq == last.seq + 1
    assert store.get(hint_key("main")) == str(moved.seq).encode()


# --- the newest entry seen ------------------------------------------------------------------


def test_a_seen_head_is_confirmed_by_one_existence_check(root: Root) -> None:
    counting = CountingStore(root.uri, root.options)
    refs = RefStore(counting)
    last = _advance(refs, "feat/x", 3)
    counting.calls.clear()
    for _ in range(3):
        assert refs.head("feat/x") == last
    assert counting.calls == {"exists": 3}  # no hint, no entry read: only seq+1 probed


def test_a_seen_head_follows_other_writers(root: Root) -> None:
    """Two RefStores share nothing but the root, as two processes do."""
    counting = CountingStore(root.uri, root.options)
    mine, theirs = RefStore(counting), RefStore(root.open())
    first = mine.create("main", C1)
    assert mine.head("main") == first
    moved = theirs.cas("main", theirs.head("main"), C2)  # type: ignore[arg-type]
    moved = theirs.cas("main", moved, C3)
    assert mine.head("main") == moved
    counting.calls.clear()
    assert mine.head("main") == moved
    assert counting.calls == {"exists": 1}
    theirs.delete("main")
    tomb = mine.head("main")
    assert tomb is not None and tomb.is_tombstone
    again = theirs.create("main", C4)
    assert mine.head("main") == again and again.incarnation != first.incarnation
    with pytest.raises(ConcurrentWriteError):  # mine's old entry is no base for a CAS
        mine.cas("main", moved, C1)


def test_a_seen_head_needs_no_hint(root: Root) -> None:
    """A writer that died before refreshing the hint: the entry itself is what counts."""
    store = root.open()
    mine, theirs = RefStore(store), RefStore(root.open())
    first = mine.create("main", C1)
    assert mine.head("main") == first
    moved = theirs.cas("main", first, C2)
    store.put(hint_key("main"), b"1")  # as if the hint write was lost
    assert mine.head("main") == moved


class LostAckStore(ObjectStore):
    """Reports a create as lost although it landed: what a retried request can look like."""

    def create(self, path: str, data: bytes) -> bool:
        super().create(path, data)
        return False


def test_a_landed_write_is_recognised_as_ours(root: Root) -> None:
    refs = RefStore(root.open())
    first = refs.create("main", C1)
    flaky = RefStore(LostAckStore(root.uri, root.options))
    moved = flaky.cas("main", first, C2)
    assert refs.head("main") == moved
    # But a create that really lost is still reported as lost.
    with pytest.raises(ConcurrentWriteError):
        flaky.cas("main", first, C3)


# --- races ---------------------------------------------------------------------------------


def test_threads_racing_one_cas(refs: RefStore) -> None:
    start = refs.create("main", C1)
    barrier = threading.Barrier(8)
    outcomes: list[Any] = []

    def attempt(i: int) -> None:
        barrier.wait()
        try:
            outcomes.append(refs.cas("main", start, cid(100 + i)))
        except ConcurrentWriteError as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [o for o in outcomes if isinstance(o, RefEntry)]
    assert len(outcomes) == 8 and len(winners) == 1
    assert refs.head("main") == winners[0]


def test_threads_racing_to_create(refs: RefStore) -> None:
    barrier = threading.Barrier(6)
    outcomes: list[Any] = []

    def attempt(i: int) -> None:
        barrier.wait()
        try:
            outcomes.append(refs.create("new", cid(i)))
        except BranchExistsError as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [o for o in outcomes if isinstance(o, RefEntry)]
    assert len(outcomes) == 6 and len(winners) == 1
    assert refs.head("new") == winners[0]


ROUNDS = 4


def _race_worker(
    uri: str,
    options: dict[str, str] | None,
    worker: int,
    barrier: Any,
    results: Any,
) -> None:
    """One racing process: each round, read the head, wait for the rival, then CAS."""
    refs = RefStore(ObjectStore(uri, options))
    for round_no in range(ROUNDS):
        expected = refs.head("main")
        assert expected is not None
        barrier.wait()  # both processes hold the same expected entry
        commit = f"{round_no:02d}{worker:02d}".ljust(40, "0")
        try:
            refs.cas("main", expected, commit)
            results.put((round_no, worker, "won", expected.seq))
        except ConcurrentWriteError:
            results.put((round_no, worker, "lost", expected.seq))
        barrier.wait()  # nobody reads the next head before both have written


def test_processes_racing_one_cas(root: Root) -> None:
    refs = RefStore(root.open())
    refs.create("main", C1)
    ctx = multiprocessing.get_context("spawn")  # lance is not fork-safe; neither are we
    barrier = ctx.Barrier(2)
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_race_worker, args=(root.uri, root.options, w, barrier, results))
        for w in range(2)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0]
    outcomes = [results.get(timeout=5) for _ in range(2 * ROUNDS)]
    for round_no in range(ROUNDS):
        this_round = [o for o in outcomes if o[0] == round_no]
        assert sorted(o[2] for o in this_round) == ["lost", "won"]
        assert {o[3] for o in this_round} == {round_no + 1}  # same expected entry
    history = refs.history("main")
    assert [e.seq for e in history] == list(range(1, ROUNDS + 2))
    for round_no, entry in enumerate(history[1:]):
        winner = next(o[1] for o in outcomes if o[0] == round_no and o[2] == "won")
        assert entry.commit == f"{round_no:02d}{winner:02d}".ljust(40, "0")
