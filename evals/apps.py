from django.apps import AppConfig


class EvalsConfig(AppConfig):
    name = "evals"
    verbose_name = "Evaluations"

    def ready(self) -> None:
        # The playground's version tree shows each version's last pass rate without importing
        # this app (playground/version_tree/badges.py).
        from playground.version_tree.badges import version_badges_register

        from .badges import pass_rate_badges

        version_badges_register(name="evals", provider=pass_rate_badges)
