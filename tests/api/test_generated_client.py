"""A client nobody here wrote: openapi-python-client generates one from the running server's
`/api/schema/`, without a warning, and the main flows run through it against a live server.

The generated code parses every answer by the schema (the status picks the model), so an answer
the schema does not describe breaks these calls, and the suite-wide fixture checks each answer
the live server sends too (tests/schemacheck.py).
"""

import importlib
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from accounts.services import api_token_create
from tests.factories import make_user

pytestmark = pytest.mark.django_db(transaction=True)

PACKAGE = "redline_generated_client"
# No post hooks: the generator would run ruff from PATH to tidy the code, which is not needed to
# import it (and a hook that cannot start is reported as a warning).
GENERATOR_CONFIG = "post_hooks: []\n"


@pytest.fixture
def generated(live_server, tmp_path):
    """The client package generated from the live server's schema, imported."""
    config = tmp_path / "config.yaml"
    config.write_text(GENERATOR_CONFIG)
    # The schema is fetched here, with a generous timeout, not by the generator: its own HTTP
    # client gives up after 5 s, which a loaded machine's first schema build can take.
    schema = tmp_path / "schema.json"
    with urllib.request.urlopen(f"{live_server.url}/api/schema/?format=json", timeout=300) as r:
        schema.write_bytes(r.read())
    generator = Path(sys.executable).with_name("openapi-python-client")
    proc = subprocess.run(
        [
            str(generator),
            "generate",
            "--path",
            str(schema),
            "--output-path",
            str(tmp_path / PACKAGE),
            "--meta",
            "none",
            "--config",
            str(config),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "Warning" not in output and "Error" not in output, output
    sys.path.insert(0, str(tmp_path))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def _call(package, operation: str):
    return importlib.import_module(f"{package.__name__}.api.v1.{operation}")


def _model(package, name: str):
    return getattr(importlib.import_module(f"{package.__name__}.models"), name)


@pytest.fixture
def clients(generated, live_server):
    """The owner's client (an API key) and an anonymous one, closed before the live server
    and the database go away (an open keep-alive connection would outlive them)."""
    owner = make_user("owner")
    _, key = api_token_create(actor=owner)
    with (
        generated.AuthenticatedClient(
            base_url=live_server.url, token=key, prefix="Token", raise_on_unexpected_status=True
        ) as client,
        generated.Client(base_url=live_server.url, raise_on_unexpected_status=True) as anonymous,
    ):
        yield client, anonymous


def test_the_main_flows_through_a_generated_client(generated, clients, settings):
    settings.RUN_ECHO_DELAY_MS = 0
    make_user("reader")
    client, anonymous = clients
    call = lambda operation: _call(generated, operation)  # noqa: E731
    model = lambda name: _model(generated, name)  # noqa: E731

    # Prompts: create one with its first version, list it, read it with its labels.
    content = {
        "provider": "echo",
        "model": "echo-1",
        "system": "You review {{topic}} designs.",
        "messages": [{"role": "user", "content": "Review this."}],
        "params": {"temperature": 1.0, "max_tokens": 256, "top_p": None, "stop": []},
        "tools": [],
        "response_format": None,
        "variables": {"topic": "queue"},
    }
    created = call("v1_prompts_create").sync_detailed(
        client=client,
        body=model("PromptListCreateApiInputRequest").from_dict(
            {"title": "Reviewer", "content": content, "message": "first"}
        ),
    )
    assert created.status_code == 201
    prompt_id, root_id = created.parsed.id, created.parsed.root_version
    listed = call("v1_prompts_list").sync(client=client)
    assert [p.id for p in listed.results] == [prompt_id]
    detail = call("v1_prompts_retrieve").sync(prompt_id, client=client)
    assert [label.name for label in detail.labels] == ["main"]

    # Versions: a child, then the version tree.
    child = call("v1_prompts_versions_create").sync_detailed(
        prompt_id,
        client=client,
        body=model("PromptVersionListCreateApiInputRequest").from_dict(
            {"parent": root_id, "content": {**content, "system": "You review {{topic}}."}}
        ),
    )
    assert child.status_code == 201 and child.parsed.main_moved is True
    child_id = child.parsed.id
    tree = call("v1_prompts_versions_list").sync(prompt_id, client=client)
    assert [v.id for v in tree.results] == [root_id, child_id]

    # Labels: point `production` at the child, then fetch by label (with a 304 revalidation).
    moved = call("v1_prompts_labels_update").sync(
        prompt_id,
        "production",
        client=client,
        body=model("LabelMoveApiInputRequest").from_dict({"version": child_id, "expected": None}),
    )
    assert moved.version == child_id
    fetched = call("v1_prompts_labels_version_retrieve").sync_detailed(
        prompt_id, "production", client=client
    )
    assert fetched.status_code == 200 and fetched.parsed.id == child_id
    assert fetched.parsed.content.system == "You review {{topic}}."
    etag = fetched.headers["ETag"]
    again = client.get_httpx_client().get(
        f"/api/v1/prompts/{prompt_id}/labels/production/version/",
        headers={"If-None-Match": etag},
    )
    assert again.status_code == 304

    # Diff between the two versions; a diff against an unknown id is a 404 the client knows.
    diff = call("v1_versions_diff_retrieve").sync(child_id, client=client, against=root_id)
    assert diff.from_ == root_id and diff.to == child_id
    assert [t.field for t in diff.texts] == ["system"]
    missing = call("v1_versions_diff_retrieve").sync_detailed(
        child_id, client=client, against=99_999_999
    )
    assert missing.status_code == 404 and missing.parsed.detail == "Not found."

    # Revert to the root: a new version with the root's content; again: 200, nothing new.
    reverted = call("v1_versions_revert_create").sync_detailed(root_id, client=client)
    assert reverted.status_code == 201 and reverted.parsed.created is True
    unchanged = call("v1_versions_revert_create").sync_detailed(root_id, client=client)
    assert unchanged.status_code == 200 and unchanged.parsed.unchanged is True

    # Share: a public link, read anonymously through its token, then revoked.
    link = call("v1_prompts_links_create").sync_detailed(
        prompt_id,
        client=client,
        body=model("LinkListCreateApiInputRequest").from_dict(
            {"access": "public", "label": "production"}
        ),
    )
    assert link.status_code == 201
    token = link.parsed.url.rstrip("/").rsplit("/", 1)[1]
    shared = call("v1_shared_retrieve").sync_detailed(token, client=anonymous)
    assert shared.status_code == 200 and shared.parsed.id == child_id
    revoked = call("v1_links_destroy").sync_detailed(link.parsed.id, client=client)
    assert revoked.status_code == 204
    gone = call("v1_shared_retrieve").sync_detailed(token, client=anonymous)
    assert gone.status_code == 404

    # A grant to another account, listed, then revoked.
    granted = call("v1_prompts_grants_create").sync_detailed(
        prompt_id,
        client=client,
        body=model("GrantListCreateApiInputRequest").from_dict(
            {"username": "reader", "role": "viewer"}
        ),
    )
    assert granted.status_code == 201
    assert [g.username for g in call("v1_prompts_grants_list").sync(prompt_id, client=client)] == [
        "reader"
    ]
    ungranted = call("v1_prompts_grants_destroy").sync_detailed(prompt_id, "reader", client=client)
    assert ungranted.status_code == 204

    # An echo run: queued, executed, read back with its timings; its stream replays it.
    run = call("v1_versions_runs_create").sync_detailed(
        child_id,
        client=client,
        body=model("VersionRunListCreateApiInputRequest").from_dict(
            {"variables": {"topic": "cache"}, "idempotency_key": "client-1"}
        ),
    )
    assert run.status_code == 201
    # The stream follows the run to its end (`done`), then the run reads back finished.
    stream = call("v1_runs_stream_retrieve").sync_detailed(run.parsed.id, client=client)
    assert stream.status_code == 200
    assert "event: done" in stream.parsed
    done = call("v1_runs_retrieve").sync(run.parsed.id, client=client)
    assert done.status.value == "done", done.error
    assert done.output.startswith("Echo of a call to echo-1")
    assert isinstance(done.total_ms, int)

    # The export of the version, as text.
    export = call("v1_versions_export_retrieve").sync_detailed(
        child_id,
        client=client,
        api=model("V1VersionsExportRetrieveApi")("anthropic"),
        format_=model("V1VersionsExportRetrieveFormat")("json"),
    )
    assert export.status_code == 200 and '"system"' in export.parsed


def test_a_generated_client_creates_a_test_set_and_an_evaluation_and_reads_its_results(
    generated, clients, settings
):
    """Issue #32: `rows`, `graders`, `versions` and `models` are arrays in the schema, so the
    generated models take lists (they had no way to send one when the schema said "object")."""
    settings.RUN_ECHO_DELAY_MS = 0
    settings.EVAL_EAGER_MODE = "inline"  # the cells run inside the POST: its answer is final
    client, _ = clients
    call = lambda operation: _call(generated, operation)  # noqa: E731
    model = lambda name: _model(generated, name)  # noqa: E731

    created = call("v1_prompts_create").sync_detailed(
        client=client,
        body=model("PromptListCreateApiInputRequest").from_dict(
            {
                "title": "Designs",
                "content": {
                    "provider": "echo",
                    "model": "echo-1",
                    "system": "You review designs.",
                    "messages": [{"role": "user", "content": "Review {{design}}."}],
                    "params": {"temperature": 1.0, "max_tokens": 64, "top_p": None, "stop": []},
                    "tools": [],
                    "response_format": None,
                    "variables": {"design": "a queue"},
                },
            }
        ),
    )
    assert created.status_code == 201
    prompt_id, version_id = created.parsed.id, created.parsed.root_version

    testset = call("v1_prompts_testsets_create").sync_detailed(
        prompt_id,
        client=client,
        body=model("TestSetListCreateApiInputRequest").from_dict(
            {
                "name": "designs",
                "rows": [
                    {"variables": {"design": "a cache"}, "expected": "cache"},
                    {"variables": {"design": "a queue"}, "expected": "nothing like it"},
                ],
            }
        ),
    )
    assert testset.status_code == 201, testset.content
    assert [row.variables.additional_properties for row in testset.parsed.rows] == [
        {"design": "a cache"},
        {"design": "a queue"},
    ]

    evaluation = call("v1_prompts_evals_create").sync_detailed(
        prompt_id,
        client=client,
        body=model("EvaluationListCreateApiInputRequest").from_dict(
            {
                "testset": testset.parsed.id,
                "versions": [version_id],
                "models": [{"provider": "echo", "model": "echo-1"}],
                "graders": [{"type": "contains", "value": "cache"}],
            }
        ),
    )
    assert evaluation.status_code == 201, evaluation.content
    assert [g.type_ for g in evaluation.parsed.graders] == ["contains"]

    read = call("v1_evals_retrieve").sync(evaluation.parsed.id, client=client)
    assert read.status.value == "done" and read.progress.done == read.progress.total == 2
    results = call("v1_evals_results_retrieve").sync(evaluation.parsed.id, client=client)
    assert results.count == 2
    assert [(r.row, r.passed) for r in results.results] == [(1, True), (2, False)]
