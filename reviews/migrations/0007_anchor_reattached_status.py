"""A hand re-attach gets its own anchor status, `reattached` (issue #36); rows stored before as
`moved` with `manual` set are rewritten to it (and back on reverse)."""

from django.apps.registry import Apps
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor


def manual_to_reattached(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    anchors = apps.get_model("reviews", "AnnotationAnchor")
    anchors.objects.filter(manual=True).update(status="reattached")


def reattached_to_moved(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    anchors = apps.get_model("reviews", "AnnotationAnchor")
    anchors.objects.filter(status="reattached").update(status="moved")


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0006_one_draft_per_reviewer"),
    ]

    operations = [
        migrations.AlterField(
            model_name="annotationanchor",
            name="status",
            field=models.CharField(
                choices=[
                    ("exact", "Exact"),
                    ("moved", "Moved"),
                    ("fuzzy", "Fuzzy"),
                    ("orphaned", "Orphaned"),
                    ("reattached", "Re-attached by hand"),
                ],
                max_length=10,
            ),
        ),
        migrations.RunPython(manual_to_reattached, reattached_to_moved),
    ]
