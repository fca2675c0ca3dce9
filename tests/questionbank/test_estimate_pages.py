"""The estimator panel on question pages: presets, htmx fragments, practice mode, escaping."""

import re

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

BATCH = {"rate": "2000", "batch": "50", "latency_ms": "200", "fill": "1", "timeout_ms": "20"}


def fragment(client, slug, params):
    return client.get(reverse("questionbank:estimate", args=[slug]), params, HTTP_HX_REQUEST="true")


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
    assert "<svg" in html and 'role="img"' in html and "<title id=" in html
    assert "hx-get=" in html and "delay:350ms" in html
    assert "<script>" not in html  # no inline script: a CSP is coming


def test_pages_without_an_estimator_have_none(client):
    html = client.get(reverse("questionbank:detail", args=["ml-config"])).content.decode()
    assert "estimator" not in html


def test_pool_numbers_on_the_batching_page(client):
    html = client.get(reverse("questionbank:detail", args=["llm-inference-api"])).content.decode()
    gpus = re.search(r'data-figure="gpus".*?class="estimate-value">([^<]+)<', html, re.S)
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
    assert "<html" in html and "1.89 PB" in html
    bad = client.get(
        reverse("questionbank:estimate", args=["data-platform"]), {"events_per_s": "x"}
    )
    assert bad.status_code == 400
    assert client.get(reverse("questionbank:estimate", args=["ml-config"])).status_code == 404


def test_practice_mode_hides_then_checks(client):
    hidden = fragment(client, "llm-inference-api", {**BATCH, "practice": "1"}).content.decode()
    assert "Check my answers" in hidden
    assert "estimate-figures" not in hidden and "<svg" not in hidden
    assert ">8<" not in hidden and "250" not in hidden.replace('value="250"', "")

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
    assert "estimate-figures" in checked and "<svg" in checked

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
