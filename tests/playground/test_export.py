"""Export: every format sends exactly the intermediate request, through the real clients.

Each exported snippet is run as a user would run it (bash + curl, the venv's Python with the
official SDK, node with the official npm SDKs) against a loopback server that speaks the provider's
wire protocol; the body it receives must equal `export_request(...)["body"]`.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from playground.exports.api_calls import (
    PLACEHOLDER,
    _heredoc_delimiter,
    export_render,
    export_request,
    export_warnings,
    template_fill,
)
from tests.playground.exportkit.cases import CASES, NASTY, RUN_MATRIX, case
from tests.playground.exportkit.providers import COMPLETION_ID, MESSAGE_ID, FakeProviders
from tests.playground.exportkit.runners import (
    NPM_PACKAGES,
    PythonForkServer,
    SdkInstallError,
    ensure_node_sdks,
    link_node_modules,
    python_executable,
    run,
    run_env,
)
from tests.playground.factories import content

APIS = ("anthropic", "openai")
MODES = ("substitute", "keep")
KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
PATHS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions"}
RESPONSE_IDS = {"anthropic": MESSAGE_ID, "openai": COMPLETION_ID}
SMALL_CASES = [name for name in CASES if name != "big"]


# --- fixtures -------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def _provider_server():
    with FakeProviders() as server:
        yield server


@pytest.fixture
def providers(_provider_server):
    """One loopback server for the session (stopping one costs its 0.5 s poll), emptied per test."""
    _provider_server.clear()
    return _provider_server


@pytest.fixture(scope="session")
def python_runner(tmp_path_factory):
    server = PythonForkServer(tmp_path_factory.mktemp("python-runner"))
    yield server
    server.close()


@pytest.fixture(scope="session")
def bash_and_curl() -> str:
    bash = shutil.which("bash")
    if bash is None or shutil.which("curl") is None:
        pytest.skip("curl export not run: `bash` and `curl` must be on PATH (apt-get install curl)")
    return bash


@pytest.fixture(scope="session")
def node() -> str:
    path = shutil.which("node")
    if path is None:
        pytest.skip("TypeScript export not run: `node` not on PATH (install Node.js >= 20)")
    return path


@pytest.fixture(scope="session")
def node_sdks(node: str) -> Path:
    """node_modules with @anthropic-ai/sdk, openai and typescript (installed once, then reused)."""
    try:
        return ensure_node_sdks()
    except SdkInstallError as exc:
        pytest.skip(f"TypeScript export not run: the npm SDKs could not be installed: {exc}")


# --- running exports end to end -------------------------------------------------------------


def _run_export(
    request: pytest.FixtureRequest, tmp_path: Path, runner: str, source: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    if runner == "curl":
        path = tmp_path / "export.sh"
        path.write_text(source, encoding="utf-8")
        return run([request.getfixturevalue("bash_and_curl"), str(path)], env=env, cwd=tmp_path)
    if runner == "python":
        path = tmp_path / "export.py"
        path.write_text(source, encoding="utf-8")
        return request.getfixturevalue("python_runner").run(path, env=env, cwd=tmp_path)
    link_node_modules(tmp_path, request.getfixturevalue("node_sdks"))
    path = tmp_path / "export.mjs"
    path.write_text(source, encoding="utf-8")
    return run([request.getfixturevalue("node"), str(path)], env=env, cwd=tmp_path)


def _carried_key(headers: dict[str, str], *, api: str, runner: str) -> str | None:
    """The API key a request carried in the header its client uses for it."""
    if api == "anthropic" and runner == "curl":
        return headers.get("x-api-key")
    # OpenAI, and the Anthropic SDKs since their 2026 majors, send `Authorization: Bearer`.
    auth = headers.get("authorization", "")
    return auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else headers.get("x-api-key")


FORMAT_OF_RUNNER = {"curl": "curl", "python": "python", "node": "typescript"}


@pytest.mark.parametrize("runner", ["curl", "python", "node"])
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(("case_name", "mode"), RUN_MATRIX, ids=[f"{c}-{m}" for c, m in RUN_MATRIX])
def test_export_runs_and_sends_exactly_the_request_body(
    request, providers, tmp_path, case_name, mode, api, runner
):
    content = case(case_name)
    # An unedited export sends the substituted body, in "keep" mode too.
    expected = export_request(content=content, api=api, variables="substitute")
    source = export_render(
        content=content, api=api, format=FORMAT_OF_RUNNER[runner], variables=mode
    )
    key = f"sk-test-{uuid.uuid4().hex}"
    env = run_env(tmp_path, **providers.base_urls(), **{KEY_ENV[api]: key})

    proc = _run_export(request, tmp_path, runner, source, env)

    [sent] = providers.requests
    assert (sent.method, sent.path) == ("POST", PATHS[api])
    assert sent.body == expected["body"]
    assert sent.headers["content-type"].startswith("application/json")
    assert _carried_key(sent.headers, api=api, runner=runner) == key
    if api == "anthropic":  # pinned in every format, over the SDKs' newer default
        assert sent.headers["anthropic-version"] == "2023-06-01"
    assert json.loads(proc.stdout)["id"] == RESPONSE_IDS[api]  # the response is printed


# --- static checks of every format ----------------------------------------------------------

ALL = [(name, api, mode) for name in CASES for api in APIS for mode in MODES]
ALL_IDS = [f"{name}-{api}-{mode}" for name, api, mode in ALL]


@pytest.mark.parametrize(("case_name", "api", "mode"), ALL, ids=ALL_IDS)
def test_json_format_is_the_request_body(case_name, api, mode):
    content = case(case_name)
    text = export_render(content=content, api=api, format="json", variables=mode)
    assert json.loads(text) == export_request(content=content, api=api, variables=mode)["body"]
    if case_name == "nasty":
        assert "日本語" in text  # non-ASCII kept as it is


@pytest.mark.parametrize(("case_name", "api", "mode"), ALL, ids=ALL_IDS)
def test_python_export_compiles(case_name, api, mode):
    source = export_render(content=case(case_name), api=api, format="python", variables=mode)
    compile(source, "export.py", "exec")


@pytest.mark.parametrize(("case_name", "api", "mode"), ALL, ids=ALL_IDS)
def test_curl_export_heredoc_holds_the_body(case_name, api, mode):
    content = case(case_name)
    script = export_render(content=content, api=api, format="curl", variables=mode)
    first, _, rest = script.partition("\n  --data-binary @- <<'")
    delimiter, _, rest = rest.partition("'\n")
    body, _, tail = rest.partition(f"\n{delimiter}\n")
    assert tail == ""  # nothing after the terminator; the terminator occurs once as a line
    assert json.loads(body) == export_request(content=content, api=api)["body"]
    assert delimiter not in body.split("\n")
    # Only our constants and $ENV references live outside the heredoc.
    assert "${" + ("ANTHROPIC" if api == "anthropic" else "OPENAI") + "_BASE_URL:-" in first


@pytest.mark.parametrize(("case_name", "api", "mode"), ALL, ids=ALL_IDS)
def test_typescript_export_parses(node, tmp_path, case_name, api, mode):
    source = export_render(content=case(case_name), api=api, format="typescript", variables=mode)
    path = tmp_path / "export.mjs"
    path.write_text(source, encoding="utf-8")
    run([node, "--check", str(path)], env=run_env(tmp_path), cwd=tmp_path)


def test_typescript_exports_type_check_strictly(node, node_sdks, tmp_path):
    """The TypeScript exports are real TypeScript: `tsc --strict` against the SDKs' types."""
    link_node_modules(tmp_path, node_sdks)
    files = []
    for name in SMALL_CASES:
        for api in APIS:
            for mode in MODES:
                path = tmp_path / f"{name}-{api}-{mode}.mts"
                content = case(name)
                path.write_text(
                    export_render(content=content, api=api, format="typescript", variables=mode),
                    encoding="utf-8",
                )
                files.append(str(path))
    tsc = node_sdks / "typescript" / "bin" / "tsc"
    options = ["--noEmit", "--strict", "--skipLibCheck", "--target", "es2022"]
    options += ["--module", "nodenext", "--moduleResolution", "nodenext"]
    run([node, str(tsc), *options, *files], env=run_env(tmp_path), cwd=tmp_path, timeout=120)


# Asks node which package an export's `import` loads (import.meta.resolve, then the nearest
# package.json of that name): what the export tests run against, not what the cache's manifests
# say (the `node_sdks` fixture has already compared those with the pins before returning).
_LOADED_VERSIONS = r"""
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
const found = {};
for (const name of JSON.parse(process.argv[2])) {
  let dir = dirname(fileURLToPath(import.meta.resolve(name)));
  for (;;) {
    const manifest = join(dir, "package.json");
    let meta = null;
    try { meta = JSON.parse(readFileSync(manifest, "utf8")); } catch {}
    if (meta !== null && meta.name === name) { found[name] = meta.version; break; }
    if (dirname(dir) === dir) { found[name] = null; break; }
    dir = dirname(dir);
  }
}
console.log(JSON.stringify(found));
"""


def test_node_sdk_versions_are_the_pinned_ones(node, node_sdks, tmp_path):
    link_node_modules(tmp_path, node_sdks)  # laid out as every node export test's folder
    script = tmp_path / "versions.mjs"
    script.write_text(_LOADED_VERSIONS, encoding="utf-8")
    argv = [node, str(script), json.dumps(sorted(NPM_PACKAGES))]
    loaded = json.loads(run(argv, env=run_env(tmp_path), cwd=tmp_path).stdout)
    assert loaded == NPM_PACKAGES


# --- the intermediate request ---------------------------------------------------------------


def _full_content() -> dict[str, Any]:
    content = case("tools")
    content["response_format"] = copy.deepcopy(CASES["response-format"]["response_format"])
    content["params"] = {"temperature": 0.3, "max_tokens": 300, "top_p": 0.8, "stop": ["X"]}
    return content


def test_anthropic_request_shape():
    content = _full_content()
    request = export_request(content=content, api="anthropic")
    assert request["method"] == "POST"
    assert request["url"] == "https://api.anthropic.com/v1/messages"
    assert request["headers"] == {
        "x-api-key": "$ANTHROPIC_API_KEY",
        "anthropic-version": "2023-06-01",
        "content-type": "application/json",
    }
    body = request["body"]
    assert body == {
        "model": "claude-test-1",
        "max_tokens": 300,
        "system": "You are terse.",
        "messages": [{"role": "user", "content": "Name three prime numbers."}],
        "temperature": 0.3,
        "top_p": 0.8,
        "stop_sequences": ["X"],
        "tools": [
            {
                "name": "get_weather",
                "description": content["tools"][0]["description"],
                "input_schema": content["tools"][0]["input_schema"],
            },
            {"name": "lookup", "input_schema": content["tools"][1]["input_schema"]},
        ],
        "output_config": {
            "format": {"type": "json_schema", "schema": content["response_format"]["schema"]}
        },
    }


def test_openai_request_shape():
    content = _full_content()
    request = export_request(content=content, api="openai")
    assert request["url"] == "https://api.openai.com/v1/chat/completions"
    assert request["headers"] == {
        "Authorization": "Bearer $OPENAI_API_KEY",
        "content-type": "application/json",
    }
    body = request["body"]
    assert body["messages"][0] == {"role": "system", "content": "You are terse."}
    assert body["max_completion_tokens"] == 300
    assert "max_tokens" not in body
    assert body["stop"] == ["X"]
    assert body["temperature"] == 0.3
    assert body["top_p"] == 0.8
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": content["tools"][0]["description"],
            "parameters": content["tools"][0]["input_schema"],
        },
    }
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "verdict",
            "schema": content["response_format"]["schema"],
            "strict": True,
        },
    }


@pytest.mark.parametrize("api", APIS)
def test_empty_and_null_fields_are_left_out(api):
    content = case("conversation")  # no system, temperature null, top_p set
    content["params"]["stop"] = []
    body = export_request(content=content, api=api)["body"]
    assert "system" not in body
    assert "temperature" not in body
    assert "stop" not in body
    assert "stop_sequences" not in body
    assert "tools" not in body
    assert "output_config" not in body
    assert "response_format" not in body
    assert body["top_p"] == 0.9
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]


@pytest.mark.parametrize("api", APIS)
def test_export_does_not_alias_or_change_the_content(api):
    content = _full_content()
    before = copy.deepcopy(content)
    body = export_request(content=content, api=api)["body"]
    schema = body["tools"][0].get("input_schema") or body["tools"][0]["function"]["parameters"]
    schema["properties"]["city"]["type"] = "changed"
    for fmt in ("curl", "python", "typescript", "json"):
        export_render(content=content, api=api, format=fmt, variables="keep")
    assert content == before


# --- variables ------------------------------------------------------------------------------


def test_template_fill_rules():
    values = {"a": "A", "b": "{{a}} $1 \\1 \\g<0>"}
    assert template_fill("{{a}}{{ a }}{{\ta\n}}{{\u3000a\u2028}}", values) == "AAAA"
    assert template_fill("{{b}}", values) == "{{a}} $1 \\1 \\g<0>"  # one pass, literal
    assert (
        template_fill("{{c}} {{}} {a} {{{a}}} {{ a b }}", values) == "{{c}} {{}} {a} {A} {{ a b }}"
    )
    assert template_fill("{{\ufeffa}}", values) == "{{\ufeffa}}"  # not whitespace to Python
    assert template_fill("no placeholders", {}) == "no placeholders"


def test_placeholders_are_the_ones_content_finds():
    """Exports fill exactly the placeholders `playground.text.content` reports for a version."""
    from playground.text import content as version_content

    texts = [
        "{{a}} {{ b }} {{\tc\n}} {{\u3000d\u2028}} {{\x1ce\x85}} {{\ufefff}} {{1x}} {{g h}}",
        "{{{i}}} {{}} {{ j}} {{k }} {j} }}{{l}}{{",
        NASTY,
    ]
    for text in texts:
        expected = [m.group(1) for m in version_content.PLACEHOLDER.finditer(text)]
        assert [m.group(1) for m in PLACEHOLDER.finditer(text)] == expected


@pytest.mark.parametrize("api", APIS)
def test_substitute_and_keep(api):
    content = case("variables")
    kept = export_request(content=content, api=api, variables="keep")["body"]
    filled = export_request(content=content, api=api, variables="substitute")["body"]
    kept_texts = json.dumps(kept, ensure_ascii=False)
    assert "{{persona}}" in kept_texts
    assert "{{ language }}" in kept_texts
    filled_texts = json.dumps(filled, ensure_ascii=False)
    assert "{{ language }}" not in filled_texts
    assert "Français — 日本語" in filled_texts
    assert "Keep {{unknown}} and {{ }} and {name} as written." in filled_texts

    python = export_render(content=content, api=api, format="python", variables="keep")
    assert "VARIABLES = {" in python
    assert "fill(" in python
    typescript = export_render(content=content, api=api, format="typescript", variables="keep")
    assert "const variables = {" in typescript
    assert "fill(" in typescript
    # curl always sends the defaults.
    assert export_render(content=content, api=api, format="curl", variables="keep") == (
        export_render(content=content, api=api, format="curl", variables="substitute")
    )


@pytest.mark.parametrize("fmt", ["python", "typescript"])
def test_keep_without_placeholders_adds_no_variables_block(fmt):
    content = case("plain")
    content["variables"] = {"unused": "x"}
    source = export_render(content=content, api="anthropic", format=fmt, variables="keep")
    assert source == export_render(content=content, api="anthropic", format=fmt)
    assert "fill(" not in source


# --- safety ---------------------------------------------------------------------------------


def test_heredoc_terminator_never_occurs_as_a_line():
    assert _heredoc_delimiter('{\n  "a": 1\n}') == "JSON"
    assert _heredoc_delimiter("x\nJSON\nJSON_1\ny") == "JSON_2"
    assert _heredoc_delimiter("JSON_1\n JSON") == "JSON"


def test_no_secret_reaches_an_export(monkeypatch):
    secret = "sk-live-" + uuid.uuid4().hex
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    for api in APIS:
        request = export_request(content=case("plain"), api=api)
        assert secret not in json.dumps(request)
        for fmt in ("curl", "python", "typescript", "json"):
            assert secret not in export_render(content=case("nasty"), api=api, format=fmt)


def test_user_data_never_lands_in_comments():
    # A JS `//` comment ends at U+2028 and a shell `#` at a newline: texts only go in literals.
    for api in APIS:
        for fmt, marker in (("python", "#"), ("typescript", "//"), ("curl", "#")):
            source = export_render(content=case("nasty"), api=api, format=fmt, variables="keep")
            comments = [line for line in source.splitlines() if line.lstrip().startswith(marker)]
            assert all("nasty" not in line and "$HOME" not in line for line in comments)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"api": "gemini", "format": "json"}, "unknown api"),
        ({"api": "openai", "format": "xml"}, "unknown format"),
        ({"api": "openai", "format": "json", "variables": "drop"}, "unknown variables mode"),
        ({"api": "openai", "format": "curl", "variables": "drop"}, "unknown variables mode"),
    ],
)
def test_bad_arguments_are_value_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        export_render(content=case("plain"), **kwargs)


def test_nasty_strings_survive_a_python_round_trip(tmp_path):
    """Cheap, no network: the Python literal of NASTY evaluates back to NASTY."""
    content = case("plain")
    content["system"] = NASTY
    source = export_render(content=content, api="anthropic", format="python")
    literal = re.search(r"^    system=(.*),$", source, re.M)
    assert literal is not None
    proc = subprocess.run(
        [python_executable(), "-c", f"import sys; sys.stdout.write(ascii({literal.group(1)}))"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout == ascii(NASTY)


def test_export_warnings_for_the_echo_provider():
    warnings = export_warnings(content=content(provider="echo", model="echo-1"), api="anthropic")
    assert len(warnings) == 1
    assert "'echo-1'" in warnings[0]
    assert "offline" in warnings[0]
    assert (
        export_warnings(content=content(model="gpt-4.1-mini", provider="openai"), api="openai")
        == []
    )
