"""Load the practice design documents from `data/` (used by a data migration).

Each is owned by the system account `redline` (no usable password), tied to its question and
marked `practice`; the question page of "Review a design document" lists them. Loading again
creates nothing new.
"""

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.hashers import make_password

from textstore.services import blob_put

DATA_DIR = Path(__file__).parent / "data"
SYSTEM_USERNAME = "redline"


def practice_docs_read() -> list[dict[str, Any]]:
    """The manifest, each entry with its Markdown `body` read from its file."""
    with (DATA_DIR / "practice_docs.json").open(encoding="utf-8") as handle:
        entries = json.load(handle)
    for entry in entries:
        entry["body"] = (DATA_DIR / entry["file"]).read_text(encoding="utf-8")
    return entries


def practice_docs_load(*, apps: Any = None) -> int:
    """Create the practice documents that do not exist yet; returns how many were created.

    `apps` is a migration's app registry, or None for the live models. Texts go through
    textstore's `blob_put`, like every revision's.
    """
    if apps is None:
        from django.apps import apps as global_apps

        apps = global_apps
    user_model = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    question_model = apps.get_model("questionbank", "Question")
    doc_model = apps.get_model("reviews", "DesignDoc")
    revision_model = apps.get_model("reviews", "DocRevision")
    system, _ = user_model.objects.get_or_create(
        username=SYSTEM_USERNAME, defaults={"password": make_password(None), "is_active": True}
    )
    created = 0
    for entry in practice_docs_read():
        if doc_model.objects.filter(author=system, title=entry["title"], practice=True).exists():
            continue
        doc = doc_model.objects.create(
            author=system,
            title=entry["title"],
            question=question_model.objects.filter(slug=entry["question"]).first(),
            constraints=entry["constraints"],
            practice=True,
        )
        revision_model.objects.create(
            doc=doc,
            number=1,
            body_sha=blob_put(text=entry["body"]).sha256,
            author=system,
            message="Practice document",
        )
        created += 1
    return created
