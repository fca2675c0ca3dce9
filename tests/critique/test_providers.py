"""The real providers' structured-output requests for a draft, against the loopback server
that speaks the Anthropic Messages and OpenAI Chat Completions protocols (the SDKs are real)."""

import json

import pytest

from critique import services
from critique.models import Suggestion
from critique.starter import CRITIQUE_SCHEMA
from tests.critique.conftest import practice_review
from tests.playground.exportkit.providers import Behaviour

pytestmark = pytest.mark.django_db

REPLY = json.dumps(
    {
        "annotations": [
            {
                "quote": "The run id is the SHA-256 of the top-level YAML file",
                "area": "failure-modes",
                "kind": "risk",
                "severity": "blocker",
                "body": "Hash the resolved config.",
                "tradeoff": "",
                "constraint": "",
                "rank": 1,
            }
        ]
    }
)


def _draft(review, provider, captured):
    with captured(execute=True):
        draft = services.draft_create(
            actor=review.reviewer,
            review=review,
            version=services.starter_version_ensure(),
            provider=provider,
        )
    return services.draft_sync(draft=draft)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_draft_asks_for_the_critique_schema(
    provider, practice, providers, django_capture_on_commit_callbacks
):
    providers.plan(Behaviour(text=REPLY))
    review = practice_review(f"sdk-{provider}")
    draft = _draft(review, provider, django_capture_on_commit_callbacks)
    assert draft.status == "done", draft.error
    [request] = providers.requests
    body = request.body
    if provider == "anthropic":
        assert request.path == "/v1/messages"
        assert body["output_config"] == {
            "format": {"type": "json_schema", "schema": CRITIQUE_SCHEMA}
        }
        assert body["model"] == "claude-sonnet-4-6"
        text = body["messages"][0]["content"]
        assert "You are a senior engineer" in body["system"]
    else:
        assert request.path == "/v1/chat/completions"
        assert body["response_format"] == {
            "type": "json_schema",
            "json_schema": {"name": "critique", "schema": CRITIQUE_SCHEMA, "strict": True},
        }
        text = body["messages"][1]["content"]
    assert body["stream"] is True
    assert "The run id is the SHA-256" in text  # the document
    assert review.revision.doc.constraints[0] in text  # its pinned constraint
    assert "- failure-modes:" in text  # the checklist
    [suggestion] = Suggestion.objects.filter(draft=draft)
    assert suggestion.anchored and suggestion.rank == 1


def test_a_reply_that_is_not_the_schema_fails_the_draft(
    practice, providers, django_capture_on_commit_callbacks
):
    providers.plan(Behaviour(text="Sorry, I can only chat."))
    draft = _draft(practice_review("prose"), "anthropic", django_capture_on_commit_callbacks)
    assert draft.status == "failed" and "no annotations array" in draft.error


def test_a_provider_error_fails_the_draft_with_its_reason(
    practice, providers, django_capture_on_commit_callbacks
):
    providers.plan(Behaviour(kind="status", status=400))
    draft = _draft(practice_review("bad"), "openai", django_capture_on_commit_callbacks)
    assert draft.status == "failed" and "OpenAI" in draft.error
