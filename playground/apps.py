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
