"""Practice: the answer key of a practice document and the timer of a mock review.

An answer key is kept with the document's data (`reviews/data/*.key.json`) and loaded by a data
migration. It is never serialized by the document, revision or review endpoints, and the
scorecard that reveals it answers only the reviewer, only after submit.
"""

from django.db import models
from django.db.models import Q

from ..models import Annotation, Area


class PlantedKind(models.TextChoices):
    """What a planted item is: a risk to find, a gap to name, an angle the author already
    weighed, or a tempting fix that breaks the pinned constraint."""

    RISK = "risk", "Risk"
    MISSING = "missing", "Missing"
    ALREADY_CONSIDERED = "already-considered", "Already considered"
    CONSTRAINT_TRAP = "constraint-trap", "Constraint trap"


class AnswerKey(models.Model):
    """The key of one practice document: its planted items and which risk is the worst."""

    doc = models.OneToOneField(
        "reviews.DesignDoc", on_delete=models.CASCADE, related_name="answer_key"
    )
    worst = models.SlugField(max_length=64, help_text="Slug of the worst planted risk.")
    minutes = models.PositiveSmallIntegerField(
        default=45, help_text="Time a mock review of this document is given (shown, not enforced)."
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["doc_id"]

    def __str__(self) -> str:
        return f"answer key of doc {self.doc_id}"


class PlantedItem(models.Model):
    """One thing a strong review of the document should say (or, for a trap, should not)."""

    key = models.ForeignKey(AnswerKey, on_delete=models.CASCADE, related_name="items")
    slug = models.SlugField(max_length=64)
    position = models.PositiveSmallIntegerField(default=0)
    kind = models.CharField(max_length=20, choices=PlantedKind.choices)
    area = models.CharField(max_length=20, choices=Area.choices)
    severity = models.CharField(max_length=10, choices=Annotation.Severity.choices)
    quote = models.TextField(
        blank=True, help_text="The passage it concerns, verbatim; empty for a missing item."
    )
    explanation = models.TextField()
    good_comment = models.TextField(help_text="What a good review comment would say.")

    class Meta:
        ordering = ["key", "position"]
        constraints = [
            models.UniqueConstraint(fields=["key", "slug"], name="planted_item_slug_once"),
            models.CheckConstraint(
                condition=Q(kind="missing", quote="") | (~Q(kind="missing") & ~Q(quote="")),
                name="planted_item_quote_unless_missing",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.slug} ({self.kind})"


class TimedReview(models.Model):
    """The timer of a mock review: when it started and the time it was given.

    The end is the review's own `submitted_at`; the limit is shown, never enforced.
    """

    review = models.OneToOneField("reviews.Review", on_delete=models.CASCADE, related_name="timer")
    started_at = models.DateTimeField()
    minutes_allowed = models.PositiveSmallIntegerField(default=45)

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(minutes_allowed__gte=1), name="timed_review_minutes_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"timer of review {self.review_id}"
