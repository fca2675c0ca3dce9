"""Test sets and evaluations (docs/evals.md).

A **test set** belongs to a prompt and is versioned like one: its rows live in write-once
**revisions**; an edit writes a new revision, so an evaluation that names a revision can always be
reproduced. An **evaluation** runs one test-set revision against one or more *targets* (a version
with a provider and model), `repeat` times, and grades every **cell** (row × target × repeat).
Each cell's output comes from an ordinary playground Run, so runs and evaluations share the
request builder, providers, idempotency, retries and timings.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from common.limits import MESSAGE_MAX_CHARS, TITLE_MAX_CHARS
from common.models import WriteOnceModel
from playground.models import MODEL_MAX_CHARS, Prompt, PromptVersion, Run

from .exceptions import TestSetImmutable

NOTE_MAX_CHARS = 1_000
PROVIDER_MAX_CHARS = 32


class TestSet(models.Model):
    __test__ = False  # not a pytest test class, despite the name
    prompt = models.ForeignKey(Prompt, on_delete=models.CASCADE, related_name="testsets")
    name = models.CharField(max_length=TITLE_MAX_CHARS)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["prompt", "-created_at"])]

    def __str__(self) -> str:
        return self.name


class TestSetRevision(WriteOnceModel):
    """The rows of a test set as they were at one save. Numbered 1, 2, … per test set."""

    __test__ = False  # not a pytest test class, despite the name

    immutable_error = TestSetImmutable

    testset = models.ForeignKey(TestSet, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    message = models.CharField(max_length=MESSAGE_MAX_CHARS, blank=True)
    row_count = models.PositiveIntegerField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["testset", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["testset", "number"], name="testset_revision_number"),
        ]

    def __str__(self) -> str:
        return f"{self.testset_id} r{self.number}"


class TestRow(WriteOnceModel):
    """A row's content, stored once per test set: named by the SHA-256 of its canonical JSON, so
    a revision that keeps a row (an append, an edit of another row) points at the same content
    instead of copying it (docs/evals.md, Test sets). `size` is that JSON's length in bytes, what
    the per-user storage quota counts (EVAL_TESTSET_STORAGE_PER_USER)."""

    __test__ = False  # not a pytest test class, despite the name

    immutable_error = TestSetImmutable

    testset = models.ForeignKey(TestSet, on_delete=models.CASCADE, related_name="+")
    sha256 = models.CharField(max_length=64)
    variables = models.JSONField(default=dict)
    expected = models.TextField(blank=True)
    note = models.CharField(max_length=NOTE_MAX_CHARS, blank=True)
    # Validated grader specs (evals.graders) that apply to this row alone, on top of the
    # evaluation's graders (a promptfoo test's own `assert` list).
    graders = models.JSONField(default=list, blank=True)
    # A promptfoo test's `threshold`: with one (> 0) the row's cells pass when their weighted
    # score reaches it, whatever the graders' own verdicts (evals.graders.cell_verdict).
    threshold = models.FloatField(null=True, blank=True)
    size = models.PositiveIntegerField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["testset", "sha256"], name="testrow_once"),
        ]
        indexes = [models.Index(fields=["created_by"])]

    def __str__(self) -> str:
        return f"row {self.sha256[:12]} of {self.testset_id}"


class TestCase(WriteOnceModel):
    """One row of a revision: its place, and the content it shows (shared with every other
    revision that has the same row)."""

    __test__ = False  # not a pytest test class, despite the name

    immutable_error = TestSetImmutable

    revision = models.ForeignKey(TestSetRevision, on_delete=models.CASCADE, related_name="rows")
    position = models.PositiveIntegerField()
    content = models.ForeignKey(TestRow, on_delete=models.PROTECT, related_name="+")

    class Meta:
        ordering = ["revision", "position"]
        constraints = [
            models.UniqueConstraint(fields=["revision", "position"], name="testcase_position"),
        ]

    def __str__(self) -> str:
        return f"row {self.position} of {self.revision_id}"


class Evaluation(models.Model):
    """Status moves queued → running → done | failed, or to cancelled, only by conditional
    updates in `evals.services`; `cells_done` counts cells finished (graded, errored or
    cancelled) and reaches `cells_total` exactly once."""

    Status = Run.Status  # the same states as a run, with the same meaning
    FINISHED = Run.FINISHED

    prompt = models.ForeignKey(Prompt, on_delete=models.CASCADE, related_name="evaluations")
    testset_revision = models.ForeignKey(
        TestSetRevision, on_delete=models.PROTECT, related_name="evaluations"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    graders = models.JSONField(help_text="Validated grader specs (evals.graders).")
    repeat = models.PositiveSmallIntegerField(default=1)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    cells_total = models.PositiveIntegerField()
    cells_done = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # When its cells were last handed to workers (the reaper hands a stalled one over again).
    dispatched_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["prompt", "-created_at"])]

    def __str__(self) -> str:
        return f"evaluation {self.pk} ({self.status})"


class EvalTarget(models.Model):
    """One column of the results matrix: a version run with one provider and model."""

    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="targets")
    position = models.PositiveSmallIntegerField()
    version = models.ForeignKey(PromptVersion, on_delete=models.PROTECT, related_name="+")
    provider = models.CharField(max_length=PROVIDER_MAX_CHARS)
    model = models.CharField(max_length=MODEL_MAX_CHARS)

    class Meta:
        ordering = ["evaluation", "position"]
        constraints = [
            models.UniqueConstraint(fields=["evaluation", "position"], name="evaltarget_position"),
        ]

    def __str__(self) -> str:
        return f"{self.version_id} on {self.provider}/{self.model}"


class EvalCell(models.Model):
    """One row × target × repeat. Its run is created when a worker first takes the cell (with
    an idempotency key naming the cell, so a redelivery finds the same run); its grades are
    written once, when the run has finished."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        GRADED = "graded", "Graded"
        ERROR = "error", "Error"
        CANCELLED = "cancelled", "Cancelled"

    FINISHED = (Status.GRADED, Status.ERROR, Status.CANCELLED)

    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="cells")
    target = models.ForeignKey(EvalTarget, on_delete=models.CASCADE, related_name="cells")
    row = models.ForeignKey(TestCase, on_delete=models.PROTECT, related_name="+")
    repeat_index = models.PositiveSmallIntegerField(default=0)
    provider = models.CharField(max_length=PROVIDER_MAX_CHARS, help_text="The target's, for caps.")
    run = models.OneToOneField(
        Run, on_delete=models.SET_NULL, null=True, blank=True, related_name="eval_cell"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    grades = models.JSONField(default=list, blank=True)
    passed = models.BooleanField(null=True, blank=True)
    score = models.FloatField(null=True, blank=True)
    error = models.TextField(blank=True)
    # Times its grading was started: a cell whose grading kills or outlasts its worker each time
    # ends `error` after EVAL_CELL_GRADE_ATTEMPTS_MAX instead of being handed over for ever.
    grade_attempts = models.PositiveSmallIntegerField(default=0)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When the cell's task was last handed to the broker; None: not yet (or its message was
    # lost). At most EVAL_USER_CELLS_IN_FLIGHT of an account's unfinished cells have one
    # (evals/dispatch.py, the fair share).
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["evaluation", "row__position", "target__position", "repeat_index"]
        indexes = [
            models.Index(fields=["evaluation", "status"]),
            models.Index(fields=["provider", "status"]),
            models.Index(fields=["status", "sent_at"]),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["evaluation", "target", "row", "repeat_index"], name="evalcell_once"
            ),
            models.CheckConstraint(
                condition=~Q(status="graded") | Q(passed__isnull=False), name="evalcell_graded"
            ),
        ]

    def __str__(self) -> str:
        return f"cell {self.pk} of {self.evaluation_id} ({self.status})"
