"""Page models: what a playground page shows, read once and typed (templates consume these)."""

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.urls import reverse

from .models import Label, LabelMove, Prompt, PromptVersion
from .selectors import (
    PromptAccess,
    label_list,
    label_moves,
    version_content,
    version_newest,
    version_number,
    version_window,
)
from .sharing.fetch import version_fetch_etag
from .text.content import VersionContent
from .text.diffing import FOLD_STEP, page_row_budget
from .text.ranges import ContentPreview, version_content_diff, version_preview
from .version_tree.badges import VersionBadge, version_badges_for
from .version_tree.layout import Layout, tree_layout


@dataclass(frozen=True)
class TreeView:
    """The version tree as drawn: a window of the history (see `version_window`)."""

    layout: Layout
    total: int  # versions of the prompt
    shown: int  # how many of the newest are drawn (their count, not the ancestors')
    more_from: int  # versions numbered below this are not all drawn (0: everything is)
    step: int  # how many more "Show older versions" draws
    # What other apps show beside each drawn version (an evaluation's pass rate), by version id.
    badges: dict[int, list[VersionBadge]] = field(default_factory=dict)

    @property
    def next_shown(self) -> int:
        return self.shown + self.step


@dataclass(frozen=True)
class PromptPage:
    """A prompt's page: its version tree and labels, and the version on show with its content."""

    access: PromptAccess
    tree: TreeView
    labels: list[Label]
    main: Label | None
    selected: PromptVersion
    selected_labels: list[str]
    # The whole content, or None when a text is too long to load into a page (see
    # version_page_content): then only `preview` is shown and the rest loads by range.
    content: VersionContent | None
    preview: ContentPreview
    fetch_etag: str  # what `GET /api/v1/versions/{id}/` answers as the selected version's ETag
    parent_number: int | None  # the selected version's parent (v3 is 3), None for the root
    label_moves: list[LabelMove]  # the newest 30 moves, for the labels panel
    fetch_label: str  # the label the fetch example names: this version's, else any; "" if none

    @property
    def layout(self) -> Layout:
        return self.tree.layout

    @property
    def versions_count(self) -> int:
        return self.tree.total


def version_page_content(*, version: PromptVersion) -> tuple[VersionContent | None, ContentPreview]:
    """What a page shows of a version: the first screenful of each text, and the whole content
    only if its texts total at most PLAYGROUND_PAGE_FULL_TEXT_MAX_CHARS characters, so a
    page's size and its worker's memory do not grow with long texts."""
    preview = version_preview(version=version)
    if preview.total > int(settings.PLAYGROUND_PAGE_FULL_TEXT_MAX_CHARS):
        return None, preview
    return version_content(version=version), preview


def tree_shown_parse(raw: Any) -> int:
    """How many of the newest versions a tree request draws: the window by default, else the
    given count rounded up to whole windows, within PLAYGROUND_TREE_MAX (ValueError if `raw`
    is not a positive integer)."""
    step = int(settings.PLAYGROUND_TREE_WINDOW)
    if raw in (None, ""):
        return step
    if not isinstance(raw, str) or not raw.isdigit() or len(raw) > 9 or int(raw) < 1:
        raise ValueError("show: a positive integer")
    wanted = -(-int(raw) // step) * step
    return max(step, min(wanted, int(settings.PLAYGROUND_TREE_MAX)))


def version_tree_view(
    *, access: PromptAccess, selected: PromptVersion, labels: list[Label], shown: int
) -> TreeView:
    """The tree around `selected`: the newest `shown` versions, `selected` and its ancestors."""
    window = version_window(
        prompt=access.prompt,
        newest=shown,
        around=selected,
        ancestry=int(settings.PLAYGROUND_TREE_ANCESTRY),
    )
    by_version: dict[int, list[str]] = {}
    for label in labels:
        by_version.setdefault(label.version_id, []).append(label.name)
    layout = tree_layout(window.versions, by_version, window.parent_numbers)
    return TreeView(
        layout=layout,
        total=window.total,
        shown=shown,
        more_from=window.newest_from if window.newest_from > 1 else 0,
        step=int(settings.PLAYGROUND_TREE_WINDOW),
        badges=version_badges_for(
            prompt_id=access.prompt.pk, version_ids=[v.id for v in window.versions]
        ),
    )


def prompt_page_build(
    *, access: PromptAccess, selected: PromptVersion | None, shown: int | None = None
) -> PromptPage:
    """The page for `selected`, or for the version `main` points at (else the newest).

    Bounded whatever the history's length: the tree is a window of it (`version_tree_view`),
    and labels are per prompt, not per version.
    """
    labels = list(label_list(prompt=access.prompt))
    main = next((label for label in labels if label.name == "main"), None)
    if selected is None:
        selected = main.version if main else version_newest(prompt=access.prompt)
    tree = version_tree_view(
        access=access,
        selected=selected,
        labels=labels,
        shown=shown or int(settings.PLAYGROUND_TREE_WINDOW),
    )
    content, preview = version_page_content(version=selected)
    return PromptPage(
        access=access,
        tree=tree,
        labels=labels,
        main=main,
        selected=selected,
        selected_labels=[label.name for label in labels if label.version_id == selected.pk],
        content=content,
        preview=preview,
        fetch_etag=version_fetch_etag(
            version=selected, text_totals=[text.total for text in preview.texts]
        ),
        parent_number=version_number(prompt=access.prompt, version_id=selected.parent_id),
        label_moves=list(label_moves(prompt=access.prompt, limit=30)),
        fetch_label=next(
            iter(
                [
                    *(label.name for label in labels if label.version_id == selected.pk),
                    *(label.name for label in labels),
                ]
            ),
            "",
        ),
    )


def version_url(version: PromptVersion) -> str:
    """The prompt page showing `version`: /playground/p/<prompt>/v<number>/ (the number the
    page shows; `?v=<id>` addresses from older links still open the same page)."""
    return reverse("playground:version", args=[version.prompt_id, version.number])


def version_diff_context(
    *, prompt: Prompt, a: PromptVersion, b: PromptVersion, split: bool = False
) -> dict[str, Any]:
    """What the diff templates need to show the diff of `a` → `b`: the
    changed texts with unchanged runs folded (expanded on demand through `playground:diff-rows`)
    and the field changes. The compare page and a change request's page both build it here."""
    diff = version_content_diff(before=a, after=b, limit=None)
    query = f"?a=v{a.number}&b=v{b.number}"
    return {
        "prompt": prompt,
        "a": a,
        "b": b,
        "texts": [t for t in diff["texts"] if t.changed],
        "changes": diff["changes"],
        "a_label": f"v{a.number}",
        "b_label": f"v{b.number}",
        "split": split,
        "unified_url": query,
        "split_url": f"{query}&view=split",
        "expand_url": reverse("playground:diff-rows", args=[prompt.pk])
        + query
        + ("&view=split" if split else ""),
        "fold_step": FOLD_STEP,
        "fold_all_max": settings.PLAYGROUND_DIFF_FOLD_ALL_MAX,
        "page_rows": page_row_budget(),
    }
