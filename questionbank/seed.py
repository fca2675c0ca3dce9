"""Load the question bank from `data/questions.json` (used by a data migration).

Upserts by slug, so running it again refreshes the text without creating duplicates.
"""

import json
from pathlib import Path
from typing import Any

DATA_FILE = Path(__file__).parent / "data" / "questions.json"


def questions_read() -> list[dict[str, Any]]:
    with DATA_FILE.open(encoding="utf-8") as handle:
        return json.load(handle)


def questions_load(*, apps: Any = None) -> int:
    """Create or refresh every question. `apps` is a migration's app registry, or None."""
    if apps is None:
        from django.apps import apps as global_apps

        apps = global_apps
    question_model = apps.get_model("questionbank", "Question")
    children = {
        "depth_areas": (apps.get_model("questionbank", "DepthArea"), ("title", "detail")),
        "follow_ups": (apps.get_model("questionbank", "FollowUp"), ("probe", "look_for")),
        "numbers": (
            apps.get_model("questionbank", "WorkedNumber"),
            ("label", "inputs", "calculation", "result", "takeaway"),
        ),
    }
    items = questions_read()
    for position, item in enumerate(items):
        question, _ = question_model.objects.update_or_create(
            slug=item["slug"],
            defaults={
                "title": item["title"],
                "kind": item["kind"],
                "duration_minutes": item["duration_minutes"],
                "summary": item["summary"],
                "round": item["round"],
                "prompt": item["prompt"],
                "position": position,
            },
        )
        for key, (model, fields) in children.items():
            model.objects.filter(question=question).delete()
            model.objects.bulk_create(
                model(question=question, position=index, **{f: row.get(f, "") for f in fields})
                for index, row in enumerate(item[key])
            )
    return len(items)
