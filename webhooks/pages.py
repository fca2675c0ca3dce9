"""The webhooks page's model: a prompt's webhooks, each with its newest deliveries."""

from __future__ import annotations

from dataclasses import dataclass

from common.auth import Viewer
from playground.models import Prompt

from .models import Event, Webhook
from .selectors import DeliveryRow, delivery_rows, webhook_list_for_prompt

DELIVERIES_PER_HOOK = 10


@dataclass(frozen=True)
class HookCard:
    webhook: Webhook
    event_labels: tuple[str, ...]
    deliveries: tuple[DeliveryRow, ...]


@dataclass(frozen=True)
class WebhooksPage:
    prompt: Prompt
    hooks: tuple[HookCard, ...]
    events: tuple[tuple[str, str], ...]


def webhooks_page_build(*, user: Viewer, prompt_id: object) -> WebhooksPage:
    prompt, hooks = webhook_list_for_prompt(user=user, prompt_id=prompt_id)
    labels = dict(Event.choices)
    return WebhooksPage(
        prompt=prompt,
        hooks=tuple(
            HookCard(
                webhook=hook,
                event_labels=tuple(labels.get(e, e) for e in hook.events),
                deliveries=tuple(delivery_rows(webhook=hook, limit=DELIVERIES_PER_HOOK)),
            )
            for hook in hooks
        ),
        events=tuple((str(value), str(label)) for value, label in Event.choices),
    )
