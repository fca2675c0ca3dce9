"""Test-set rows stored once (issue #31): each row's content moves to `TestRow`, named by the
SHA-256 of its canonical JSON within its test set, and `TestCase` keeps the revision, the
position and a pointer to the content."""

import hashlib
import json
from typing import Any

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def _canonical(variables: Any, expected: str, note: str, graders: Any) -> bytes:
    # The same canonical form as evals.services.testsets.row_canonical (copied: a migration must not
    # change when the app's code does).
    return json.dumps(
        {"expected": expected, "graders": graders, "note": note, "variables": variables},
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    ).encode("utf-8")


def rows_share(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    TestCase = apps.get_model("evals", "TestCase")
    TestRow = apps.get_model("evals", "TestRow")
    known: dict[tuple[int, str], int] = {}
    cases = TestCase.objects.select_related("revision").order_by("pk")
    for case in cases.iterator(chunk_size=200):
        body = _canonical(case.variables, case.expected, case.note, case.graders)
        sha = hashlib.sha256(body).hexdigest()
        testset_id = case.revision.testset_id
        row_id = known.get((testset_id, sha))
        if row_id is None:
            row = TestRow.objects.create(
                testset_id=testset_id,
                sha256=sha,
                variables=case.variables,
                expected=case.expected,
                note=case.note,
                graders=case.graders,
                size=len(body),
                created_by_id=case.revision.created_by_id,
            )
            row_id = known[(testset_id, sha)] = row.pk
        TestCase.objects.filter(pk=case.pk).update(content_id=row_id)


class Migration(migrations.Migration):
    dependencies = [
        ("evals", "0003_testcase_graders"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="TestRow",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("sha256", models.CharField(max_length=64)),
                ("variables", models.JSONField(default=dict)),
                ("expected", models.TextField(blank=True)),
                ("note", models.CharField(blank=True, max_length=1000)),
                ("graders", models.JSONField(blank=True, default=list)),
                ("size", models.PositiveIntegerField()),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "created_by",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "testset",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="evals.testset",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(fields=["created_by"], name="evals_testr_created_ebaacb_idx")
                ],
                "constraints": [
                    models.UniqueConstraint(fields=("testset", "sha256"), name="testrow_once")
                ],
            },
        ),
        migrations.AddField(
            model_name="testcase",
            name="content",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="evals.testrow",
            ),
        ),
        migrations.RunPython(rows_share, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="testcase",
            name="content",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="+", to="evals.testrow"
            ),
        ),
        migrations.RemoveField(model_name="testcase", name="variables"),
        migrations.RemoveField(model_name="testcase", name="expected"),
        migrations.RemoveField(model_name="testcase", name="note"),
        migrations.RemoveField(model_name="testcase", name="graders"),
    ]
