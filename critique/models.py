"""Drafts of a review written by a prompt, and the suggestions they make (docs/critique.md).

A `ReviewDraft` is one run of a critique prompt version over a review's revision; it follows its
run (`playground.Run`) and each complete annotation object in the run's reply becomes a
`Suggestion`, anchored to its passage in the reviewed revision (or unanchored when its quote
occurs nowhere). A suggestion is accepted (it becomes the reviewer's draft annotation) or
rejected, once. `CritiquePrompt` marks the playground prompts that are critique prompts: the
built-in starter and the copies reviewers make of it.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

EXACT_MAX_CHARS = 10_000
CONTEXT_MAX_CHARS = 64
FIELD_MAX_CHARS = 20


class CritiquePrompt(models.Model):
    """A playground prompt used to critique design documents (the starter, or a copy)."""

    prompt = models.OneToOneField(
        "playground.Prompt", on_delete=models.CASCADE, related_name="critique"
    )
    starter = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["starter"], condition=Q(starter=True), name="critique_one_starter"
            ),
        ]

    def __str__(self) -> str:
        return f"critique prompt {self.prompt_id}{' (starter)' if self.starter else ''}"


class ReviewDraft(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    FINISHED = (Status.DONE, Status.FAILED)

    review = models.ForeignKey("reviews.Review", on_delete=models.CASCADE, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    run = models.OneToOneField("playground.Run", on_delete=models.PROTECT, related_name="+")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    # Suggestions made so far (the next one's position) and how far the reply has been parsed.
    suggestions_made = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["review", "-created_at"])]

    def __str__(self) -> str:
        return f"draft {self.pk} of review {self.review_id}"


class Suggestion(models.Model):
    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        ACCEPTED = "accepted", "Accepted"
        REJECTED = "rejected", "Rejected"

    draft = models.ForeignKey(ReviewDraft, on_delete=models.CASCADE, related_name="suggestions")
    position = models.PositiveIntegerField(help_text="Its place in the reply, from 0.")
    # The passage: the quote as the model gave it; anchored → start/end into the revision and
    # the selector's context from the revision's text.
    exact = models.TextField(blank=True, help_text="Empty: about the whole document.")
    prefix = models.CharField(max_length=CONTEXT_MAX_CHARS, blank=True)
    suffix = models.CharField(max_length=CONTEXT_MAX_CHARS, blank=True)
    anchored = models.BooleanField(default=False)
    start = models.PositiveIntegerField(null=True, blank=True)
    end = models.PositiveIntegerField(null=True, blank=True)
    area = models.CharField(max_length=FIELD_MAX_CHARS)
    kind = models.CharField(max_length=FIELD_MAX_CHARS)
    severity = models.CharField(max_length=FIELD_MAX_CHARS)
    body = models.TextField()
    tradeoff = models.TextField(blank=True)
    constraint = models.TextField(blank=True)
    rank = models.PositiveIntegerField(null=True, blank=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    annotation = models.ForeignKey(
        "reviews.Annotation", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["draft", "position"]
        constraints = [
            models.UniqueConstraint(fields=["draft", "position"], name="suggestion_position"),
            models.CheckConstraint(
                condition=Q(anchored=False, start__isnull=True, end__isnull=True)
                | Q(anchored=True, start__isnull=False, end__isnull=False),
                name="suggestion_anchored_has_position",
            ),
        ]

    def __str__(self) -> str:
        return f"suggestion {self.position} of draft {self.draft_id}"
