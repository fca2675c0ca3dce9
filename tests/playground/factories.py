"""Playground test data, built through the services."""

import copy
from typing import Any

from playground.services import prompt_create, prompt_version_create

BASE_CONTENT: dict[str, Any] = {
    "provider": "anthropic",
    "model": "claude-sonnet-4-6",
    "system": "You are a careful reviewer.\nAnswer in short paragraphs.\n",
    "messages": [{"role": "user", "content": "Review this design: {{design}}"}],
    "params": {"temperature": 0.5, "max_tokens": 512, "top_p": None, "stop": []},
    "tools": [],
    "response_format": None,
    "variables": {"design": "a cache in front of PostgreSQL"},
}


def content(**changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE_CONTENT)
    data.update(changes)
    return data


def make_prompt(owner, *, title: str = "Reviewer", **changes: Any):
    return prompt_create(actor=owner, title=title, content=content(**changes))


def save(owner, prompt, parent, message: str = "", **changes: Any):
    return prompt_version_create(
        actor=owner, prompt=prompt, parent=parent, content=content(**changes), message=message
    )


def long_text(lines: int) -> str:
    """A long prompt text of numbered, otherwise identical lines (for folded diffs)."""
    return "".join(
        f"Line {n:05d}: the unchanged body of a very long prompt text.\n" for n in range(lines)
    )
