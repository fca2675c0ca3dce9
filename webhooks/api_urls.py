from django.urls import path

from . import api

urlpatterns = [
    path(
        "prompts/<int:prompt_id>/webhooks/",
        api.WebhookListCreateApi.as_view(),
        name="api-webhooks",
    ),
    path("webhooks/<int:webhook_id>/", api.WebhookDetailApi.as_view(), name="api-webhook"),
    path(
        "webhooks/<int:webhook_id>/deliveries/",
        api.WebhookDeliveriesApi.as_view(),
        name="api-webhook-deliveries",
    ),
    path(
        "deliveries/<int:delivery_id>/redeliver/",
        api.DeliveryRedeliverApi.as_view(),
        name="api-delivery-redeliver",
    ),
]
