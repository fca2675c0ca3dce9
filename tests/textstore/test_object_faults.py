"""Object storage faults (issue #10 §4): an unreachable or silent S3 is a 503 with Retry-After,
never an HTML 500 or a held worker, and nothing half-written; `textstore_gc` removes objects a
killed save left behind. Against a moto S3 server over HTTP."""

import io
import socket
import threading
import time
from collections.abc import Iterator

import boto3
import pytest
from django.core.management import call_command
from django.test import Client

from playground.models import Prompt, PromptVersion
from playground.services import prompt_create
from tests.conftest import free_port
from tests.factories import api_client_for, make_user
from tests.playground.factories import content
from textstore.cache import text_cache
from textstore.models import Blob

pytestmark = pytest.mark.django_db

BIG = "A large system prompt line.\n" * 400  # ~11 KB: over the inline limit set below


@pytest.fixture
def small_inline(settings):
    settings.TEXTSTORE_INLINE_MAX = 1024
    settings.S3_MAX_ATTEMPTS = 1
    settings.S3_CONNECT_TIMEOUT = 1
    settings.S3_READ_TIMEOUT = 1
    text_cache.clear()
    yield
    text_cache.clear()


@pytest.fixture
def silent_s3() -> Iterator[str]:
    """A TCP server that accepts connections and never answers (a hung S3)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def _counts() -> tuple[int, int, int]:
    return Prompt.objects.count(), PromptVersion.objects.count(), Blob.objects.count()


@pytest.mark.parametrize("fault", ["unreachable", "silent"])
def test_s3_down_is_a_503_json_with_retry_after_and_writes_nothing(
    s3_storage, small_inline, settings, silent_s3, fault
):
    owner = make_user("owner")
    _, root = prompt_create(actor=owner, title="big", content=content(system=BIG))
    api = api_client_for(owner)
    page = Client()
    page.force_login(owner)
    text_cache.clear()
    settings.S3_ENDPOINT_URL = (
        f"http://127.0.0.1:{free_port()}" if fault == "unreachable" else silent_s3
    )
    settings.S3_READ_TIMEOUT = 0.25  # each call to the silent store waits this out
    before = _counts()
    started = time.monotonic()
    save = api.post(
        f"/api/v1/prompts/{root.prompt_id}/versions/",
        {"parent": root.pk, "content": content(system=BIG + "one more line\n" * 300)},
        format="json",
    )
    read = api.get(f"/api/v1/versions/{root.pk}/")
    html = page.get(f"/playground/p/{root.prompt_id}/")
    elapsed = time.monotonic() - started
    for response in (save, read):
        assert response.status_code == 503, response.content[:200]
        assert response["Content-Type"].startswith("application/json")
        assert "unavailable" in response.json()["detail"]
        assert int(response["Retry-After"]) > 0
    assert html.status_code == 503
    assert html["Content-Type"].startswith("text/html")
    assert b"Temporarily unavailable" in html.content
    assert int(html["Retry-After"]) > 0
    assert _counts() == before
    # Bounded by the configured timeouts (one attempt), not boto3's 60 s × retries.
    assert elapsed < 20


def _orphan(s3_storage, key: str) -> None:
    boto3.client(
        "s3",
        endpoint_url=s3_storage["endpoint_url"],
        aws_access_key_id=s3_storage["access_key"],
        aws_secret_access_key=s3_storage["secret_key"],
        region_name="us-east-1",
    ).put_object(Bucket=s3_storage["bucket"], Key=key, Body=b"left behind by a killed save")


def _keys(s3_storage) -> set[str]:
    client = boto3.client(
        "s3",
        endpoint_url=s3_storage["endpoint_url"],
        aws_access_key_id=s3_storage["access_key"],
        aws_secret_access_key=s3_storage["secret_key"],
        region_name="us-east-1",
    )
    listed = client.list_objects_v2(Bucket=s3_storage["bucket"])
    return {item["Key"] for item in listed.get("Contents", [])}


def _referenced_big_blob() -> Blob:
    """BIG stored as a version's system prompt: referenced, so gc keeps it."""
    _, root = prompt_create(actor=make_user(), title="big", content=content(system=BIG))
    return Blob.objects.get(sha256=root.system_sha)


def test_textstore_gc_finds_and_deletes_orphans_only(s3_storage, small_inline):
    kept = _referenced_big_blob()
    assert kept.object_key
    orphans = [f"blobs/{c * 64}" for c in "ab"]
    for key in orphans:
        _orphan(s3_storage, key)

    out = io.StringIO()
    call_command("textstore_gc", "--grace", "0", stdout=out)
    assert "2 orphan objects" in out.getvalue()
    assert "dry run" in out.getvalue()
    assert _keys(s3_storage) == {kept.object_key, *orphans}

    # Inside the grace period nothing counts (a save may be between object and row).
    out = io.StringIO()
    call_command("textstore_gc", "--grace", "3600", "--delete", stdout=out)
    assert "0 orphan objects" in out.getvalue()
    assert _keys(s3_storage) == {kept.object_key, *orphans}

    out = io.StringIO()
    verify = io.StringIO()
    call_command("textstore_verify", stdout=verify)
    assert verify.getvalue().count("ORPHAN") == 2
    assert "2 orphan objects" in verify.getvalue()
    call_command("textstore_gc", "--grace", "0", "--delete", stdout=out)
    assert "deleted 2" in out.getvalue()
    assert _keys(s3_storage) == {kept.object_key}
    text_cache.clear()
    from textstore.selectors import blob_read

    assert blob_read(sha=kept.sha256) == BIG


def test_textstore_gc_on_the_local_store(local_storage, small_inline):
    kept = _referenced_big_blob()
    orphan = local_storage / "blobs" / ("c" * 64)
    orphan.write_bytes(b"orphan")
    out = io.StringIO()
    call_command("textstore_gc", "--grace", "0", "--delete", stdout=out)
    assert "1 orphan objects" in out.getvalue()
    assert not orphan.exists()
    assert (local_storage / kept.object_key).exists()
