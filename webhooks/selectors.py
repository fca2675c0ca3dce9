"""Webhooks' reads, scoped to the caller: only a prompt's owner sees its webhooks (a viewer or
editor gets 403 on the prompt's list, anyone else 404; a webhook or delivery not yours: 404)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from common.auth import Viewer
from common.exceptions import NotFound
from common.selectors import object_id_parse
from playground.models import Prompt, Role
from playground.selectors import prompt_access_get_for_user

from .models import Delivery, DeliveryAttempt, Webhook

DELIVERIES_SHOWN = 50


@dataclass(frozen=True)
class AttemptRow:
    number: int
    at: datetime
    status_code: int | None
    error: str
    duration_ms: int


@dataclass(frozen=True)
class DeliveryRow:
    id: int
    webhook_id: int
    event: str
    status: str
    attempts: int
    created_at: datetime
    finished_at: datetime | None
    redelivery_of: int | None
    attempt_log: tuple[AttemptRow, ...]


def webhook_list_for_prompt(*, user: Viewer, prompt_id: object) -> tuple[Prompt, list[Webhook]]:
    access = prompt_access_get_for_user(user=user, prompt_id=prompt_id, min_role=Role.OWNER)
    return access.prompt, list(Webhook.objects.filter(prompt=access.prompt))


def webhook_get_for_user(*, user: Viewer, webhook_id: object) -> Webhook:
    if not user.is_authenticated:
        raise NotFound
    webhook = (
        Webhook.objects.select_related("prompt")
        .filter(pk=object_id_parse(webhook_id), prompt__owner_id=user.pk)
        .first()
    )
    if webhook is None:
        raise NotFound
    return webhook


def delivery_get_for_user(*, user: Viewer, delivery_id: object) -> Delivery:
    if not user.is_authenticated:
        raise NotFound
    delivery = (
        Delivery.objects.select_related("webhook")
        .filter(pk=object_id_parse(delivery_id), webhook__prompt__owner_id=user.pk)
        .first()
    )
    if delivery is None:
        raise NotFound
    return delivery


def delivery_rows(*, webhook: Webhook, limit: int = DELIVERIES_SHOWN) -> list[DeliveryRow]:
    """The webhook's newest deliveries with every attempt: two queries."""
    return _rows(list(Delivery.objects.filter(webhook=webhook)[:limit]))


def delivery_row(*, delivery: Delivery) -> DeliveryRow:
    return _rows([delivery])[0]


def _rows(deliveries: list[Delivery]) -> list[DeliveryRow]:
    log: dict[int, list[AttemptRow]] = {}
    for attempt in DeliveryAttempt.objects.filter(delivery__in=[d.pk for d in deliveries]):
        log.setdefault(attempt.delivery_id, []).append(
            AttemptRow(
                number=attempt.number,
                at=attempt.at,
                status_code=attempt.status_code,
                error=attempt.error,
                duration_ms=attempt.duration_ms,
            )
        )
    return [
        DeliveryRow(
            id=d.pk,
            webhook_id=d.webhook_id,
            event=d.event,
            status=d.status,
            attempts=d.attempts,
            created_at=d.created_at,
            finished_at=d.finished_at,
            redelivery_of=d.redelivery_of_id,
            attempt_log=tuple(log.get(d.pk, ())),
        )
        for d in deliveries
    ]
