import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from common.limits import MESSAGE_MAX_CHARS, TITLE_MAX_CHARS
from common.models import WriteOnceModel

from .exceptions import VersionImmutable

# A model's name, as a version or a run names it (playground.text.content checks it).
MODEL_MAX_CHARS = 200
# A label's name: letters, digits, '-' and '_' (playground.services checks the characters).
LABEL_NAME_MAX_CHARS = 40
# A run's idempotency key: a retried POST with the same key returns the same run.
IDEMPOTENCY_KEY_MAX_CHARS = 100
# The provider's stop reason as reported ("end_turn", "length", …); longer ones are cut.
STOP_REASON_MAX_CHARS = 40
# What moved a label (`LabelMove.via`), and an owner's reason for overriding a gate.
LABEL_MOVE_VIA_MAX_CHARS = 200
OVERRIDE_REASON_MAX_CHARS = 2000


class Prompt(models.Model):
    """A prompt: a title, an owner and a tree of immutable versions."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="prompts"
    )
    title = models.CharField(max_length=TITLE_MAX_CHARS)
    question = models.ForeignKey(
        "questionbank.Question",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="prompts",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Prompts are never hard-deleted while shared; archiving hides them.
    archived_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["owner", "-created_at"])]

    def __str__(self) -> str:
        return self.title


class PromptVersion(WriteOnceModel):
    """One immutable version: everything needed to replay the call, plus a parent pointer.

    Texts (system prompt, message contents) live in textstore; this row keeps their SHA-256.
    `messages` is `[{"role": ..., "sha": ...}]`. The content hash covers the frozen fields
    (playground.text.content.content_hash); the same content under the same parent is stored once.
    """

    immutable_error = VersionImmutable

    prompt = models.ForeignKey(Prompt, on_delete=models.PROTECT, related_name="versions")
    parent = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="children"
    )
    number = models.PositiveIntegerField(help_text="1, 2, 3… within the prompt, in save order.")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="prompt_versions"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    message = models.CharField(max_length=MESSAGE_MAX_CHARS, blank=True)
    content_hash = models.CharField(max_length=64)

    provider = models.CharField(max_length=32)
    model = models.CharField(max_length=MODEL_MAX_CHARS)
    system_sha = models.CharField(max_length=64)
    messages = models.JSONField(default=list)
    params = models.JSONField(default=dict)
    tools = models.JSONField(default=list)
    response_format = models.JSONField(null=True, blank=True)
    variables = models.JSONField(default=dict)

    class Meta:
        ordering = ["prompt", "number"]
        constraints = [
            models.UniqueConstraint(fields=["prompt", "number"], name="version_number_unique"),
            models.UniqueConstraint(
                fields=["prompt", "parent", "content_hash"], name="version_content_once_per_parent"
            ),
            models.UniqueConstraint(
                fields=["prompt"], condition=Q(parent__isnull=True), name="version_one_root"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.prompt_id} v{self.number}"


class Label(models.Model):
    """A named pointer to a version (`main`, `production`), moved only by compare-and-set."""

    PROTECTED_NAMES = ("production",)

    prompt = models.ForeignKey(Prompt, on_delete=models.CASCADE, related_name="labels")
    name = models.SlugField(max_length=LABEL_NAME_MAX_CHARS)
    version = models.ForeignKey(PromptVersion, on_delete=models.PROTECT, related_name="labels")
    protected = models.BooleanField(default=False, help_text="Only the owner may move it.")
    gated = models.BooleanField(
        default=False,
        help_text="Moves only by a merged change request whose gate rules hold (set by the "
        "`changes` app); a direct move is refused for every role unless the owner overrides.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["prompt", "name"], name="label_name_unique"),
        ]

    def __str__(self) -> str:
        return self.name


class LabelMove(WriteOnceModel):
    """Append-only log: every move of every label, with who and when."""

    label = models.ForeignKey(Label, on_delete=models.CASCADE, related_name="moves")
    from_version = models.ForeignKey(
        PromptVersion, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    to_version = models.ForeignKey(PromptVersion, on_delete=models.PROTECT, related_name="+")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    moved_at = models.DateTimeField(auto_now_add=True)
    via = models.CharField(
        max_length=LABEL_MOVE_VIA_MAX_CHARS,
        blank=True,
        help_text='What moved it, when not a direct move: "change request #12".',
    )
    override_reason = models.TextField(
        blank=True, help_text="The owner's stated reason for moving a gated label directly."
    )

    class Meta:
        ordering = ["-moved_at", "-id"]

    def __str__(self) -> str:
        return f"{self.label_id}: {self.from_version_id} → {self.to_version_id}"


class Role(models.TextChoices):
    OWNER = "owner", "Owner"
    EDITOR = "editor", "Editor"
    VIEWER = "viewer", "Viewer"


class ShareLink(models.Model):
    """A link to one pinned version or to a label (follows it). Only the token's hash is kept."""

    class Access(models.TextChoices):
        PUBLIC = "public", "Anyone with the link"
        LOGIN = "login", "Signed-in accounts with the link"

    prompt = models.ForeignKey(Prompt, on_delete=models.PROTECT, related_name="links")
    token_hash = models.CharField(max_length=64, unique=True)
    # The public prefix plus a few characters, so the owner can tell links apart; not usable.
    token_hint = models.CharField(max_length=16)
    access = models.CharField(max_length=8, choices=Access.choices)
    version = models.ForeignKey(
        PromptVersion, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    label_name = models.SlugField(max_length=LABEL_NAME_MAX_CHARS, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(version__isnull=False) & Q(label_name=""))
                | (Q(version__isnull=True) & ~Q(label_name="")),
                name="sharelink_one_scope",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.token_hint}… ({self.access})"


class AccessGrant(models.Model):
    """Explicit access for one account. Revoking keeps the row (revoked_at) for the record."""

    prompt = models.ForeignKey(Prompt, on_delete=models.PROTECT, related_name="grants")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="grants"
    )
    role = models.CharField(
        max_length=8, choices=[(Role.EDITOR, "Editor"), (Role.VIEWER, "Viewer")]
    )
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["prompt", "user"],
                condition=Q(revoked_at__isnull=True),
                name="grant_one_active_per_user",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} {self.role} on {self.prompt_id}"


class AccessLogEntry(WriteOnceModel):
    """Who opened which link or grant, and when. Never the token."""

    class Via(models.TextChoices):
        LINK = "link", "Link"
        GRANT = "grant", "Grant"

    prompt = models.ForeignKey(Prompt, on_delete=models.CASCADE, related_name="access_log")
    via = models.CharField(max_length=8, choices=Via.choices)
    link = models.ForeignKey(
        ShareLink, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    grant = models.ForeignKey(
        AccessGrant, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    path = models.CharField(max_length=40, help_text="page or api")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["prompt", "-at"])]

    def __str__(self) -> str:
        return f"{self.prompt_id} via {self.via} at {self.at:%Y-%m-%d %H:%M}"


class Run(models.Model):
    """One execution of a version through a provider, kept with a reference to what it sent
    (the version, provider, model and variables: the request is rebuilt from them) and its result.

    Status moves queued → running → done | failed | cancelled, only by conditional updates in
    `playground.runs.services`, so a repeated or late call never moves a finished run. `output`
    grows while the run streams; readers of a stream poll it (docs/operations.md, Run streams).
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    FINISHED = (Status.DONE, Status.FAILED, Status.CANCELLED)

    version = models.ForeignKey(PromptVersion, on_delete=models.PROTECT, related_name="runs")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="prompt_runs"
    )
    provider = models.CharField(max_length=32)
    model = models.CharField(max_length=MODEL_MAX_CHARS)
    # The call itself is not stored: it is rebuilt from the (immutable) version, the provider,
    # the model and these values (playground.runs.selectors.run_request).
    variables = models.JSONField(default=dict, help_text="The values the texts were filled with.")
    idempotency_key = models.CharField(max_length=IDEMPOTENCY_KEY_MAX_CHARS, blank=True)

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    output = models.TextField(blank=True)
    tool_calls = models.JSONField(default=list, blank=True)
    stop_reason = models.CharField(max_length=STOP_REASON_MAX_CHARS, blank=True)
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)

    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    first_token_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Written by the worker with every flush; the reaper fails runs whose worker went silent.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    deliveries = models.PositiveSmallIntegerField(default=0, help_text="Times a worker took it.")
    # True: a message on the run queue executes it, and the fair queue may pick it for any turn.
    # False: its creator executes it in its own worker (an evaluation's cell), never a turn.
    on_run_queue = models.BooleanField(default=True)
    # When its run-queue message was last handed to the broker; None: not yet (the broker was
    # down at commit). The reaper sends a queued run's message again when this is None or old.
    dispatched_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["version", "-created_at"]),
            models.Index(fields=["status", "heartbeat_at"]),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["version", "created_by", "idempotency_key"],
                condition=~Q(idempotency_key=""),
                name="run_idempotency_key_once",
            ),
        ]

    def __str__(self) -> str:
        return f"run {self.pk} of {self.version_id} ({self.status})"


class Upload(models.Model):
    """A text a client uploads straight to object storage before naming it in a version.

    Created with its declared size and SHA-256; the object lives under `object_key`, a key the
    server chose. An upload is used at most once (`used_at`, set by a conditional update), by
    its owner only, before `expires_at`; the save that uses it checks the bytes itself, marks
    it used inside its own transaction and deletes the object once that commits, so a save that
    fails or is killed leaves the upload usable (issue #31). Uploads are deleted once expired
    (`playground.uploads_expire`).
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="uploads"
    )
    size = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)
    object_key = models.CharField(max_length=200, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["used_at", "expires_at"])]
        constraints = [
            models.CheckConstraint(
                condition=Q(sha256__regex=r"^[0-9a-f]{64}$"), name="upload_sha256_hex"
            ),
        ]

    def __str__(self) -> str:
        return f"upload {self.pk} ({self.size} bytes)"
