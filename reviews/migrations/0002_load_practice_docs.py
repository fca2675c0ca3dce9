from django.conf import settings
from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def load(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    from reviews.seed import practice_docs_load

    practice_docs_load(apps=apps)


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0001_initial"),
        ("questionbank", "0002_load_questions"),
        ("textstore", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.RunPython(load, migrations.RunPython.noop)]
