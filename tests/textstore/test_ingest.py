"""Streaming ingest (textstore/ingest.py): an object is checked and stored in bounded pieces.

Runs against a moto S3 server over HTTP and against the local directory. Small settings
(windows, chunks, the in-memory bound) make a few hundred KB exercise every path.
"""

import hashlib

import pytest

from textstore import ingest, objects
from textstore.chunks import chunk_index_parse
from textstore.exceptions import BlobNotFound
from textstore.ingest import IngestRejected, blob_put_object
from textstore.models import Blob
from textstore.selectors import blob_read, blob_read_range, blob_verify
from textstore.services import blob_put

from .helpers import history

pytestmark = pytest.mark.django_db

CHUNK = 2_000


@pytest.fixture(params=["local", "s3"])
def store(request, settings, monkeypatch):
    request.getfixturevalue("s3_storage" if request.param == "s3" else "local_storage")
    settings.TEXTSTORE_INLINE_MAX = 4 * 1024
    settings.TEXTSTORE_CHUNK_CHARS = CHUNK
    monkeypatch.setattr(ingest, "WINDOW_BYTES", 4_096)
    monkeypatch.setattr(ingest, "IN_MEMORY_MAX_BYTES", 8_192)
    return request.param


def text_of(chars: int, seed: int = 3) -> str:
    text = history(seed=seed, chars=chars, versions=1)[0]
    # Multi-byte and astral characters: byte, character and UTF-16 offsets all differ, and
    # characters straddle window boundaries.
    return text.replace("cache", "cäché 😀").replace("risk", "r\U0001d54fsk")


def upload(text: str | bytes, key: str = "uploads/test") -> tuple[str, int, str]:
    data = text.encode("utf-8") if isinstance(text, str) else text
    objects.object_put(key=key, data=data)
    return key, len(data), hashlib.sha256(data).hexdigest()


def put(text: str, base: Blob | None = None) -> Blob:
    key, size, sha = upload(text)
    return blob_put_object(key=key, size=size, sha256=sha, base=base)


def test_large_text_becomes_a_chunked_snapshot_read_back_exactly(store):
    text = text_of(60_000)
    blob = put(text)
    assert blob.kind == Blob.Kind.FULL and blob.object_key == f"blobs/{blob.sha256}"
    assert blob.chunk_chars == CHUNK
    entries = chunk_index_parse(bytes(blob.chunk_index))
    assert len(entries) == -(-len(text) // CHUNK)
    assert blob.char_length == len(text) and blob.byte_length == len(text.encode())
    assert blob_read(sha=blob.sha256) == text
    assert blob_read_range(sha=blob.sha256, offset=31_337, length=5_000) == text[31_337:36_337]
    blob_verify(sha=blob.sha256)


def test_same_bytes_as_blob_put(store):
    """The ingest stores the same text under the same sha as blob_put; either finds the other."""
    text = text_of(30_000)
    stored = blob_put(text=text)
    assert put(text).pk == stored.pk
    assert Blob.objects.count() == 1


def test_one_line_edit_is_a_small_delta(store):
    text = text_of(80_000)
    parent = put(text)
    lines = text.split("\n")
    lines[len(lines) // 2] = "an edited line with ünïcode and 😀 in it"
    edited = "\n".join(lines)
    child = put(edited, base=parent)
    assert child.kind == Blob.Kind.DELTA and child.base_id == parent.pk
    assert child.stored_size < 120
    assert blob_read(sha=child.sha256) == edited
    assert blob_read_range(sha=child.sha256, offset=40_000, length=3_000) == edited[40_000:43_000]
    blob_verify(sha=child.sha256)


@pytest.mark.parametrize(
    "change",
    [
        lambda t: "prefix added " + t,
        lambda t: t + " appended at the end",
        lambda t: t[:1000] + t[1500:],
        lambda t: t[:-3000],
        lambda t: t.replace("😀", "x", 1),
    ],
    ids=["insert-at-start", "append", "delete-middle", "truncate", "astral-removed"],
)
def test_edits_rebuild_exactly(store, change):
    text = text_of(40_000, seed=5)
    parent = put(text)
    edited = change(text)
    child = put(edited, base=parent)
    assert child.kind == Blob.Kind.DELTA
    assert blob_read(sha=child.sha256) == edited
    blob_verify(sha=child.sha256)


def test_chain_of_edits_follows_the_policy(store):
    text = text_of(40_000, seed=7)
    blob = put(text)
    texts = [text]
    for number in range(6):
        text = text.replace("\n", f"\nedit {number} ", 1)
        texts.append(text)
        blob = put(text, base=blob)
        blob_verify(sha=blob.sha256)
    for version in texts:
        assert blob_read(sha=hashlib.sha256(version.encode()).hexdigest()) == version


def test_completely_different_text_is_a_full_snapshot(store):
    parent = put(text_of(40_000, seed=1))
    other = text_of(40_000, seed=2)
    child = put(other, base=parent)
    assert child.kind == Blob.Kind.FULL
    assert blob_read(sha=child.sha256) == other


def test_small_text_goes_through_blob_put(store):
    blob = put("a small text")
    assert blob.kind == Blob.Kind.FULL and blob.object_key == ""
    assert blob_read(sha=blob.sha256) == "a small text"


def test_chunks_are_bounded(store):
    """Every stored chunk holds at most chunk_chars characters: the writer never buffers more."""
    text = text_of(50_000)
    blob = put(text)
    data = objects.object_get(key=blob.object_key)
    for entry in chunk_index_parse(bytes(blob.chunk_index)):
        payload = data[entry.start : entry.end]
        assert len(payload) == entry.end - entry.start
    assert blob_read_range(sha=blob.sha256, offset=len(text) - 10, length=50) == text[-10:]


@pytest.mark.parametrize(
    ("mangle", "reason"),
    [
        (lambda d, s, h: (d, s + 1, h), "size"),
        (lambda d, s, h: (d, s - 1, h), "size"),
        (lambda d, s, h: (d, s, "0" * 64), "sha256"),
        (lambda d, s, h: (d[:5000] + b"\xff" + d[5001:], s, None), "utf8"),
        (lambda d, s, h: (d[:-1] + b"\xe2", s, None), "utf8"),
        (lambda d, s, h: (d[:7000] + b"\x00" + d[7001:], s, None), "nul"),
    ],
    ids=["too-long-declared", "too-short-declared", "hash", "bad-byte", "truncated-char", "nul"],
)
def test_bad_objects_are_rejected_and_nothing_is_stored(store, mangle, reason):
    good = text_of(30_000).encode()
    data, size, sha = mangle(good, len(good), hashlib.sha256(good).hexdigest())
    sha = sha or hashlib.sha256(data).hexdigest()
    objects.object_put(key="uploads/bad", data=data)
    with pytest.raises(IngestRejected) as caught:
        blob_put_object(key="uploads/bad", size=size, sha256=sha, forbid_nul=True)
    assert caught.value.reason == reason
    assert Blob.objects.count() == 0
    assert list(objects.object_list(prefix="blobs")) == []


def test_unknown_base(store):
    key, size, sha = upload(text_of(20_000))
    with pytest.raises(BlobNotFound):
        blob_put_object(key=key, size=size, sha256=sha, base="f" * 64)


def test_an_object_changed_after_the_check_never_becomes_a_wrong_delta(store, monkeypatch):
    """A second PUT to the upload's URL between the check and the delta: the delta is built
    from different bytes, fails the rebuild hash, and the text is stored as a full snapshot
    re-checked against the declared SHA-256 (which then refuses the changed object)."""
    text = text_of(40_000, seed=9)
    parent = put(text)
    edited = text.replace("\n", "\nan edit\n", 1)
    key, size, sha = upload(edited)
    real_scan = ingest._scan
    calls = []

    def scan_then_swap(**kwargs):
        result = real_scan(**kwargs)
        calls.append(kwargs.get("writer"))
        if len(calls) == 1:  # after the first check, someone PUTs other bytes of the same size
            objects.object_put(key=key, data=edited.replace("an edit", "AN EDIT").encode())
        return result

    monkeypatch.setattr(ingest, "_scan", scan_then_swap)
    with pytest.raises(IngestRejected) as caught:
        blob_put_object(key=key, size=size, sha256=sha, base=parent)
    assert caught.value.reason == "sha256"
    assert not Blob.objects.filter(pk=sha).exists()


def test_memory_stays_bounded_whatever_the_text_size(local_storage, settings, monkeypatch):
    """Python allocations while checking and storing an 8 MB text (and a one-line edit of it)
    stay a fraction of it: the object is read in windows, never whole, and encoded a chunk at a
    time. (Process RSS against a real server: bench/large_prompt.py.)"""
    import tracemalloc

    settings.TEXTSTORE_CHUNK_CHARS = 64 * 1024
    monkeypatch.setattr(ingest, "WINDOW_BYTES", 256 * 1024)
    size = 8 * 1024 * 1024
    line = "a line of a very long prompt, with ünïcode, number {:07d}\n"
    text = "".join(line.format(i) for i in range(size // len(line)))
    key, nbytes, sha = upload(text, key="uploads/big")
    edited = text.replace(line.format(50_000), "an edited line\n")
    edit_key, edit_size, edit_sha = upload(edited, key="uploads/edit")
    del text, edited
    whole_reads = []
    real_get = objects.object_get
    monkeypatch.setattr(
        objects,
        "object_get",
        lambda *, key: whole_reads.append(key) or real_get(key=key),
    )
    tracemalloc.start()
    try:
        blob = blob_put_object(key=key, size=nbytes, sha256=sha)
        _, first_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        child = blob_put_object(key=edit_key, size=edit_size, sha256=edit_sha, base=blob)
        _, edit_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert whole_reads == []
    assert blob.kind == Blob.Kind.FULL and child.kind == Blob.Kind.DELTA
    assert child.stored_size < 100
    assert first_peak < nbytes / 4, first_peak
    assert edit_peak < nbytes / 4, edit_peak


def test_a_small_text_after_a_large_base_is_stored_like_blob_put_would(store):
    parent = put(text_of(40_000, seed=4))
    small = "a short replacement for a long text\n" * 10
    child = put(small, base=parent)
    assert child.object_key == "" and child.payload is not None
    assert blob_read(sha=child.sha256) == small
