from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def load(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    from questionbank.seed import questions_load

    questions_load(apps=apps)


class Migration(migrations.Migration):
    dependencies = [("questionbank", "0001_initial")]

    operations = [migrations.RunPython(load, migrations.RunPython.noop)]
