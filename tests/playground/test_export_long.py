"""Exports of long versions: the panel and JSON show heads, the full export streams and equals
`export_render` byte for byte (playground.exports.long_texts, playground.api.export)."""

from __future__ import annotations

import pytest

from playground.exports.api_calls import export_render
from playground.exports.long_texts import export_snippet, export_stream
from playground.selectors import version_content
from tests.factories import api_client_for, make_user
from tests.playground.factories import make_prompt

pytestmark = pytest.mark.django_db

APIS = ("anthropic", "openai")
FORMATS = ("curl", "python", "typescript", "json")

# Texts that stress every escaper: quotes of both kinds, backslashes, controls, emoji, U+2028,
# and placeholders (known, unknown, spaced) that fall across the 7-character stream pieces.
TRICKY = (
    'He said "hi" and it\'s fine \\ back\\slash\t tab \u2028 sep 😀 emoji\n'
    "{{design}} then {{ design }} and {{unknown}} and {{design\n}} {{{design}}} {"
)


@pytest.fixture
def small_pieces(settings):
    settings.PLAYGROUND_TEXT_HEAD_CHARS = 10
    settings.PLAYGROUND_TEXT_STREAM_CHARS = 7
    settings.PLAYGROUND_EXPORT_INLINE_MAX_CHARS = 20


@pytest.mark.parametrize("system", [TRICKY * 3, "no quotes at all {{design}} " * 5, "x" * 300])
@pytest.mark.parametrize("variables", ["substitute", "keep"])
def test_the_streamed_export_equals_the_whole_render(small_pieces, system, variables):
    owner = make_user()
    _, version = make_prompt(
        owner,
        system=system,
        messages=[
            {"role": "user", "content": "short {{design}}"},
            {"role": "assistant", "content": "single ' quote only " * 4},
        ],
    )
    content = version_content(version=version)
    for api in APIS:
        for fmt in FORMATS:
            whole = export_render(content=content, api=api, format=fmt, variables=variables)
            pieces = list(export_stream(version=version, api=api, format=fmt, variables=variables))
            assert "".join(pieces) == whole, (api, fmt)
            assert max(len(p) for p in pieces) < len(whole)  # never one piece of everything


def test_the_snippet_cuts_long_texts_with_a_note(small_pieces):
    owner = make_user()
    _, version = make_prompt(owner, system="A" * 100)
    snippet = export_snippet(version=version, api="anthropic", format="json", variables="keep")
    assert snippet.truncated and snippet.total > 100
    assert "A" * 10 in snippet.text and "A" * 11 not in snippet.text
    assert "90 more characters not shown here" in snippet.text


def test_the_api_answers_a_head_as_json_and_streams_the_full_text(settings):
    settings.PLAYGROUND_EXPORT_INLINE_MAX_CHARS = 50_000
    owner = make_user()
    long = "".join(f"line {n} of a long prompt\n" for n in range(4000))  # ~100 KB
    _, version = make_prompt(owner, system=long)
    api = api_client_for(owner)
    url = f"/api/v1/versions/{version.pk}/export/"

    body = api.get(url, {"api": "anthropic", "format": "python", "as": "json"}).json()
    assert body["truncated"] is True
    assert body["total"] == len(long) + len(
        version_content(version=version)["messages"][0]["content"]
    )
    assert len(body["text"]) < 20_000
    assert body["full_url"] == f"{url}?api=anthropic&format=python&variables=substitute&full=1"

    full = api.get(body["full_url"])
    assert full.status_code == 200 and full.streaming
    assert full["Content-Type"].startswith("text/plain")
    assert "attachment" in full["Content-Disposition"]
    expected = export_render(
        content=version_content(version=version), api="anthropic", format="python"
    )
    assert b"".join(full.streaming_content).decode() == expected

    # A text/plain export without `full=1` is the same full stream (`| bash` keeps working).
    plain = api.get(url, {"api": "anthropic", "format": "curl"})
    assert plain.streaming
    assert "line 3999 of a long prompt" in b"".join(plain.streaming_content).decode()
    # JSON is never the whole long text.
    wrong = api.get(url, {"api": "anthropic", "format": "json", "as": "json", "full": "1"})
    assert wrong.status_code == 400 and wrong.json()["field"] == "full"


def test_a_short_version_answers_as_before(settings):
    owner = make_user()
    _, version = make_prompt(owner)
    api = api_client_for(owner)
    url = f"/api/v1/versions/{version.pk}/export/"
    body = api.get(url, {"api": "openai", "format": "json", "as": "json"}).json()
    assert body["truncated"] is False
    assert body["text"] == export_render(
        content=version_content(version=version), api="openai", format="json"
    )
    plain = api.get(url, {"api": "openai", "format": "json"})
    assert not plain.streaming and plain.content.decode() == body["text"]
