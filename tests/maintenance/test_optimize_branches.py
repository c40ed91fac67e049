"""optimize on a branch of a branch: compaction must keep inherited indexes readable.

Found by the merge oracle (a trunk that optimized, a source forked from it that wrote and
optimized): Lance's compaction remaps an index segment inherited from another Lance
branch's tree into the current branch's tree, but keeps the segment's old base, so every
indexed read of the branch afterwards fails with "Not found: …/_indices/…".
"""

from __future__ import annotations

import pytest

import graphlake as gl
from tests.conftest import state


@pytest.mark.parametrize("change", ["update", "insert", "delete"])
def test_optimize_of_a_fork_of_an_optimized_branch(people: gl.Graph, change: str) -> None:
    g = people
    g.create_branch("trunk")
    with g.write("trunk") as w:
        w.insert("Person", [{"name": "T1", "email": "t1@x.org"}])
    g.optimize("trunk")  # trunk's indexes now live in its own Lance branch's tree
    g.create_branch("dev", from_="trunk")
    with g.write("dev") as w:
        if change == "update":
            w.update("Person", [{"name": "Alice", "age": 2}])
        elif change == "insert":
            w.insert("Person", [{"name": "D1"}])
        else:
            w.delete("Person", ["Carol"], cascade=True)
    before = state(g, "dev")
    g.optimize("dev")
    after = state(g, "dev")
    assert {k: v for k, v in after.items() if k != "head"} == {
        k: v for k, v in before.items() if k != "head"
    }
    # Keyed reads go through the id and @unique indexes.
    assert g.get("Person", "Alice", branch="dev")["age"] == (2 if change == "update" else 30)
    assert g.get("Person", "T1", branch="dev")["email"] == "t1@x.org"
    assert g.nodes("Person", branch="dev", where="email = 't1@x.org'").num_rows == 1
    with pytest.raises(gl.DuplicateKeyError), g.write("dev") as w:
        w.insert("Person", [{"name": "Bob"}])
    # And a merge reading the branch by key.
    with g.write("trunk") as w:
        w.insert("Person", [{"name": "T2"}])
    assert g.merge("dev", into="trunk", lineage="verify").outcome == "merged"
    assert g.get("Person", "Alice", branch="trunk")["age"] == (2 if change == "update" else 30)


def test_optimize_of_an_unwritten_fork_of_a_twice_optimized_branch(people: gl.Graph) -> None:
    """The oracle's second find: the trunk optimized, wrote and optimized again (its index
    deltas folded, two fragments left), the fork optimized before any write of its own.
    Rebuilding the inherited indexes before compaction was not enough: compaction mapped
    the rebuilt segments back under the trunk's base."""
    g = people
    g.create_branch("trunk")
    g.optimize("trunk")
    with g.write("trunk") as w:
        w.insert("Person", [{"name": "T1", "email": "t1@x.org"}])
    g.optimize("trunk")
    g.create_branch("dev", from_="trunk")
    before = state(g, "dev")
    g.optimize("dev")
    after = state(g, "dev")
    assert {k: v for k, v in after.items() if k != "head"} == {
        k: v for k, v in before.items() if k != "head"
    }
    with g.write("dev") as w:  # a keyed write reads through the id index
        w.delete("Person", ["Carol"], cascade=True)
    assert g.get("Person", "T1", branch="dev")["email"] == "t1@x.org"
    assert g.get("Person", "Alice", branch="dev")["age"] == 30
