"""Webhooks' HTTP API (docs/api.md, Webhooks): a prompt's webhooks (its owner only), their
deliveries with every attempt, redelivery. Parse, call one selector or service, answer."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.auth import request_actor
from common.fields import StrictSerializer
from playground.models import Role

from .models import URL_MAX_CHARS, Delivery, Event, Webhook
from .selectors import (
    DeliveryRow,
    delivery_get_for_user,
    delivery_row,
    delivery_rows,
    webhook_get_for_user,
    webhook_list_for_prompt,
)
from .services import delivery_redeliver, webhook_create, webhook_delete


class WebhookSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()
    prompt = serializers.IntegerField()
    url = serializers.CharField()
    events = serializers.ListField(child=serializers.ChoiceField(choices=Event.choices))
    created_at = serializers.DateTimeField()


class WebhookCreatedSerializer(WebhookSerializer):
    secret = serializers.CharField(
        help_text="The signing secret, shown this once: keep it to verify `Redline-Signature`."
    )


def _webhook_body(webhook: Webhook) -> dict[str, Any]:
    return {
        "id": webhook.pk,
        "prompt": webhook.prompt_id,
        "url": webhook.url,
        "events": webhook.events,
        "created_at": webhook.created_at,
    }


class AttemptSerializer(serializers.Serializer[dict[str, Any]]):
    number = serializers.IntegerField()
    at = serializers.DateTimeField()
    status_code = serializers.IntegerField(
        allow_null=True, help_text="The receiver's status; null when it never answered."
    )
    error = serializers.CharField(allow_blank=True)
    duration_ms = serializers.IntegerField()


class DeliverySerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()
    webhook = serializers.IntegerField()
    event = serializers.ChoiceField(choices=Event.choices)
    status = serializers.ChoiceField(choices=Delivery.Status.choices)
    attempts = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    redelivery_of = serializers.IntegerField(allow_null=True)
    attempt_log = AttemptSerializer(many=True)


def _delivery_body(row: DeliveryRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "webhook": row.webhook_id,
        "event": row.event,
        "status": row.status,
        "attempts": row.attempts,
        "created_at": row.created_at,
        "finished_at": row.finished_at,
        "redelivery_of": row.redelivery_of,
        "attempt_log": [
            {
                "number": a.number,
                "at": a.at,
                "status_code": a.status_code,
                "error": a.error,
                "duration_ms": a.duration_ms,
            }
            for a in row.attempt_log
        ],
    }


class WebhookListCreateApi(APIView):
    class InputSerializer(StrictSerializer):
        url = serializers.CharField(
            max_length=URL_MAX_CHARS,
            help_text="https:// (or http://) URL; loopback and private addresses are refused"
            " unless the deployment allows them.",
        )
        events = serializers.ListField(
            child=serializers.ChoiceField(choices=Event.choices),
            min_length=1,
            max_length=len(Event.choices),
        )

    @extend_schema(
        summary="A prompt's webhooks (its owner only)",
        responses=WebhookSerializer(many=True),
    )
    def get(self, request: Request, prompt_id: int) -> Response:
        _, hooks = webhook_list_for_prompt(user=request.user, prompt_id=prompt_id)
        return Response([WebhookSerializer(_webhook_body(h)).data for h in hooks])

    @extend_schema(
        summary="Register a webhook",
        description="Deliveries are POSTs signed with HMAC-SHA256 (`Redline-Signature: v1=<hex>`"
        " of `<Redline-Timestamp>.<body>`). The secret is in this answer only. 429 past"
        " WEBHOOKS_PER_USER webhooks per account.",
        request=InputSerializer,
        responses={201: WebhookCreatedSerializer},
    )
    def post(self, request: Request, prompt_id: int) -> Response:
        prompt, _ = webhook_list_for_prompt(user=request.user, prompt_id=prompt_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        created = webhook_create(
            actor=request_actor(request),
            prompt=prompt,
            role=Role.OWNER,
            url=data.validated_data["url"],
            events=data.validated_data["events"],
        )
        body = {**_webhook_body(created.webhook), "secret": created.secret}
        return Response(WebhookCreatedSerializer(body).data, status=status.HTTP_201_CREATED)


class WebhookDetailApi(APIView):
    @extend_schema(summary="A webhook", responses=WebhookSerializer)
    def get(self, request: Request, webhook_id: int) -> Response:
        webhook = webhook_get_for_user(user=request.user, webhook_id=webhook_id)
        return Response(WebhookSerializer(_webhook_body(webhook)).data)

    @extend_schema(
        summary="Delete a webhook and its deliveries",
        responses={204: OpenApiResponse(description="Deleted.")},
    )
    def delete(self, request: Request, webhook_id: int) -> Response:
        webhook = webhook_get_for_user(user=request.user, webhook_id=webhook_id)
        webhook_delete(actor=request_actor(request), webhook=webhook)
        return Response(status=status.HTTP_204_NO_CONTENT)


class WebhookDeliveriesApi(APIView):
    @extend_schema(
        summary="A webhook's newest deliveries, each with its attempts",
        responses=DeliverySerializer(many=True),
    )
    def get(self, request: Request, webhook_id: int) -> Response:
        webhook = webhook_get_for_user(user=request.user, webhook_id=webhook_id)
        return Response(
            [DeliverySerializer(_delivery_body(r)).data for r in delivery_rows(webhook=webhook)]
        )


class DeliveryRedeliverApi(APIView):
    @extend_schema(
        summary="Send a delivery again",
        description="A new delivery with the same body (the same event `id`), signed afresh.",
        request=None,
        responses={201: DeliverySerializer},
    )
    def post(self, request: Request, delivery_id: int) -> Response:
        delivery = delivery_get_for_user(user=request.user, delivery_id=delivery_id)
        again = delivery_redeliver(actor=request_actor(request), delivery=delivery)
        body = _delivery_body(delivery_row(delivery=again))
        return Response(DeliverySerializer(body).data, status=status.HTTP_201_CREATED)
