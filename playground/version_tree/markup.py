"""The version tree's markup: the graph's shapes and the list's rows, built in Python.

A tree draws PLAYGROUND_TREE_WINDOW (50) rows, and more on demand; through the template engine
each row cost about 2,000 Python calls (variable look-ups, filters, autoescaping), which made the
prompt page's time grow with the window. Here a row is one f-string: user text (messages,
author names, label names) goes through `html.escape`, everything else is an integer or fixed
text. The markup is what templates/playground/_tree.html used to render (it includes this).
"""

from dataclasses import dataclass
from datetime import UTC
from html import escape

from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from common.times import time_html

from ..selectors import TreeVersion
from .badges import VersionBadge
from .layout import Gap, Layout, Node


@dataclass(frozen=True)
class TreeHtml:
    graph: SafeString  # the <svg>'s content
    rows: SafeString  # the <ol>'s content


def _graph(layout: Layout, selected_id: int, base: str) -> str:
    parts = [
        f'<path d="{e.path}" class="tree-edge" data-parent="{e.parent_id}" '
        f'data-child="{e.child_id}"/>'
        for e in layout.edges
    ]
    parts += [
        f'<path d="{s.path}" class="tree-stub" data-parent="{s.parent_id}" '
        f'data-child="{s.child_id}"/>'
        for s in layout.stubs
    ]
    for n in layout.nodes:
        selected = n.id == selected_id
        parts.append(
            f'<a href="{base}v{n.number}/" tabindex="-1"><circle cx="{n.x}" cy="{n.y}" '
            f'r="{7 if selected else 5}" class="tree-node lane-{n.lane}'
            f'{" tree-node-selected" if selected else ""}" data-version="{n.id}"/></a>'
        )
    return "".join(parts)


def _clip(text: str, length: int) -> str:
    """The `truncatechars` filter's result: at most `length` characters, an ellipsis last."""
    return text if len(text) <= length else text[: length - 1] + "…"


def _badge(n: int, badge: VersionBadge) -> str:
    return (
        f'<a class="badge tree-badge tree-badge-{escape(badge.tone)}" href="{escape(badge.url)}" '
        f'title="{escape(badge.title)}" '
        f'aria-label="{escape(badge.text)} for v{n}: {escape(badge.title)}">'
        f"{escape(badge.text)}</a>"
    )


def _row(
    node: Node, selected_id: int, compare_from: int, base: str, badges: list[VersionBadge]
) -> str:
    """One version's row. Every value from a user (message, author, label names) or from
    another app (badges) goes through `escape`; the rest are integers and fixed text."""
    version: TreeVersion = node.obj
    selected = node.id == selected_id
    at = version.created_at.astimezone(UTC)
    author = version.author
    n = node.number
    parent = (
        f'<a class="tree-from muted" href="{base}v{node.parent_number}/" tabindex="-1" '
        f'title="Its parent, v{node.parent_number}, is not drawn">from v{node.parent_number}</a>'
        if node.parent_elided and node.parent_number is not None
        else ""
    )
    labels = "".join(
        f'<span class="badge label-badge label-{escape(name)}">{escape(name)}</span>'
        for name in node.labels
    )
    extras = "".join(_badge(n, badge) for badge in badges)
    return (
        f'<li class="tree-row{" tree-row-selected" if selected else ""}" '
        f'title="v{n}: {escape(version.message)}" data-version="{node.id}" data-number="{n}">'
        f'<input type="radio" name="a" value="v{n}" aria-label="Compare from v{n}"'
        f"{' checked' if node.id == compare_from else ''}>"
        f'<input type="radio" name="b" value="v{n}" aria-label="Compare to v{n}"'
        f"{' checked' if selected else ''}>"
        f'<a class="tree-link" href="{base}v{n}/"><strong>v{n}</strong> '
        f"{escape(_clip(version.message or '(no message)', 60))}</a>{parent}{labels}{extras}"
        f'<span class="tree-meta muted" title="{escape(author)}, {at:%Y-%m-%d %H:%M} UTC">'
        f'<span class="tree-author">{escape(_clip(author, 10))}</span> · '
        f"{time_html(at, 'time')}</span></li>\n"
    )


def _gap(gap: Gap, button: str) -> str:
    plural = "" if gap.count == 1 else "s"
    return (
        f'<li class="tree-gap muted" data-first="{gap.first}" data-last="{gap.last}">'
        f"<span>… {gap.count} older version{plural}</span>{button}</li>\n"
    )


def tree_html(
    *,
    layout: Layout,
    prompt_id: int,
    selected_id: int,
    compare_from: int,
    next_shown: int,
    step: int,
    badges: dict[int, list[VersionBadge]] | None = None,
) -> TreeHtml:
    """The graph and the rows of `layout`, `selected_id` marked and `compare_from` checked as A.
    The first gap offers "Show older versions" (the tree with `next_shown` of the newest).
    `badges`: what other apps show beside a version (playground.version_tree.badges)."""
    badges = badges or {}
    first_gap = layout.gaps[0].row if layout.gaps else None
    older = reverse("playground:tree", args=[prompt_id])
    base = reverse("playground:prompt", args=[prompt_id])  # + "v7/": the version's page
    rows = []
    for row in layout.rows:
        if isinstance(row, Node):
            rows.append(_row(row, selected_id, compare_from, base, badges.get(row.id, [])))
            continue
        button = (
            format_html(
                '<button type="button" class="button button-small button-secondary tree-older"'
                ' id="tree-older" hx-get="{}?v={}&amp;show={}&amp;from={}"'
                ' hx-target="#version-tree" hx-swap="outerHTML"'
                ' aria-label="Show {} older versions">Show older versions</button>',
                older,
                selected_id,
                next_shown,
                row.last,
                step,
            )
            if row.row == first_gap
            else ""
        )
        rows.append(_gap(row, button))
    return TreeHtml(
        graph=mark_safe(_graph(layout, selected_id, base)),  # noqa: S308 (numbers and fixed text)
        rows=mark_safe("".join(rows)),  # noqa: S308 (user text escaped in _row)
    )
