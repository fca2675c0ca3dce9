"""Large full snapshots in object storage: chunked, read by range, damage detected.

Runs against a moto S3 server over HTTP (`s3_storage`) and against the local directory.
"""

import random

import pytest

from textstore import objects
from textstore.cache import caches_clear
from textstore.chunks import chunk_index_parse
from textstore.exceptions import TextstoreIntegrityError
from textstore.models import Blob
from textstore.selectors import blob_read, blob_read_range
from textstore.services import blob_put

from .helpers import history

pytestmark = pytest.mark.django_db

CHUNK = 1_000


@pytest.fixture(params=["s3", "local"])
def store(request, settings):
    request.getfixturevalue("s3_storage" if request.param == "s3" else "local_storage")
    settings.TEXTSTORE_INLINE_MAX = 4 * 1024
    settings.TEXTSTORE_CHUNK_CHARS = CHUNK
    return request.param


def big_text(seed: int = 1, chars: int = 25_000) -> str:
    text = history(seed=seed, chars=chars, versions=1)[0]
    # Multi-byte and astral characters, so byte and character offsets differ.
    return text.replace("cache", "cäché 😀").replace("risk", "r\U0001d54fsk\r\n")


@pytest.fixture
def no_full_downloads(monkeypatch):
    """Fail the test if anything fetches a whole object (range reads must not)."""

    def refuse(*, key: str) -> bytes:
        raise AssertionError(f"whole object {key} fetched")

    monkeypatch.setattr(objects, "object_get", refuse)


def test_large_snapshot_lives_in_object_storage_in_chunks(store):
    text = big_text()
    blob = blob_put(text=text)
    assert blob.kind == Blob.Kind.FULL
    assert blob.payload is None
    assert blob.object_key == f"blobs/{blob.sha256}"
    entries = chunk_index_parse(bytes(blob.chunk_index))
    assert len(entries) == -(-len(text) // CHUNK)
    assert blob.stored_size == objects.object_size(key=blob.object_key) + len(blob.chunk_index)
    assert blob.stored_size < len(text.encode()) / 2  # compressed
    assert blob_read(sha=blob.sha256) == text


def test_range_reads_fetch_only_the_chunks_they_need(store, no_full_downloads):
    text = big_text(seed=2)
    blob = blob_put(text=text)
    rng = random.Random(2)
    cases = [(0, 10), (CHUNK - 3, 6), (len(text) - 5, 50), (len(text), 5), (123, 0)]
    cases += [(rng.randrange(len(text)), rng.randrange(3 * CHUNK)) for _ in range(30)]
    for offset, length in cases:
        assert (
            blob_read_range(sha=blob.sha256, offset=offset, length=length)
            == text[offset : offset + length]
        )


def test_deltas_on_a_large_snapshot_round_trip(store):
    versions = [big_text(seed=3)]
    for number in range(5):
        versions.append(versions[-1].replace("prompt", f"prompt{number}", 1) + "\n🙂")
    shas = []
    base = None
    for text in versions:
        base = blob_put(text=text, base=base)
        shas.append(base.sha256)
    rows = Blob.objects.in_bulk(shas)
    assert [rows[sha].kind for sha in shas] == ["full"] + ["delta"] * 5
    assert sum(rows[sha].stored_size for sha in shas[1:]) < 1_000
    for sha, text in zip(shas, versions, strict=True):
        assert blob_read(sha=sha) == text
        assert blob_read_range(sha=sha, offset=4_321, length=777) == text[4_321:5_098]


def _corrupt_chunk(blob: Blob, number: int) -> None:
    assert blob.chunk_index is not None
    entry = chunk_index_parse(bytes(blob.chunk_index))[number]
    data = bytearray(objects.object_get(key=blob.object_key))
    data[(entry.start + entry.end) // 2] ^= 0x55
    objects.object_put(key=blob.object_key, data=bytes(data))


def test_a_corrupted_chunk_is_detected_on_read(store):
    text = big_text(seed=4)
    blob = blob_put(text=text)
    _corrupt_chunk(blob, 3)
    caches_clear()
    with pytest.raises(TextstoreIntegrityError, match=blob.sha256):
        blob_read(sha=blob.sha256)
    with pytest.raises(TextstoreIntegrityError, match="chunk 3"):
        blob_read_range(sha=blob.sha256, offset=3 * CHUNK + 10, length=20)
    # Per-chunk hashes: undamaged chunks still serve ranges.
    assert blob_read_range(sha=blob.sha256, offset=CHUNK, length=CHUNK) == text[CHUNK : 2 * CHUNK]


def test_a_missing_object_is_an_integrity_error(store):
    blob = blob_put(text=big_text(seed=5))
    objects.object_delete(key=blob.object_key)
    with pytest.raises(TextstoreIntegrityError, match="missing"):
        blob_read(sha=blob.sha256)
    with pytest.raises(TextstoreIntegrityError, match="missing"):
        blob_read_range(sha=blob.sha256, offset=0, length=10)


def test_truncated_object_is_an_integrity_error(store):
    blob = blob_put(text=big_text(seed=6))
    data = objects.object_get(key=blob.object_key)
    objects.object_put(key=blob.object_key, data=data[:-10])
    with pytest.raises(TextstoreIntegrityError):
        blob_read(sha=blob.sha256)
    last = len(chunk_index_parse(bytes(blob.chunk_index))) - 1
    with pytest.raises(TextstoreIntegrityError):
        blob_read_range(sha=blob.sha256, offset=last * CHUNK, length=5)


def test_multi_megabyte_text_with_default_sizes_on_s3(s3_storage, settings, no_full_downloads):
    text = big_text(seed=7, chars=2_500_000)
    blob = blob_put(text=text)
    assert blob.object_key
    assert blob.chunk_chars == 262_144
    middle = len(text) // 2
    assert (
        blob_read_range(sha=blob.sha256, offset=middle, length=3_000)
        == text[middle : middle + 3_000]
    )


def _edited_chain(text: str, edits: int) -> tuple[list[str], list[str]]:
    versions = [text]
    for number in range(edits):
        middle = len(versions[-1]) // (number + 2)
        versions.append(
            versions[-1][:middle] + f"\nedit {number} ü\n" + versions[-1][middle + 40 :]
        )
    shas, base = [], None
    for version in versions:
        base = blob_put(text=version, base=base)
        shas.append(base.sha256)
    return versions, shas


def test_ranges_of_deltas_map_through_the_chain_to_chunks(store, request):
    """A range of an edited large text never rebuilds it: copies in the deltas are followed
    down to the snapshot's chunks (whole-object fetches are refused here)."""
    bmp = big_text(seed=8).replace("😀", "☺").replace("\U0001d54f", "x")
    versions, shas = _edited_chain(bmp, 4)
    rows = Blob.objects.in_bulk(shas)
    assert [rows[sha].kind for sha in shas] == ["full"] + ["delta"] * 4
    request.getfixturevalue("no_full_downloads")  # written: from here on, ranges only
    rng = random.Random(8)
    for sha, text in zip(shas, versions, strict=True):
        cases = [(0, 50), (len(text) - 30, 100), (len(text) // 2 - 20, 3 * CHUNK)]
        cases += [(rng.randrange(len(text)), rng.randrange(2 * CHUNK)) for _ in range(15)]
        for offset, length in cases:
            caches_clear()
            got = blob_read_range(sha=sha, offset=offset, length=length)
            assert got == text[offset : offset + length]


def test_ranges_of_deltas_over_astral_text_translate_utf16_counts(store, request):
    """diff-match-patch counts UTF-16 units; over a base with emoji the delta's boundaries are
    translated to code points by scanning the base by range (still no whole-object fetch)."""
    versions, shas = _edited_chain(big_text(seed=9), 3)
    request.getfixturevalue("no_full_downloads")
    for sha, text in zip(shas[1:], versions[1:], strict=True):
        for offset in (0, len(text) // 3, len(text) - 10):
            caches_clear()
            assert (
                blob_read_range(sha=sha, offset=offset, length=500) == text[offset : offset + 500]
            )


def test_a_damaged_delta_is_not_served_by_a_range_read(store):
    versions, shas = _edited_chain(big_text(seed=10).replace("😀", "☺"), 1)
    Blob.objects.filter(pk=shas[1]).update(payload=b"\x00garbage")
    caches_clear()
    with pytest.raises(TextstoreIntegrityError, match=shas[1]):
        blob_read_range(sha=shas[1], offset=0, length=100)
