"""Evaluations' HTTP API end to end: test sets, evaluations on the echo provider, results,
cancel, who may do what (evals/api.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from evals.models import EvalCell, Evaluation, TestCase, TestSetRevision
from playground.models import Run
from playground.services import grant_set, label_move
from tests.factories import api_client_for, make_user
from tests.playground.factories import make_prompt, save

pytestmark = pytest.mark.django_db

ROWS = [
    {"variables": {"design": "a cache in front of PostgreSQL"}, "expected": "cache", "note": "n1"},
    {"variables": {"design": "a queue between two services"}, "expected": "queue"},
    {"variables": {"design": "a CDN for images"}, "expected": "nothing matches"},
]


@pytest.fixture
def owner():
    return make_user("owner")


@pytest.fixture
def prompt_versions(owner):
    """An echo prompt with two versions (v1, v2) that both use {{design}}."""
    prompt, v1 = make_prompt(owner, provider="echo", model="echo-1")
    v2 = save(owner, prompt, v1, system="Be brief.", provider="echo", model="echo-1").version
    return prompt, v1, v2


@pytest.fixture
def inline(settings, django_capture_on_commit_callbacks):
    """`start(client, prompt, body)`: POST an evaluation whose cells run inside the request
    (pytest-django keeps each test in a transaction that never commits, so the request's
    on-commit callbacks are run here)."""
    settings.EVAL_EAGER_MODE = "inline"
    settings.RUN_ECHO_DELAY_MS = 0

    def start(client, prompt, body):
        with django_capture_on_commit_callbacks(execute=True):
            return client.post(f"/api/v1/prompts/{prompt.pk}/evals/", body, format="json")

    return start


def _testset(client, prompt, rows=ROWS):
    response = client.post(
        f"/api/v1/prompts/{prompt.pk}/testsets/", {"name": "designs", "rows": rows}, format="json"
    )
    assert response.status_code == 201, response.content
    return response.json()


def test_create_read_and_revise_a_test_set(owner, prompt_versions):
    prompt, _, _ = prompt_versions
    client = api_client_for(owner)
    body = _testset(client, prompt)
    assert body["revision"] == 1
    assert [r["variables"]["design"] for r in body["rows"]] == [
        r["variables"]["design"] for r in ROWS
    ]
    revised = client.post(
        f"/api/v1/testsets/{body['id']}/revisions/",
        {"rows": ROWS[:1], "message": "only the cache", "based_on": 1},
        format="json",
    )
    assert revised.status_code == 201
    assert revised.json()["revision"] == 2
    old = client.get(f"/api/v1/testsets/{body['id']}/?revision=1").json()
    assert len(old["rows"]) == 3
    latest = client.get(f"/api/v1/testsets/{body['id']}/").json()
    assert (latest["revision"], len(latest["rows"]), latest["latest_revision"]) == (2, 1, 2)


def test_a_stale_revision_save_is_a_409_and_writes_nothing(owner, prompt_versions):
    prompt, _, _ = prompt_versions
    client = api_client_for(owner)
    body = _testset(client, prompt)
    client.post(f"/api/v1/testsets/{body['id']}/revisions/", {"rows": ROWS[:2]}, format="json")
    stale = client.post(
        f"/api/v1/testsets/{body['id']}/revisions/",
        {"rows": ROWS[:1], "based_on": 1},
        format="json",
    )
    assert stale.status_code == 409
    assert TestSetRevision.objects.filter(testset_id=body["id"]).count() == 2


@pytest.mark.parametrize(
    ("rows", "field"),
    [
        ("nope", "rows"),
        ([{"variables": {"design": 3}}], "rows.0.variables.design"),
        ([{"variables": {"bad name": "x"}}], "rows.0.variables"),
        ([{"variables": {}, "colour": "red"}], "rows.0.colour"),
    ],
)
def test_bad_rows_are_a_400_naming_the_field_and_nothing_is_written(
    owner, prompt_versions, rows, field
):
    prompt, _, _ = prompt_versions
    response = api_client_for(owner).post(
        f"/api/v1/prompts/{prompt.pk}/testsets/", {"name": "x", "rows": rows}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["field"] == field
    assert not TestCase.objects.exists()


def test_import_csv_appends_a_revision_and_export_round_trips(owner, prompt_versions):
    prompt, _, _ = prompt_versions
    client = api_client_for(owner)
    body = _testset(client, prompt, rows=ROWS[:1])
    csv_file = SimpleUploadedFile(
        "more.csv", b'design,expected,note\n"a log, sharded",shard,from csv\n'
    )
    imported = client.post(
        f"/api/v1/testsets/{body['id']}/import/", {"file": csv_file}, format="multipart"
    )
    assert imported.status_code == 201, imported.content
    rows = imported.json()["rows"]
    assert [r["variables"]["design"] for r in rows] == [
        ROWS[0]["variables"]["design"],
        "a log, sharded",
    ]
    assert rows[1]["expected"] == "shard"
    exported = client.get(f"/api/v1/testsets/{body['id']}/export/?format=csv")
    assert exported.status_code == 200
    again = SimpleUploadedFile("again.csv", exported.content)
    replaced = client.post(
        f"/api/v1/testsets/{body['id']}/import/",
        {"file": again, "mode": "replace"},
        format="multipart",
    )
    assert [(r["variables"], r["expected"], r["note"]) for r in replaced.json()["rows"]] == [
        (r["variables"], r["expected"], r["note"]) for r in rows
    ]
    jsonl = client.get(f"/api/v1/testsets/{body['id']}/export/?format=jsonl").content.decode()
    assert len(jsonl.splitlines()) == 2


def test_import_refuses_bad_files(owner, prompt_versions):
    prompt, _, _ = prompt_versions
    client = api_client_for(owner)
    body = _testset(client, prompt, rows=ROWS[:1])
    for name, data, needle in [
        ("x.csv", b"design\n\xff\xfe\n", "not UTF-8"),
        ("x.pdf", b"design\nx\n", ".csv, .tsv or .jsonl"),
        ("x.jsonl", b"{not json}\n", "line 1 is not JSON"),
        ("x.csv", b"design\nx,y\n", "more cells than the header"),
    ]:
        response = client.post(
            f"/api/v1/testsets/{body['id']}/import/",
            {"file": SimpleUploadedFile(name, data)},
            format="multipart",
        )
        assert response.status_code == 400, name
        assert needle in response.json()["detail"]
    assert TestSetRevision.objects.filter(testset_id=body["id"]).count() == 1


GRADERS = [{"type": "contains"}, {"type": "max-output-tokens", "limit": 10_000}]


def test_an_evaluation_runs_every_cell_and_summarises_each_column(owner, prompt_versions, inline):
    prompt, v1, v2 = prompt_versions
    client = api_client_for(owner)
    testset = _testset(client, prompt)
    response = inline(
        client,
        prompt,
        {"testset": testset["id"], "versions": [v1.pk, v2.pk], "graders": GRADERS, "repeat": 2},
    )
    assert response.status_code == 201, response.content
    body = client.get(f"/api/v1/evals/{response.json()['id']}/").json()
    assert body["status"] == "done"
    assert body["progress"] == {"done": 12, "total": 12}
    assert [(c["version"], c["cells"]) for c in body["summary"]] == [(v1.pk, 6), (v2.pk, 6)]
    # echo quotes the user turn: rows 1 and 2 contain their expected word, row 3 does not
    for column in body["summary"]:
        assert (column["passed"], column["failed"], column["errors"]) == (4, 2, 0)
        assert column["pass_rate"] == pytest.approx(4 / 6, abs=1e-4)
        assert column["output_tokens"] > 0
        assert column["latency_p50_ms"] is not None
    assert Run.objects.count() == 12
    results = client.get(f"/api/v1/evals/{body['id']}/results/").json()
    assert results["count"] == 12
    first = results["results"][0]
    assert first["row"] == 1
    assert [g["type"] for g in first["grades"]] == ["contains", "max-output-tokens"]
    failures = client.get(f"/api/v1/evals/{body['id']}/results/?only=failures").json()
    assert failures["count"] == 4
    assert {r["row"] for r in failures["results"]} == {3}


def test_labels_choose_versions_and_models_multiply_columns(owner, prompt_versions, inline):
    prompt, v1, v2 = prompt_versions
    label_move(actor=owner, prompt=prompt, name="production", version=v1, expected=None)
    client = api_client_for(owner)
    testset = _testset(client, prompt, rows=ROWS[:1])
    response = inline(
        client,
        prompt,
        {
            "testset": testset["id"],
            "labels": ["production"],
            "versions": [v2.pk],
            "models": [
                {"provider": "echo", "model": "echo-1"},
                {"provider": "echo", "model": "echo-2"},
            ],
            "graders": [{"type": "json-valid"}],
        },
    )
    assert response.status_code == 201, response.content
    summary = response.json()["summary"]
    assert [(c["version"], c["model"]) for c in summary] == [
        (v2.pk, "echo-1"),
        (v2.pk, "echo-2"),
        (v1.pk, "echo-1"),
        (v1.pk, "echo-2"),
    ]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"versions": []}, "versions"),
        ({"versions": [999999]}, "versions"),
        ({"graders": [{"type": "regex", "pattern": "("}]}, "graders.0.pattern"),
        ({"repeat": 0}, "repeat"),
        ({"testset": 999999}, "testset"),
        ({"models": [{"provider": "nope"}]}, "models.0.provider"),
        ({"labels": ["nope"]}, "labels"),
    ],
)
def test_bad_evaluations_are_a_400_naming_the_field(owner, prompt_versions, inline, change, field):
    prompt, v1, _ = prompt_versions
    client = api_client_for(owner)
    testset = _testset(client, prompt)
    body = {"testset": testset["id"], "versions": [v1.pk], "graders": GRADERS, **change}
    response = inline(client, prompt, body)
    assert response.status_code == 400
    assert response.json().get("field") == field or field in response.json()["detail"]
    assert not Evaluation.objects.exists()


def test_a_row_missing_a_placeholder_value_is_refused_before_any_run(owner, inline):
    prompt, v1 = make_prompt(
        owner,
        provider="echo",
        model="echo-1",
        messages=[{"role": "user", "content": "Compare {{design}} with {{other}}"}],
        variables={"design": "x", "other": ""},
    )
    client = api_client_for(owner)
    testset = _testset(client, prompt, rows=[{"variables": {"design": "y"}}])
    response = inline(
        client,
        prompt,
        {"testset": testset["id"], "versions": [v1.pk], "graders": [{"type": "json-valid"}]},
    )
    # {{other}} is declared with an empty default and the row gives no value: refused up front.
    assert response.status_code == 400
    assert "variables.other" in response.json()["detail"]
    assert response.json()["field"] == "rows.0.variables"
    assert not Run.objects.exists()


def test_who_may_do_what(owner, prompt_versions, inline):
    prompt, v1, _ = prompt_versions
    viewer, editor, stranger = make_user("viewer"), make_user("editor"), make_user("stranger")
    grant_set(actor=owner, prompt=prompt, username=viewer.username, role="viewer")
    grant_set(actor=owner, prompt=prompt, username=editor.username, role="editor")
    testset = _testset(api_client_for(owner), prompt)
    body = {"testset": testset["id"], "versions": [v1.pk], "graders": GRADERS}
    created = inline(api_client_for(editor), prompt, body)
    assert created.status_code == 201
    evaluation = created.json()["id"]
    viewer_client = api_client_for(viewer)
    assert viewer_client.get(f"/api/v1/evals/{evaluation}/").status_code == 200
    assert viewer_client.get(f"/api/v1/testsets/{testset['id']}/").status_code == 200
    assert (
        viewer_client.post(f"/api/v1/prompts/{prompt.pk}/evals/", body, format="json").status_code
        == 403
    )
    assert (
        viewer_client.post(
            f"/api/v1/prompts/{prompt.pk}/testsets/", {"name": "x", "rows": []}, format="json"
        ).status_code
        == 403
    )
    assert viewer_client.post(f"/api/v1/evals/{evaluation}/cancel/").status_code == 403
    stranger_client = api_client_for(stranger)
    for url in (
        f"/api/v1/evals/{evaluation}/",
        f"/api/v1/evals/{evaluation}/results/",
        f"/api/v1/testsets/{testset['id']}/",
        f"/api/v1/testsets/{testset['id']}/export/",
        f"/api/v1/prompts/{prompt.pk}/evals/",
    ):
        assert stranger_client.get(url).status_code == 404, url
    assert stranger_client.post(f"/api/v1/evals/{evaluation}/cancel/").status_code == 404


def test_cancel_stops_every_queued_cell_and_no_run_starts_after(
    owner, prompt_versions, django_capture_on_commit_callbacks
):
    prompt, v1, v2 = prompt_versions
    client = api_client_for(owner)
    testset = _testset(client, prompt)
    # on-commit callbacks are captured, not run: the cells stay queued as if no worker had come
    with django_capture_on_commit_callbacks(execute=False):
        created = client.post(
            f"/api/v1/prompts/{prompt.pk}/evals/",
            {"testset": testset["id"], "versions": [v1.pk, v2.pk], "graders": GRADERS},
            format="json",
        )
    evaluation = created.json()["id"]
    cancelled = client.post(f"/api/v1/evals/{evaluation}/cancel/")
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled"
    assert cancelled.json()["progress"] == {"done": 6, "total": 6}
    from evals.services.cells import cell_execute

    for cell in EvalCell.objects.filter(evaluation_id=evaluation):
        assert cell_execute(cell_id=cell.pk) == "cancelled"
    assert not Run.objects.exists()


def test_results_page_bounds(owner, prompt_versions, inline):
    prompt, v1, _ = prompt_versions
    client = api_client_for(owner)
    testset = _testset(client, prompt)
    created = inline(
        client, prompt, {"testset": testset["id"], "versions": [v1.pk], "graders": GRADERS}
    ).json()
    page = client.get(f"/api/v1/evals/{created['id']}/results/?offset=1&limit=1").json()
    assert (page["count"], len(page["results"]), page["results"][0]["row"]) == (3, 1, 2)
    for query in ("limit=0", "limit=501", "offset=-1", "limit=x", "only=all"):
        assert client.get(f"/api/v1/evals/{created['id']}/results/?{query}").status_code == 400


def test_the_daily_cell_budget_is_a_429_with_retry_after(owner, prompt_versions, inline, settings):
    """Issue #31: at most EVAL_USER_CELLS_PER_DAY cells started per account in 24 hours."""
    settings.EVAL_USER_CELLS_PER_DAY = 8
    settings.EVALS_ACTIVE_PER_USER = 10
    prompt, v1, v2 = prompt_versions
    client = api_client_for(owner)
    testset = _testset(client, prompt)  # three rows
    body = {
        "testset": testset["id"],
        "versions": [v1.pk, v2.pk],
        "graders": [{"type": "contains", "value": "a"}],
    }
    assert inline(client, prompt, body).status_code == 201  # 6 cells
    refused = inline(client, prompt, body)  # 6 more: 12 > 8
    assert refused.status_code == 429, refused.content
    assert 1 <= int(refused["Retry-After"]) <= 24 * 3600 + 1
    assert "EVAL_USER_CELLS_PER_DAY" in refused.json()["detail"]
    assert Evaluation.objects.count() == 1
    # what fits in the rest of the day is still accepted (one version: 3 cells, 9 > 8: no;
    # after the first leaves the window, yes)
    one = {**body, "versions": [v1.pk]}
    assert inline(client, prompt, one).status_code == 429
    Evaluation.objects.update(created_at=Evaluation.objects.get().created_at - timedelta(days=1))
    assert inline(client, prompt, one).status_code == 201
    # larger than the whole budget: never fits, a 400
    settings.EVAL_USER_CELLS_PER_DAY = 5
    too_big = inline(client, prompt, body)
    assert too_big.status_code == 400
    assert too_big.json()["field"] == "versions"
    # another account has its own budget
    other = make_user()
    grant_set(actor=owner, prompt=prompt, username=other.username, role="editor")
    assert inline(api_client_for(other), prompt, one).status_code == 201
