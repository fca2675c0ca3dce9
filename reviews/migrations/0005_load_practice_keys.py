from django.db import migrations


def load(apps, schema_editor):
    from reviews.seed import practice_docs_load, practice_keys_load

    practice_docs_load(apps=apps)  # the four documents added with the keys
    practice_keys_load(apps=apps)


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0004_practice"),
    ]

    operations = [migrations.RunPython(load, migrations.RunPython.noop)]
