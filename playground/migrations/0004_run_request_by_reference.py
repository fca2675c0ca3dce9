"""Runs keep a reference to their version's stored texts, not a copy of the request.

A run's request was a copy of its version's texts with the variables filled in (megabytes per
run for a long prompt). Everything it held is still on the run or its version: the version is
immutable, and the run keeps its provider, model and variables, so the request is rebuilt with
the same builder (`playground.runs.selectors.run_request`) and `GET /api/v1/runs/{id}/request/`
serves it. The one field not derivable, the URL the call went to, is deployment configuration
(the operator's base URL), not the run's data. So the column is dropped with no data migration;
rolling back restores an empty request for old runs.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("playground", "0003_upload"),
    ]

    operations = [
        migrations.RemoveField(
            model_name="run",
            name="request",
            field=models.JSONField(
                default=dict,
                help_text="The call as sent: method, url, headers (no keys), body.",
            ),
        ),
    ]
