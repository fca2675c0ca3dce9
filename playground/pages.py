"""Page models: what a playground page shows, read once and typed (templates consume these)."""

from dataclasses import dataclass

from .content import VersionContent
from .models import Label, PromptVersion
from .selectors import PromptAccess, label_list, version_content, version_tree
from .tree import Layout, tree_layout


@dataclass(frozen=True)
class PromptPage:
    """A prompt's page: its version tree and labels, and the version on show with its content."""

    access: PromptAccess
    layout: Layout
    labels: list[Label]
    main: Label | None
    selected: PromptVersion
    selected_labels: list[str]
    content: VersionContent
    versions_count: int


def prompt_page_build(*, access: PromptAccess, selected: PromptVersion | None) -> PromptPage:
    """The page for `selected`, or for the version `main` points at (else the newest)."""
    versions = list(version_tree(prompt=access.prompt))
    labels = list(label_list(prompt=access.prompt))
    by_version: dict[int, list[str]] = {}
    for label in labels:
        by_version.setdefault(label.version_id, []).append(label.name)
    main = next((label for label in labels if label.name == "main"), None)
    if selected is None:
        selected = next((v for v in versions if main and v.pk == main.version_id), versions[-1])
    return PromptPage(
        access=access,
        layout=tree_layout(versions, by_version),
        labels=labels,
        main=main,
        selected=selected,
        selected_labels=by_version.get(selected.pk, []),
        content=version_content(version=selected),
        versions_count=len(versions),
    )
