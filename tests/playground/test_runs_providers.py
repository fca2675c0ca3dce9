"""Runs through the real `anthropic` and `openai` SDKs against a loopback server that speaks
their wire protocols (streaming SSE, tool calls): the body received is the export's request."""

from __future__ import annotations

import json

import pytest

from playground.exports.api_calls import export_render, export_request
from playground.models import Run
from tests.factories import api_client_for, make_user
from tests.playground.exportkit.providers import STREAM_TEXT, TOOL_ARGUMENTS
from tests.playground.factories import make_prompt

pytestmark = pytest.mark.django_db

PATHS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions"}
MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-4.1-mini"}
TOOLS = [
    {
        "name": "search_metrics",
        "description": "Look up a metric.",
        "input_schema": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["query"],
        },
    }
]


def _run(api, version_id: int, capture, **body) -> dict:
    with capture(execute=True):
        response = api.post(f"/api/v1/versions/{version_id}/runs/", body, format="json")
    assert response.status_code == 201, response.json()
    return api.get(f"/api/v1/runs/{response.json()['id']}/").json()


@pytest.mark.parametrize("api_name", ["anthropic", "openai"])
@pytest.mark.parametrize("with_tools", [False, True], ids=["text", "tool-call"])
def test_run_sends_the_export_request_and_keeps_the_streamed_reply(
    providers, django_capture_on_commit_callbacks, api_name, with_tools
):
    owner = make_user()
    api = api_client_for(owner)
    _, version = make_prompt(
        owner,
        provider=api_name,
        model=MODELS[api_name],
        tools=TOOLS if with_tools else [],
        params={"temperature": 0.3, "max_tokens": 300, "top_p": 0.9, "stop": ["END"]},
    )
    run = _run(api, version.pk, django_capture_on_commit_callbacks, variables={"design": "a queue"})

    assert run["status"] == "done", run["error"]
    assert run["output"] == STREAM_TEXT
    assert [r.path for r in providers.requests] == [PATHS[api_name]]
    received = providers.requests[0]

    # The body on the wire is the export module's request, with the run's variables filled in.
    content = api.get(f"/api/v1/versions/{version.pk}/").json()["content"]
    content["variables"] = {"design": "a queue"}
    expected = export_request(content=content, api=api_name, stream=True)
    shown = api.get(run["request_url"]).json()
    assert received.body == expected["body"] == shown["body"]
    # ... which is the exported JSON body plus the streaming flags, nothing else.
    exported = json.loads(export_render(content=content, api=api_name, format="json"))
    streaming = {"stream"} | ({"stream_options"} if api_name == "openai" else set())
    assert {k: v for k, v in received.body.items() if k not in streaming} == exported
    assert received.body["stream"] is True
    assert "Review this design: a queue" in json.dumps(received.body)
    if api_name == "anthropic":
        assert received.headers["anthropic-version"] == "2023-06-01"
        # The SDK sends the key as x-api-key or, in newer releases, as a bearer token.
        sent = received.headers.get("x-api-key") or received.headers.get("authorization", "")
        assert sent.removeprefix("Bearer ") == "sk-ant-test"
    else:
        assert received.headers["authorization"] == "Bearer sk-openai-test"
    # The request names the provider's URL (the deployment's base URL is the operator's, shown
    # to staff only) and never a key.
    assert not shown["url"].startswith(providers.origin)
    assert shown["url"].endswith(PATHS[api_name])
    assert "sk-" not in json.dumps(shown)

    assert run["usage"]["input_tokens"] == 11
    assert run["usage"]["output_tokens"] == 9
    assert run["time_to_first_token_ms"] is not None
    assert run["total_ms"] is not None
    if with_tools:
        assert run["stop_reason"] == ("tool_use" if api_name == "anthropic" else "tool_calls")
        assert run["tool_calls"] == [
            {
                "id": "toolu_fake_1" if api_name == "anthropic" else "call_fake_1",
                "name": "search_metrics",
                "input": TOOL_ARGUMENTS,
            }
        ]
    else:
        assert run["stop_reason"] == ("end_turn" if api_name == "anthropic" else "stop")
        assert run["tool_calls"] == []


def test_openai_compatible_base_url_needs_no_key(
    providers, settings, django_capture_on_commit_callbacks
):
    settings.OPENAI_API_KEY = ""  # e.g. Ollama or vLLM: a base URL alone
    owner = make_user()
    _, version = make_prompt(owner, provider="openai", model="llama3.1:8b")
    run = _run(api_client_for(owner), version.pk, django_capture_on_commit_callbacks)
    assert run["status"] == "done"
    assert run["output"] == STREAM_TEXT
    assert providers.requests[0].body["model"] == "llama3.1:8b"


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_unconfigured_provider_is_a_clear_400_and_no_run(settings, provider):
    settings.ANTHROPIC_API_KEY = settings.OPENAI_API_KEY = ""
    settings.ANTHROPIC_BASE_URL = settings.OPENAI_BASE_URL = ""
    owner = make_user()
    _, version = make_prompt(owner, provider=provider, model=MODELS[provider])
    response = api_client_for(owner).post(f"/api/v1/versions/{version.pk}/runs/", {}, format="json")
    assert response.status_code == 400
    key = "ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY"
    assert key in response.json()["detail"]
    assert not Run.objects.exists()


@pytest.mark.parametrize(
    "version_provider,run_provider", [("anthropic", "openai"), ("openai", "anthropic")]
)
def test_a_run_on_the_other_provider_sends_that_apis_export(
    providers, django_capture_on_commit_callbacks, version_provider, run_provider
):
    """Compare on another provider: the run names the same model as that API's export of the
    version (one mapping, `model_for_provider`), and sends the export's body."""
    owner = make_user()
    api = api_client_for(owner)
    _, version = make_prompt(owner, provider=version_provider, model=MODELS[version_provider])
    run = _run(api, version.pk, django_capture_on_commit_callbacks, provider=run_provider)
    assert run["status"] == "done", run["error"]
    received = providers.requests[0].body
    export = api.get(
        f"/api/v1/versions/{version.pk}/export/",
        {"api": run_provider, "format": "json", "as": "json"},
    ).json()
    exported = json.loads(export["text"])
    assert received["model"] == run["model"] == exported["model"] == MODELS[run_provider]
    streaming = {"stream"} | ({"stream_options"} if run_provider == "openai" else set())
    assert {k: v for k, v in received.items() if k not in streaming} == exported
    assert any(MODELS[version_provider] in w for w in export["warnings"])
