"""Load the practice design documents and their answer keys from `data/` (data migrations).

Each document is owned by the system account `redline` (no usable password), tied to its
question and marked `practice`; the question page of "Review a design document" lists them.
Loading again creates nothing new. Each document's answer key sits beside it
(`<name>.key.json`) and is loaded separately (`practice_keys_load`), replacing the stored key,
so a corrected key ships as a new data migration.
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
        entries: list[dict[str, Any]] = json.load(handle)
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


def practice_key_read(entry: dict[str, Any]) -> dict[str, Any]:
    """The answer key of one manifest entry: `{worst, minutes, items: [...]}`."""
    with (DATA_DIR / entry["key"]).open(encoding="utf-8") as handle:
        key: dict[str, Any] = json.load(handle)
    return key


def practice_keys_load(*, apps: Any = None) -> int:
    """(Re)load the answer key of every practice document that has one; returns how many.

    A key whose passages are not in the document, or that breaks the key rules
    (`reviews.practice.scoring.key_check`), stops the load with an error rather than storing
    a key that would score wrongly.
    """
    from textstore.selectors import blob_read

    from .practice.keys import key_from_data
    from .practice.scoring import key_check

    if apps is None:
        from django.apps import apps as global_apps

        apps = global_apps
    doc_model = apps.get_model("reviews", "DesignDoc")
    revision_model = apps.get_model("reviews", "DocRevision")
    key_model = apps.get_model("reviews", "AnswerKey")
    item_model = apps.get_model("reviews", "PlantedItem")
    loaded = 0
    for entry in practice_docs_read():
        if not entry.get("key"):
            continue
        doc = doc_model.objects.filter(
            author__username=SYSTEM_USERNAME, title=entry["title"], practice=True
        ).first()
        if doc is None:
            continue
        latest = revision_model.objects.filter(doc=doc).order_by("-number").first()
        data = practice_key_read(entry)
        problems = key_check(key_from_data(data, text=blob_read(sha=latest.body_sha)))
        if problems:
            raise ValueError(f"answer key of {entry['title']!r}: {'; '.join(problems)}")
        key_model.objects.filter(doc=doc).delete()
        key = key_model.objects.create(doc=doc, worst=data["worst"], minutes=data["minutes"])
        item_model.objects.bulk_create(
            item_model(
                key=key,
                slug=item["id"],
                position=index,
                kind=item["kind"],
                area=item["area"],
                severity=item["severity"],
                quote=item["quote"],
                explanation=item["explanation"],
                good_comment=item["good_comment"],
            )
            for index, item in enumerate(data["items"])
        )
        loaded += 1
    return loaded
