"""Long texts load a range at a time as the reader scrolls, on the version page and on the
shared page; "Load more" works from the keyboard; a refused range shows an error line."""

import pytest

from playground.services import share_link_create, share_link_revoke
from tests.browser.test_accessibility import axe_source, axe_violations  # noqa: F401
from tests.browser.test_playground_browser import login
from tests.factories import make_user
from tests.playground.factories import make_prompt
from tests.playground.test_text_ranges import long_text

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHARS = 2_000_000
MARKER = "MARKER-NEAR-THE-END"


def _loaded(page) -> int:
    return int(page.locator("[data-lazy-text]").first.get_attribute("data-loaded") or 0)


def _scroll_to_the_end(page) -> int:
    """Scroll down until the text is complete; returns how many scroll steps it took."""
    steps = 0
    box = page.locator("[data-lazy-text]").first
    while box.get_attribute("data-complete") != "true":
        before = _loaded(page)
        # Scroll the end of the loaded text into view (the editor may follow it on the page).
        box.locator(".lazy-text-sentinel").scroll_into_view_if_needed()
        page.wait_for_function(
            "(before) => { const box = document.querySelector('[data-lazy-text]');"
            " return Number(box.dataset.loaded) > before || box.dataset.complete === 'true'; }",
            arg=before,
        )
        steps += 1
        assert steps < 200
    return steps


def _check_lazy_view(page, artifacts_dir, name: str, axe_source: str) -> None:  # noqa: F811
    box = page.locator("[data-lazy-text]").first
    status = box.locator(".lazy-text-status")
    head = _loaded(page)
    assert head == 16_384
    assert status.inner_text() == f"16,384 of {CHARS:,} characters loaded"
    assert MARKER not in box.locator("pre").inner_text()
    assert axe_violations(page, axe_source) == []
    box.locator("pre").scroll_into_view_if_needed()
    page.evaluate("() => window.scrollBy(0, -120)")
    page.screenshot(path=artifacts_dir / f"{name}-first-screen.png")

    # Keyboard: "Load more" fetches the next range.
    more = box.get_by_role("button", name="Load more")
    more.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(
        "(head) => Number(document.querySelector('[data-lazy-text]').dataset.loaded) > head",
        arg=head,
    )
    assert _loaded(page) >= head + 65_536  # (focusing the button may also bring the end near)

    steps = _scroll_to_the_end(page)
    assert steps >= 10  # range by range, not all at once
    assert _loaded(page) == CHARS
    assert status.inner_text() == f"{CHARS:,} of {CHARS:,} characters loaded"
    text = box.locator("pre").inner_text()
    assert MARKER in text[-200:]
    assert len(text) == CHARS
    assert not more.is_visible()
    assert axe_violations(page, axe_source) == []
    box.locator(".lazy-text-bar").scroll_into_view_if_needed()
    page.screenshot(path=artifacts_dir / f"{name}-loaded.png")


def test_version_page_loads_a_long_text_as_the_reader_scrolls(
    new_page,
    artifacts_dir,
    axe_source,  # noqa: F811
):
    owner = make_user("lena")
    prompt, _ = make_prompt(owner, title="Long prompt", system=long_text(21, CHARS, marker=MARKER))
    page = new_page()
    login(page, "lena")
    page.goto(f"/playground/p/{prompt.pk}/")
    assert "too long to edit in place" in page.content()
    download = page.get_by_role("link", name="Download full text")
    assert download.get_attribute("href").endswith("/text/download/?field=system")
    _check_lazy_view(page, artifacts_dir, "version-page", axe_source)
    with page.expect_download() as started:
        download.click()
    saved = started.value
    assert saved.suggested_filename == f"prompt-{prompt.pk}-v1-system.txt"
    body = saved.path().read_text(encoding="utf-8")
    assert len(body) == CHARS
    assert MARKER in body[-200:]


def test_shared_page_loads_ranges_and_stops_when_the_link_is_revoked(
    new_page,
    artifacts_dir,
    axe_source,  # noqa: F811
):
    owner = make_user("mila")
    prompt, root = make_prompt(
        owner, title="Shared long", system=long_text(22, CHARS, marker=MARKER)
    )
    link, token = share_link_create(actor=owner, prompt=prompt, access="public", version=root)
    page = new_page()
    page.goto(f"/s/{token}")
    _check_lazy_view(page, artifacts_dir, "shared-page", axe_source)

    # A second reader is part-way through when the link is revoked: the next range is refused
    # and the page says so, in an error line.
    reader = new_page()
    reader.goto(f"/s/{token}")
    share_link_revoke(actor=owner, link=link)
    box = reader.locator("[data-lazy-text]")
    box.get_by_role("button", name="Load more").click()
    error = box.get_by_role("alert")
    error.wait_for()
    assert "no longer available" in error.inner_text()
    assert _loaded(reader) == 16_384
    assert axe_violations(reader, axe_source) == []
    error.scroll_into_view_if_needed()
    reader.screenshot(path=artifacts_dir / "shared-revoked.png")


def test_diff_of_a_long_text_shows_only_around_the_change(
    new_page,
    artifacts_dir,
    axe_source,  # noqa: F811
):
    from tests.playground.factories import save

    owner = make_user("nina")
    text = long_text(23, CHARS)
    lines = text.split("\n")
    at = len(lines) // 2
    lines[at] = "THE EDITED LINE"
    prompt, root = make_prompt(owner, title="Long diff", system=text)
    v2 = save(owner, prompt, root, system="\n".join(lines)).version
    page = new_page()
    login(page, "nina")
    page.goto(f"/playground/p/{prompt.pk}/diff/?a={root.pk}&b={v2.pk}")
    notes = page.locator(".diff-fold-note").all_inner_texts()
    assert f"⋯ {at - 4:,} unchanged lines before" in notes
    assert any(note.startswith("⋯ unchanged to the end (") for note in notes)
    assert page.locator(".diff-row").count() < 20
    assert "EDITED" in page.locator(".diff-insert").inner_text()
    assert axe_violations(page, axe_source) == []
    page.screenshot(path=artifacts_dir / "long-diff.png", full_page=True)
