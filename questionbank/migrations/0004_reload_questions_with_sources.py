from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def reload_questions(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    """Bring existing databases up to the rewritten bank: every statement marked as reported by
    the pool or a practice suggestion, and the claims the pool never makes removed."""
    from questionbank.seed import questions_load

    questions_load(apps=apps)


class Migration(migrations.Migration):
    dependencies = [("questionbank", "0003_source_marks")]

    operations = [migrations.RunPython(reload_questions, migrations.RunPython.noop)]
