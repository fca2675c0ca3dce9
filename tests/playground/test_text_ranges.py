"""Long texts a range at a time: `GET /api/v1/versions/{id}/text/`, the shared variant, the
streamed download, and the access checks every range repeats.

Texts here are stored as chunked snapshots in object storage (small inline limit and chunk
size), on local disk and on the moto S3 server over HTTP (`store`); with REDLINE_TEST_S3=1 the
whole file runs against S3.
"""

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from playground.models import AccessLogEntry, PromptVersion, ShareLink
from playground.services import grant_revoke, grant_set, share_link_create, share_link_revoke
from tests.factories import api_client_for, make_user
from tests.playground.factories import content, make_prompt, save
from textstore import objects
from textstore.cache import caches_clear
from textstore.models import Blob

pytestmark = pytest.mark.django_db

CHUNK = 1_000


def long_text(seed: int, chars: int, *, marker: str = "") -> str:
    """Numbered lines of mixed text (accents, CJK, an emoji), `marker` near the end."""
    rng = random.Random(seed)
    words = ["cache", "queue", "shard", "grüße", "日本語", "replica", "lease", "quorum", "🙂"]
    lines, size = [], 0
    number = 0
    while size < chars:
        line = f"{number:06d} " + " ".join(rng.choice(words) for _ in range(12))
        lines.append(line)
        size += len(line) + 1
        number += 1
    text = "\n".join(lines)[:chars]
    if marker:
        text = text[: chars - len(marker) - 50] + marker + text[chars - 50 :]
    return text


@pytest.fixture(params=["local", "s3"])
def store(request, settings):
    request.getfixturevalue("s3_storage" if request.param == "s3" else "local_storage")
    settings.TEXTSTORE_INLINE_MAX = 4 * 1024
    settings.TEXTSTORE_CHUNK_CHARS = CHUNK
    return request.param


@pytest.fixture(autouse=True)
def _fresh_caches():
    cache.clear()  # rate limits and access-log thinning
    caches_clear()
    yield
    cache.clear()
    caches_clear()


@dataclass
class World:
    owner: object
    prompt: object
    root: object
    v2: object
    system: str
    message: str
    token: str
    link: ShareLink


@pytest.fixture
def world(store) -> World:
    owner = make_user("owner")
    system = long_text(1, 30_000, marker="END-OF-SYSTEM")
    message = long_text(2, 12_000)
    prompt, root = make_prompt(
        owner, system=system, messages=[{"role": "user", "content": message}]
    )
    secret_system = system[:5_000] + "SECRET-IN-V2" + system[5_000:]
    v2 = save(
        owner,
        prompt,
        root,
        system=secret_system,
        messages=[{"role": "user", "content": message + "\nSECRET-IN-V2 too"}],
    ).version
    link, token = share_link_create(actor=owner, prompt=prompt, access="public", version=root)
    return World(owner, prompt, root, v2, system, message, token, link)


def _url(version, **query):
    qs = "&".join(f"{k}={v}" for k, v in query.items())
    return f"/api/v1/versions/{version.pk}/text/?{qs}"


def test_texts_are_chunked_snapshots_and_deltas(world):
    system_sha = world.root.system_sha
    blob = Blob.objects.get(pk=system_sha)
    assert blob.object_key
    assert blob.chunk_chars == CHUNK
    assert Blob.objects.get(pk=world.v2.system_sha).kind == "delta"


def test_range_by_characters(world, settings):
    api = api_client_for(world.owner)
    body = api.get(_url(world.root, field="system", offset=1234, length=5000)).json()
    assert body == {
        "field": "system",
        "offset": 1234,
        "length": 5000,
        "total": len(world.system),
        "text": world.system[1234:6234],
    }
    # Defaults: from 0, PLAYGROUND_TEXT_PAGE_CHARS long.
    settings.PLAYGROUND_TEXT_PAGE_CHARS = 777
    body = api.get(_url(world.root, field="system")).json()
    assert (body["offset"], body["length"], body["text"]) == (0, 777, world.system[:777])
    # The end clips; at the end the range is empty.
    total = len(world.system)
    body = api.get(_url(world.root, field="system", offset=total - 10, length=100)).json()
    assert (body["length"], body["text"]) == (10, world.system[-10:])
    body = api.get(_url(world.root, field="system", offset=total)).json()
    assert (body["length"], body["text"], body["total"]) == (0, "", total)
    # Messages by index; code points, not UTF-16 units or bytes (the text holds emoji).
    body = api.get(_url(world.root, field="messages.0.content", offset=100, length=3000)).json()
    assert body["text"] == world.message[100:3100]
    assert body["total"] == len(world.message)
    assert "🙂" in world.message


def test_ranges_of_an_edited_version_read_through_its_delta(world):
    """v2 is a delta on root's snapshot; each range of it is right, read cold."""
    api = api_client_for(world.owner)
    text = world.system[:5_000] + "SECRET-IN-V2" + world.system[5_000:]
    for offset in (0, 4_990, 5_005, len(text) - 3_000):
        caches_clear()
        body = api.get(_url(world.v2, field="system", offset=offset, length=2_000)).json()
        assert body["text"] == text[offset : offset + 2_000], offset
        assert body["total"] == len(text)


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({}, "field"),
        ({"field": "user"}, "field"),
        ({"field": "messages.1.content"}, "field"),
        ({"field": "messages.01.content"}, "field"),
        ({"field": "messages.-1.content"}, "field"),
        ({"field": "messages.0.role"}, "field"),
        ({"field": "system%0A"}, "field"),
        ({"field": "system", "offset": "-1"}, "offset"),
        ({"field": "system", "offset": "abc"}, "offset"),
        ({"field": "system", "offset": "1.5"}, "offset"),
        ({"field": "system", "offset": "9" * 40}, "offset"),
        ({"field": "system", "offset": "40000"}, "offset"),
        ({"field": "system", "length": "-5"}, "length"),
        ({"field": "system", "length": "x"}, "length"),
        ({"field": "system", "length": "9" * 40}, "length"),
        ({"field": "system", "length": "1048577"}, "length"),
        ({"field": "system", "length": "٣"}, "length"),
    ],
)
def test_bad_parameters_are_400_naming_the_parameter(world, query, field):
    response = api_client_for(world.owner).get(_url(world.root, **query))
    assert response.status_code == 400, response.content
    assert response.json()["detail"].startswith(f"{field}:"), response.json()


def test_not_yours_is_404_and_a_grant_gives_access(world):
    stranger = make_user("stranger")
    api = api_client_for(stranger)
    url = _url(world.root, field="system", length=10)
    assert api.get(url).status_code == 404
    assert api.get("/api/v1/versions/999999/text/?field=system").status_code == 404
    assert api.get(f"/api/v1/versions/{world.root.pk}/text/download/?field=system").status_code == (
        404
    )
    grant_set(actor=world.owner, prompt=world.prompt, username="stranger", role="viewer")
    assert api.get(url).json()["text"] == world.system[:10]
    grant_revoke(actor=world.owner, prompt=world.prompt, username="stranger")
    # The very next range is refused: access is checked in the request, nothing cached.
    assert api.get(url).status_code == 404


def test_etag_is_the_text_hash_and_range_and_a_revoked_reader_gets_404_not_304(world):
    viewer = make_user("viewer")
    grant_set(actor=world.owner, prompt=world.prompt, username="viewer", role="viewer")
    api = api_client_for(viewer)
    url = _url(world.root, field="system", offset=10, length=20)
    first = api.get(url)
    etag = first.headers["ETag"]
    assert etag == f'"{world.root.system_sha}-10-20"'
    assert first.headers["Cache-Control"] == "private, no-cache"
    assert api.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 304
    other = api.get(_url(world.root, field="system", offset=30, length=20))
    assert other.headers["ETag"] != etag
    grant_revoke(actor=world.owner, prompt=world.prompt, username="viewer")
    assert api.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 404


def test_shared_ranges_cover_only_the_links_version(world):
    anonymous = api_client_for(None)
    base = f"/api/v1/shared/{world.token}/text/"
    body = anonymous.get(f"{base}?field=system&offset=5&length=50").json()
    assert body["text"] == world.system[5:55]
    ok = anonymous.get(f"{base}?field=system&version={world.root.pk}")
    assert ok.status_code == 200
    assert "no-store" in ok.headers["Cache-Control"]
    assert "ETag" not in ok.headers
    # Probe for the secret planted in v2, which the link does not cover: every field, every
    # offset, with the other version's id, by download too.
    probes = [
        f"{base}?field={field}&offset={offset}&length=1048576&version={version}"
        for field in ("system", "messages.0.content", "messages.1.content")
        for offset in (0, 4_000, 5_000)
        for version in (world.v2.pk, "", world.root.pk)
    ]
    probes += [
        f"/api/v1/shared/{world.token}/text/download/?field={field}&version={version}"
        for field in ("system", "messages.0.content")
        for version in (world.v2.pk, world.root.pk, "")
    ]
    statuses = set()
    for probe in probes:
        response = anonymous.get(probe)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert b"SECRET" not in body, probe
        statuses.add(response.status_code)
        if f"version={world.v2.pk}" in probe:
            assert response.status_code == 404, probe
    assert statuses == {200, 400, 404}


def test_a_revoked_or_expired_link_is_refused_on_the_next_range(world):
    anonymous = api_client_for(None)
    url = f"/api/v1/shared/{world.token}/text/?field=system&length=10"
    download = f"/api/v1/shared/{world.token}/text/download/?field=system"
    assert anonymous.get(url).status_code == 200
    share_link_revoke(actor=world.owner, link=world.link)
    assert anonymous.get(url).status_code == 404
    assert anonymous.get(download).status_code == 404
    link, token = share_link_create(
        actor=world.owner, prompt=world.prompt, access="login", version=world.root
    )
    login_url = f"/api/v1/shared/{token}/text/?field=system&length=10"
    assert anonymous.get(login_url).status_code in (401, 403)
    assert api_client_for(make_user("someone")).get(login_url).status_code == 200
    from datetime import timedelta

    from django.utils import timezone

    ShareLink.objects.filter(pk=link.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert api_client_for(make_user("other")).get(login_url).status_code == 404


def test_a_label_link_serves_the_labels_version_and_refuses_a_stale_one(world):
    _, token = share_link_create(
        actor=world.owner, prompt=world.prompt, access="public", label_name="main"
    )
    anonymous = api_client_for(None)
    url = f"/api/v1/shared/{token}/text/?field=system&offset=4990&length=40"
    assert "SECRET-IN-V2" in anonymous.get(f"{url}&version={world.v2.pk}").json()["text"]
    v3 = save(world.owner, world.prompt, world.v2, system="third").version
    # A reader still scrolling v2 is told it moved on instead of being given v3's text.
    assert anonymous.get(f"{url}&version={world.v2.pk}").status_code == 404
    fresh = f"/api/v1/shared/{token}/text/?field=system&version={v3.pk}"
    assert anonymous.get(fresh).json()["text"] == "third"


def test_shared_ranges_log_at_most_once_a_minute_per_link(world):
    anonymous = api_client_for(None)
    before = AccessLogEntry.objects.filter(link=world.link).count()
    for offset in range(0, 10_000, 1_000):
        url = f"/api/v1/shared/{world.token}/text/?field=system&offset={offset}&length=1000"
        assert anonymous.get(url).status_code == 200
    assert AccessLogEntry.objects.filter(link=world.link).count() == before + 1


def test_download_streams_the_whole_text(world, settings):
    settings.PLAYGROUND_TEXT_STREAM_CHARS = 4_096
    api = api_client_for(world.owner)
    response = api.get(f"/api/v1/versions/{world.v2.pk}/text/download/?field=system")
    assert response.status_code == 200
    assert response.streaming
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert response.headers["Content-Disposition"] == (
        f'attachment; filename="prompt-{world.prompt.pk}-v2-system.txt"'
    )
    parts = list(response.streaming_content)
    assert len(parts) > 5  # streamed in ranges, not built whole
    expected = world.system[:5_000] + "SECRET-IN-V2" + world.system[5_000:]
    assert b"".join(parts).decode("utf-8") == expected
    shared = api_client_for(None).get(
        f"/api/v1/shared/{world.token}/text/download/?field=messages.0.content"
    )
    assert b"".join(shared.streaming_content).decode() == world.message
    bad = api.get(f"/api/v1/versions/{world.v2.pk}/text/download/?field=messages.7.content")
    assert bad.status_code == 400
    assert bad.json()["detail"].startswith("field:")


def test_query_counts_do_not_grow_with_text_or_offset(world):
    owner = api_client_for(world.owner)
    viewer = make_user("viewer")
    grant_set(actor=world.owner, prompt=world.prompt, username="viewer", role="viewer")
    api = api_client_for(viewer)
    anonymous = api_client_for(None)
    api.get("/api/v1/prompts/")  # the key's first use records last_used_at
    owner.get("/api/v1/prompts/")
    small = save(world.owner, world.prompt, world.root, system="short").version

    def counts(version, offset):
        numbers = []
        for client, url in (
            (owner, _url(version, field="system", offset=offset, length=500)),
            (api, _url(version, field="system", offset=offset, length=500)),
        ):
            caches_clear()  # read from storage every time
            cache.clear()  # the grantee's access-log row is written every time
            with CaptureQueriesContext(connection) as queries:
                assert client.get(url).status_code == 200
            numbers.append(len(queries))
        return numbers

    baseline = counts(small, 0)
    assert baseline == counts(world.root, 0) == counts(world.root, 20_000)
    assert baseline == counts(world.v2, 25_000)
    # Owner: token, version with its prompt, the text's chain; a grantee adds the grant and
    # its access-log row.
    assert baseline == [3, 5]
    with CaptureQueriesContext(connection) as shared:
        anonymous.get(f"/api/v1/shared/{world.token}/text/?field=system&offset=9000")
    assert len(shared) <= 6


def test_a_multi_megabyte_version_reads_ranges_without_fetching_whole_objects(
    s3_storage, settings, monkeypatch
):
    """Default sizes, S3 over HTTP: a 6 MB text and a one-line edit of it, read by range."""
    owner = make_user("big")
    text = long_text(7, 6_000_000, marker="NEAR-THE-END")
    prompt, root = make_prompt(owner, system=text)
    lines = text.split("\n")
    lines[len(lines) // 2] = "THE EDITED LINE"
    edited = "\n".join(lines)
    v2 = save(owner, prompt, root, system=edited).version
    assert Blob.objects.get(pk=v2.system_sha).kind == "delta"

    def refuse(*, key: str) -> bytes:
        raise AssertionError(f"whole object {key} fetched")

    monkeypatch.setattr(objects, "object_get", refuse)
    caches_clear()
    api = api_client_for(owner)
    middle = edited.index("THE EDITED LINE") - 100
    body = api.get(_url(v2, field="system", offset=middle, length=300)).json()
    assert body["text"] == edited[middle : middle + 300]
    assert "THE EDITED LINE" in body["text"]
    end = len(edited) - 200
    body = api.get(_url(v2, field="system", offset=end, length=300)).json()
    assert "NEAR-THE-END" in body["text"]
    assert body["total"] == len(edited)


def test_versions_are_untouched_by_reads(world):
    before = PromptVersion.objects.count()
    api_client_for(world.owner).get(_url(world.v2, field="system"))
    assert PromptVersion.objects.count() == before
    _ = content()


def _page_sizes(owner, viewer_client, text: str, queries: dict) -> dict[str, bytes]:
    from django.test import Client

    prompt, root = make_prompt(owner, title="Long", system=text)
    grant_set(actor=owner, prompt=prompt, username=viewer_client.username, role="viewer")
    _, token = share_link_create(actor=owner, prompt=prompt, access="public", version=root)
    pages = {}
    for name, user in (("owner", owner), ("viewer", viewer_client)):
        client = Client()
        client.force_login(user)
        client.get("/playground/")
        caches_clear()
        with CaptureQueriesContext(connection) as captured:
            response = client.get(f"/playground/p/{prompt.pk}/")
        assert response.status_code == 200
        pages[name] = response.content
        queries.setdefault(name, []).append(len(captured))
    caches_clear()
    cache.clear()
    with CaptureQueriesContext(connection) as captured:
        pages["shared"] = Client().get(f"/s/{token}").content
    queries.setdefault("shared", []).append(len(captured))
    return pages


def test_page_html_does_not_grow_with_the_text(settings, local_storage):
    """The version page and the shared page of a 50 KB and a 5 MB text are about the same size:
    each holds the first PLAYGROUND_TEXT_HEAD_CHARS characters, never the rest."""
    owner, viewer = make_user("owner"), make_user("viewer")
    queries: dict[str, list[int]] = {}
    small = _page_sizes(owner, viewer, long_text(11, 50_000, marker="SMALL-END"), queries)
    big = _page_sizes(owner, viewer, long_text(12, 5_000_000, marker="BIG-END"), queries)
    # The same queries for a 50 KB and a 5 MB text.
    for name in ("owner", "viewer", "shared"):
        assert queries[name][0] == queries[name][1], (name, queries)
    head = settings.PLAYGROUND_TEXT_HEAD_CHARS
    for name in ("viewer", "shared"):
        assert abs(len(big[name]) - len(small[name])) < 2_000, name
        assert len(big[name]) < 4 * head + 60_000, name  # head (≤ 4 bytes a char) + the page
        assert b"BIG-END" not in big[name]
        assert b"SMALL-END" not in small[name]
        assert b"of 5,000,000 characters loaded" in big[name]
        assert b"Download full text" in big[name]
    # The owner's page of a 50 KB text carries it in the editor; of a 5 MB text it does not.
    assert len(big["owner"]) < 4 * head + 80_000
    assert b"too long to edit in place" in big["owner"]
    # The editor keeps a text longer than EDITOR_INPLACE_MAX_BYTES by reference (issue #14's
    # large-text mode) instead of embedding it.
    assert b"Long text: 5,000,000 characters" in big["owner"]
    assert b"BIG-END" not in big["owner"]


def test_the_first_screenful_is_escaped(local_storage, settings):
    settings.PLAYGROUND_TEXT_HEAD_CHARS = 100
    from django.test import Client

    owner = make_user("owner")
    text = "<script>alert(1)</script>&" + "x" * 500
    prompt, root = make_prompt(owner, system=text)
    _, token = share_link_create(actor=owner, prompt=prompt, access="public", version=root)
    html = Client().get(f"/s/{token}").content
    assert b"<script>alert(1)" not in html
    assert b"&lt;script&gt;alert(1)&lt;/script&gt;&amp;" in html
    assert b'data-loaded="100"' in html
    assert b'data-total="526"' in html


# --- diffs of long texts ------------------------------------------------------------------------


def _changed_rows(rows):
    return [
        (r["op"], r.get("old"), r.get("new"), r.get("old_no"), r.get("new_no"))
        for r in rows
        if r["op"] != "equal"
    ]


@pytest.mark.parametrize("seed", range(6))
def test_long_text_diff_finds_the_same_changes_as_the_whole_diff(store, settings, seed):
    """Around-the-change diffs (texts above PLAYGROUND_DIFF_LARGE_CHARS) show exactly the
    changed rows, with the same line numbers, as diffing the whole texts."""
    from playground.text.diffing import text_diff
    from playground.text.ranges import version_content_diff

    rng = random.Random(seed)
    owner = make_user(f"differ{seed}")
    text = long_text(30 + seed, 40_000)
    lines = text.split("\n")
    edited = list(lines)
    for _ in range(rng.randrange(1, 4)):
        at = rng.randrange(len(edited))
        kind = rng.choice(["change", "insert", "delete"])
        if kind == "change":
            edited[at] = f"EDITED {at} " + edited[at][:20]
        elif kind == "insert":
            edited[at:at] = [f"INSERTED {at}", f"INSERTED TOO {at}"]
        else:
            del edited[at]
    new_text = "\n".join(edited)
    prompt, root = make_prompt(owner, system=text)
    v2 = save(owner, prompt, root, system=new_text).version
    whole = text_diff("system", text, new_text, limit=None)
    settings.PLAYGROUND_DIFF_LARGE_CHARS = 5_000_000
    assert _changed_rows(
        version_content_diff(before=root, after=v2, limit=None)["texts"][0].rows
    ) == (_changed_rows(whole.rows))
    settings.PLAYGROUND_DIFF_LARGE_CHARS = 30_000  # now both are "long"
    for before, after, expected in ((root, v2, whole), (v2, root, None)):
        caches_clear()
        diff = version_content_diff(before=before, after=after, limit=None)["texts"][0]
        if expected is None:
            expected = text_diff("system", new_text, text, limit=None)
        assert _changed_rows(diff.rows) == _changed_rows(expected.rows)
        assert (diff.added, diff.removed) == (expected.added, expected.removed)
        assert not diff.cut
        assert len(diff.rows) < len(expected.rows)  # the unchanged ends were not diffed
        first = diff.rows[0]
        assert first["old_no"] == diff.lines_before + 1


def test_a_one_line_edit_of_a_6_mb_text_diffs_to_a_small_page(s3_storage, monkeypatch):
    """Default sizes, S3 over HTTP: the diff page of a one-line edit of a 6 MB prompt is a few
    kilobytes, built from the stored delta and a few ranges (no whole object is fetched)."""
    from django.test import Client

    owner = make_user("big")
    text = long_text(40, 6_000_000)
    lines = text.split("\n")
    at = len(lines) // 2
    old_line = lines[at]
    lines[at] = "THE EDITED LINE"
    edited = "\n".join(lines)
    prompt, root = make_prompt(owner, system=text)
    v2 = save(owner, prompt, root, system=edited).version
    assert Blob.objects.get(pk=v2.system_sha).kind == "delta"

    def refuse(*, key: str) -> bytes:
        raise AssertionError(f"whole object {key} fetched")

    monkeypatch.setattr(objects, "object_get", refuse)
    caches_clear()
    client = Client()
    client.force_login(owner)
    page = client.get(f"/playground/p/{prompt.pk}/diff/?a={root.pk}&b={v2.pk}")
    assert page.status_code == 200
    html = page.content.decode()
    assert len(page.content) < 40_000, len(page.content)  # the texts are 6 MB each
    assert "<ins>EDITED</ins>" in html
    assert old_line.split(" ", 1)[0] in html
    assert f'<span class="diff-no">{at + 1}</span>' in html  # numbered as in the whole text
    assert f"{at - 4:,} unchanged lines before" in html
    assert "unchanged to the end" in html
    body = api_client_for(owner).get(f"/api/v1/versions/{v2.pk}/diff/?against={root.pk}").json()
    (system,) = body["texts"]
    assert (system["added"], system["removed"], system["lines_before"]) == (1, 1, at - 4)
    changed = [r for r in system["rows"] if r["op"] != "equal"]
    assert len(changed) == 1
    assert changed[0]["new"] == "THE EDITED LINE\n"
    assert changed[0]["old_no"] == changed[0]["new_no"] == at + 1
    assert len(system["rows"]) <= 9
    # A fold inside the region expands through the same builder.
    rows = client.get(
        f"/playground/p/{prompt.pk}/diff/rows/?a={root.pk}&b={v2.pk}&field=system&start=0&end=3"
    )
    assert rows.status_code == 200
    assert len(rows.content) < 5_000


def test_a_changed_region_longer_than_the_limit_is_cut(store, settings):
    from playground.text.ranges import version_content_diff

    settings.PLAYGROUND_DIFF_LARGE_CHARS = 3_000
    owner = make_user("cutter")
    text = long_text(50, 20_000)
    prompt, root = make_prompt(owner, system=text)
    v2 = save(owner, prompt, root, system=text.replace("quorum", "QUORUM")).version
    diff = version_content_diff(before=root, after=v2, limit=None)["texts"][0]
    assert diff.cut
    assert diff.changed
    assert sum(len(r.get("new") or r.get("old") or "") for r in diff.rows) <= 3_100
    from django.test import Client

    client = Client()
    client.force_login(owner)
    html = client.get(f"/playground/p/{prompt.pk}/diff/?a={root.pk}&b={v2.pk}").content
    assert b"This diff is cut." in html


# --- presigned downloads: the staleness bound ---------------------------------------------------


def _copy_key(sha: str) -> str:
    """Today's plain download copy of a text (textstore.services.blob_export_url)."""
    from django.utils import timezone

    from textstore.selectors import export_key

    return export_key(sha=sha, day=timezone.now().date())


@pytest.mark.parametrize("store", ["local_storage", "s3_storage"])
def test_download_copies_are_swept_once_every_url_to_them_expired(store, request):
    """A copy is handed out only on its day, so with a 300 s TTL yesterday's copies are dead
    from 00:05 today: the sweep deletes those and keys naming no day, and keeps today's."""
    from textstore.selectors import export_key
    from textstore.services import export_copy_sweep

    request.getfixturevalue(store)
    now = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    keys = {
        day: export_key(sha="a" * 64, day=(now - timedelta(days=day)).date()) for day in (0, 1, 3)
    }
    for key in [*keys.values(), "texts/stray"]:
        objects.object_put(key=key, data=b"x")
    assert export_copy_sweep(ttl=300, now=now) == 3
    assert [o.key for o in objects.object_list(prefix="texts")] == [keys[0]]
    # Just after midnight, yesterday's URLs may still be valid: its copy stays.
    objects.object_put(key=keys[1], data=b"x")
    assert export_copy_sweep(ttl=300, now=datetime(2026, 12, 1, 0, 3, tzinfo=UTC)) == 0


def _signed_expiry(url: str):
    """When a SigV4 presigned URL stops working: X-Amz-Date + X-Amz-Expires."""
    from datetime import UTC, datetime, timedelta
    from urllib.parse import parse_qs, urlsplit

    query = parse_qs(urlsplit(url).query)
    signed_at = datetime.strptime(query["X-Amz-Date"][0], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    return signed_at, signed_at + timedelta(seconds=int(query["X-Amz-Expires"][0])), query


def test_presigned_download_expires_after_share_presigned_ttl(s3_storage, settings):
    """With S3, a long text downloads through a presigned GET whose signature expires
    SHARE_PRESIGNED_TTL seconds after it was handed out (moto does not enforce expiry, so the
    signature itself is checked); a revoked link hands out no new URL."""
    import urllib.request
    from datetime import UTC, datetime, timedelta

    settings.TEXTSTORE_INLINE_MAX = 4 * 1024
    settings.TEXTSTORE_CHUNK_CHARS = CHUNK
    settings.SHARE_PRESIGNED_TTL = 123
    settings.PLAYGROUND_DOWNLOAD_PRESIGN_MIN_CHARS = 10_000
    owner = make_user("owner")
    text = long_text(60, 30_000, marker="THE END")
    prompt, root = make_prompt(owner, system=text)
    link, token = share_link_create(actor=owner, prompt=prompt, access="public", version=root)
    before = datetime.now(UTC).replace(microsecond=0)
    response = api_client_for(owner).get(f"/api/v1/versions/{root.pk}/text/download/?field=system")
    assert response.status_code == 302
    url = response.headers["Location"]
    signed_at, expires, query = _signed_expiry(url)
    assert query["X-Amz-Expires"] == ["123"]
    assert before - timedelta(seconds=2) <= signed_at <= datetime.now(UTC) + timedelta(seconds=2)
    assert expires - signed_at == timedelta(seconds=123)
    assert query["response-content-disposition"] == [
        f'attachment; filename="prompt-{prompt.pk}-v1-system.txt"'
    ]
    with urllib.request.urlopen(url) as fetched:  # noqa: S310 - the moto server on loopback
        assert fetched.read().decode("utf-8") == text
        assert fetched.headers["Content-Disposition"].startswith("attachment")
    # The plain copy is written once and reused.
    shared = api_client_for(None).get(f"/api/v1/shared/{token}/text/download/?field=system")
    assert shared.status_code == 302
    assert _signed_expiry(shared.headers["Location"])[2]["X-Amz-Expires"] == ["123"]
    assert [o.key for o in objects.object_list(prefix="texts")] == [_copy_key(root.system_sha)]
    # Revoked: no new URL. One handed out before stays valid until it expires (the bound).
    share_link_revoke(actor=owner, link=link)
    again = api_client_for(None).get(f"/api/v1/shared/{token}/text/download/?field=system")
    assert again.status_code == 404
    # Short texts stream through the worker even with S3.
    settings.PLAYGROUND_DOWNLOAD_PRESIGN_MIN_CHARS = 1_000_000
    streamed = api_client_for(owner).get(f"/api/v1/versions/{root.pk}/text/download/?field=system")
    assert streamed.status_code == 200
    assert streamed.streaming


def test_presigned_download_of_a_text_larger_than_a_part_uses_multipart(s3_storage, settings):
    """An 11 MB text becomes its plain download object in parts, never held whole."""
    import urllib.request

    settings.PLAYGROUND_DOWNLOAD_PRESIGN_MIN_CHARS = 1_000
    owner = make_user("owner")
    text = long_text(61, 11_000_000, marker="THE VERY END")
    prompt, root = make_prompt(owner, system=text)
    response = api_client_for(owner).get(f"/api/v1/versions/{root.pk}/text/download/?field=system")
    assert response.status_code == 302
    with urllib.request.urlopen(response.headers["Location"]) as fetched:  # noqa: S310
        body = fetched.read()
    assert len(body) == len(text.encode("utf-8"))
    assert body.endswith(text[-40:].encode())
    assert objects.object_size(key=_copy_key(root.system_sha)) == len(body)


def test_many_texts_count_together_for_the_page_limit(local_storage, settings):
    from django.test import Client

    settings.PLAYGROUND_PAGE_FULL_TEXT_MAX_CHARS = 10_000
    owner = make_user("owner")
    messages = [{"role": "user", "content": long_text(70 + n, 4_000)} for n in range(3)]
    prompt, _ = make_prompt(owner, system="short", messages=messages)
    client = Client()
    client.force_login(owner)
    # The editor (issue #14's large-text mode) carries texts in place only while they fit
    # EDITOR_INPLACE_MAX_BYTES together; the third is kept by reference, not put in the page.
    settings.EDITOR_INPLACE_MAX_BYTES = 10_000
    html = client.get(f"/playground/p/{prompt.pk}/").content.decode()
    assert "too long to edit in place" in html
    assert 'id="editor-form"' in html
    kept = html.count("Long text: 4,000 characters")
    assert 1 <= kept < 3  # the first message fits in place, the budget runs out after
    settings.PLAYGROUND_PAGE_FULL_TEXT_MAX_CHARS = 20_000
    html = client.get(f"/playground/p/{prompt.pk}/").content.decode()
    assert 'id="editor-form"' in html


def test_attaching_a_long_text_counts_every_line_and_keeps_the_page_small(store, settings):
    """Issue 33: a short prompt replaced by a long text. The diff compares only the first
    PLAYGROUND_DIFF_LARGE_CHARS, but its header counts every added line (a scan, not a diff),
    the page shows PLAYGROUND_DIFF_PAGE_ROWS rows, and the cut is stated at the top with links
    that work (both texts' downloads, both versions' pages)."""
    from django.test import Client

    from playground.text.ranges import version_content_diff

    settings.PLAYGROUND_DIFF_LARGE_CHARS = 20_000
    settings.PLAYGROUND_DIFF_PAGE_ROWS = 50
    owner = make_user("attacher")
    text = "".join(f"attached line {n:06d}: the body of a long document.\n" for n in range(9_000))
    prompt, root = make_prompt(owner, system="Summarise the document.")
    v2 = save(owner, prompt, root, system=text).version
    diff = version_content_diff(before=root, after=v2, limit=None)["texts"][0]
    assert diff.cut
    assert diff.added < 9_000
    assert diff.added_total == 9_000
    assert diff.removed_total == 1
    assert all(r.get("new", "").endswith("\n") for r in diff.rows if r["op"] != "equal")

    client = Client()
    client.force_login(owner)
    response = client.get(f"/playground/p/{prompt.pk}/diff/?a=v1&b=v2")
    html = response.content.decode()
    assert "+~9,000" in html and "−1" in html
    top = html.index("is cut")
    assert top < html.index('class="diff-row')
    assert html.count('class="diff-row') <= 60
    assert "Show the next 50" in html
    download = f"/api/v1/versions/{v2.pk}/text/download/?field=system"
    assert download in html
    assert f"/playground/p/{prompt.pk}/v1/" in html and f"/playground/p/{prompt.pk}/v2/" in html
    whole = b"".join(client.get(download).streaming_content)
    assert whole.decode() == text
