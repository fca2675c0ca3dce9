from django.db import models


class Source(models.TextChoices):
    """Where a statement in the bank comes from (see the question pool beside the repository)."""

    POOL = "pool", "Reported by the pool"
    PRACTICE = "practice", "Practice suggestion"


class Question(models.Model):
    """A system-design interview question. Slugs are stable: prompts and docs link by them."""

    class Kind(models.TextChoices):
        ARCHITECTURE = "architecture", "Architecture"
        DESIGN_REVIEW = "design-review", "Design review"
        INFRASTRUCTURE = "infrastructure", "Infrastructure"
        PRODUCT = "product", "Product"

    slug = models.SlugField(max_length=64, unique=True)
    title = models.CharField(max_length=200)
    kind = models.CharField(max_length=32, choices=Kind.choices)
    duration_minutes = models.PositiveSmallIntegerField(default=45)
    summary = models.CharField(max_length=300)
    round = models.TextField(help_text="How the round runs.")
    prompt = models.TextField(help_text="The question as the interviewer asks it.")
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "slug"]

    def __str__(self) -> str:
        return self.title


class DepthArea(models.Model):
    """What a strong answer leads with."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="depth_areas")
    position = models.PositiveSmallIntegerField(default=0)
    title = models.CharField(max_length=200)
    detail = models.TextField(blank=True)
    source = models.CharField(
        max_length=16, choices=Source.choices, default=Source.PRACTICE, help_text="Of `detail`."
    )
    practice_note = models.TextField(blank=True, help_text="Our own elaboration, never the pool's.")

    class Meta:
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return self.title


class FollowUp(models.Model):
    """A probe the interviewer asks after the first answer."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="follow_ups")
    position = models.PositiveSmallIntegerField(default=0)
    probe = models.TextField()
    look_for = models.TextField(help_text="What a good answer says.")
    source = models.CharField(
        max_length=16, choices=Source.choices, default=Source.PRACTICE, help_text="Of `probe`."
    )
    look_for_source = models.CharField(
        max_length=16, choices=Source.choices, default=Source.PRACTICE
    )

    class Meta:
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return self.probe[:80]


class WorkedNumber(models.Model):
    """A back-of-envelope estimate worth practising, with its arithmetic written out."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="numbers")
    position = models.PositiveSmallIntegerField(default=0)
    label = models.CharField(max_length=200)
    inputs = models.TextField()
    calculation = models.TextField()
    result = models.CharField(max_length=200)
    takeaway = models.TextField(blank=True)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.PRACTICE)

    class Meta:
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return self.label
