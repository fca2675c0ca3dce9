from django.apps import AppConfig


class PlaygroundConfig(AppConfig):
    name = "playground"

    def ready(self) -> None:
        from questionbank.related import related_register

        from .related import prompts_for_question

        related_register(name="playground", provider=prompts_for_question)
