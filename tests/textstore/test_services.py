"""blob_put: content addressing, deltas, validation, the unique-constraint race."""

import hashlib

import pytest
from django.db import transaction

from textstore.exceptions import BlobNotFound, TextEncodingError
from textstore.models import Blob
from textstore.selectors import blob_read, blob_stat
from textstore.services import _full_row, _insert, blob_put

from .helpers import history

pytestmark = pytest.mark.django_db


def test_key_is_sha256_of_utf8_and_identical_text_is_stored_once():
    text = "System: be brief.\r\nUser: héllo 😀\t"
    blob = blob_put(text=text)
    assert blob.sha256 == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert blob.char_length == len(text)
    assert blob.byte_length == len(text.encode("utf-8"))
    again = blob_put(text=text)
    assert again.pk == blob.pk
    assert Blob.objects.count() == 1


def test_small_edit_is_stored_as_a_small_delta_against_its_base():
    old, new = history(seed=1, chars=20_000, versions=2)
    base = blob_put(text=old)
    blob = blob_put(text=new, base=base)
    assert blob.kind == Blob.Kind.DELTA
    assert blob.base_id == base.sha256
    assert blob.depth == 1
    assert blob.stored_size < 100
    assert blob_read(sha=blob.sha256) == new


def test_base_may_be_given_as_a_sha():
    old, new = history(seed=2, chars=2_000, versions=2)
    base = blob_put(text=old)
    assert blob_put(text=new, base=base.sha256).base_id == base.sha256


def test_unknown_base_is_a_clear_error():
    with pytest.raises(BlobNotFound, match="0" * 64):
        blob_put(text="text", base="0" * 64)
    with pytest.raises(BlobNotFound):
        blob_put(text="text", base="not-a-sha")
    assert not Blob.objects.exists()


def test_text_that_is_entirely_new_gets_a_full_snapshot():
    first, _ = history(seed=3, chars=5_000, versions=2)
    base = blob_put(text=first)
    other = "".join(chr(0x4E00 + (i * 7919) % 20000) for i in range(5_000))
    blob = blob_put(text=other, base=base)
    assert blob.kind == Blob.Kind.FULL
    assert blob.base_id is None
    assert blob_read(sha=blob.sha256) == other


def test_empty_text_round_trips_full_and_as_delta():
    empty = blob_put(text="")
    assert blob_read(sha=empty.sha256) == ""
    text = blob_put(text="x" * 300, base=empty)
    back = blob_put(text="", base=text)
    assert back.pk == empty.pk


@pytest.mark.parametrize("bad", ["lone \ud800 surrogate", "\udfff", b"bytes"])
def test_text_that_is_not_unicode_is_rejected(bad):
    with pytest.raises(TextEncodingError):
        blob_put(text=bad)
    with pytest.raises(ValueError):  # also a ValueError, for callers outside Django
        blob_put(text=bad)
    assert not Blob.objects.exists()


def test_blob_stat_describes_without_payload():
    blob = blob_put(text="abc" * 100)
    stat = blob_stat(sha=blob.sha256)
    assert (stat.kind, stat.char_length, stat.depth) == ("full", 300, 0)
    with pytest.raises(BlobNotFound):
        blob_stat(sha="f" * 64)


def test_losing_the_insert_race_returns_the_winner_and_keeps_the_transaction_usable():
    text = "written by two callers at once"
    winner = blob_put(text=text)
    data = text.encode()
    loser_row = _full_row(sha=winner.sha256, text=text, data=data)
    with transaction.atomic():
        result = _insert(loser_row, text)
        assert result.pk == winner.pk
        # The savepoint rolled back only the failed insert; the outer transaction goes on.
        assert blob_put(text="after the race").kind == Blob.Kind.FULL
    assert Blob.objects.filter(pk=winner.pk).count() == 1


def test_cache_is_filled_only_after_commit(django_capture_on_commit_callbacks):
    from textstore.cache import text_cache

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        blob = blob_put(text="pending")
    assert blob.sha256 not in text_cache
    for callback in callbacks:
        callback()
    assert text_cache.get(blob.sha256) == "pending"
