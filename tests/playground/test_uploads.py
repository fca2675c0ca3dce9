"""Uploads of large texts (issue #14): the API, the signed PUT endpoint, versions naming
uploads or the parent's text, and every way an upload can be refused.

Each test runs against the embedded default (local disk, Redline's own PUT endpoint) and a
moto S3 server over HTTP (presigned PUT URLs). moto checks neither the signed length nor the
checksum, so the server's own checks are what is tested.
"""

import hashlib
import io
import json
import urllib.request
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.db import transaction
from django.test import Client, TestCase
from django.utils import timezone

from common.limits import MESSAGE_MAX_CHARS
from config.security import upload_connect_origins
from playground.exceptions import ContentInvalid
from playground.models import PromptVersion, Upload
from playground.services import prompt_version_create
from playground.tasks import uploads_expire
from playground.text.uploads import UPLOAD_PREFIX, content_prepare, upload_receive
from tests.factories import api_client_for, make_user
from tests.playground.factories import content
from textstore import ingest, objects
from textstore.models import Blob
from textstore.selectors import blob_read

pytestmark = pytest.mark.django_db


@pytest.fixture(params=["local", "s3"])
def store(request, settings, monkeypatch):
    request.getfixturevalue("s3_storage" if request.param == "s3" else "local_storage")
    # Small bounds, so a few hundred KB take the streaming paths a 50 MB text takes.
    settings.TEXTSTORE_INLINE_MAX = 8 * 1024
    settings.TEXTSTORE_CHUNK_CHARS = 16_000
    monkeypatch.setattr(ingest, "WINDOW_BYTES", 32 * 1024)
    monkeypatch.setattr(ingest, "IN_MEMORY_MAX_BYTES", 16 * 1024)
    return request.param


@pytest.fixture
def owner():
    return make_user("owner")


@pytest.fixture
def api(owner):
    return api_client_for(owner)


def big_text(lines: int = 6_000, tag: str = "") -> str:
    return "".join(f"line {i} of a long prompt, ünïcode 😀 {tag}\n" for i in range(lines))


def create(api, data: bytes, *, size: int | None = None, sha: str | None = None) -> dict:
    response = api.post(
        "/api/v1/uploads/",
        {
            "size": len(data) if size is None else size,
            "sha256": sha or hashlib.sha256(data).hexdigest(),
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    return response.json()


def send(ticket: dict, data: bytes) -> int:
    """PUT the bytes where the ticket says, as a browser would (no credentials of ours)."""
    url = ticket["url"]
    parts = urlsplit(url)
    if parts.hostname == "testserver":
        response = Client().generic(
            "PUT", parts.path, data, content_type=ticket["headers"]["Content-Type"]
        )
        return response.status_code
    request = urllib.request.Request(url, data=data, method=ticket["method"])
    for name, value in ticket["headers"].items():
        request.add_header(name, value)
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 (test server)
        return response.status


def upload(api, text: str) -> str:
    data = text.encode()
    ticket = create(api, data)
    assert send(ticket, data) == 200
    return ticket["id"]


def new_prompt(api, **changes) -> int:
    # The test's transaction never commits: run the save's on-commit work (deleting the
    # objects of the uploads it used) as its commit would.
    with TestCase.captureOnCommitCallbacks(execute=True):
        response = api.post(
            "/api/v1/prompts/",
            {"title": "Large", "content": content(**changes)},
            format="json",
        )
    assert response.status_code == 201, response.json()
    return response.json()["root_version"]


def save(api, parent: int, **changes):
    version = PromptVersion.objects.get(pk=parent)
    with TestCase.captureOnCommitCallbacks(execute=True):
        return api.post(
            f"/api/v1/prompts/{version.prompt_id}/versions/",
            {"parent": parent, "content": content(**changes)},
            format="json",
        )


def upload_objects() -> list[str]:
    return [o.key for o in objects.object_list(prefix=UPLOAD_PREFIX)]


def test_create_upload_ticket(store, api):
    ticket = create(api, b"hello")
    assert set(ticket) == {"id", "url", "method", "headers", "expires_in"}
    assert ticket["method"] == "PUT"
    upload_row = Upload.objects.get(pk=ticket["id"])
    assert upload_row.size == 5 and upload_row.used_at is None
    if store == "s3":
        assert "X-Amz-Signature" in ticket["url"]
        assert ticket["headers"]["Content-Length"] == "5"
        assert "x-amz-checksum-sha256" in ticket["headers"]
    else:
        assert ticket["url"].startswith("http://testserver/api/v1/uploads/put/")


def test_upload_and_save_a_version(store, api):
    root = new_prompt(api)
    text = big_text()
    response = save(
        api, root, messages=[{"role": "user", "content": {"upload": upload(api, text)}}]
    )
    assert response.status_code == 201, response.json()
    version = PromptVersion.objects.get(pk=response.json()["id"])
    assert blob_read(sha=version.messages[0]["sha"]) == text
    # Longer than PLAYGROUND_JSON_TEXT_HEAD_CHARS: a head by default, whole with ?full=1.
    head = api.get(f"/api/v1/versions/{version.pk}/").json()["content"]["messages"][0]
    assert head["content"]["total"] == len(text)
    assert text.startswith(head["content"]["text"])
    full = api.get(f"/api/v1/versions/{version.pk}/?full=1")
    assert json.loads(b"".join(full.streaming_content))["content"]["messages"][0]["content"] == text
    # The upload is used and its object gone.
    assert Upload.objects.get().used_at is not None
    assert upload_objects() == []
    # The content hash is the one the same content sent inline gets: saving it inline under
    # the same parent finds the twin.
    twin = save(api, root, messages=[{"role": "user", "content": text}])
    assert twin.status_code == 200 and twin.json()["id"] == version.pk


def test_one_line_edit_is_stored_as_a_small_delta(store, api):
    text = big_text()
    root = new_prompt(api, system={"upload": upload(api, text)})
    edited = text.replace("line 3000 of", "line three thousand, edited, of")
    response = save(api, root, system={"upload": upload(api, edited)})
    assert response.status_code == 201, response.json()
    child = PromptVersion.objects.get(pk=response.json()["id"])
    blob = Blob.objects.get(pk=child.system_sha)
    assert blob.kind == Blob.Kind.DELTA
    assert blob.base_id == PromptVersion.objects.get(pk=root).system_sha
    assert blob.stored_size < 100
    assert blob_read(sha=child.system_sha) == edited


def test_same_as_parent_keeps_the_text_without_sending_it(store, api):
    text = big_text()
    root = new_prompt(api, system={"upload": upload(api, text)})
    response = save(
        api,
        root,
        system={"same_as": "parent"},
        messages=[{"role": "user", "content": "a new question"}],
    )
    assert response.status_code == 201, response.json()
    child = PromptVersion.objects.get(pk=response.json()["id"])
    assert child.system_sha == PromptVersion.objects.get(pk=root).system_sha
    # Everything the same as the parent: nothing is saved.
    unchanged = save(
        api,
        child.pk,
        system={"same_as": "parent"},
        messages=[{"role": "user", "content": {"same_as": "parent"}}],
    )
    assert unchanged.status_code == 200 and unchanged.json()["unchanged"] is True


@pytest.mark.parametrize(
    "ref",
    [{"same_as": "grandparent"}, {"same_as": "parent", "x": 1}, {"upload": 5}, {}, ["a"]],
    ids=["unknown-target", "extra-key", "non-string-id", "empty", "list"],
)
def test_malformed_references(store, api, ref):
    root = new_prompt(api)
    response = save(api, root, system=ref)
    assert response.status_code == 400
    assert "system" in response.json()["detail"]
    assert PromptVersion.objects.count() == 1


def test_same_as_parent_for_a_message_the_parent_lacks(store, api):
    root = new_prompt(api)
    response = save(
        api,
        root,
        messages=[
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": {"same_as": "parent"}},
        ],
    )
    assert response.status_code == 400
    assert response.json()["detail"].startswith("messages.1.content:")


def put_object_directly(ticket: dict, data: bytes) -> None:
    """What a store that checks nothing would keep (moto; or a client that lied)."""
    objects.object_put(key=Upload.objects.get(pk=ticket["id"]).object_key, data=data)


GOOD = big_text(2_000).encode()


@pytest.mark.parametrize(
    ("declared", "stored", "message"),
    [
        ({"size": len(GOOD) + 7}, GOOD, "not the declared"),
        ({"sha": "0" * 64}, GOOD, "SHA-256"),
        ({}, GOOD[:100] + b"\xc3\x28" + GOOD[102:], "UTF-8"),
        ({}, GOOD[:-1] + b"\xf0", "UTF-8"),
        ({}, GOOD[:50] + b"\x00" + GOOD[51:], "NUL"),
    ],
    ids=["wrong-size", "wrong-hash", "invalid-utf8", "truncated-utf8", "nul"],
)
def test_bad_upload_is_a_400_and_leaves_nothing(store, api, declared, stored, message):
    root = new_prompt(api)
    blobs_before = Blob.objects.count()
    sha = declared.get("sha") or hashlib.sha256(stored).hexdigest()
    ticket = create(api, stored, size=declared.get("size", len(stored)), sha=sha)
    put_object_directly(ticket, stored)
    response = save(api, root, messages=[{"role": "user", "content": {"upload": ticket["id"]}}])
    assert response.status_code == 400, response.json()
    detail = response.json()["detail"]
    assert detail.startswith("messages.0.content:") and message in detail
    assert response.json()["field"] == "messages.0.content"
    assert PromptVersion.objects.count() == 1
    assert Blob.objects.count() == blobs_before
    assert upload_objects() == []
    # Used up: naming it again is refused too.
    again = save(api, root, messages=[{"role": "user", "content": {"upload": ticket["id"]}}])
    assert again.status_code == 400 and "already used" in again.json()["detail"]


def test_expired_upload(store, api):
    root = new_prompt(api)
    ticket = create(api, GOOD)
    assert send(ticket, GOOD) == 200
    Upload.objects.filter(pk=ticket["id"]).update(expires_at=timezone.now() - timedelta(1))
    response = save(api, root, system={"upload": ticket["id"]})
    assert response.status_code == 400 and "expired" in response.json()["detail"]
    assert PromptVersion.objects.count() == 1
    assert upload_objects() == []


def test_someone_elses_upload_is_unknown_and_kept(store, api):
    root = new_prompt(api)
    other = api_client_for(make_user("mallory"))
    ticket = create(other, GOOD)
    assert send(ticket, GOOD) == 200
    response = save(api, root, system={"upload": ticket["id"]})
    assert response.status_code == 400
    assert response.json()["detail"] == "system: no such upload."
    assert PromptVersion.objects.count() == 1
    # Its owner's upload is untouched and still usable by them.
    assert Upload.objects.get(pk=ticket["id"]).used_at is None
    assert len(upload_objects()) == 1


@pytest.mark.parametrize("bad_id", ["not-a-uuid", "00000000-0000-0000-0000-000000000000"])
def test_unknown_upload_id(store, api, bad_id):
    root = new_prompt(api)
    response = save(api, root, system={"upload": bad_id})
    assert response.status_code == 400
    assert response.json()["detail"] == "system: no such upload."


def test_a_save_that_fails_after_naming_an_upload_leaves_it_usable(store, api, owner):
    """Issue #31: a web worker killed mid-save left the named upload marked used (its object
    deleted), so it had to be uploaded again. Here the save's transaction fails after the
    version was written from the upload (a second save in it is refused), as a killed one
    would: nothing of it stays, and the same upload saves afterwards."""
    root = PromptVersion.objects.get(pk=new_prompt(api))
    text = big_text(2_000)
    upload_id = upload(api, text)
    named = content(system={"upload": upload_id})
    prepared = content_prepare(actor=owner, parent=root, content=named)
    with pytest.raises(ContentInvalid), transaction.atomic():
        written = prompt_version_create(
            actor=owner, prompt=root.prompt, parent=root, content=prepared
        )
        assert written.created
        prompt_version_create(
            actor=owner,
            prompt=root.prompt,
            parent=root,
            content=content(system="other"),
            message="m" * (MESSAGE_MAX_CHARS + 1),
        )
    assert PromptVersion.objects.count() == 1
    assert Upload.objects.get(pk=upload_id).used_at is None
    assert len(upload_objects()) == 1
    again = save(api, root.pk, system={"upload": upload_id})
    assert again.status_code == 201, again.json()
    assert blob_read(sha=PromptVersion.objects.get(pk=again.json()["id"]).system_sha) == text
    assert Upload.objects.get(pk=upload_id).used_at is not None
    assert upload_objects() == []


def test_upload_used_twice(store, api):
    root = new_prompt(api)
    upload_id = upload(api, big_text(2_000))
    first = save(api, root, system={"upload": upload_id})
    assert first.status_code == 201
    second = save(api, root, system={"upload": upload_id}, model="another-model")
    assert second.status_code == 400 and "already used" in second.json()["detail"]
    twice = save(
        api,
        root,
        system={"upload": upload(api, "x" * 100)},
        messages=[{"role": "user", "content": {"upload": upload_id}}],
    )
    assert twice.status_code == 400
    assert PromptVersion.objects.count() == 2


def test_upload_never_sent(store, api):
    root = new_prompt(api)
    ticket = create(api, GOOD)
    response = save(api, root, system={"upload": ticket["id"]})
    assert response.status_code == 400 and "no data" in response.json()["detail"]
    assert PromptVersion.objects.count() == 1


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ({"size": 101 * 1024 * 1024, "sha256": "a" * 64}, "size: at most"),
        ({"size": -1, "sha256": "a" * 64}, "size"),
        ({"size": 10, "sha256": "xyz"}, "sha256"),
        ({"size": 10}, "sha256"),
    ],
    ids=["over-limit", "negative", "bad-sha", "missing-sha"],
)
def test_create_refuses_bad_declarations(store, api, body, detail):
    response = api.post("/api/v1/uploads/", body, format="json")
    assert response.status_code == 400
    assert detail in str(response.json()["detail"])
    assert Upload.objects.count() == 0


def test_size_limit_is_a_setting(store, api, settings):
    settings.UPLOAD_MAX_BYTES = 1000
    response = api.post("/api/v1/uploads/", {"size": 1001, "sha256": "a" * 64}, format="json")
    assert response.status_code == 400 and "1000" in response.json()["detail"]


def test_uploads_need_an_account(store):
    response = api_client_for(None).post(
        "/api/v1/uploads/", {"size": 1, "sha256": "a" * 64}, format="json"
    )
    assert response.status_code == 401


def test_uploads_expire_task(store, api):
    old = create(api, GOOD)
    assert send(old, GOOD) == 200
    fresh = create(api, b"fresh")
    assert send(fresh, b"fresh") == 200
    Upload.objects.filter(pk=old["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert uploads_expire.delay().get() == 1
    assert list(Upload.objects.values_list("pk", flat=True)) == [
        Upload.objects.get(pk=fresh["id"]).pk
    ]
    assert len(upload_objects()) == 1


# Redline's own PUT endpoint (the embedded default) ------------------------------------------


@pytest.fixture
def local_ticket(local_storage, api):
    return create(api, GOOD)


def put_path(ticket: dict) -> str:
    return urlsplit(ticket["url"]).path


def test_put_endpoint_streams_the_body(local_ticket):
    client = Client(enforce_csrf_checks=True)
    response = client.generic(
        "PUT", put_path(local_ticket), GOOD, content_type="application/octet-stream"
    )
    assert response.status_code == 200, response.content
    key = Upload.objects.get(pk=local_ticket["id"]).object_key
    assert objects.object_get(key=key) == GOOD


def test_put_endpoint_refuses_a_body_of_another_size(local_ticket):
    response = Client().generic(
        "PUT", put_path(local_ticket), GOOD + b"more", content_type="application/octet-stream"
    )
    assert response.status_code == 400 and "declared" in response.json()["detail"]
    assert upload_objects() == []


def test_put_endpoint_cuts_off_a_body_longer_than_it_said(local_ticket):
    """A client whose Content-Length matches but whose stream runs on is cut off as it streams."""
    path = put_path(local_ticket)
    response = Client().generic(
        "PUT",
        path,
        GOOD + b"x" * 100_000,
        content_type="application/octet-stream",
        CONTENT_LENGTH=str(len(GOOD)),
    )
    # Django's LimitedStream stops at Content-Length: what is stored is exactly that many bytes.
    assert response.status_code == 200
    key = Upload.objects.get(pk=local_ticket["id"]).object_key
    assert objects.object_get(key=key) == GOOD


@pytest.mark.parametrize(
    "mangle", [lambda p: p[:-6] + "AAAAA/", lambda p: "/api/v1/uploads/put/x/"]
)
def test_put_endpoint_needs_a_valid_signature(local_ticket, mangle):
    response = Client().generic(
        "PUT", mangle(put_path(local_ticket)), GOOD, content_type="application/octet-stream"
    )
    assert response.status_code == 404
    assert upload_objects() == []


def test_put_endpoint_refuses_expired_and_used_uploads(local_ticket):
    Upload.objects.filter(pk=local_ticket["id"]).update(used_at=timezone.now())
    response = Client().generic(
        "PUT", put_path(local_ticket), GOOD, content_type="application/octet-stream"
    )
    assert response.status_code == 404


def test_put_endpoint_token_expires(local_ticket, settings):
    settings.UPLOAD_EXPIRES_SECONDS = -1
    response = Client().generic(
        "PUT", put_path(local_ticket), GOOD, content_type="application/octet-stream"
    )
    assert response.status_code == 404


def test_uploads_expire_also_clears_used_ones(store, api):
    root = new_prompt(api)
    upload_id = upload(api, big_text(2_000))
    assert save(api, root, system={"upload": upload_id}).status_code == 201
    Upload.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert uploads_expire.delay().get() == 1
    assert not Upload.objects.exists()


def test_revert_of_a_large_version_names_its_texts(store, api):
    text = big_text()
    root = new_prompt(api, system={"upload": upload(api, text)})
    child = save(api, root, system="short now")
    assert child.status_code == 201
    version = PromptVersion.objects.get(pk=child.json()["id"])
    response = api.post(f"/api/v1/versions/{root}/revert/", {"parent": version.pk}, format="json")
    assert response.status_code == 201, response.json()
    reverted = PromptVersion.objects.get(pk=response.json()["id"])
    original = PromptVersion.objects.get(pk=root)
    assert reverted.system_sha == original.system_sha
    assert reverted.content_hash == original.content_hash


# The browser editor's form posts (static/js/upload.js fills the *_ref fields) --------------


@pytest.fixture
def browser_client(owner):
    client = Client()
    client.force_login(owner)
    return client


def form_post(client, version: PromptVersion, **fields) -> "object":
    data = {
        "parent": version.pk,
        "provider": "echo",
        "model": "echo-1",
        "max_tokens": "100",
        "system": "",
        "system_ref": "",
        "message_role": ["user"],
        "message_content": ["hello"],
        "message_ref": [""],
        **fields,
    }
    return client.post(f"/playground/p/{version.prompt_id}/save/", data)


def test_editor_form_saves_an_upload_and_keeps_a_long_text(store, api, browser_client, settings):
    settings.EDITOR_INPLACE_MAX_BYTES = 10_000
    text = big_text()
    root = PromptVersion.objects.get(pk=new_prompt(api, system={"upload": upload(api, text)}))
    # The page does not carry the long text: the editor keeps it by its sha.
    html = browser_client.get(f"/playground/p/{root.prompt_id}/").content.decode()
    assert text[-2_000:] not in html
    assert "parent_text" in html and root.system_sha in html
    message_id = upload(api, "a long message\n" * 500)
    response = form_post(
        browser_client,
        root,
        system_ref=json.dumps({"parent_text": root.system_sha}),
        message_content=[""],
        message_ref=[json.dumps({"upload": message_id})],
    )
    assert response.status_code == 302, response.content[:500]
    child = PromptVersion.objects.exclude(pk=root.pk).get()
    assert child.system_sha == root.system_sha
    assert blob_read(sha=child.messages[0]["sha"]) == "a long message\n" * 500


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"system_ref": "{not json"}, "system"),
        ({"system_ref": json.dumps({"parent_text": "0" * 64})}, "system"),
        ({"message_ref": [json.dumps({"upload": "nope"})]}, "messages.0.content"),
    ],
    ids=["bad-json", "not-a-parent-text", "unknown-upload"],
)
def test_editor_form_refuses_bad_references(store, api, browser_client, fields, field):
    root = PromptVersion.objects.get(pk=new_prompt(api))
    response = form_post(browser_client, root, **fields)
    assert response.status_code == 400
    assert f'data-field="{field}"' in response.content.decode()
    assert PromptVersion.objects.count() == 1


def test_receive_cuts_off_a_stream_that_runs_past_the_declared_size(local_ticket):
    """Below Django's Content-Length limit: a stream giving more than declared is refused as it
    streams, and nothing is stored."""
    token = put_path(local_ticket).rstrip("/").rsplit("/", 1)[1]
    with pytest.raises(ContentInvalid, match="longer than the declared size"):
        upload_receive(
            token=token, stream=io.BytesIO(GOOD + b"extra"), content_length=str(len(GOOD))
        )
    with pytest.raises(ContentInvalid, match="shorter than the declared size"):
        upload_receive(token=token, stream=io.BytesIO(GOOD[:-1]), content_length=str(len(GOOD)))
    assert upload_objects() == []


@pytest.mark.parametrize(
    ("bucket", "endpoint", "explicit", "origins"),
    [
        ("", "", "", []),
        ("b", "http://127.0.0.1:9000/", "", ["http://127.0.0.1:9000"]),
        ("b", "", "", ["https://*.amazonaws.com"]),
        ("b", "http://minio:9000", "https://cdn.example https://s3.example", None),
    ],
    ids=["local", "custom-endpoint", "aws", "explicit"],
)
def test_the_csp_lets_the_editor_put_to_s3_only(bucket, endpoint, explicit, origins):
    """Presigned URLs point at the S3 endpoint: connect-src must allow it (and nothing when
    uploads go to Redline itself)."""
    expected = explicit.split() if origins is None else origins
    assert upload_connect_origins(bucket=bucket, endpoint=endpoint, explicit=explicit) == expected


def test_only_the_save_services_resolve_upload_references():
    """One write path per save (issue #35): `prompt_create` and `prompt_version_create` call
    `content_prepare` themselves, so no view or API class prepares content by hand."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    callers = set()
    for app in ("playground", "changes", "critique", "evals", "reviews", "webhooks"):
        for path in (root / app).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Name) and node.id == "content_prepare":
                    callers.add(str(path.relative_to(root)))
    assert callers == {"playground/services.py"}
