from django.apps import AppConfig


class PlaygroundConfig(AppConfig):
    name = "playground"

    def ready(self) -> None:
        from questionbank.related import related_register
        from textstore.references import blob_references_register

        from . import tasks  # noqa: F401 - registers the app's Celery tasks
        from .hooks.references import playground_blob_references
        from .hooks.related import prompts_for_question
        from .runs import tasks as run_tasks  # noqa: F401 - and those runs/dispatch.py sends by name

        related_register(name="playground", provider=prompts_for_question)
        blob_references_register(name="playground", provider=playground_blob_references)

        # The model providers a version may name (playground/runs/providers/registry.py).
        from .runs.providers.anthropic_messages import AnthropicProvider
        from .runs.providers.echo import EchoProvider
        from .runs.providers.fixture import FixtureProvider
        from .runs.providers.openai_chat import OpenAIProvider
        from .runs.providers.registry import provider_register

        provider_register(name="anthropic", adapter=AnthropicProvider)
        provider_register(name="openai", adapter=OpenAIProvider)
        provider_register(name="echo", adapter=EchoProvider)
        provider_register(name="fixture", adapter=FixtureProvider)
