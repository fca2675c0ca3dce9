"""The practice desk's models: an answer key, its planted items, the timer of a mock review.

They are defined in `reviews/models.py` (the app's model module, which Django loads) and named
here for the practice package's code.
"""

from ..models import AnswerKey, PlantedItem, PlantedKind, TimedReview

__all__ = ["AnswerKey", "PlantedItem", "PlantedKind", "TimedReview"]
