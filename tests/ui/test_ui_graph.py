"""The history picture: the lane layout of `log --graph` as SVG shapes."""

from __future__ import annotations

from dataclasses import dataclass

from graphlake.server.ui.graphsvg import LANE_W, ROW_H, picture


@dataclass
class C:
    id: str
    parents: tuple[str, ...]


def _x(col: int) -> float:
    return LANE_W / 2 + col * LANE_W


def _starts_at(path: str, x: float, y: float) -> bool:
    return path.startswith(f"M{x:g},{y:g} ")


def _ends_at(path: str, x: float, y: float) -> bool:
    return path.endswith(f"{x:g},{y:g}")


# m: merge of three branches (N-way: 4 parents), children first as log lists them.
HISTORY = [
    C("m", ("a", "b", "c", "d")),
    C("d", ("r",)),
    C("c", ("r",)),
    C("b", ("r",)),
    C("a", ("r",)),
    C("r", ()),
]


def test_n_way_merge_shows_all_its_parents_leaving_its_dot() -> None:
    pic = picture(HISTORY, 0)
    y0 = ROW_H / 2
    leaving = [line.path for line in pic.lines if _starts_at(line.path, _x(0), y0)]
    assert len(leaving) == 4  # one line per parent, all from the merge's dot
    assert pic.dots[0].merge and not pic.dots[1].merge
    assert len(pic.dots) == len(HISTORY)


def test_lanes_join_at_the_common_parent() -> None:
    pic = picture(HISTORY, 0)
    root = pic.dots[-1]
    arriving = [line for line in pic.lines if _ends_at(line.path, root.x, root.y)]
    assert len(arriving) == 4  # a, b, c and d all run into r
    assert root.x == _x(0)


def test_a_later_page_continues_the_lanes_from_above() -> None:
    page = picture(HISTORY, 3)  # rows b, a, r; lanes of c and d came from above
    assert len(page.dots) == 3
    assert page.height == 3 * ROW_H
    # Lines enter the page from above its top edge (the row before the page).
    assert any(line.path.startswith(f"M{_x(0):g},{-ROW_H / 2:g}") for line in page.lines)


def test_lanes_past_the_last_row_run_to_the_bottom() -> None:
    first_two = picture(HISTORY[:2], 0)
    assert first_two.height == 2 * ROW_H
    bottom = 1.5 * ROW_H + ROW_H
    assert any(_ends_at(line.path, _x(0), bottom) for line in first_two.lines)


def test_lanes_leaving_a_page_head_for_the_next_row() -> None:
    # The page ends at a; below it, r joins the lanes of b, c and d into column 0, so
    # b's lane (column 1) bends towards column 0 as it leaves the page.
    page = picture(HISTORY, 0, 5)
    assert len(page.dots) == 5 and page.height == 5 * ROW_H
    last_y, below = page.dots[4].y, 5.5 * ROW_H
    assert any(
        _starts_at(line.path, _x(1), last_y) and _ends_at(line.path, _x(0), below)
        for line in page.lines
    )
