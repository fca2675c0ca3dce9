"""Lay out a version tree for drawing: one row per version (newest first), one lane per branch.

Rules (each one is tested on forked histories in tests/playground/test_tree.py):

- A version's first child in save order continues its parent's lane; every later child (a fork)
  gets a lane of its own.
- Every edge starts at the version's real parent: it leaves the parent's dot, bends into the
  child's lane in the gap just above the parent's row, then runs straight up to the child.
- A lane is reserved from the row where its branch leaves the parent up to the branch's last
  descendant, and a fork takes the lowest lane with no reservation overlapping that span. So a
  line never runs through a dot it does not belong to, and lanes are reused once free.
"""

from dataclasses import dataclass
from typing import Any, Protocol

ROW_HEIGHT = 34
LANE_WIDTH = 18
MARGIN = 12


class VersionLike(Protocol):
    id: int
    parent_id: int | None
    number: int


@dataclass(frozen=True)
class Node:
    id: int
    parent_id: int | None
    number: int
    row: int
    lane: int
    x: int
    y: int
    obj: Any
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class Edge:
    """From the parent's dot to the child's: `points` are the corners of the drawn line."""

    parent_id: int
    child_id: int
    points: tuple[tuple[int, int], ...]

    @property
    def path(self) -> str:
        (x1, y1), *rest = self.points
        if len(rest) == 1:
            x2, y2 = rest[0]
            return f"M{x1},{y1} L{x2},{y2}"
        (bx, by), (x2, y2) = rest
        # A quarter-curve from the parent's dot into the child's lane, then straight up.
        return f"M{x1},{y1} Q{x1},{by} {bx},{by} L{x2},{y2}"


@dataclass(frozen=True)
class Layout:
    nodes: list[Node]  # top (newest) first
    edges: list[Edge]
    width: int
    height: int


def _lane_free(reserved: list[tuple[int, int]], start: int, end: int) -> bool:
    return all(end < low or start > high for low, high in reserved)


def tree_layout(versions: list[Any], labels: dict[int, list[str]] | None = None) -> Layout:
    """`versions` in save order (parents before children), each with id, parent_id, number."""
    labels = labels or {}
    order = list(versions)
    index_of = {v.id: i for i, v in enumerate(order)}
    # The save-order index of each version's last descendant: its branch needs a lane until then.
    last = list(range(len(order)))
    for i in range(len(order) - 1, -1, -1):
        parent_index = index_of.get(order[i].parent_id) if order[i].parent_id else None
        if parent_index is not None:
            last[parent_index] = max(last[parent_index], last[i])

    lanes: list[list[tuple[int, int]]] = []  # lane -> reserved (first, last) index spans
    lane_of: dict[int, int] = {}
    continued: set[int] = set()  # parents whose lane a child already continues
    for i, version in enumerate(order):
        parent_index = index_of.get(version.parent_id) if version.parent_id else None
        if parent_index is not None and version.parent_id not in continued:
            continued.add(version.parent_id)
            lane_of[version.id] = lane_of[version.parent_id]
            continue
        start = parent_index + 1 if parent_index is not None else i
        lane = 0
        while lane < len(lanes) and not _lane_free(lanes[lane], start, last[i]):
            lane += 1
        if lane == len(lanes):
            lanes.append([])
        lanes[lane].append((start, last[i]))
        lane_of[version.id] = lane

    count = len(order)
    nodes: dict[int, Node] = {}
    for i, version in enumerate(order):
        row = count - 1 - i  # newest on top
        lane = lane_of[version.id]
        nodes[version.id] = Node(
            id=version.id,
            parent_id=version.parent_id,
            number=version.number,
            row=row,
            lane=lane,
            x=MARGIN + lane * LANE_WIDTH,
            y=ROW_HEIGHT // 2 + row * ROW_HEIGHT,
            obj=version,
            labels=tuple(labels.get(version.id, [])),
        )
    edges = []
    for version in order:
        parent = nodes.get(version.parent_id) if version.parent_id else None
        if parent is None:
            continue
        child = nodes[version.id]
        if parent.x == child.x:
            points: tuple[tuple[int, int], ...] = ((parent.x, parent.y), (child.x, child.y))
        else:
            bend = (child.x, parent.y - ROW_HEIGHT // 2)
            points = ((parent.x, parent.y), bend, (child.x, child.y))
        edges.append(Edge(parent_id=parent.id, child_id=child.id, points=points))
    lane_count = max(len(lanes), 1)
    return Layout(
        nodes=sorted(nodes.values(), key=lambda n: n.row),
        edges=edges,
        width=MARGIN * 2 + (lane_count - 1) * LANE_WIDTH,
        height=max(count, 1) * ROW_HEIGHT,
    )
