"""Load the question bank from `data/questions.json` (used by a data migration).

Upserts by slug, so running it again refreshes the text without creating duplicates.
"""

import json
from pathlib import Path
from typing import Any

DATA_FILE = Path(__file__).parent / "data" / "questions.json"


def questions_read() -> list[dict[str, Any]]:
    with DATA_FILE.open(encoding="utf-8") as handle:
        questions: list[dict[str, Any]] = json.load(handle)  # the repository's own data file
    return questions


def questions_load(*, apps: Any = None) -> int:
    """Create or refresh every question. `apps` is a migration's app registry, or None."""
    if apps is None:
        from django.apps import apps as global_apps

        apps = global_apps
    question_model = apps.get_model("questionbank", "Question")
    children = {
        "depth_areas": (
            apps.get_model("questionbank", "DepthArea"),
            ("title", "detail", "source", "practice_note"),
        ),
        "follow_ups": (
            apps.get_model("questionbank", "FollowUp"),
            ("probe", "look_for", "source", "look_for_source"),
        ),
        "numbers": (
            apps.get_model("questionbank", "WorkedNumber"),
            ("label", "inputs", "calculation", "result", "takeaway", "source"),
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
        for key, (model, wanted) in children.items():
            # An older migration's model may predate some fields (e.g. `source`): skip those.
            present = {field.name for field in model._meta.get_fields()}
            fields = [name for name in wanted if name in present]
            model.objects.filter(question=question).delete()
            model.objects.bulk_create(
                model(
                    question=question,
                    position=index,
                    **{f: row[f] for f in fields if f in row},
                )
                for index, row in enumerate(item[key])
            )
    return len(items)
