"""`to_anthropic()` / `to_openai()` are the export's JSON body, and the official SDKs send it.

Each case is saved on a live Redline server, fetched with the client, and compared with what
`GET /api/v1/versions/{id}/export/?api=…&format=json` answers for it over HTTP; then the
client's arguments go unchanged into `anthropic.Anthropic().messages.create(**...)` and
`openai.OpenAI().chat.completions.create(**...)`, pointed at loopback servers speaking those
protocols, which record the body each SDK sent.
"""

import copy
import json
from collections.abc import Mapping
from typing import Any

import anthropic
import httpx
import openai
import pytest
import redline

from playground.exports.api_calls import export_request
from playground.selectors import version_content
from playground.services import label_move, prompt_create
from playground.text.content import DEFAULT_MODELS
from tests.playground.exportkit.cases import case

# The export cases a version can hold (the "nasty" one has a NUL, which content refuses), and
# one whose every placeholder has a non-empty default, so that the export fills them all, and
# one with a placeholder it does not declare, which the export sends as written.
CASES = [
    "plain",
    "conversation",
    "tools",
    "response-format",
    "big",
    "variables",
    "undeclared",
    "openai-version",
]


def _variables_case() -> dict:
    content = case("plain")
    content["system"] = "You are {{persona}}. Answer in {{ language }}."
    content["messages"] = [
        {"role": "user", "content": "Hi, I am {{name}}. Tell me about {{\ttopic\n}}."},
        {"role": "assistant", "content": "Happy to help, {{name}}."},
        # Python's \s fills (\u3000, \u2028, \x1c, \x85); \ufeff is not whitespace: stays.
        {"role": "user", "content": "{{\u3000language\u2028}} {{\x1cname\x85}} {{\ufeffname}}"},
        {"role": "user", "content": "Single braces {name} and {{ }} stay as written."},
    ]
    content["variables"] = {
        "persona": 'a "careful" reviewer with $HOME and `ticks`',
        "language": "Français — 日本語",
        "name": "{{persona}} $& $1 \\1 \\g<0>",  # never expanded again, never a backreference
        "topic": "line one\nline two 😀\u2028",
    }
    return content


def _undeclared_case() -> dict:
    content = _variables_case()
    content["system"] += " Sign as {{signature}}."
    return content


def _content(name: str) -> dict:
    if name == "openai-version":
        return {**case("tools"), "provider": "openai", "model": "gpt-4.1"}
    if name == "undeclared":
        return _undeclared_case()
    return _variables_case() if name == "variables" else case(name)


@pytest.fixture
def saved(request, owner):
    """A prompt holding the case as its `production` version."""
    prompt, version = prompt_create(
        actor=owner.user,
        title=f"Parity {request.node.callspec.id}",
        content=_content(request.node.callspec.params["case_name"]),
    )
    label_move(actor=owner.user, prompt=prompt, name="production", version=version)
    return prompt, version


def _export_json(server, key: str, version, api: str) -> dict:
    """The export's JSON body for `version`, fetched over HTTP."""
    response = httpx.get(
        f"{server.url}/api/v1/versions/{version.pk}/export/",
        params={"api": api, "format": "json"},
        headers={"Authorization": f"Token {key}"},
        timeout=60,
    )
    assert response.status_code == 200, response.text
    return _model_as_runs_name_it(json.loads(response.text), version_content(version=version), api)


def _model_as_runs_name_it(body: dict, content: Mapping[str, Any], api: str) -> dict:
    """`body`, except from a server whose export still names the version's own model on the
    other provider's API (before runs and exports agreed on `model_for_provider`, issue 22):
    then the model a run on that API names, which the client sends, as exports now do."""
    if content["provider"] != api and body["model"] == content["model"]:
        assert DEFAULT_MODELS[api] != content["model"]
        return {**body, "model": DEFAULT_MODELS[api]}
    return body


def _sent_body(arguments: dict) -> dict:
    """The body an SDK call with these arguments sends: typed fields plus `extra_body`."""
    options = {"extra_body", "extra_headers", "timeout"}
    return {
        **{k: v for k, v in arguments.items() if k not in options},
        **arguments.get("extra_body", {}),
    }


@pytest.mark.parametrize("case_name", CASES)
def test_arguments_equal_the_export_json(redline_server, owner, saved, case_name):
    prompt, version = saved
    with redline.Redline(base_url=redline_server.url, api_key=owner.key) as client:
        fetched = client.get_prompt(prompt.pk)
    assert fetched.content_hash == version.content_hash
    anthropic_export = _export_json(redline_server, owner.key, version, "anthropic")
    openai_export = _export_json(redline_server, owner.key, version, "openai")

    assert fetched.request_body("anthropic") == anthropic_export
    assert fetched.request_body("openai") == openai_export
    assert fetched.to_openai() == openai_export
    arguments = fetched.to_anthropic()
    assert _sent_body(arguments) == anthropic_export
    assert arguments["extra_headers"] == {"anthropic-version": "2023-06-01"}
    assert ("timeout" in arguments) == (anthropic_export["max_tokens"] > 8192)
    # Key order too: the JSON text is the same.
    assert json.dumps(fetched.to_openai()) == json.dumps(openai_export)


@pytest.mark.parametrize("case_name", CASES)
def test_the_sdks_send_exactly_the_export_body(redline_server, owner, saved, providers, case_name):
    prompt, version = saved
    with redline.Redline(base_url=redline_server.url, api_key=owner.key) as client:
        fetched = client.get_prompt(prompt.pk)

    claude = anthropic.Anthropic(api_key="sk-ant-test", base_url=providers.origin, max_retries=0)
    message = claude.messages.create(**fetched.to_anthropic())
    gpt = openai.OpenAI(api_key="sk-test", base_url=f"{providers.origin}/v1", max_retries=0)
    completion = gpt.chat.completions.create(**fetched.to_openai())

    assert message.content[0].text == "ok"
    assert completion.choices[0].message.content == "ok"
    sent_anthropic, sent_openai = providers.requests
    assert (sent_anthropic.path, sent_openai.path) == ("/v1/messages", "/v1/chat/completions")
    assert sent_anthropic.body == _export_json(redline_server, owner.key, version, "anthropic")
    assert sent_anthropic.headers["anthropic-version"] == "2023-06-01"
    assert sent_openai.body == _export_json(redline_server, owner.key, version, "openai")


@pytest.mark.parametrize("case_name", ["variables"])
def test_passed_variables_fill_like_the_server_fills_defaults(
    redline_server, owner, saved, case_name
):
    """Passing values is the export of the same version with those values as its defaults."""
    prompt, _ = saved
    given = {"name": "Ada {{topic}}", "topic": "", "language": "English"}
    with redline.Redline(base_url=redline_server.url, api_key=owner.key) as client:
        fetched = client.get_prompt(prompt.pk)
    content = copy.deepcopy(_content("variables"))
    # An empty value falls back to the default, as a run does.
    content["variables"].update({k: v for k, v in given.items() if v})
    for api, method in (("anthropic", fetched.to_anthropic), ("openai", fetched.to_openai)):
        expected = _model_as_runs_name_it(
            export_request(content=content, api=api)["body"], content, api
        )
        assert fetched.request_body(api, **given) == expected
        assert _sent_body(method(**given)) == expected
    compiled = fetched.compile(**given)
    assert compiled.messages[0].content == (
        "Hi, I am Ada {{topic}}. Tell me about line one\nline two 😀\u2028."
    )
    assert compiled.variables["topic"] == content["variables"]["topic"]


def test_the_clients_default_models_are_the_servers():
    """The model a call names on the other provider's API comes from one table on each side."""
    from redline._export import DEFAULT_MODELS as CLIENT_DEFAULT_MODELS

    assert CLIENT_DEFAULT_MODELS == {api: DEFAULT_MODELS[api] for api in ("anthropic", "openai")}
