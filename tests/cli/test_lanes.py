"""The lanes of `graphlake log --graph`, drawn for hand-built histories."""

from __future__ import annotations

from collections.abc import Sequence

from graphlake.lanes import Lanes


def drawn(history: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
    lanes, out = Lanes(), []
    for commit, parents in history:
        d = lanes.draw(commit, parents)
        out += [*d.before, f"{d.prefix}{commit}", *d.after]
    return [line.rstrip() for line in out]


def test_a_merge_opens_and_joins_a_lane() -> None:
    assert drawn([("m", ["l", "r"]), ("r", ["base"]), ("l", ["base"]), ("base", [])]) == [
        "* m",
        "|\\",
        "| * r",
        "* | l",
        "|/",
        "* base",
    ]


def test_an_n_way_merge_opens_a_lane_per_extra_parent() -> None:
    history = [("m", ["a", "b", "c"]), ("c", ["r"]), ("b", ["r"]), ("a", ["r"]), ("r", [])]
    assert drawn(history) == [
        "* m",
        "|\\",
        "| |\\",
        "| | * c",
        "| * | b",
        "* | | a",
        "|/ /",
        "|/",
        "* r",
    ]


def test_under_a_commit_only_lanes_that_go_on() -> None:
    lanes = Lanes()
    assert lanes.draw("m", ["a", "b"]).under == "| "
    assert lanes.draw("b", []).under == "|   "  # b is a root: its lane ends
    assert lanes.draw("a", []).under == "  "
