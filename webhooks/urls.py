from django.urls import path

from . import views

app_name = "webhooks"

urlpatterns = [
    path("prompt/<int:prompt_id>/", views.prompt_webhooks_view, name="prompt"),
    path("<int:webhook_id>/delete", views.webhook_delete_view, name="delete"),
    path("deliveries/<int:delivery_id>/redeliver", views.delivery_redeliver_view, name="redeliver"),
]
