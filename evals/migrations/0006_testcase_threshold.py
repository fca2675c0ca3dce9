from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("evals", "0003_testcase_graders"),
    ]

    operations = [
        migrations.AddField(
            model_name="testcase",
            name="threshold",
            field=models.FloatField(blank=True, null=True),
        ),
    ]
