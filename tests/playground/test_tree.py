"""The version-tree layout on forked histories: every edge starts at the real parent, no line
runs through a dot it does not belong to, and lanes are reused once free."""

from types import SimpleNamespace

import pytest

from playground.version_tree.layout import Layout, tree_layout


def history(parents: dict[int, int | None]) -> list[SimpleNamespace]:
    """Versions numbered 1..n in save order; `parents` maps number -> parent number."""
    return [
        SimpleNamespace(id=100 + n, parent_id=None if p is None else 100 + p, number=n)
        for n, p in sorted(parents.items())
    ]


def segments(layout: Layout):
    for edge in layout.edges:
        for (x1, y1), (x2, y2) in zip(edge.points, edge.points[1:], strict=False):
            yield edge, (x1, y1), (x2, y2)


def assert_well_drawn(layout: Layout) -> None:
    by_id = {node.id: node for node in layout.nodes}
    for edge in layout.edges:
        parent, child = by_id[edge.parent_id], by_id[edge.child_id]
        assert child.parent_id == parent.id
        assert edge.points[0] == (parent.x, parent.y), "edge must leave the real parent's dot"
        assert edge.points[-1] == (child.x, child.y)
    for edge, (x1, y1), (x2, y2) in segments(layout):
        for node in layout.nodes:
            if node.id in (edge.parent_id, edge.child_id):
                continue
            if x1 == x2 == node.x:  # a vertical run through a foreign dot
                assert not (min(y1, y2) <= node.y <= max(y1, y2)), (
                    f"edge v{by_id[edge.parent_id].number}→v{by_id[edge.child_id].number} "
                    f"crosses v{node.number}"
                )
            if y1 == y2 == node.y:
                assert not (min(x1, x2) <= node.x <= max(x1, x2))
            # The bend sits in the gap above the parent's row, never on a row.
            if (x1, y1) != (x2, y2) and edge.points[1:-1]:
                bend_y = edge.points[1][1]
                assert all(bend_y != n.y for n in layout.nodes)
    # One row per version, newest on top.
    assert sorted(n.row for n in layout.nodes) == list(range(len(layout.nodes)))
    assert [n.number for n in layout.nodes] == sorted(
        (n.number for n in layout.nodes), reverse=True
    )


def node(layout: Layout, number: int):
    return next(n for n in layout.nodes if n.number == number)


def test_linear_history_is_one_lane():
    layout = tree_layout(history({1: None, 2: 1, 3: 2, 4: 3}))
    assert {n.lane for n in layout.nodes} == {0}
    assert_well_drawn(layout)


def test_branch_from_an_old_version_leaves_its_real_parent():
    # The case: v6 (parent v2) after main ran v3..v5.
    layout = tree_layout(history({1: None, 2: 1, 3: 2, 4: 3, 5: 4, 6: 2}))
    assert_well_drawn(layout)
    v2, v5, v6 = node(layout, 2), node(layout, 5), node(layout, 6)
    assert v6.lane != v5.lane, "v6 must not read as a child of v5"
    edge = next(e for e in layout.edges if e.child_id == v6.id)
    assert edge.points[0] == (v2.x, v2.y)
    # The line into v6 runs in v6's lane from just above v2, past v3..v5 without touching them.
    assert edge.points[1] == (v6.x, v2.y - 17)


def test_two_branches_from_one_parent():
    layout = tree_layout(history({1: None, 2: 1, 3: 1, 4: 1, 5: 2, 6: 3, 7: 4}))
    assert_well_drawn(layout)
    lanes = {node(layout, n).lane for n in (2, 3, 4)}
    assert len(lanes) == 3, "three children of v1, three lanes while all are alive"
    for child, parent in ((5, 2), (6, 3), (7, 4)):
        assert node(layout, child).lane == node(layout, parent).lane


def test_branch_of_a_branch():
    layout = tree_layout(history({1: None, 2: 1, 3: 2, 4: 2, 5: 4, 6: 4, 7: 3, 8: 6, 9: 5}))
    assert_well_drawn(layout)
    assert node(layout, 6).lane not in (node(layout, 4).lane, node(layout, 3).lane)
    assert node(layout, 8).lane == node(layout, 6).lane


def test_lanes_are_reused_once_a_branch_ends():
    # v3 branches from v1 and ends; v6 branches from v5 later and can take the freed lane.
    layout = tree_layout(history({1: None, 2: 1, 3: 1, 4: 2, 5: 4, 6: 5, 7: 5}))
    assert_well_drawn(layout)
    assert node(layout, 7).lane == node(layout, 3).lane == 1
    assert layout.width == 12 * 2 + 18


def test_a_freed_lane_is_not_taken_when_the_new_line_would_cross_its_dots():
    # v4 (lane 1) branches from v1 and ends at v4. v7 branches from v2, which is *below* v4:
    # its line from v2 would pass v4's dot in lane 1, so it must take another lane.
    layout = tree_layout(history({1: None, 2: 1, 3: 2, 4: 1, 5: 3, 6: 5, 7: 2}))
    assert_well_drawn(layout)
    assert node(layout, 7).lane != node(layout, 4).lane


@pytest.mark.parametrize("seed", range(40))
def test_random_forked_histories_are_well_drawn(seed):
    import random

    rng = random.Random(seed)
    parents: dict[int, int | None] = {1: None}
    for n in range(2, 40):
        # Mostly extend a recent version, sometimes fork from an old one.
        parents[n] = n - 1 if rng.random() < 0.6 else rng.randint(1, n - 1)
    assert_well_drawn(tree_layout(history(parents)))


# --- windows of a long history ------------------------------------------------------------------


def window(history_: list[SimpleNamespace], newest: int, selected: int, ancestry: int):
    """What version_window selects: the newest `newest`, and `selected` with up to `ancestry`
    of its ancestors (numbers), in save order."""
    by_number = {v.number: v for v in history_}
    keep = {v.number for v in history_[-newest:]}
    current, steps = by_number[selected], 0
    keep.add(current.number)
    while current.parent_id is not None and steps < ancestry:
        current = by_number[current.parent_id - 100]
        keep.add(current.number)
        steps += 1
    return [v for v in history_ if v.number in keep]


def assert_window_well_drawn(layout: Layout, shown: list[SimpleNamespace]) -> None:
    by_id = {node.id: node for node in layout.nodes}
    shown_ids = {v.id for v in shown}
    assert set(by_id) == shown_ids
    # Every shown parent-child pair is an edge from the parent's dot; every other child a stub.
    for version in shown:
        if version.parent_id is None:
            continue
        if version.parent_id in shown_ids:
            edge = next(e for e in layout.edges if e.child_id == version.id)
            parent = by_id[version.parent_id]
            assert edge.parent_id == parent.id
            assert edge.points[0] == (parent.x, parent.y)
        else:
            stub = next(s for s in layout.stubs if s.child_id == version.id)
            child = by_id[version.id]
            assert stub.parent_id == version.parent_id
            assert stub.points[-1] == (child.x, child.y)
            assert 0 < stub.points[0][1] - child.y < 17, "a stub stays within its own row"
            assert by_id[version.id].parent_elided
            # Nothing in the stub's lane in the row below: it must not read as that one's line.
            below = [n for n in layout.nodes if n.row == child.row + 1 and n.x == child.x]
            assert not below, (
                f"v{version.number}'s stub runs into v{below[0].number}" if below else ""
            )
    # No line (edge or stub) runs through a foreign dot.
    lines = [(e.parent_id, e.child_id, e.points) for e in layout.edges]
    lines += [(s.parent_id, s.child_id, s.points) for s in layout.stubs]
    for parent_id, child_id, points in lines:
        for (x1, y1), (x2, y2) in zip(points, points[1:], strict=False):
            for node in layout.nodes:
                if node.id in (parent_id, child_id):
                    continue
                if x1 == x2 == node.x:
                    assert not (min(y1, y2) <= node.y <= max(y1, y2))
    # Rows: one per shown version and one per run of left-out numbers, newest on top.
    rows = layout.rows
    assert [r.row for r in rows] == list(range(len(rows)))
    hidden = sum(g.count for g in layout.gaps)
    assert hidden + len(shown) == max(v.number for v in shown)
    expected_gaps = []
    previous = 0
    for version in shown:
        if version.number > previous + 1:
            expected_gaps.append((previous + 1, version.number - 1))
        previous = version.number
    assert sorted((g.first, g.last) for g in layout.gaps) == expected_gaps
    for gap in layout.gaps:  # a gap row sits between the versions it separates
        above = [n for n in layout.nodes if n.row < gap.row]
        below = [n for n in layout.nodes if n.row > gap.row]
        assert all(n.number > gap.last for n in above)
        assert all(n.number < gap.first for n in below)


def test_a_window_marks_left_out_versions_and_stubs_left_out_parents():
    # v1..v12 linear, v13 branches from v2, v14..v20 follow v13.
    parents: dict[int, int | None] = {1: None, **{n: n - 1 for n in range(2, 13)}, 13: 2}
    parents.update({n: n - 1 for n in range(14, 21)})
    versions = history(parents)
    shown = window(versions, newest=5, selected=9, ancestry=3)  # v16..v20, v6..v9
    layout = tree_layout(shown, parent_numbers={105: 5, 115: 15})
    assert_window_well_drawn(layout, shown)
    assert [(g.first, g.last) for g in layout.gaps] == [(10, 15), (1, 5)]
    assert {s.child_id for s in layout.stubs} == {106, 116}
    assert node(layout, 16).parent_number == 15
    assert node(layout, 6).parent_number == 5


@pytest.mark.parametrize("seed", range(40))
def test_random_windows_of_forked_histories_are_well_drawn(seed):
    import random

    rng = random.Random(seed)
    parents: dict[int, int | None] = {1: None}
    for n in range(2, 80):
        parents[n] = n - 1 if rng.random() < 0.6 else rng.randint(1, n - 1)
    versions = history(parents)
    shown = window(
        versions,
        newest=rng.randint(1, 30),
        selected=rng.randint(1, 79),
        ancestry=rng.randint(0, 20),
    )
    assert_window_well_drawn(tree_layout(shown), shown)
