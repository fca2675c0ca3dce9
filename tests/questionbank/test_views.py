"""Question pages (questionbank/views.py): the list and its filter, a question's page, what it
offers (a prompt, a design doc), and the estimator panel: presets, htmx fragments, practice
mode, escaping."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from questionbank.models import Question
from tests.factories import api_client_for, make_user

pytestmark = pytest.mark.django_db

BATCH = {"rate": "2000", "batch": "50", "latency_ms": "200", "fill": "1", "timeout_ms": "20"}


def fragment(client, slug, params):
    return client.get(reverse("questionbank:estimate", args=[slug]), params, HTTP_HX_REQUEST="true")


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


def test_unknown_kind_is_400_in_the_api_and_said_on_the_page():
    api = api_client_for(make_user("q"))
    response = api.get("/api/v1/questions/?kind=nonsense")
    assert response.status_code == 400
    assert "kind: unknown kind 'nonsense'" in response.json()["detail"]
    known = api.get("/api/v1/questions/?kind=product").json()
    assert known["results"]
    assert {q["kind"] for q in known["results"]} == {"product"}
    page = Client().get("/questions/?kind=nonsense")
    html = page.content.decode()
    assert page.status_code == 400
    assert "Unknown filter “nonsense”" in html
    assert 'aria-current="page">Questions' in html.replace('href="/questions/" ', "")


def test_question_page_offers_a_prompt_and_a_design_doc():
    html = Client().get("/questions/prompt-playground/").content.decode()
    assert 'href="/playground/new/?question=prompt-playground"' in html
    assert "Start a prompt for this question" in html
    assert 'href="/reviews/new/?question=prompt-playground"' in html
    assert "Write a design doc for this question" in html
    user = make_user("writer")
    client = Client()
    client.force_login(user)
    new_prompt = client.get("/playground/new/?question=prompt-playground").content.decode()
    assert 'value="prompt-playground" selected' in new_prompt
    new_doc = client.get("/reviews/new/?question=prompt-playground").content.decode()
    assert 'value="prompt-playground" selected' in new_doc


def test_question_page_lists_the_first_prompts_tied_to_it_and_says_there_are_more():
    """The page's cost must not grow with a user's history: it shows RELATED_SHOWN prompts."""
    from playground.services import prompt_create
    from questionbank.related import RELATED_SHOWN
    from questionbank.selectors import question_by_slug
    from tests.playground.factories import content

    user = make_user("writer")
    question = question_by_slug(slug="prompt-playground")
    client = Client()
    client.force_login(user)
    for number in range(RELATED_SHOWN):
        prompt_create(actor=user, title=f"Tied {number}", content=content(), question=question)
    html = client.get("/questions/prompt-playground/").content.decode()
    assert html.count(">Tied ") == RELATED_SHOWN
    assert "there are more" not in html
    prompt_create(actor=user, title="Tied last", content=content(), question=question)
    html = client.get("/questions/prompt-playground/").content.decode()
    assert html.count(">Tied ") == RELATED_SHOWN
    assert f"The first {RELATED_SHOWN} are shown; there are more." in html


@pytest.mark.parametrize(
    ("slug", "presets"),
    [
        ("llm-inference-api", {"rate": "2000", "batch": "50", "latency_ms": "200", "fill": "1"}),
        ("checkpoint-distribution", {"size_gb": "400", "bandwidth_gbps": "10", "hosts": "200"}),
        ("data-platform", {"events_per_s": "100000", "retention_days": "365"}),
    ],
)
def test_question_page_has_a_preset_estimator(client, slug, presets):
    html = client.get(reverse("questionbank:detail", args=[slug])).content.decode()
    assert 'class="panel estimator"' in html
    for name, value in presets.items():
        assert re.search(rf'name="{name}" value="{re.escape(value)}"', html), name
    assert "<svg" in html
    assert 'role="img"' in html
    assert "<title id=" in html
    assert "hx-get=" in html
    assert "delay:350ms" in html
    assert "<script>" not in html  # no inline script: a CSP is coming


def test_pages_without_an_estimator_have_none(client):
    html = client.get(reverse("questionbank:detail", args=["ml-config"])).content.decode()
    assert "estimator" not in html


def test_pool_numbers_on_the_batching_page(client):
    html = client.get(reverse("questionbank:detail", args=["llm-inference-api"])).content.decode()
    gpus = re.search(r'data-figure="gpus".*?class="estimate-value"[^>]*>([^<]+)<', html, re.S)
    assert gpus.group(1) == "8"
    assert "batch × fill ÷ call time" in html  # the formula beside the result


def test_fragment_follows_the_inputs(client):
    html = fragment(client, "llm-inference-api", {**BATCH, "fill": "0.5"}).content.decode()
    assert "<html" not in html
    assert re.search(r'data-figure="gpus".*?>16<', html, re.S)
    assert "<svg" in html


def test_fragment_names_a_bad_field(client):
    response = fragment(client, "llm-inference-api", {**BATCH, "rate": "-3"})
    assert response.status_code == 200  # htmx swaps it in; the message names the field
    html = response.content.decode()
    assert 'data-error-field="rate"' in html
    assert "rate: must be positive." in html
    assert "<svg" not in html
    # Only the error is swapped in, into the results' error slot: the results of the last
    # valid inputs stay on the page and the message says so (issue 33).
    assert response["HX-Retarget"] == "#estimate-error-slot"
    assert "estimate-figures" not in html
    assert "still those of the last valid inputs" in html


def test_full_page_without_htmx(client):
    response = client.get(
        reverse("questionbank:estimate", args=["data-platform"]),
        {
            "events_per_s": "100000",
            "bytes_per_event": "1000",
            "retention_days": "365",
            "replication": "3",
            "compression": "5",
        },
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" in html
    assert "1.89 PB" in html
    bad = client.get(
        reverse("questionbank:estimate", args=["data-platform"]), {"events_per_s": "x"}
    )
    assert bad.status_code == 400
    assert client.get(reverse("questionbank:estimate", args=["ml-config"])).status_code == 404


def test_practice_mode_hides_then_checks(client):
    hidden = fragment(client, "llm-inference-api", {**BATCH, "practice": "1"}).content.decode()
    assert "Check my answers" in hidden
    assert "estimate-figures" not in hidden
    assert "<svg" not in hidden
    assert ">8<" not in hidden
    assert "250" not in hidden.replace('value="250"', "")

    # Checking with nothing typed reveals nothing.
    empty = fragment(client, "llm-inference-api", {**BATCH, "practice": "1", "check": "1"})
    assert "Type at least one answer" in empty.content.decode()
    assert "estimate-figures" not in empty.content.decode()

    checked = fragment(
        client,
        "llm-inference-api",
        {**BATCH, "practice": "1", "check": "1", "answer_gpus": "8", "answer_per_gpu_rps": "200"},
    ).content.decode()
    assert "1 of 2 right." in checked
    assert "✓ right: 8" in checked
    assert "✗ the answer is 250" in checked
    assert "estimate-figures" in checked
    assert "<svg" in checked

    # Typing a parameter again hides the answers for the new problem.
    again = fragment(client, "llm-inference-api", {**BATCH, "practice": "1", "answer_gpus": "8"})
    assert "estimate-figures" not in again.content.decode()


def test_practice_tolerance_and_bad_guesses(client):
    params = {
        "size_gb": "400",
        "bandwidth_gbps": "10",
        "hosts": "200",
        "fanout": "2",
        "practice": "1",
        "check": "1",
    }
    html = fragment(
        client,
        "checkpoint-distribution",
        {
            **params,
            "answer_lower_bound_s": "321",
            "answer_tree_levels": "8",
            "answer_naive_s": "lots",
        },
    ).content.decode()
    assert "✓ right: 320" in html  # within 2%
    assert "✗ the answer is 7" in html  # whole numbers must match
    assert "Type a number." in html


def test_inputs_are_escaped(client):
    html = fragment(
        client,
        "llm-inference-api",
        {**BATCH, "practice": "1", "answer_gpus": '"><script>alert(1)</script>'},
    ).content.decode()
    assert "<script>alert(1)" not in html
    html = client.get(
        reverse("questionbank:estimate", args=["llm-inference-api"]),
        {**BATCH, "rate": '"><img src=x onerror=alert(1)>'},
    ).content.decode()
    assert "<img src=x" not in html
    assert "rate: not a number." in html
