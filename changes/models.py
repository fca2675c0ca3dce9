"""Prompt change requests (docs/design.md, Prompt change review).

A request proposes moving one label of a prompt from the version it points at to another
version. Its reviewable text is a `reviews.DesignDoc` of kind `change`: each revision of that
document is the rendering of one version (`RequestRevision` keeps which, and the segment map
from text offsets back to the version's fields), so reviews, annotations, threads, verdicts and
re-anchoring are the review desk's own. Gate rules hang on a protected label (`GateRule`); the
merge that moves the label checks them in one service (`changes.gate.gate_evaluate`).
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

from common.limits import TITLE_MAX_CHARS

# A request's description, and a suggested replacement text.
DESCRIPTION_MAX_CHARS = 20_000
SUGGESTION_MAX_CHARS = 20_000


class ChangeRequest(models.Model):
    """Move `label` from `from_version` (where it pointed when the request was opened: the
    merge's compare-and-set expects it there) to `to_version` (the newest version pushed)."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        MERGED = "merged", "Merged"
        CLOSED = "closed", "Closed"

    prompt = models.ForeignKey(
        "playground.Prompt", on_delete=models.PROTECT, related_name="change_requests"
    )
    label = models.ForeignKey("playground.Label", on_delete=models.PROTECT, related_name="+")
    from_version = models.ForeignKey(
        "playground.PromptVersion", on_delete=models.PROTECT, related_name="+"
    )
    to_version = models.ForeignKey(
        "playground.PromptVersion", on_delete=models.PROTECT, related_name="+"
    )
    doc = models.OneToOneField(
        "reviews.DesignDoc", on_delete=models.PROTECT, related_name="change_request"
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="change_requests"
    )
    title = models.CharField(max_length=TITLE_MAX_CHARS)
    description = models.TextField(blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    merged_at = models.DateTimeField(null=True, blank=True)
    merged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    merge_move = models.ForeignKey(
        "playground.LabelMove", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["prompt", "-created_at"])]
        constraints = [
            models.CheckConstraint(
                condition=Q(status="merged", merge_move__isnull=False)
                | (~Q(status="merged") & Q(merge_move__isnull=True)),
                name="change_merged_iff_move",
            ),
        ]

    def __str__(self) -> str:
        return f"change request {self.pk}"


class RequestRevision(models.Model):
    """Which version a revision of the request's document renders, and where each field of the
    version sits in that text (`segments`: [[field, start, end], …], field "system",
    "messages.0", "tools", "response_format")."""

    request = models.ForeignKey(ChangeRequest, on_delete=models.CASCADE, related_name="revisions")
    revision = models.OneToOneField(
        "reviews.DocRevision", on_delete=models.PROTECT, related_name="change_revision"
    )
    version = models.ForeignKey(
        "playground.PromptVersion", on_delete=models.PROTECT, related_name="+"
    )
    segments = models.JSONField(default=list)

    class Meta:
        ordering = ["request", "revision__number"]

    def __str__(self) -> str:
        return f"{self.request_id}: r{self.revision_id} = v{self.version_id}"


class RequestedReviewer(models.Model):
    request = models.ForeignKey(ChangeRequest, on_delete=models.CASCADE, related_name="reviewers")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")

    class Meta:
        ordering = ["request", "id"]
        constraints = [
            models.UniqueConstraint(fields=["request", "user"], name="requested_reviewer_once"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} on {self.request_id}"


class SuggestedEdit(models.Model):
    """A replacement text a reviewer attached to an annotation's passage. Accepting it saves a
    child version with the passage replaced; rejecting keeps the thread."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        ACCEPTED = "accepted", "Accepted"
        REJECTED = "rejected", "Rejected"

    annotation = models.OneToOneField(
        "reviews.Annotation", on_delete=models.CASCADE, related_name="suggested_edit"
    )
    request = models.ForeignKey(ChangeRequest, on_delete=models.CASCADE, related_name="suggestions")
    text = models.TextField(blank=True, help_text="Replaces the annotated passage (may be empty).")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    version = models.ForeignKey(
        "playground.PromptVersion",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="The version that applied it (accepted).",
    )

    class Meta:
        ordering = ["request", "id"]

    def __str__(self) -> str:
        return f"suggestion on annotation {self.annotation_id} ({self.status})"


class GateRule(models.Model):
    """What must hold before a merge moves the label (owner sets it; the label is then gated).

    `required_approvals`: submitted `approve` verdicts on the request's current revision, by
    accounts other than its author; `required_reviewers`: accounts among them; `no_blockers`:
    no open blocker-severity annotation in a submitted review; the evaluation: a finished
    evaluation of `eval_testset` whose graders include `eval_graders`, with the version to be
    promoted at a pass rate of at least `eval_threshold`.
    """

    label = models.OneToOneField("playground.Label", on_delete=models.CASCADE, related_name="gate")
    required_approvals = models.PositiveSmallIntegerField(default=1)
    required_reviewers = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="+"
    )
    no_blockers = models.BooleanField(default=True)
    eval_testset = models.ForeignKey(
        "evals.TestSet", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    eval_graders = models.JSONField(default=list, blank=True)
    eval_threshold = models.FloatField(null=True, blank=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["label_id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(eval_testset__isnull=True, eval_threshold__isnull=True)
                | Q(
                    eval_testset__isnull=False,
                    eval_threshold__gte=0,
                    eval_threshold__lte=1,
                ),
                name="gate_eval_threshold_with_testset",
            ),
        ]

    def __str__(self) -> str:
        return f"gate of label {self.label_id}"


class ChangeNotice(models.Model):
    """One inbox entry about a change request (the review desk's inbox lists design documents
    only): review requested, @mentioned, review submitted."""

    class Kind(models.TextChoices):
        REVIEW_REQUESTED = "review-requested", "Your review was requested"
        MENTION = "mention", "You were mentioned"
        REVIEW_SUBMITTED = "review-submitted", "A review was submitted on your request"

    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="change_notices"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    request = models.ForeignKey(ChangeRequest, on_delete=models.CASCADE, related_name="+")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    annotation = models.ForeignKey(
        "reviews.Annotation", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["recipient", "read_at"], name="change_notice_unread")]

    def __str__(self) -> str:
        return f"{self.kind} for {self.recipient_id}"
