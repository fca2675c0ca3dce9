from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("evals", "0005_evalcell_sent_at"),
    ]

    operations = [
        migrations.AddField(
            model_name="testrow",
            name="threshold",
            field=models.FloatField(blank=True, null=True),
        ),
    ]
