from django.apps import AppConfig


class CommonConfig(AppConfig):
    """The shared kernel as a Django app: only for start-up wiring (no tables of its own)."""

    name = "common"
    verbose_name = "Shared kernel"
