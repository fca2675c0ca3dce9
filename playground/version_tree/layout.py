"""Lay out a version tree for drawing: one row per version (newest first), one lane per branch.

Rules (each one is tested on forked histories in tests/playground/test_tree.py):

- A version's first child in save order continues its parent's lane; every later child (a fork)
  gets a lane of its own.
- Every edge starts at the version's real parent: it leaves the parent's dot, bends into the
  child's lane in the gap just above the parent's row, then runs straight up to the child.
- A lane is reserved from the row where its branch leaves the parent up to the branch's last
  descendant, and a fork takes the lowest lane with no reservation overlapping that span. So a
  line never runs through a dot it does not belong to, and lanes are reused once free.

A long history is drawn as a *window* of it (playground.selectors.version_window): any subset of
the versions in save order. Versions left out between two shown ones become one gap row
("… 37 older versions"); a shown version whose parent is left out gets a short dashed stub
below its dot, naming the parent, instead of an edge (the stub never reaches another row's dot,
and its lane is kept free in the row below, so it never reads as the line of another version).
"""

from dataclasses import dataclass, field
from typing import Any, Protocol

ROW_HEIGHT = 34
LANE_WIDTH = 18
MARGIN = 12


# A stub reaches this far below its dot: short of the bend of an edge leaving the row below.
STUB_LENGTH = ROW_HEIGHT * 3 // 10


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
    # Its parent is not drawn (a window of the history): the parent's number, if known.
    parent_elided: bool = False
    parent_number: int | None = None


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
class Stub:
    """A shown version whose parent is not shown: a short dashed line below the child's dot."""

    parent_id: int
    parent_number: int | None
    child_id: int
    points: tuple[tuple[int, int], ...]

    @property
    def path(self) -> str:
        (x1, y1), (x2, y2) = self.points
        return f"M{x1},{y1} L{x2},{y2}"


@dataclass(frozen=True)
class Gap:
    """A row standing for the versions numbered `first`..`last` that are not shown."""

    row: int
    first: int
    last: int

    @property
    def count(self) -> int:
        return self.last - self.first + 1


@dataclass(frozen=True)
class Layout:
    nodes: list[Node]  # top (newest) first
    edges: list[Edge]
    width: int
    height: int
    stubs: list[Stub] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)  # top first

    @property
    def rows(self) -> list[Node | Gap]:
        """Nodes and gaps, top first: what the list beside the graph shows, row by row."""
        return sorted([*self.nodes, *self.gaps], key=lambda r: r.row)


def _lane_free(reserved: list[tuple[int, int]], start: int, end: int) -> bool:
    return all(end < low or start > high for low, high in reserved)


def _slots(order: list[Any]) -> list[Any]:
    """The versions in save order with a gap (first, last) wherever numbers are left out."""
    slots: list[Any] = []
    previous = 0
    for version in order:
        if version.number > previous + 1:
            slots.append((previous + 1, version.number - 1))
        slots.append(version)
        previous = version.number
    return slots


def tree_layout(
    versions: list[Any],
    labels: dict[int, list[str]] | None = None,
    parent_numbers: dict[int, int] | None = None,
) -> Layout:
    """`versions` in save order (parents before children), each with id, parent_id, number:
    the whole history, or a window of it (numbers left out become gap rows). `parent_numbers`
    names the parents left out of a window (id -> number), for their stubs."""
    labels = labels or {}
    parent_numbers = parent_numbers or {}
    order = _slots(list(versions))
    index_of = {v.id: i for i, v in enumerate(order) if not isinstance(v, tuple)}
    # The slot index of each version's last descendant: its branch needs a lane until then.
    last = list(range(len(order)))
    for i in range(len(order) - 1, -1, -1):
        if isinstance(order[i], tuple):
            continue
        parent_index = index_of.get(order[i].parent_id) if order[i].parent_id else None
        if parent_index is not None:
            last[parent_index] = max(last[parent_index], last[i])

    lanes: list[list[tuple[int, int]]] = []  # lane -> reserved (first, last) index spans
    lane_of: dict[int, int] = {}
    continued: set[int] = set()  # parents whose lane a child already continues
    for i, version in enumerate(order):
        if isinstance(version, tuple):
            continue
        parent_index = index_of.get(version.parent_id) if version.parent_id else None
        if parent_index is not None and version.parent_id not in continued:
            continued.add(version.parent_id)
            lane_of[version.id] = lane_of[version.parent_id]
            continue
        if parent_index is not None:
            start = parent_index + 1
        elif version.parent_id and i:
            start = i - 1  # its stub reaches into the row below: keep other lines out of it
        else:
            start = i
        lane = 0
        while lane < len(lanes) and not _lane_free(lanes[lane], start, last[i]):
            lane += 1
        if lane == len(lanes):
            lanes.append([])
        lanes[lane].append((start, last[i]))
        lane_of[version.id] = lane

    count = len(order)
    nodes: dict[int, Node] = {}
    gaps: list[Gap] = []
    for i, version in enumerate(order):
        row = count - 1 - i  # newest on top
        if isinstance(version, tuple):
            gaps.append(Gap(row=row, first=version[0], last=version[1]))
            continue
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
            parent_elided=bool(version.parent_id) and version.parent_id not in index_of,
            parent_number=parent_numbers.get(version.parent_id) if version.parent_id else None,
        )
    edges = []
    stubs = []
    for version in order:
        if isinstance(version, tuple) or not version.parent_id:
            continue
        child = nodes[version.id]
        parent = nodes.get(version.parent_id)
        if parent is None:
            stubs.append(
                Stub(
                    parent_id=version.parent_id,
                    parent_number=parent_numbers.get(version.parent_id),
                    child_id=child.id,
                    points=((child.x, child.y + STUB_LENGTH), (child.x, child.y)),
                )
            )
            continue
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
        stubs=stubs,
        gaps=sorted(gaps, key=lambda g: g.row),
    )
