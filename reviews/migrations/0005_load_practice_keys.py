from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def load(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    from reviews.seed import practice_docs_load, practice_keys_load

    practice_docs_load(apps=apps)  # the four documents added with the keys
    practice_keys_load(apps=apps)


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0004_practice"),
    ]

    operations = [migrations.RunPython(load, migrations.RunPython.noop)]
