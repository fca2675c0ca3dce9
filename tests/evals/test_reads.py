"""Reads of evaluations whatever their rows hold, and test-set rows stored once (issue #31):
results, the matrix page and exports never read a row's undeclared variables and cost the same
number of queries for 2 rows as for 5; appends store the appended rows only, under a per-user
quota."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evals import selectors as eval_selectors
from evals.models import EvalCell, Evaluation, TestRow, TestSetRevision
from evals.services import testsets
from evals.services.cells import cell_execute
from evals.services.evaluations import evaluation_create, evaluation_dispatch
from playground.models import Role
from tests.factories import api_client_for, make_user
from tests.playground.factories import make_prompt

pytestmark = pytest.mark.django_db

# 2 MB of variables no version declares, in every row.
UNDECLARED = {f"blob{i:02d}": f"{i:02d}" + "x" * 99_998 for i in range(20)}
# The variables column of a stored row, read whole: not the first argument of a function
# (JSON_EXTRACT(…)) nor followed by a JSON operator (-> / ->>); as the ORM names it, or as the
# worker's hand-written read of a cell does (evals.selectors.cell_for_worker). A statement
# psycopg has prepared (common.rawsql, from its third run) is logged without its text: those
# are the hand-written ones, matched here on their first runs.
WHOLE_VARIABLES = re.compile(
    r'(?<!\()(?:"evals_test\w+"\."variables"|\bcontent\.variables)(?!\s*-)'
)


@pytest.fixture
def owner():
    return make_user("owner")


@pytest.fixture
def inline(settings):
    settings.EVAL_EAGER_MODE = "inline"
    settings.RUN_EAGER_MODE = "inline"
    settings.RUN_ECHO_DELAY_MS = 0


def _evaluation(owner, prompt, version, rows: int) -> Evaluation:
    revision = testsets.testset_create(
        actor=owner,
        prompt=prompt,
        role=Role.OWNER,
        name=f"{rows} rows",
        rows=testsets.testset_rows_parse(
            [
                {"variables": {"design": f"design {n}", **UNDECLARED}, "expected": "design"}
                for n in range(rows)
            ]
        ),
    )
    evaluation = evaluation_create(
        actor=owner,
        prompt=prompt,
        role=Role.OWNER,
        revision=revision,
        versions=[version.pk],
        graders=[{"type": "contains"}],
    )
    evaluation_dispatch(evaluation_id=evaluation.pk)  # on-commit: not in a test
    evaluation.refresh_from_db()
    assert evaluation.status == "done"
    return evaluation


def _read(client, api, evaluation) -> dict[str, tuple[int, str]]:
    """Each read surface: its query count and its body."""
    surfaces = {
        "page": (client, f"/evals/{evaluation.pk}/"),
        "api": (api, f"/api/v1/evals/{evaluation.pk}/results/?limit=500"),
        "csv": (client, f"/evals/{evaluation.pk}/export.csv"),
        "json": (client, f"/evals/{evaluation.pk}/export.json"),
    }
    read = {}
    for name, (reader, url) in surfaces.items():
        with CaptureQueriesContext(connection) as queries:
            response = reader.get(url)
            assert response.status_code == 200, (name, response.status_code)
            body = (
                b"".join(response.streaming_content) if response.streaming else response.content
            ).decode()
        whole = [q["sql"][:300] for q in queries if WHOLE_VARIABLES.search(q["sql"] or "")]
        assert whole == [], f"{name} read the rows' variables whole: {whole}"
        read[name] = (len(queries), body)
    return read


def test_reads_never_load_undeclared_variables_and_do_not_grow_with_rows(client, owner, inline):
    prompt, version = make_prompt(owner, provider="echo", model="echo-1")
    client.force_login(owner)
    api = api_client_for(owner)
    first = _evaluation(owner, prompt, version, rows=2)
    api.get(f"/api/v1/evals/{first.pk}/")  # the token's first use writes its last-used time
    small = _read(client, api, first)
    large = _read(client, api, _evaluation(owner, prompt, version, rows=5))
    assert {k: v[0] for k, v in small.items()} == {k: v[0] for k, v in large.items()}
    for _, body in large.values():
        assert "x" * 1000 not in body  # nothing of the undeclared values
    page = large["page"][1]
    assert "design 4" in page and "blob00" not in page  # the declared variable is shown
    rows = list(csv.reader(io.StringIO(large["csv"][1])))
    assert len(rows) == 6 and rows[0][0] == "row"
    cells = json.loads(large["json"][1])
    assert [c["row"] for c in cells] == [1, 2, 3, 4, 5] and all(c["passed"] for c in cells)
    results = json.loads(large["api"][1])["results"]
    assert [r["passed"] for r in results] == [True] * 5


def test_a_cell_reads_only_the_declared_variables_of_its_row(owner, inline):
    prompt, version = make_prompt(owner, provider="echo", model="echo-1")
    revision = testsets.testset_create(
        actor=owner,
        prompt=prompt,
        role=Role.OWNER,
        name="t",
        rows=testsets.testset_rows_parse([{"variables": {"design": "d", **UNDECLARED}}]),
    )
    evaluation = evaluation_create(
        actor=owner,
        prompt=prompt,
        role=Role.OWNER,
        revision=revision,
        versions=[version.pk],
        graders=[{"type": "json-valid"}],
    )
    cell = EvalCell.objects.get(evaluation=evaluation)
    with CaptureQueriesContext(connection) as queries:
        assert cell_execute(cell_id=cell.pk) == "graded"
    whole = [q["sql"][:300] for q in queries if WHOLE_VARIABLES.search(q["sql"] or "")]
    assert whole == []
    assert EvalCell.objects.get(pk=cell.pk).run.variables == {"design": "d"}


# --- rows stored once ---------------------------------------------------------------------------


def _stored_bytes() -> int:
    return sum(len(json.dumps(r, ensure_ascii=False).encode()) for r in _stored_rows())


def _stored_rows():
    return TestRow.objects.values("variables", "expected", "note", "graders")


def test_appends_store_the_appended_rows_only(owner, settings):
    prompt, _ = make_prompt(owner, provider="echo", model="echo-1")
    api = api_client_for(owner)
    big = [{"variables": {"design": f"{n:04d}" + "y" * 5_000}} for n in range(300)]
    created = api.post(
        f"/api/v1/prompts/{prompt.pk}/testsets/", {"name": "big", "rows": big}, format="json"
    )
    assert created.status_code == 201, created.content
    testset = created.json()["id"]
    before = _stored_bytes()
    assert before > 300 * 5_000
    for n in range(5):
        upload = SimpleUploadedFile("more.csv", f"d\n{n}z\n".encode())  # 5 bytes
        assert len(upload) == 5
        answer = api.post(f"/api/v1/testsets/{testset}/import/", {"file": upload})
        assert answer.status_code == 201, answer.content
    grown = _stored_bytes() - before
    assert grown < 5 * 100, grown  # five tiny rows, not five copies of the set
    used = testsets.testset_storage_used(user_id=owner.pk)
    assert used == sum(TestRow.objects.values_list("size", flat=True))
    latest = TestSetRevision.objects.filter(testset_id=testset).order_by("-number").first()
    rows = eval_selectors.testset_rows(revision=latest)
    assert len(rows) == 305
    assert rows[0].variables["design"].startswith("0000")
    assert [r.variables for r in rows[-2:]] == [{"d": "3z"}, {"d": "4z"}]
    # Every revision still reads as it was saved.
    first = TestSetRevision.objects.get(testset_id=testset, number=1)
    assert len(eval_selectors.testset_rows(revision=first)) == 300

    # Past the quota a save is refused, saying why, and writes nothing.
    settings.EVAL_TESTSET_STORAGE_PER_USER = used + 50
    upload = SimpleUploadedFile("more.csv", b"d\n" + b"w" * 100 + b"\n")
    refused = api.post(f"/api/v1/testsets/{testset}/import/", {"file": upload})
    assert refused.status_code == 429
    assert "storage quota" in refused.json()["detail"]
    assert refused.has_header("Retry-After")
    assert TestSetRevision.objects.filter(testset_id=testset).count() == 6
    # A revision that stores nothing new (rows it already holds) is within the quota.
    again = SimpleUploadedFile("again.csv", b"d\n4z\n")
    assert api.post(f"/api/v1/testsets/{testset}/import/", {"file": again}).status_code == 201
