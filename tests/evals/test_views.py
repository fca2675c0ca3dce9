"""The evaluation pages without a browser: who sees them, forms, the matrix, exports."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from evals import selectors as eval_selectors
from evals.models import EvalCell, Evaluation, TestSetRevision
from playground.models import Run
from playground.runs.services import run_create, run_execute
from playground.services import grant_set
from tests.factories import make_user
from tests.playground.factories import make_prompt, save

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return make_user("owner")


@pytest.fixture
def logged_in(client, owner):
    client.force_login(owner)
    return client


@pytest.fixture
def echo(owner):
    prompt, v1 = make_prompt(owner, provider="echo", model="echo-1")
    v2 = save(owner, prompt, v1, system="Be brief.", provider="echo", model="echo-1").version
    return prompt, v1, v2


@pytest.fixture
def inline(settings):
    settings.EVAL_EAGER_MODE = "inline"
    settings.RUN_EAGER_MODE = "inline"
    settings.RUN_ECHO_DELAY_MS = 0


def _new_testset(client, prompt, data: bytes) -> int:
    response = client.post(
        f"/evals/prompt/{prompt.pk}/",
        {"action": "testset", "name": "designs", "file": SimpleUploadedFile("rows.csv", data)},
    )
    assert response.status_code == 302, response.content
    return int(response["Location"].rstrip("/").split("/")[-1])


def test_table_editor_saves_a_new_revision_and_leaves_blank_rows_out(logged_in, echo):
    prompt, _, _ = echo
    testset = _new_testset(logged_in, prompt, b"design,expected\na cache,cache\n")
    page = logged_in.get(f"/evals/testsets/{testset}/")
    assert page.status_code == 200
    assert b'value="design"' in page.content
    response = logged_in.post(
        f"/evals/testsets/{testset}/",
        {
            "action": "save",
            "rows": "4",
            "col": ["design"],
            "var-0-0": "a cache",
            "expected-0": "cache",
            "var-1-0": "a queue",
            "expected-1": "queue",
            "note-1": "added in the table",
            "var-2-0": "",
            "message": "one more",
        },
    )
    assert response.status_code == 302
    latest = TestSetRevision.objects.filter(testset_id=testset).order_by("-number").first()
    assert latest.number == 2
    assert [
        (r.variables, r.expected, r.note) for r in eval_selectors.testset_rows(revision=latest)
    ] == [
        ({"design": "a cache"}, "cache", ""),
        ({"design": "a queue"}, "queue", "added in the table"),
    ]


def test_a_stale_table_save_is_refused_with_a_message(logged_in, echo):
    prompt, _, _ = echo
    testset = _new_testset(logged_in, prompt, b"design\nx\n")
    form = {"action": "save", "rows": "1", "col": ["design"], "var-0-0": "y"}
    logged_in.post(f"/evals/testsets/{testset}/", form)
    stale = logged_in.post(f"/evals/testsets/{testset}/?revision=1", form, follow=True)
    assert "moved on to revision 2" in stale.content.decode()
    assert TestSetRevision.objects.filter(testset_id=testset).count() == 2


def test_start_an_evaluation_from_the_form_and_read_the_matrix(logged_in, echo, inline):
    prompt, v1, v2 = echo
    testset = _new_testset(logged_in, prompt, b"design,expected\na cache,cache\na CDN,nothing\n")

    response = logged_in.post(
        f"/evals/prompt/{prompt.pk}/",
        {
            "action": "evaluate",
            "testset": testset,
            "versions": [v1.pk, v2.pk],
            "g_expected": "contains",
            "repeat": "1",
        },
    )
    assert response.status_code == 302, response.content
    evaluation = Evaluation.objects.get()
    # on-commit does not fire inside the test transaction: run the cells as a worker would
    from evals.services.evaluations import evaluation_dispatch

    evaluation_dispatch(evaluation_id=evaluation.pk)
    page = logged_in.get(response["Location"]).content.decode()
    assert "2 of 2 rows" in page
    assert "✓ passed" in page
    assert "✗ failed" in page
    failures = logged_in.get(response["Location"] + "?show=failures").content.decode()
    assert "1 of 2 rows" in failures
    diffed = logged_in.get(response["Location"] + "?a=0&b=1").content.decode()
    assert "Word diff of columns 1 and 2" in diffed
    progress = logged_in.get(response["Location"] + "?fragment=progress").content.decode()
    assert 'data-finished="true"' in progress
    assert "50%" in progress


def _body(response) -> str:
    """An export's text: exports are streamed."""
    return b"".join(response.streaming_content).decode()


def test_exports_hold_every_cell(logged_in, echo, inline):
    prompt, v1, _ = echo
    testset = _new_testset(
        logged_in, prompt, b"design,expected\na cache,cache\na CDN,nothing-here\n"
    )
    logged_in.post(
        f"/evals/prompt/{prompt.pk}/",
        {"action": "evaluate", "testset": testset, "versions": [v1.pk], "g_expected": "contains"},
    )
    evaluation = Evaluation.objects.get()
    from evals.services.evaluations import evaluation_dispatch

    evaluation_dispatch(evaluation_id=evaluation.pk)
    rows = list(csv.reader(io.StringIO(_body(logged_in.get(f"/evals/{evaluation.pk}/export.csv")))))
    assert rows[0][:4] == ["row", "version", "version_id", "provider"]
    assert len(rows) == 3
    cells = json.loads(_body(logged_in.get(f"/evals/{evaluation.pk}/export.json")))
    assert [c["passed"] for c in cells] == [True, False]
    assert logged_in.get(f"/evals/{evaluation.pk}/export.xml").status_code == 404


@pytest.fixture
def offset_ids(owner):
    """A prompt whose version ids are not its numbers: throwaway versions go to another
    prompt first, so v1 and v2 here have ids well past 2 (issue #33)."""
    other, parent = make_prompt(owner, title="Throwaway", provider="echo", model="echo-1")
    for n in range(6):
        parent = save(owner, other, parent, system=f"throwaway {n}").version
    prompt, v1 = make_prompt(owner, title="Offset", provider="echo", model="echo-1")
    v2 = save(owner, prompt, v1, system="Be brief.", provider="echo", model="echo-1").version
    assert (v1.number, v2.number) == (1, 2) and v1.pk > 2 and v2.pk > 2
    return prompt, v1, v2


def test_exports_name_versions_by_number_and_keep_the_id_apart(logged_in, offset_ids, inline):
    prompt, _, v2 = offset_ids
    testset = _new_testset(logged_in, prompt, b"design,expected\na cache,cache\n")
    logged_in.post(
        f"/evals/prompt/{prompt.pk}/",
        {"action": "evaluate", "testset": testset, "versions": [v2.pk], "g_expected": "contains"},
    )
    evaluation = Evaluation.objects.get()
    from evals.services.evaluations import evaluation_dispatch

    evaluation_dispatch(evaluation_id=evaluation.pk)
    text = _body(logged_in.get(f"/evals/{evaluation.pk}/export.csv"))
    header, row = list(csv.reader(io.StringIO(text)))
    assert dict(zip(header, row, strict=True))["version"] == "v2"
    assert dict(zip(header, row, strict=True))["version_id"] == str(v2.pk)
    (cell,) = json.loads(_body(logged_in.get(f"/evals/{evaluation.pk}/export.json")))
    assert (cell["version"], cell["version_id"]) == ("v2", v2.pk)


def test_evaluate_against_preselects_by_number(logged_in, offset_ids):
    prompt, v1, v2 = offset_ids
    _new_testset(logged_in, prompt, b"design\na cache\n")
    page = logged_in.get(f"/playground/p/{prompt.pk}/v1/").content.decode()
    assert f"/evals/prompt/{prompt.pk}/?v=v1" in page
    form = logged_in.get(f"/evals/prompt/{prompt.pk}/?v=v1").content.decode()
    assert f'value="{v1.pk}" checked' in form and f'value="{v2.pk}" checked' not in form
    # An older link by id still works; a number not in the prompt preselects the default.
    assert (
        f'value="{v1.pk}" checked'
        in logged_in.get(f"/evals/prompt/{prompt.pk}/?v={v1.pk}").content.decode()
    )


def test_the_judge_is_named_by_prompt_and_version_number(logged_in, owner, offset_ids, inline):
    prompt, v1, v2 = offset_ids
    testset = _new_testset(logged_in, prompt, b"design\na cache\n")
    form = logged_in.get(f"/evals/prompt/{prompt.pk}/").content.decode()
    assert "version number" in form and "version id" not in form
    base = {
        "action": "evaluate",
        "testset": testset,
        "versions": [v1.pk],
        "g_judge_rubric": "Names a risk",
        "g_judge_prompt": prompt.pk,
    }
    refused = logged_in.post(f"/evals/prompt/{prompt.pk}/", {**base, "g_judge_number": "v9"})
    assert refused.status_code == 302 and not Evaluation.objects.exists()
    logged_in.post(f"/evals/prompt/{prompt.pk}/", {**base, "g_judge_number": "v2"})
    (judge,) = [g for g in Evaluation.objects.get().graders if g["type"] == "llm-judge"]
    assert judge["judge_version"] == v2.pk


def test_save_a_run_as_a_test_case(logged_in, owner, echo, inline):
    prompt, v1, _ = echo
    run = run_create(actor=owner, version=v1, variables={"design": "a ledger"}).run
    run_execute(run_id=run.pk)
    response = logged_in.post(f"/evals/from-run/{run.pk}/", {"testset": "new", "name": "from runs"})
    assert response.status_code == 302
    revision = TestSetRevision.objects.get()
    [row] = eval_selectors.testset_rows(revision=revision)
    assert row.variables == {"design": "a ledger"}
    assert row.expected == Run.objects.get(pk=run.pk).output
    again = logged_in.post(f"/evals/from-run/{run.pk}/", {"testset": revision.testset_id})
    assert again.status_code == 302
    assert TestSetRevision.objects.order_by("-number").first().row_count == 2


def test_pages_are_404_to_strangers_and_read_only_to_viewers(client, owner, echo, inline):
    prompt, v1, _ = echo
    stranger, viewer = make_user("stranger"), make_user("viewer")
    grant_set(actor=owner, prompt=prompt, username=viewer.username, role="viewer")
    client.force_login(owner)
    testset = _new_testset(client, prompt, b"design\nx\n")
    client.post(
        f"/evals/prompt/{prompt.pk}/",
        {"action": "evaluate", "testset": testset, "versions": [v1.pk], "g_json-valid": "1"},
    )
    evaluation = Evaluation.objects.get()
    client.force_login(stranger)
    for url in (
        f"/evals/prompt/{prompt.pk}/",
        f"/evals/testsets/{testset}/",
        f"/evals/{evaluation.pk}/",
        f"/evals/{evaluation.pk}/export.csv",
    ):
        assert client.get(url).status_code == 404, url
    client.force_login(viewer)
    page = client.get(f"/evals/prompt/{prompt.pk}/").content.decode()
    assert "read-only access" in page
    assert client.get(f"/evals/testsets/{testset}/").status_code == 200
    refused = client.post(f"/evals/testsets/{testset}/", {"action": "save", "rows": "0"})
    assert refused.status_code == 403
    assert client.post(f"/evals/{evaluation.pk}/cancel").status_code == 403
    assert EvalCell.objects.filter(evaluation=evaluation).count() == 1


def _evaluate(client, prompt, testset: int, versions: list[int]) -> Evaluation:
    from evals.services.evaluations import evaluation_dispatch

    response = client.post(
        f"/evals/prompt/{prompt.pk}/",
        {"action": "evaluate", "testset": testset, "versions": versions, "g_expected": "contains"},
    )
    assert response.status_code == 302, response.content
    evaluation = Evaluation.objects.latest("pk")
    evaluation_dispatch(evaluation_id=evaluation.pk)  # on-commit does not fire in the test
    return evaluation


def test_the_version_tree_shows_each_versions_last_pass_rate(client, owner, echo, inline):
    """Beside each version in the tree: the pass rate of the newest finished evaluation that
    ran it, linking to it; for viewers too; never on a shared link's page."""
    from playground.services import share_link_create

    prompt, v1, v2 = echo
    client.force_login(owner)
    testset = _new_testset(
        client, prompt, b"design,expected\na cache,cache\na CDN,nothing\na queue,queue\n"
    )
    first = _evaluate(client, prompt, testset, [v1.pk, v2.pk])
    page = client.get(f"/playground/p/{prompt.pk}/").content.decode()
    assert page.count(f'href="/evals/{first.pk}/"') >= 2
    assert page.count(">66% pass</a>") == 2  # 2 of 3 rows each
    assert "2 of 3 graded cells passed" in page

    later = _evaluate(client, prompt, testset, [v2.pk])
    tree = client.get(f"/playground/p/{prompt.pk}/tree/?v={v2.pk}").content.decode()
    rows = {n: tree.split(f'data-number="{n}"')[1].split("</li>")[0] for n in (1, 2)}
    assert f'href="/evals/{later.pk}/"' in rows[2]
    assert f'href="/evals/{first.pk}/"' in rows[1]

    viewer = make_user("viewer")
    grant_set(actor=owner, prompt=prompt, username=viewer.username, role="viewer")
    client.force_login(viewer)
    assert "% pass</a>" in client.get(f"/playground/p/{prompt.pk}/").content.decode()

    _, token = share_link_create(actor=owner, prompt=prompt, access="public", version=v2)
    client.logout()
    shared = client.get(f"/s/{token}")
    assert shared.status_code == 200
    assert "% pass" not in shared.content.decode()
    assert "/evals/" not in shared.content.decode()


def test_the_tree_reads_pass_rates_in_a_fixed_number_of_queries(client, owner, echo, inline):
    """No query per version: the prompt page costs the same with one evaluated version as with
    eight."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    prompt, v1, v2 = echo
    client.force_login(owner)
    testset = _new_testset(client, prompt, b"design,expected\na cache,cache\n")
    _evaluate(client, prompt, testset, [v1.pk])
    with CaptureQueriesContext(connection) as one:
        assert client.get(f"/playground/p/{prompt.pk}/v2/").status_code == 200
    parent = v2
    versions = [v1.pk, v2.pk]
    for n in range(6):
        parent = save(owner, prompt, parent, system=f"Take {n}.", provider="echo", model="echo-1")
        parent = parent.version
        versions.append(parent.pk)
    _evaluate(client, prompt, testset, versions)
    with CaptureQueriesContext(connection) as eight:
        page = client.get(f"/playground/p/{prompt.pk}/v2/").content.decode()
    assert page.count("% pass</a>") == 8
    assert len(eight) == len(one), [q["sql"] for q in eight]


def test_a_pass_rate_badge_is_coloured_by_how_it_reads(client, owner, echo, inline):
    """Issue 33: "0% pass" was drawn green. Red below 50%, amber below 90%, green from 90%."""
    prompt, v1, v2 = echo
    client.force_login(owner)
    failing = _new_testset(client, prompt, b"design,expected\na cache,zzzz\na queue,qqqq\n")
    _evaluate(client, prompt, failing, [v2.pk])
    tree = client.get(f"/playground/p/{prompt.pk}/tree/?v={v2.pk}").content.decode()
    assert 'tree-badge tree-badge-bad" href=' in tree and ">0% pass</a>" in tree
    passing = _new_testset(client, prompt, b"design,expected\na cache,cache\na queue,queue\n")
    _evaluate(client, prompt, passing, [v2.pk])
    tree = client.get(f"/playground/p/{prompt.pk}/tree/?v={v2.pk}").content.decode()
    assert 'tree-badge tree-badge-good" href=' in tree and ">100% pass</a>" in tree
