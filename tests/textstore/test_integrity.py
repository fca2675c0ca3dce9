"""Damage in the database is detected on read and reported by `textstore_verify`."""

import io
from collections.abc import Callable

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from textstore.cache import caches_clear, text_cache
from textstore.compression import payload_compress, payload_decompress
from textstore.exceptions import BlobNotFound, InvalidRange, TextstoreIntegrityError
from textstore.models import Blob
from textstore.selectors import blob_read, blob_read_range, blob_verify
from textstore.services import blob_put

from .helpers import history

pytestmark = pytest.mark.django_db


def stored_chain(versions: int = 6) -> tuple[list[str], list[Blob]]:
    texts = history(seed=21, chars=3_000, versions=versions)
    blobs = []
    base = None
    for text in texts:
        base = blob_put(text=text, base=base)
        blobs.append(base)
    caches_clear()
    return texts, blobs


def rewrite_delta(blob: Blob, change: Callable[[str], str]) -> None:
    row = Blob.objects.get(pk=blob.pk)
    assert row.payload is not None
    delta = payload_decompress(row.codec, bytes(row.payload)).decode()
    codec, payload = payload_compress(change(delta).encode())
    Blob.objects.filter(pk=blob.pk).update(codec=codec, payload=payload)
    caches_clear()


def test_garbage_full_payload_is_detected():
    texts, blobs = stored_chain()
    Blob.objects.filter(pk=blobs[0].pk).update(payload=b"\x00garbage")
    for blob in blobs:
        with pytest.raises(TextstoreIntegrityError, match="does not decode"):
            blob_read(sha=blob.sha256)


def test_delta_that_no_longer_fits_its_base_is_detected():
    _, blobs = stored_chain()
    rewrite_delta(blobs[2], lambda delta: delta + "\t=5")
    with pytest.raises(TextstoreIntegrityError, match="does not apply"):
        blob_read(sha=blobs[2].sha256)


def test_swapped_insert_is_caught_by_the_hash_alone():
    texts, blobs = stored_chain()
    target = next(b for b in blobs[1:] if "+" in _delta(b))
    rewrite_delta(target, _swap_insert)
    # Same lengths, other characters: the delta applies cleanly, and only the SHA-256 check
    # stops wrong text from being returned.
    with pytest.raises(TextstoreIntegrityError, match="SHA-256"):
        blob_read(sha=target.sha256)
    with pytest.raises(TextstoreIntegrityError, match="SHA-256"):
        blob_read_range(sha=target.sha256, offset=0, length=10)


def _delta(blob: Blob) -> str:
    row = Blob.objects.get(pk=blob.pk)
    assert row.payload is not None
    return payload_decompress(row.codec, bytes(row.payload)).decode()


def _swap_insert(delta: str) -> str:
    tokens = delta.split("\t")
    for index, token in enumerate(tokens):
        if token.startswith("+") and len(token) > 1:
            tokens[index] = "+" + ("A" if token[1] != "A" else "B") + token[2:]
            break
    return "\t".join(tokens)


def test_verify_command_reports_damage_and_fails():
    _, blobs = stored_chain()
    out, err = io.StringIO(), io.StringIO()
    call_command("textstore_verify", stdout=out, stderr=err)
    assert f"checked {len(blobs)} blobs, 0 damaged" in out.getvalue()

    text_cache.put(blobs[4].sha256, "cached copies must not hide damage")
    rewrite_delta(blobs[4], _swap_insert)
    text_cache.put(blobs[4].sha256, "cached copies must not hide damage")
    with pytest.raises(CommandError, match="2 damaged"):
        call_command("textstore_verify", stdout=out, stderr=err)
    # The damaged delta, and the version built on it; the versions before it are intact.
    reported = {line.split()[1].rstrip(":") for line in err.getvalue().splitlines()}
    assert reported == {blobs[4].sha256, blobs[5].sha256}


def test_verify_command_checks_bookkeeping():
    _, blobs = stored_chain()
    Blob.objects.filter(pk=blobs[2].pk).update(depth=99)
    with pytest.raises(TextstoreIntegrityError, match="depth"):
        blob_verify(sha=blobs[2].sha256)
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("textstore_verify", blobs[2].sha256, stdout=io.StringIO(), stderr=err)
    assert "bookkeeping" in err.getvalue()


def test_unknown_blob_and_bad_ranges():
    with pytest.raises(BlobNotFound):
        blob_read(sha="a" * 64)
    with pytest.raises(BlobNotFound):
        blob_read_range(sha="A" * 64, offset=0, length=1)
    blob = blob_put(text="abc")
    with pytest.raises(InvalidRange):
        blob_read_range(sha=blob.sha256, offset=-1, length=1)
    with pytest.raises(InvalidRange):
        blob_read_range(sha=blob.sha256, offset=0, length=-1)
    assert blob_read_range(sha=blob.sha256, offset=2, length=10) == "c"
    assert blob_read_range(sha=blob.sha256, offset=10, length=10) == ""


def test_a_damaged_base_does_not_block_new_versions():
    texts, blobs = stored_chain(versions=2)
    Blob.objects.filter(pk=blobs[0].pk).update(payload=b"\x00garbage")
    new_text = texts[-1] + "\nanother line"
    blob = blob_put(text=new_text, base=blobs[1])
    assert blob.kind == Blob.Kind.FULL
    assert blob_read(sha=blob.sha256) == new_text
