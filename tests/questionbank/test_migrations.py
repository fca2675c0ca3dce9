"""The data migration brings an existing database's question bank up to the marked, rewritten text."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("questionbank", "0002_load_questions")]
AFTER = [("questionbank", "0004_reload_questions_with_sources")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def test_existing_database_gets_sources_and_loses_invented_claims():
    old_apps = migrate(BEFORE)
    question_model = old_apps.get_model("questionbank", "Question")
    # A database loaded before the rewrite still says what the pool never did.
    question_model.objects.filter(slug="review-design-doc").update(
        round="The candidate receives a design document of four to six pages during the first ten "
        "minutes.",
        duration_minutes=45,
    )

    new_apps = migrate(AFTER)
    question = new_apps.get_model("questionbank", "Question").objects.get(slug="review-design-doc")
    assert "four to six pages" not in question.round
    assert question.duration_minutes == 60
    numbers = new_apps.get_model("questionbank", "WorkedNumber").objects
    assert set(numbers.values_list("source", flat=True)) == {"pool", "practice"}
    assert numbers.filter(source="pool", result="8 GPUs").count() == 1
    areas = new_apps.get_model("questionbank", "DepthArea").objects
    assert areas.filter(source="pool").count() > 30
    assert areas.exclude(practice_note="").count() > 30
