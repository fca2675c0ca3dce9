"""Webhooks' writes: register and remove a URL, record an event's deliveries, attempt one,
redeliver. The only writers of webhooks' rows (docs/architecture.md)."""

from __future__ import annotations

import http.client
import json
import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from common.exceptions import Forbidden
from playground.models import Prompt, Role

from .dispatch import delivery_dispatch
from .exceptions import RateLimited, WebhookInvalid
from .models import ERROR_MAX_CHARS, Delivery, DeliveryAttempt, Event, Webhook
from .signing import secret_salt_new, signature, webhook_secret
from .transport import AddressRefused, addresses_checked, post, url_parse

logger = logging.getLogger(__name__)

USER_AGENT = "Redline-Webhook/1"
# The Retry-After of the 429 for an account at WEBHOOKS_PER_USER (deleting one is the way out).
LIMIT_RETRY_AFTER = 3600


@dataclass(frozen=True)
class CreatedWebhook:
    webhook: Webhook
    secret: str  # shown once: never stored, never answered again


def _events_parse(raw: object) -> list[str]:
    if not isinstance(raw, list) or not raw:
        raise WebhookInvalid(
            f"events: a non-empty list of {', '.join(Event.values)}.", field="events"
        )
    chosen: list[str] = []
    for index, name in enumerate(raw):
        if not isinstance(name, str) or name not in Event.values:
            raise WebhookInvalid(
                f"events.{index}: one of {', '.join(Event.values)}.", field=f"events.{index}"
            )
        if name not in chosen:
            chosen.append(name)
    return chosen


def _owner_check(role: str) -> None:
    if role != Role.OWNER:
        raise Forbidden("Only the prompt's owner manages its webhooks.")


def webhook_create(
    *, actor: User, prompt: Prompt, role: str, url: object, events: object
) -> CreatedWebhook:
    """A webhook for `prompt` (its owner only): the URL must resolve to public addresses only
    (unless WEBHOOK_ALLOW_PRIVATE_URLS), at most WEBHOOKS_PER_USER per account (429 past it)."""
    _owner_check(role)
    target = url_parse(url)
    chosen = _events_parse(events)
    addresses_checked(target)
    with transaction.atomic():
        # The owner's row, locked: two creations at once cannot both pass the count.
        User.objects.select_for_update().filter(pk=actor.pk).first()
        if Webhook.objects.filter(owner=actor).count() >= settings.WEBHOOKS_PER_USER:
            raise RateLimited(
                f"At most {settings.WEBHOOKS_PER_USER} webhooks per account: delete one first.",
                retry_after=LIMIT_RETRY_AFTER,
            )
        webhook = Webhook.objects.create(
            prompt=prompt,
            owner=actor,
            url=str(url).strip(),
            events=chosen,
            secret_salt=secret_salt_new(),
        )
    logger.info("webhook.created", extra={"webhook_id": webhook.pk, "prompt_id": prompt.pk})
    return CreatedWebhook(webhook=webhook, secret=webhook_secret(webhook.secret_salt))


def webhook_delete(*, actor: User, webhook: Webhook) -> None:
    """Remove a webhook with its deliveries (the prompt's owner, which the selector checked)."""
    webhook_id = webhook.pk
    webhook.delete()
    logger.info("webhook.deleted", extra={"webhook_id": webhook_id, "actor_id": actor.pk})


# --- events -----------------------------------------------------------------------------------


def event_emit(*, prompt: Prompt, event: str, data: dict[str, Any]) -> list[int]:
    """A delivery for each of the prompt's webhooks that hears `event`, written in the caller's
    transaction and handed to the sender once it commits (never inside the request)."""
    hooks = [h for h in Webhook.objects.filter(prompt_id=prompt.pk) if event in h.events]
    if not hooks:
        return []
    body = json.dumps(
        {
            "id": str(uuid.uuid4()),
            "event": event,
            "created_at": timezone.now().isoformat().replace("+00:00", "Z"),
            "prompt": {"id": prompt.pk, "title": prompt.title},
            "data": data,
        },
        ensure_ascii=False,
        separators=(",", ":"),
        sort_keys=True,
    )
    made = Delivery.objects.bulk_create(
        Delivery(webhook=hook, event=event, body=body) for hook in hooks
    )
    ids = [d.pk for d in made]
    for delivery_id in ids:
        transaction.on_commit(
            lambda delivery_id=delivery_id: delivery_dispatch(  # type: ignore[misc]
                delivery_id=delivery_id, attempt=delivery_attempt
            ),
            robust=True,
        )
    return ids


# --- sending ----------------------------------------------------------------------------------


def _backoff(number: int) -> float:
    """Seconds before attempt `number + 1`: WEBHOOK_RETRY_BASE_SECONDS doubling each time."""
    return float(settings.WEBHOOK_RETRY_BASE_SECONDS * 2 ** (number - 1))


def delivery_attempt(delivery_id: int) -> float | None:
    """One attempt at a pending delivery, logged: seconds until the next attempt, or None when
    the delivery is over (delivered, refused, out of attempts, or not pending)."""
    delivery = Delivery.objects.select_related("webhook").filter(pk=delivery_id).first()
    if delivery is None or delivery.status != Delivery.Status.PENDING:
        return None
    webhook = delivery.webhook
    number = delivery.attempts + 1
    body = delivery.body.encode("utf-8")
    timestamp = int(time.time())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "Redline-Event": delivery.event,
        "Redline-Delivery": str(delivery.pk),
        "Redline-Timestamp": str(timestamp),
        "Redline-Signature": signature(
            secret=webhook_secret(webhook.secret_salt), timestamp=timestamp, body=body
        ),
    }
    status_code: int | None = None
    answer_text = ""
    error = ""
    refused = False
    started = time.monotonic()
    try:
        target = url_parse(webhook.url)
        address = addresses_checked(target)[0]
        answer = post(target, address=address, body=body, headers=headers)
        status_code, answer_text = answer.status_code, answer.body
        if not 200 <= status_code < 300:
            error = f"The receiver answered {status_code}."
    except AddressRefused as refusal:
        refused, error = True, refusal.message
    except WebhookInvalid as invalid:
        error = invalid.message
    except (OSError, http.client.HTTPException) as failure:
        error = f"{type(failure).__name__}: {failure}" if str(failure) else type(failure).__name__
    took = int((time.monotonic() - started) * 1000)
    delivered = status_code is not None and 200 <= status_code < 300
    over = delivered or refused or number >= settings.WEBHOOK_MAX_ATTEMPTS
    with transaction.atomic():
        DeliveryAttempt.objects.create(
            delivery=delivery,
            number=number,
            status_code=status_code,
            error=error[:ERROR_MAX_CHARS],
            response=answer_text,
            duration_ms=took,
        )
        status = (
            Delivery.Status.SUCCEEDED
            if delivered
            else Delivery.Status.FAILED
            if over
            else Delivery.Status.PENDING
        )
        Delivery.objects.filter(pk=delivery.pk, status=Delivery.Status.PENDING).update(
            attempts=number, status=status, finished_at=timezone.now() if over else None
        )
    logger.info(
        "webhook.attempt",
        extra={
            "delivery_id": delivery.pk,
            "attempt": number,
            "status_code": status_code,
            "delivered": delivered,
            "over": over,
        },
    )
    return None if over else _backoff(number)


def delivery_attempt_and_requeue(*, delivery_id: int) -> None:
    """The task's body: one attempt, and the next one queued with its backoff."""
    wait = delivery_attempt(delivery_id)
    if wait is not None:
        delivery_dispatch(delivery_id=delivery_id, attempt=delivery_attempt, countdown=wait)


def delivery_redeliver(*, actor: User, delivery: Delivery) -> Delivery:
    """The same body (same event id) sent again as a new delivery, freshly signed."""
    with transaction.atomic():
        again = Delivery.objects.create(
            webhook=delivery.webhook,
            event=delivery.event,
            body=delivery.body,
            redelivery_of=delivery,
        )
        transaction.on_commit(
            lambda: delivery_dispatch(delivery_id=again.pk, attempt=delivery_attempt),
            robust=True,
        )
    logger.info(
        "webhook.redelivered",
        extra={"delivery_id": again.pk, "of": delivery.pk, "actor_id": actor.pk},
    )
    return again
