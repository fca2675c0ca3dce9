"""Webhooks: an owner's URL per prompt, the events it hears, and every delivery with each of
its attempts (docs/api.md, Webhooks; docs/operations.md, Webhooks)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from playground.models import Prompt

URL_MAX_CHARS = 2000
ERROR_MAX_CHARS = 500
RESPONSE_MAX_CHARS = 1000


class Event(models.TextChoices):
    VERSION_CREATED = "version.created", "A version was saved"
    LABEL_MOVED = "label.moved", "A label was moved"
    EVALUATION_FINISHED = "evaluation.finished", "An evaluation finished"


class Webhook(models.Model):
    """A receiver URL for one prompt. Its signing secret is never stored: it is derived from
    `secret_salt` and WEBHOOK_SECRET_KEY (webhooks.signing) and shown once, on creation."""

    prompt = models.ForeignKey(Prompt, on_delete=models.CASCADE, related_name="+")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    url = models.CharField(max_length=URL_MAX_CHARS)
    events = models.JSONField(default=list, help_text="Event names (Event values).")
    secret_salt = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["prompt"]), models.Index(fields=["owner"])]

    def __str__(self) -> str:
        return f"{self.prompt_id}: {self.url}"


class Delivery(models.Model):
    """One event for one webhook: the exact body signed on every attempt, and where it is."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        SUCCEEDED = "succeeded", "Delivered"
        FAILED = "failed", "Failed"

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=40, choices=Event.choices)
    body = models.TextField(help_text="The JSON sent, byte for byte on every attempt.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    redelivery_of = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["webhook", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.webhook_id} {self.event} {self.status}"


class DeliveryAttempt(models.Model):
    """One try at sending a delivery: the receiver's status (None when it never answered).
    Written once by the sender; removed only with its webhook."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveIntegerField()
    at = models.DateTimeField(auto_now_add=True)
    status_code = models.PositiveIntegerField(null=True, blank=True)
    error = models.CharField(max_length=ERROR_MAX_CHARS, blank=True)
    response = models.CharField(max_length=RESPONSE_MAX_CHARS, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["delivery", "number"]
        constraints = [
            models.UniqueConstraint(fields=["delivery", "number"], name="attempt_number_unique")
        ]

    def __str__(self) -> str:
        return f"{self.delivery_id} #{self.number}: {self.status_code or self.error}"
