from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("evals", "0006_testrow_threshold"),
    ]

    operations = [
        migrations.AddField(
            model_name="evalcell",
            name="grade_attempts",
            field=models.PositiveSmallIntegerField(default=0),
        ),
    ]
