"""`PromptVersion.compile()`: the variables rule runs apply, refusals naming the variable."""

from datetime import UTC, datetime

import pytest
import redline

from playground.exports.api_calls import template_fill
from playground.runs.services import run_variables_resolve


def version(system: str, *messages: str, variables: dict[str, str]) -> redline.PromptVersion:
    content = redline.Content(
        provider="anthropic",
        model="claude-sonnet-4-6",
        system=system,
        messages=tuple(redline.Message(role="user", content=m) for m in messages),
        params=redline.Params(temperature=None, max_tokens=64, top_p=None, stop=()),
        tools=(),
        response_format=None,
        variables=variables,
    )
    return redline.PromptVersion(
        id=1,
        prompt_id=1,
        number=1,
        parent=None,
        author="a",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        message="",
        content_hash="0" * 64,
        content=content,
    )


REVIEWER = version(
    "You review {{ kind }} designs.",
    "Review this: {{design}}",
    variables={"design": "a cache", "kind": "backend", "tone": ""},
)


def test_defaults_fill_and_passed_values_override():
    compiled = REVIEWER.compile()
    assert compiled.system == "You review backend designs."
    assert compiled.messages == (redline.Message(role="user", content="Review this: a cache"),)
    overridden = REVIEWER.compile(design="a queue {{kind}}", kind="frontend")
    # One pass: a value holding a placeholder is not expanded again.
    assert overridden.messages[0].content == "Review this: a queue {{kind}}"
    assert overridden.system == "You review frontend designs."
    assert dict(overridden.variables) == {
        "design": "a queue {{kind}}",
        "kind": "frontend",
        "tone": "",
    }
    # An empty value falls back to the non-empty default.
    assert REVIEWER.compile(design="").messages[0].content == "Review this: a cache"
    # Filling is the server's fill, character for character.
    values = dict(overridden.variables)
    assert overridden.system == template_fill(REVIEWER.content.system, values)


def test_an_undeclared_variable_is_refused_by_name():
    with pytest.raises(redline.VariableError) as refused:
        REVIEWER.compile(desing="typo")
    assert refused.value.variable == "desing"
    assert "declares no such variable" in refused.value.detail
    assert "design, kind, tone" in refused.value.detail
    assert isinstance(refused.value, ValueError) and isinstance(refused.value, redline.Error)


def test_a_placeholder_without_a_value_is_refused_by_name():
    undeclared = version("Hello {{who}}.", "Hi", variables={})
    with pytest.raises(redline.VariableError) as missing:
        undeclared.compile()
    assert missing.value.variable == "who"
    assert "has no value" in missing.value.detail

    empty_default = version("Write in a {{tone}} tone.", "Hi", variables={"tone": ""})
    with pytest.raises(redline.VariableError) as empty:
        empty_default.compile()
    assert empty.value.variable == "tone"
    assert "is empty" in empty.value.detail
    with pytest.raises(redline.VariableError):
        empty_default.compile(tone="")
    assert empty_default.compile(tone="dry").system == "Write in a dry tone."
    # A declared variable no text uses may stay empty.
    assert REVIEWER.compile(tone="").variables["tone"] == ""


@pytest.mark.parametrize("value", [3, None, b"x", "a\x00b"])
def test_values_must_be_text_without_nul(value):
    with pytest.raises(redline.VariableError) as refused:
        REVIEWER.compile(design=value)
    assert refused.value.variable == "design"


def test_request_bodies_refuse_like_the_export():
    """As the export: passed names must be declared, a declared placeholder needs a non-empty
    value, and a placeholder the version does not declare is sent as written."""
    with pytest.raises(redline.VariableError):
        REVIEWER.to_anthropic(nope="x")
    with pytest.raises(redline.VariableError) as empty:
        version("Write in a {{tone}} tone.", "Hi", variables={"tone": ""}).to_openai()
    assert empty.value.variable == "tone"
    literal = version("{{ghost}} and {{tone}}", "Hi", variables={"tone": "dry"})
    assert literal.to_openai()["messages"][0]["content"] == "{{ghost}} and dry"
    with pytest.raises(redline.VariableError) as strict:
        literal.compile()
    assert strict.value.variable == "ghost"
    with pytest.raises(ValueError, match="unknown api"):
        REVIEWER.request_body("gemini")  # type: ignore[arg-type]


def test_variables_named_like_the_arguments_are_still_variables():
    odd = version("{{self}} and {{api}}", "Hi", variables={"self": "me", "api": "x"})
    assert odd.compile(self="you").system == "you and x"
    assert odd.request_body("openai", api="y")["messages"][0]["content"] == "me and y"


@pytest.mark.django_db
def test_the_server_refuses_what_compile_refuses():
    """The refusals the server's runs make today name the same variables."""
    from playground.exceptions import ContentInvalid

    content = REVIEWER.content.as_dict()
    with pytest.raises(ContentInvalid) as server:
        run_variables_resolve(content=content, given={"desing": "typo"})
    with pytest.raises(redline.VariableError) as client:
        REVIEWER.compile(desing="typo")
    assert server.value.field == f"variables.{client.value.variable}"
    undeclared = version("Hello {{who}}.", "Hi", variables={})
    with pytest.raises(ContentInvalid) as server_missing:
        run_variables_resolve(content=undeclared.content.as_dict(), given={})
    with pytest.raises(redline.VariableError) as client_missing:
        undeclared.compile()
    assert "{{who}}" in str(server_missing.value) and client_missing.value.variable == "who"
