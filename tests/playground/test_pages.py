"""The prompt page stays bounded as history grows: the version tree is a window of the history
(the newest versions, the selected one and its ancestors), the same number of queries whatever
the history's length, and older versions load on demand."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import make_user
from tests.playground.factories import make_prompt, save

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_window(settings):
    settings.PLAYGROUND_TREE_WINDOW = 6
    settings.PLAYGROUND_TREE_ANCESTRY = 4
    settings.PLAYGROUND_TREE_MAX = 30


def grow(owner, prompt, versions, count):
    """Save `count` more versions: mostly on the newest, every fifth from v1 (a fork)."""
    for n in range(count):
        parent = versions[0] if n % 5 == 4 else versions[-1]
        versions.append(
            save(
                owner, prompt, parent, f"edit {len(versions) + 1}", system=f"s{len(versions)}"
            ).version
        )
    return versions


def rows(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'class="tree-row[^"]*"[^>]*data-number="(\d+)"', html)]


def queries(client, path: str) -> tuple[int, str]:
    client.get(path)  # warm: the texts of the version on show are cached like on a server
    with CaptureQueriesContext(connection) as captured:
        response = client.get(path)
    assert response.status_code == 200
    return len(captured), response.content.decode()


def test_prompt_page_queries_do_not_grow_with_history(client, small_window):
    owner = make_user("owner")
    client.force_login(owner)
    prompt, v1 = make_prompt(owner)
    versions = grow(owner, prompt, [v1], 7)
    old = versions[5]  # v6: its page draws it with its ancestors
    paths = [f"/playground/p/{prompt.pk}/", f"/playground/p/{prompt.pk}/?v={old.pk}"]
    small = [queries(client, path) for path in paths]
    grow(owner, prompt, versions, 52)
    large = [queries(client, path) for path in paths]
    assert [count for count, _ in small] == [count for count, _ in large]
    # The default page: the newest 6 of 60 (and main's ancestors, among them).
    drawn = rows(large[0][1])
    assert drawn[:6] == [60, 59, 58, 57, 56, 55]
    assert len(drawn) <= 6 + 1 + 4
    assert "older versions" in large[0][1]
    assert "Show older versions" in large[0][1]
    # An old version: drawn, with its ancestry down to the root, below a gap.
    drawn = rows(large[1][1])
    assert 6 in drawn
    assert drawn[-1] == 1
    assert len(drawn) <= 6 + 1 + 4


def test_tree_fragment_draws_more_of_the_newest(client, small_window):
    owner = make_user("owner")
    client.force_login(owner)
    prompt, v1 = make_prompt(owner)
    versions = grow(owner, prompt, [v1], 29)
    newest = versions[-1]
    url = f"/playground/p/{prompt.pk}/tree/?v={newest.pk}&show=12&from=24"
    small_count, html = queries(client, url)
    drawn = rows(html)
    assert drawn[:12] == list(range(30, 18, -1))
    assert 'data-reveal="24"' in html
    assert "show=18" in html  # the next "Show older versions" asks for one more window
    # A child whose parent is not drawn names it and has a stub; drawn parents have edges.
    stubs = re.findall(r'class="tree-stub" data-parent="(\d+)" data-child="(\d+)"', html)
    assert stubs and all(int(p) not in {v.pk for v in versions[18:]} for p, _ in stubs)
    assert "from v" in html
    # Everything: no gap, no button; the same number of queries.
    large_count, html = queries(client, url.replace("show=12", "show=30"))
    assert rows(html) == list(range(30, 0, -1))
    assert "Show older versions" not in html
    assert "older version" not in html
    assert large_count == small_count
    # Capped at PLAYGROUND_TREE_MAX, rounded up to whole windows.
    assert rows(client.get(url.replace("show=12", "show=999")).content.decode())[-1] == 1


@pytest.mark.parametrize("show", ["0", "-6", "x", "1e3", "9999999999"])
def test_tree_fragment_rejects_a_bad_count(client, show):
    owner = make_user("owner")
    client.force_login(owner)
    prompt, v1 = make_prompt(owner)
    response = client.get(f"/playground/p/{prompt.pk}/tree/?v={v1.pk}&show={show}")
    assert response.status_code == 400
    assert b"show" in response.content


def test_tree_fragment_is_404_for_others(client):
    owner = make_user("owner")
    prompt, v1 = make_prompt(owner)
    client.force_login(make_user("mallory"))
    assert client.get(f"/playground/p/{prompt.pk}/tree/?v={v1.pk}").status_code == 404
    other, w1 = make_prompt(owner, title="Other")
    client.force_login(owner)
    # A version of another prompt is not a version of this one.
    assert client.get(f"/playground/p/{prompt.pk}/tree/?v={w1.pk}").status_code == 404


def test_tree_rows_escape_user_text(client, small_window):
    owner = make_user('o"<b>wner')
    client.force_login(owner)
    prompt, v1 = make_prompt(owner)
    message = '"><img src=x onerror=alert(1)> & <script>x</script>'
    save(owner, prompt, v1, message, system="two")
    html = client.get(f"/playground/p/{prompt.pk}/").content.decode()
    tree = html[html.index('<ol class="tree-rows">') : html.index("</ol>", html.index("tree-rows"))]
    assert "<img" not in tree
    assert "<script>" not in tree
    assert 'o"<b>' not in tree
    assert 'title="v2: &quot;&gt;&lt;img src=x onerror=alert(1)&gt; &amp; &lt;script&gt;' in tree
    assert "o&quot;&lt;b&gt;wner" in tree
