from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    name = "reviews"

    def ready(self) -> None:
        from django.conf import settings

        from questionbank.related import related_register
        from textstore.references import blob_references_register

        from . import tasks  # noqa: F401 - registers the task services/documents.py sends by name
        from .anchoring.text import anchor_cache_bound_set
        from .references import reviews_blob_references
        from .related import docs_for_question

        related_register(name="reviews", provider=docs_for_question)
        blob_references_register(name="reviews", provider=reviews_blob_references)
        # Re-anchoring's caches share the process's byte budget (docs/operations.md).
        anchor_cache_bound_set(lambda: int(settings.REVIEWS_ANCHOR_CACHE_BYTES))
