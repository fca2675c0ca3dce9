from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self) -> None:
        # The playground and evaluations know nothing of webhooks: their rows' signals (and
        # evals' `evaluation_finished`) are heard here (docs/architecture.md).
        from .events import events_connect

        events_connect()
