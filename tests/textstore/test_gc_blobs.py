"""`textstore_gc` collects stored texts nothing references (issue #21): a save that failed
after its uploaded text was stored, or was killed mid-way, leaves a blob (and, for a large
text, its object) that no version uses; gc finds it after the grace period and deletes it,
and `textstore_verify` counts it. Referenced blobs and every blob they build on (delta bases,
snapshot anchors) are never deleted. Runs on SQLite and PostgreSQL, local disk and S3."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from playground.exceptions import ContentInvalid
from playground.models import PromptVersion, Upload
from playground.services import prompt_create, prompt_version_create
from reviews.models import DocRevision
from tests.factories import api_client_for, make_user
from tests.playground.factories import content
from tests.playground.test_uploads import big_text, create, send
from textstore import objects
from textstore.models import Blob
from textstore.references import blob_references_providers
from textstore.selectors import blob_orphans, blob_read
from textstore.services import blob_put

pytestmark = pytest.mark.django_db

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def small_inline(settings):
    settings.TEXTSTORE_INLINE_MAX = 2 * 1024  # long texts below go to object storage


def _gc(*args: str) -> str:
    out = StringIO()
    call_command("textstore_gc", *args, stdout=out)
    return out.getvalue()


def _upload(api, text: str) -> str:
    data = text.encode()
    ticket = create(api, data)
    assert send(ticket, data) == 200
    return ticket["id"]


def _blob_objects() -> set[str]:
    return {o.key for o in objects.object_list(prefix="blobs")}


def test_apps_register_their_references():
    assert blob_references_providers() == ["playground", "reviews"]


def test_gc_removes_the_text_of_a_save_that_failed_after_naming_an_upload(small_inline):
    owner = make_user()
    api = api_client_for(owner)
    text = big_text(200, tag="failed save")
    upload_id = _upload(api, text)
    before = set(Blob.objects.values_list("sha256", flat=True))
    # the save stores the uploaded text before its transaction, which then refuses the title
    with pytest.raises(ContentInvalid) as refused:
        prompt_create(actor=owner, title=" ", content=content(system={"upload": upload_id}))
    assert refused.value.field == "title"
    left = set(Blob.objects.values_list("sha256", flat=True)) - before
    assert len(left) == 1
    (sha,) = left
    key = Blob.objects.get(sha256=sha).object_key
    assert key in _blob_objects()
    # within the grace period it is a save that may still be in flight: kept
    assert "0 orphan blobs" in _gc("--delete")
    assert Blob.objects.filter(sha256=sha).exists()
    # the failed save left the upload usable (issue #31), so its text is still referenced
    assert Upload.objects.get(pk=upload_id).used_at is None
    Blob.objects.filter(sha256=sha).update(created_at=timezone.now() - timedelta(days=2))
    assert "0 orphan blobs" in _gc("--delete")
    # once the upload expired unused: verify counts it, the dry run lists it, --delete removes
    # row and object
    Upload.objects.filter(pk=upload_id).update(expires_at=timezone.now() - timedelta(hours=1))
    out = StringIO()
    call_command("textstore_verify", stdout=out)
    assert f"UNREFERENCED {sha}" in out.getvalue()
    assert "1 unreferenced blobs" in out.getvalue()
    assert f"orphan blob {sha}" in _gc("--grace", "0")
    assert Blob.objects.filter(sha256=sha).exists()
    assert "deleted 1 orphan blobs" in _gc("--grace", "0", "--delete")
    assert not Blob.objects.filter(sha256=sha).exists()
    assert key not in _blob_objects()
    # saving the same text again stores it again, whole and readable
    upload_id = _upload(api, text)
    saved = api.post(
        "/api/v1/prompts/",
        {"title": "T", "content": content(system={"upload": upload_id})},
        format="json",
    )
    assert saved.status_code == 201
    assert blob_read(sha=sha) == text


def test_referenced_blobs_and_what_they_build_on_are_never_deleted(small_inline):
    owner = make_user()
    base_text = big_text(300, tag="base")
    # an unreferenced chain: a snapshot with two deltas on it, and a version on the middle one
    chain = [blob_put(text=base_text)]
    chain.append(blob_put(text=base_text + "one\n", base=chain[0]))
    chain.append(blob_put(text=base_text + "one\ntwo\n", base=chain[1]))
    assert chain[1].base_id == chain[0].sha256
    assert chain[2].base_id == chain[1].sha256
    prompt, root = prompt_create(actor=owner, title="T", content=content(system="short"))
    version = prompt_version_create(
        actor=owner, prompt=prompt, parent=root, content=content(system=base_text + "one\n")
    ).version
    assert version.system_sha == chain[1].sha256
    # a review revision's body is referenced too
    doc = api_client_for(owner).post(
        "/api/v1/docs/", {"title": "D", "body": "The body."}, format="json"
    )
    assert doc.status_code == 201
    body_sha = DocRevision.objects.get(doc_id=doc.json()["id"]).body_sha
    # a live (unused, unexpired) upload names a text too
    live = blob_put(text="the text of an upload in flight")
    Upload.objects.create(
        owner=owner,
        size=10,
        sha256=live.sha256,
        object_key="uploads/live",
        expires_at=timezone.now() + timedelta(hours=1),
    )
    # and a text nobody uses, stored in object storage
    lonely = blob_put(text=big_text(250, tag="lonely"))
    Blob.objects.update(created_at=timezone.now() - timedelta(days=2))

    orphans = {o.sha256 for o in blob_orphans(older_than=timezone.now())}
    assert orphans == {chain[2].sha256, lonely.sha256}
    _gc("--grace", "0", "--delete")
    kept = set(Blob.objects.values_list("sha256", flat=True))
    assert {chain[0].sha256, chain[1].sha256, body_sha, live.sha256} <= kept
    assert chain[2].sha256 not in kept
    assert lonely.sha256 not in kept
    assert lonely.object_key not in _blob_objects()
    assert chain[0].object_key in _blob_objects()
    # every referenced text still rebuilds, from storage
    for sha in [version.system_sha, *(m["sha"] for m in version.messages), body_sha, live.sha256]:
        assert blob_read(sha=sha)
    for row in PromptVersion.objects.all():
        assert Blob.objects.filter(sha256=row.system_sha).exists()
    # nothing left to collect
    assert "deleted 0 orphan blobs" in _gc("--grace", "0", "--delete")


def test_a_blob_something_starts_using_is_kept_at_delete_time(small_inline):
    """The references are read again inside the deleting transaction."""
    from textstore.services import blob_orphans_delete

    owner = make_user()
    text = big_text(100, tag="reused")
    blob = blob_put(text=text)
    Blob.objects.filter(pk=blob.pk).update(created_at=timezone.now() - timedelta(days=2))
    found = blob_orphans(older_than=timezone.now())
    assert [o.sha256 for o in found] == [blob.sha256]
    prompt_create(actor=owner, title="T", content=content(system=text))  # uses it meanwhile
    assert blob_orphans_delete(orphans=found).rows == 0
    assert blob_read(sha=blob.sha256) == text


SAVE_THEN_HANG = """
import os, sys, time
import django
django.setup()
from django.test import Client
from django.test.utils import setup_test_environment
import playground.services as services

setup_test_environment()

def hang(*args, **kwargs):
    print("STORED", flush=True)  # the uploaded text is stored; the version not yet
    time.sleep(600)

services._canonical = hang  # in the save's transaction, after content_prepare stored the text
client = Client(HTTP_AUTHORIZATION="Token " + sys.argv[1])
client.post("/api/v1/prompts/", sys.argv[2], content_type="application/json")
"""


@pytest.mark.django_db(transaction=True)
def test_gc_removes_the_text_of_a_save_killed_mid_way(small_inline, settings, tmp_path):
    """A real save in another process, killed with SIGKILL after storing the uploaded text and
    before its version's transaction. The subprocess needs this test's database: a file or a
    server (PostgreSQL); SQLite's in-memory test database cannot be shared, so there the
    state the kill leaves is made in-process instead (the text stored, no version)."""
    owner = make_user()
    api = api_client_for(owner)
    text = big_text(200, tag="killed save")
    upload_id = _upload(api, text)
    body = json.dumps({"title": "T", "content": content(system={"upload": upload_id})})
    before = set(Blob.objects.values_list("sha256", flat=True))
    db = connection.settings_dict
    if connection.vendor == "postgresql":
        from accounts.services import api_token_create

        _, key = api_token_create(actor=owner)
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": (
                f"postgres://{db['USER']}:{db['PASSWORD'] or ''}@{db['HOST'] or '127.0.0.1'}:"
                f"{db['PORT'] or 5432}/{db['NAME']}"
            ),
            "TEXTSTORE_INLINE_MAX": str(settings.TEXTSTORE_INLINE_MAX),
            "S3_BUCKET": settings.S3_BUCKET,
            "S3_ENDPOINT_URL": settings.S3_ENDPOINT_URL,
            "S3_ACCESS_KEY_ID": settings.S3_ACCESS_KEY_ID,
            "S3_SECRET_ACCESS_KEY": settings.S3_SECRET_ACCESS_KEY,
            "OBJECT_STORE_DIR": str(settings.OBJECT_STORE_DIR),
            "CELERY_BROKER_URL": "",
        }
        proc = subprocess.Popen(  # noqa: S603 - our own interpreter and script
            [sys.executable, "-c", SAVE_THEN_HANG, key, body],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "STORED"
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
    else:
        from playground.text.uploads import content_prepare

        content_prepare(actor=owner, parent=None, content=json.loads(body)["content"])
    left = set(Blob.objects.values_list("sha256", flat=True)) - before
    assert len(left) == 1
    assert not PromptVersion.objects.exists()
    (sha,) = left
    key = Blob.objects.get(sha256=sha).object_key
    Blob.objects.filter(sha256=sha).update(created_at=timezone.now() - timedelta(hours=25))
    assert django_settings.TEXTSTORE_GC_GRACE == 24 * 3600
    # the killed save left its upload usable (issue #31): the text goes once the upload expired
    assert "deleted 0 orphan blobs" in _gc("--delete")
    Upload.objects.filter(pk=upload_id).update(expires_at=timezone.now() - timedelta(hours=1))
    assert "deleted 1 orphan blobs" in _gc("--delete")
    assert not Blob.objects.filter(sha256=sha).exists()
    assert key not in _blob_objects()
