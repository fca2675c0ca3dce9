"""objects.py against the local directory and a real S3 server (moto over HTTP)."""

import hashlib
import urllib.request

import pytest

from textstore import objects
from textstore.exceptions import ObjectNotFound, ObjectStoreError


@pytest.fixture(params=["local", "s3"])
def store(request):
    """Run each test on both stores; the S3 one is a moto server on loopback."""
    request.getfixturevalue("local_storage" if request.param == "local" else "s3_storage")
    return request.param


def test_put_get_range_size_delete(store):
    data = bytes(range(256)) * 40
    objects.object_put(key="blobs/abc", data=data)
    assert objects.object_get(key="blobs/abc") == data
    assert objects.object_size(key="blobs/abc") == len(data)
    assert objects.object_get_range(key="blobs/abc", start=10, end=300) == data[10:300]
    assert objects.object_get_range(key="blobs/abc", start=5, end=5) == b""
    objects.object_put(key="blobs/abc", data=b"replaced")
    assert objects.object_get(key="blobs/abc") == b"replaced"
    objects.object_delete(key="blobs/abc")
    with pytest.raises(ObjectNotFound):
        objects.object_get(key="blobs/abc")


def test_missing_object(store):
    with pytest.raises(ObjectNotFound):
        objects.object_get(key="blobs/missing")
    with pytest.raises(ObjectNotFound):
        objects.object_get_range(key="blobs/missing", start=0, end=10)
    with pytest.raises(ObjectNotFound):
        objects.object_size(key="blobs/missing")


@pytest.mark.parametrize("key", ["../escape", "/absolute", "a//b", "a/./b", "", "a/../b"])
def test_unsafe_keys_are_refused(store, key):
    with pytest.raises(ObjectStoreError):
        objects.object_put(key=key, data=b"x")


def test_local_store_keeps_objects_under_its_directory(local_storage):
    objects.object_put(key="blobs/k", data=b"payload")
    assert (local_storage / "blobs" / "k").read_bytes() == b"payload"
    assert not list((local_storage / "blobs").glob(".upload-*"))


def test_local_store_has_no_presigned_urls(local_storage):
    with pytest.raises(ObjectStoreError, match="S3"):
        objects.object_presign_put(key="uploads/x", size=1, sha256="0" * 64, expires_in=60)


def test_presigned_put_uploads_straight_to_s3(s3_storage):
    body = b"a large prompt, uploaded by the browser"
    sha = hashlib.sha256(body).hexdigest()
    upload = objects.object_presign_put(
        key="uploads/one", size=len(body), sha256=sha, expires_in=300
    )
    assert upload.url.startswith(s3_storage["endpoint_url"])
    request = urllib.request.Request(
        upload.url, data=body, method=upload.method, headers=upload.headers
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200
    assert objects.object_get(key="uploads/one") == body
