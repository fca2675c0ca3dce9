"""Which versions an evaluation runs: ids given, and labels resolved to where they point now."""

from __future__ import annotations

from typing import Any

from playground.models import Prompt
from playground.selectors import label_list

from .exceptions import EvalInvalid


def versions_from_labels(*, prompt: Prompt, versions: Any, labels: list[str] | None) -> list[Any]:
    """`versions` (as given, checked later) followed by the versions `labels` point at."""
    chosen: list[Any] = list(versions) if isinstance(versions, list) else []
    if versions is not None and not isinstance(versions, list):
        raise EvalInvalid("versions: a list of version ids.", field="versions")
    if labels:
        pointing = {label.name: label.version_id for label in label_list(prompt=prompt)}
        for name in labels:
            if name not in pointing:
                raise EvalInvalid(f"labels: this prompt has no label “{name}”.", field="labels")
            if pointing[name] not in chosen:
                chosen.append(pointing[name])
    if not chosen:
        raise EvalInvalid("versions: give version ids or labels.", field="versions")
    return chosen
