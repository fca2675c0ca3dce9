from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    name = "reviews"

    def ready(self) -> None:
        from questionbank.related import related_register

        from .related import docs_for_question

        related_register(name="reviews", provider=docs_for_question)
