from django.db import migrations


def load(apps, schema_editor):
    from questionbank.seed import questions_load

    questions_load(apps=apps)


class Migration(migrations.Migration):
    dependencies = [("questionbank", "0001_initial")]

    operations = [migrations.RunPython(load, migrations.RunPython.noop)]
