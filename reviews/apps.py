from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    name = "reviews"

    def ready(self) -> None:
        from questionbank.related import related_register
        from textstore.references import blob_references_register

        from .references import reviews_blob_references
        from .related import docs_for_question

        related_register(name="reviews", provider=docs_for_question)
        blob_references_register(name="reviews", provider=reviews_blob_references)
