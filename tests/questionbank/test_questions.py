import pytest
from django.urls import reverse

from questionbank.models import Question
from questionbank.seed import questions_load, questions_read
from tests.factories import api_client_for, make_user

SLUGS = [
    "llm-inference-api",
    "review-design-doc",
    "prompt-playground",
    "checkpoint-distribution",
    "one-to-one-chat",
    "data-platform",
    "ml-config",
]

pytestmark = pytest.mark.django_db


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


def test_api_list_and_filter():
    client = api_client_for(make_user())
    response = client.get("/api/v1/questions/")
    assert response.status_code == 200
    assert [q["slug"] for q in response.json()["results"]] == SLUGS

    response = client.get("/api/v1/questions/", {"kind": "design-review"})
    assert [q["slug"] for q in response.json()["results"]] == ["review-design-doc"]


def test_api_detail_has_every_section(django_assert_max_num_queries):
    client = api_client_for(make_user())
    with django_assert_max_num_queries(8):
        response = client.get("/api/v1/questions/checkpoint-distribution/")
    assert response.status_code == 200
    body = response.json()
    assert body["slug"] == "checkpoint-distribution"
    assert set(body) >= {"title", "round", "prompt", "depth_areas", "follow_ups", "numbers"}
    assert {"label", "inputs", "calculation", "result"} <= set(body["numbers"][0])
    assert {"probe", "look_for"} <= set(body["follow_ups"][0])


def test_api_unknown_slug_is_json_404():
    client = api_client_for(make_user())
    response = client.get("/api/v1/questions/no-such-question/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert response.json() == {"detail": "Not found."}


def test_api_without_credentials_is_json_401_or_403():
    response = api_client_for(None).get("/api/v1/questions/")
    assert response.status_code in (401, 403)
    assert "detail" in response.json()


def test_list_page_filters_by_kind(client):
    response = client.get(reverse("questionbank:list"), {"kind": "infrastructure"})
    assert response.status_code == 200
    shown = [q.slug for q in response.context["questions"]]
    assert shown
    assert all(Question.objects.get(slug=s).kind == "infrastructure" for s in shown)
    assert "Design an" in response.content.decode() or shown


def test_detail_page_shows_numbers_and_escapes(client, django_assert_max_num_queries):
    question = Question.objects.get(slug="llm-inference-api")
    question.prompt = "<script>alert(1)</script>"
    question.save()
    with django_assert_max_num_queries(10):
        response = client.get(reverse("questionbank:detail", args=["llm-inference-api"]))
    html = response.content.decode()
    assert response.status_code == 200
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;" in html
    assert question.numbers.first().calculation.split("\n")[0][:20] in html


def test_unknown_question_page_is_404(client):
    assert client.get("/questions/nope/").status_code == 404
