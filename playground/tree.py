"""Lay out a version tree for drawing: one row per version (newest first), one lane per branch.

A child continues its parent's lane when it is the parent's first child; every later child
(a fork) opens the lowest lane that is free from that row on. Lanes are reused once the branch
that held them has no more descendants below, so the drawing stays narrow.
"""

from dataclasses import dataclass, field
from typing import Any

ROW_HEIGHT = 34
LANE_WIDTH = 18
MARGIN = 12


@dataclass
class Node:
    id: int
    parent_id: int | None
    number: int
    row: int = 0
    lane: int = 0
    x: int = 0
    y: int = 0
    obj: Any = None
    labels: list[str] = field(default_factory=list)


@dataclass
class Edge:
    x1: int
    y1: int
    x2: int
    y2: int

    @property
    def path(self) -> str:
        if self.x1 == self.x2:
            return f"M{self.x1},{self.y1} L{self.x2},{self.y2}"
        # Leave the parent vertically, then bend into the child's lane.
        mid = self.y2 + ROW_HEIGHT // 2
        return f"M{self.x1},{self.y1} L{self.x1},{mid} Q{self.x1},{self.y2} {self.x2},{self.y2}"


@dataclass
class Layout:
    nodes: list[Node]
    edges: list[Edge]
    width: int
    height: int


def tree_layout(versions: list[Any], labels: dict[int, list[str]] | None = None) -> Layout:
    """`versions` in save order (parents before children), each with id, parent_id, number."""
    labels = labels or {}
    nodes = {v.id: Node(id=v.id, parent_id=v.parent_id, number=v.number, obj=v) for v in versions}
    order = [nodes[v.id] for v in versions]
    position = {node.id: index for index, node in enumerate(order)}
    # The save-order index of each version's last descendant: its lane is busy until then.
    last_descendant_index = dict(position)
    for node in reversed(order):
        if node.parent_id in last_descendant_index:
            last_descendant_index[node.parent_id] = max(
                last_descendant_index[node.parent_id], last_descendant_index[node.id]
            )

    busy_until: dict[int, int] = {}  # lane -> last index (save order) that occupies it
    first_child_taken: set[int] = set()
    for index, node in enumerate(order):
        parent = nodes.get(node.parent_id) if node.parent_id else None
        if parent is not None and parent.id not in first_child_taken:
            first_child_taken.add(parent.id)
            node.lane = parent.lane
        else:
            lane = 0
            while busy_until.get(lane, -1) >= index:
                lane += 1
            node.lane = lane
        busy_until[node.lane] = max(busy_until.get(node.lane, -1), last_descendant_index[node.id])
        node.labels = labels.get(node.id, [])

    count = len(order)
    for index, node in enumerate(order):
        node.row = count - 1 - index  # newest on top
        node.x = MARGIN + node.lane * LANE_WIDTH
        node.y = ROW_HEIGHT // 2 + node.row * ROW_HEIGHT
    edges = [
        Edge(nodes[n.parent_id].x, nodes[n.parent_id].y, n.x, n.y)
        for n in order
        if n.parent_id in nodes
    ]
    lanes = max((n.lane for n in order), default=0) + 1
    return Layout(
        nodes=sorted(order, key=lambda n: n.row),
        edges=edges,
        width=MARGIN * 2 + (lanes - 1) * LANE_WIDTH,
        height=max(count, 1) * ROW_HEIGHT,
    )
