from django.apps import AppConfig


class ChangesConfig(AppConfig):
    """Prompt change requests (docs/design.md, Prompt change review): the bridge that joins a
    prompt's versions and labels to the review desk's machinery and to evaluations. It calls
    them through their services and selectors and registers its hooks here; nothing imports
    it."""

    name = "changes"

    def ready(self) -> None:
        from playground.hooks.gates import gate_describer_register

        from .gate import gate_describe_for_label

        gate_describer_register(name="changes", describer=gate_describe_for_label)
