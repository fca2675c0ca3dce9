"""The seed questions: loaded by the migration, in order, idempotently, with their facts
(questionbank/seed.py)."""

import pytest

from questionbank.models import Question
from questionbank.seed import questions_load, questions_read

pytestmark = pytest.mark.django_db

SLUGS = [
    "llm-inference-api",
    "review-design-doc",
    "prompt-playground",
    "checkpoint-distribution",
    "one-to-one-chat",
    "data-platform",
    "ml-config",
]


def test_migration_loads_the_seven_questions_in_order():
    assert list(Question.objects.values_list("slug", flat=True)) == SLUGS
    for question in Question.objects.all():
        assert question.title
        assert question.round
        assert question.prompt
        assert question.summary
        assert question.depth_areas.count() >= 4
        assert question.follow_ups.count() >= 4
        assert question.numbers.count() >= 2


def test_load_is_idempotent():
    before = (Question.objects.count(), sum(q.numbers.count() for q in Question.objects.all()))
    assert questions_load() == 7
    after = (Question.objects.count(), sum(q.numbers.count() for q in Question.objects.all()))
    assert before == after


@pytest.mark.parametrize(
    ("slug", "facts"),
    [
        (
            "llm-inference-api",
            ["continuous batching", "KV cache", "prefill", "idempotency", "250", "16"],
        ),
        ("checkpoint-distribution", ["320", "64,000", "rarest"]),
        ("one-to-one-chat", ["inbox", "heartbeat", "Kafka", "pub/sub"]),
        ("data-platform", ["sensitivity", "quarantine", "backfill"]),
        ("ml-config", ["inheritance", "hash", "reproduc"]),
        ("review-design-doc", ["rollback", "observability", "already considered"]),
        ("prompt-playground", ["presigned", "snapshot", "revoc"]),
    ],
)
def test_each_question_carries_its_facts(slug, facts):
    item = next(q for q in questions_read() if q["slug"] == slug)
    text = str(item).lower()
    for fact in facts:
        assert fact.lower() in text, f"{slug} should mention {fact!r}"
