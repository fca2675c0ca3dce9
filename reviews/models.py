from django.conf import settings
from django.db import models
from django.db.models import Q

from common.limits import MESSAGE_MAX_CHARS, TITLE_MAX_CHARS
from common.models import WriteOnceModel

from .exceptions import RevisionImmutable

# A checklist item's note.
NOTE_MAX_CHARS = 1000
# A pinned constraint's text (a document pins them; an annotation may refer to one).
CONSTRAINT_MAX_CHARS = 200


class Area(models.TextChoices):
    """The eight areas of the review checklist (docs/design.md, Invariants), in the order they are
    shown."""

    GOALS = "goals", "Goals & non-goals"
    ALTERNATIVES = "alternatives", "Alternatives"
    SCALE_COST = "scale-cost", "Scale & cost"
    FAILURE_MODES = "failure-modes", "Failure modes"
    ROLLOUT_ROLLBACK = "rollout-rollback", "Rollout & rollback"
    OBSERVABILITY = "observability", "Observability"
    SECURITY = "security", "Security"
    MIGRATION = "migration", "Migration"


class DesignDoc(models.Model):
    """A design document: a title, an author, pinned constraints and immutable revisions.

    Visible to every signed-in account (it is a practice desk: anyone may review any doc); only
    the author adds revisions or edits the constraints.

    A document of kind `change` is the reviewable text of a prompt change request (the
    `changes` app owns it): the review desk's own selectors never return it, so its pages and
    API answer 404 for it, and access to it is decided by `changes` through the prompt's.
    """

    class Kind(models.TextChoices):
        DESIGN = "design", "Design document"
        CHANGE = "change", "Prompt change request"

    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="design_docs"
    )
    title = models.CharField(max_length=TITLE_MAX_CHARS)
    question = models.ForeignKey(
        "questionbank.Question",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="design_docs",
    )
    constraints = models.JSONField(
        default=list,
        blank=True,
        help_text="Pinned constraints: short statements the review must work within.",
    )
    practice = models.BooleanField(
        default=False, help_text="A sample document shipped with Redline for practice."
    )
    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.DESIGN)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.title


class DocRevision(WriteOnceModel):
    """One immutable revision of a document. Its Markdown lives in textstore (`body_sha`),
    stored as a delta against the previous revision's text."""

    immutable_error = RevisionImmutable

    doc = models.ForeignKey(DesignDoc, on_delete=models.PROTECT, related_name="revisions")
    number = models.PositiveIntegerField(help_text="1, 2, 3… within the document.")
    body_sha = models.CharField(max_length=64)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="doc_revisions"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    message = models.CharField(max_length=MESSAGE_MAX_CHARS, blank=True)

    class Meta:
        ordering = ["doc", "number"]
        constraints = [
            models.UniqueConstraint(fields=["doc", "number"], name="docrevision_number_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.doc_id} r{self.number}"


class Verdict(models.TextChoices):
    """What a submitted review concludes (Gerrit's vote, GitHub's review state)."""

    APPROVE = "approve", "Approve"
    REQUEST_CHANGES = "request-changes", "Request changes"
    COMMENT = "comment", "Comment"


class Review(models.Model):
    """One reviewer's critique of one revision: draft (private) → submitted (read-only)."""

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        SUBMITTED = "submitted", "Submitted"

    revision = models.ForeignKey(DocRevision, on_delete=models.PROTECT, related_name="reviews")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="reviews"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    attempt = models.PositiveSmallIntegerField(
        default=1, help_text="1 for a first review; timed practice reviews count up (retries)."
    )
    summary = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    verdict = models.CharField(
        max_length=20,
        blank=True,
        default="",
        choices=[("", "None yet"), *Verdict.choices],
        help_text="Set when the review is submitted: approve, request-changes or comment.",
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["revision", "reviewer", "attempt"],
                name="review_one_per_revision_reviewer_attempt",
            ),
            models.UniqueConstraint(
                fields=["revision", "reviewer"],
                condition=Q(status="draft"),
                name="review_one_draft_per_revision_reviewer",
            ),
            models.CheckConstraint(
                condition=(Q(status="draft") & Q(submitted_at__isnull=True))
                | (Q(status="submitted") & Q(submitted_at__isnull=False)),
                name="review_submitted_at_iff_submitted",
            ),
            models.CheckConstraint(
                condition=(Q(status="draft") & Q(verdict=""))
                | (
                    Q(status="submitted") & Q(verdict__in=["approve", "request-changes", "comment"])
                ),
                name="review_verdict_iff_submitted",
            ),
        ]

    def __str__(self) -> str:
        return f"review {self.pk} of {self.revision}"


class ChecklistItem(models.Model):
    """One of the eight checklist areas of a review; all eight are created with the review."""

    class Status(models.TextChoices):
        UNSET = "", "Not assessed"
        COVERED = "covered", "Covered"
        GAP = "gap", "Gap"
        NA = "na", "N/A"

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="checklist")
    area = models.CharField(max_length=20, choices=Area.choices)
    position = models.PositiveSmallIntegerField(default=0)
    status = models.CharField(max_length=10, choices=Status.choices, blank=True, default="")
    note = models.CharField(max_length=NOTE_MAX_CHARS, blank=True)

    class Meta:
        ordering = ["review", "position"]
        constraints = [
            models.UniqueConstraint(fields=["review", "area"], name="checklist_area_once"),
        ]

    def __str__(self) -> str:
        return f"{self.area}: {self.status or 'unset'}"


class Annotation(models.Model):
    """A comment anchored to a passage of the reviewed revision, or to the whole document.

    The passage is kept as a W3C TextQuoteSelector (exact, prefix, suffix) plus a
    TextPositionSelector (start, end: offsets into the revision's Markdown) and the heading
    path. Where it lands in later revisions is in `AnnotationAnchor`.
    """

    class Kind(models.TextChoices):
        RISK = "risk", "Risk"
        MISSING = "missing", "Missing"
        ALTERNATIVE = "alternative", "Alternative"
        QUESTION = "question", "Question"
        ALREADY_CONSIDERED = "already-considered", "Already considered"
        CONSTRAINT = "constraint", "Constraint"

    class Severity(models.TextChoices):
        BLOCKER = "blocker", "Blocker"
        MAJOR = "major", "Major"
        MINOR = "minor", "Minor"
        NIT = "nit", "Nit"

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        RESOLVED = "resolved", "Resolved"
        DROPPED = "dropped", "Dropped"

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="annotations")
    revision = models.ForeignKey(
        DocRevision,
        on_delete=models.PROTECT,
        related_name="annotations",
        help_text="The revision the annotation was made on (the review's).",
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="annotations"
    )
    whole_document = models.BooleanField(default=False)
    exact = models.TextField(blank=True)
    prefix = models.CharField(max_length=200, blank=True)
    suffix = models.CharField(max_length=200, blank=True)
    start = models.PositiveIntegerField(null=True, blank=True)
    end = models.PositiveIntegerField(null=True, blank=True)
    heading_path = models.JSONField(default=list, blank=True)
    area = models.CharField(max_length=20, choices=Area.choices)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    severity = models.CharField(max_length=10, choices=Severity.choices)
    body = models.TextField()
    tradeoff = models.TextField(blank=True)
    constraint = models.CharField(
        max_length=CONSTRAINT_MAX_CHARS,
        blank=True,
        help_text="The pinned constraint it refers to (its text).",
    )
    rank = models.PositiveSmallIntegerField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    status_changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    status_changed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    edited_at = models.DateTimeField(
        null=True, blank=True, help_text="Last edit by its author after the review was submitted."
    )

    class Meta:
        ordering = ["review", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["review", "rank"],
                condition=Q(rank__isnull=False),
                name="annotation_rank_unique_per_review",
            ),
            models.CheckConstraint(
                condition=Q(rank__isnull=True) | (Q(kind="risk") & Q(rank__gte=1)),
                name="annotation_rank_only_for_risks",
            ),
            models.CheckConstraint(
                condition=(
                    Q(whole_document=True)
                    & Q(start__isnull=True)
                    & Q(end__isnull=True)
                    & Q(exact="")
                )
                | (
                    Q(whole_document=False)
                    & Q(start__isnull=False)
                    & Q(end__gt=models.F("start"))
                    & ~Q(exact="")
                ),
                name="annotation_passage_or_whole_document",
            ),
            models.CheckConstraint(
                condition=~Q(kind="alternative") | ~Q(tradeoff=""),
                name="annotation_alternative_has_tradeoff",
            ),
            models.CheckConstraint(
                condition=~Q(kind="constraint") | ~Q(constraint=""),
                name="annotation_constraint_names_one",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} on {self.revision}: {self.body[:40]}"


class AnnotationAnchor(models.Model):
    """Where an annotation landed in one revision (docs/design.md, Invariants), one row per
    revision.

    Offsets are into that revision's Markdown; orphaned anchors and whole-document annotations
    have none. `manual` marks a passage the user re-attached by hand, stored `reattached`: the
    other statuses say what re-anchoring found (`exact`: the passage the revision diff keeps,
    unchanged, wherever it now sits; `moved`: the same words found elsewhere).
    """

    class Status(models.TextChoices):
        EXACT = "exact", "Exact"
        MOVED = "moved", "Moved"
        FUZZY = "fuzzy", "Fuzzy"
        ORPHANED = "orphaned", "Orphaned"
        REATTACHED = "reattached", "Re-attached by hand"

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="anchors")
    revision = models.ForeignKey(DocRevision, on_delete=models.PROTECT, related_name="anchors")
    status = models.CharField(max_length=10, choices=Status.choices)
    start = models.PositiveIntegerField(null=True, blank=True)
    end = models.PositiveIntegerField(null=True, blank=True)
    score = models.FloatField(default=1.0)
    manual = models.BooleanField(default=False)
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["annotation_id", "revision_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["annotation", "revision"], name="anchor_once_per_revision"
            ),
            models.CheckConstraint(
                condition=(Q(start__isnull=True) & Q(end__isnull=True))
                | (Q(start__isnull=False) & Q(end__gt=models.F("start"))),
                name="anchor_span_valid",
            ),
            models.CheckConstraint(
                condition=~Q(status="orphaned") | Q(start__isnull=True),
                name="anchor_orphan_has_no_span",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.annotation_id} in {self.revision_id}: {self.status}"


class Reply(models.Model):
    """One message in the thread under an annotation of a submitted review (Markdown)."""

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="replies")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="review_replies"
    )
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    edited_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["annotation", "created_at", "id"]
        indexes = [models.Index(fields=["annotation", "created_at"], name="reply_thread_order")]

    def __str__(self) -> str:
        return f"reply {self.pk} on annotation {self.annotation_id}"


class BodyEdit(WriteOnceModel):
    """An earlier text of an annotation or a reply, kept when its author edited it.

    Written once: the edit history is never rewritten. `fields` holds the annotation's other
    content fields as they were (severity, area, kind, tradeoff, constraint).
    """

    annotation = models.ForeignKey(
        Annotation, on_delete=models.CASCADE, null=True, blank=True, related_name="edits"
    )
    reply = models.ForeignKey(
        Reply, on_delete=models.CASCADE, null=True, blank=True, related_name="edits"
    )
    body = models.TextField(help_text="The text before the edit.")
    fields = models.JSONField(default=dict, blank=True)
    written_at = models.DateTimeField(help_text="When this text was written (or last edited).")
    replaced_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["replaced_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(annotation__isnull=False) & Q(reply__isnull=True))
                | (Q(annotation__isnull=True) & Q(reply__isnull=False)),
                name="bodyedit_one_target",
            ),
        ]

    def __str__(self) -> str:
        target = (
            f"annotation {self.annotation_id}" if self.annotation_id else f"reply {self.reply_id}"
        )
        return f"earlier text of {target}"


class InboxItem(models.Model):
    """One in-app notification. Created by the service that made the event happen, in its
    transaction."""

    class Kind(models.TextChoices):
        REVIEW_SUBMITTED = "review-submitted", "A review was submitted on your document"
        REPLY = "reply", "Someone replied to your annotation"
        ORPHANED = "orphaned", "Your annotation was orphaned by a new revision"

    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="inbox_items"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="+")
    annotation = models.ForeignKey(
        Annotation, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    reply = models.ForeignKey(
        Reply, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    revision = models.ForeignKey(
        DocRevision, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["recipient", "read_at"], name="inbox_unread")]
        constraints = [
            models.UniqueConstraint(
                fields=["recipient", "annotation", "revision"],
                condition=Q(kind="orphaned"),
                name="inbox_orphan_once",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} for {self.recipient_id}"


# --- practice: the answer key of a practice document and the timer of a mock review -----------
#
# An answer key is kept with the document's data (`reviews/data/*.key.json`) and loaded by a
# data migration. It is never serialized by the document, revision or review endpoints, and the
# scorecard that reveals it answers only the reviewer, only after submit. The practice package
# (reviews/practice/) holds the code that uses them.


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
