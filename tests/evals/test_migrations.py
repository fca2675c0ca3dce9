"""evals 0004 moves each row's content to TestRow, once per distinct row of a test set, and
leaves every revision reading as it did."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("evals", "0003_testcase_graders")]
AFTER = [("evals", "0004_testrow")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def test_rows_kept_by_later_revisions_are_stored_once():
    try:
        old = migrate(BEFORE)
        user = old.get_model("auth", "User").objects.create(username="old")
        prompt = old.get_model("playground", "Prompt").objects.create(owner=user, title="p")
        testset = old.get_model("evals", "TestSet").objects.create(
            prompt=prompt, name="t", created_by=user
        )
        revision_model = old.get_model("evals", "TestSetRevision")
        case_model = old.get_model("evals", "TestCase")
        rows = [{"design": "a cache"}, {"design": "a queue"}]
        for number, count in ((1, 1), (2, 2)):
            revision = revision_model.objects.create(
                testset=testset, number=number, row_count=count, created_by=user
            )
            for position, variables in enumerate(rows[:count], start=1):
                case_model.objects.create(
                    revision=revision, position=position, variables=variables, expected="x"
                )

        new = migrate(AFTER)
        stored = new.get_model("evals", "TestRow").objects
        assert stored.count() == 2  # "a cache" once, though both revisions have it
        cases = new.get_model("evals", "TestCase").objects.order_by("revision__number", "position")
        assert [(c.revision.number, c.content.variables, c.content.expected) for c in cases] == [
            (1, {"design": "a cache"}, "x"),
            (2, {"design": "a cache"}, "x"),
            (2, {"design": "a queue"}, "x"),
        ]
        assert all(row.size > 0 and len(row.sha256) == 64 for row in stored.all())
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
