"""The export panel on a long version, in real Chromium: a cut snippet, and the whole export as
a streamed download."""

import pytest

from playground.exports.api_calls import export_render
from playground.selectors import version_content
from playground.services import prompt_create
from tests.browser.test_playground_browser import login
from tests.factories import make_user
from tests.playground.factories import content

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_long_versions_export_panel_shows_heads_and_downloads_the_whole_call(
    page, live_server, settings
):
    settings.PLAYGROUND_EXPORT_INLINE_MAX_CHARS = 20_000
    owner = make_user("ada")
    long = "".join(f"Requirement {n}: keep p99 under 50 ms.\n" for n in range(3000))  # ~110 KB
    prompt, version = prompt_create(actor=owner, title="Long", content=content(system=long))
    whole = export_render(content=version_content(version=version), api="anthropic", format="curl")

    login(page, "ada")
    page.goto(f"/playground/p/{prompt.pk}/")
    page.locator("#export-panel summary").click()
    note = page.locator("#export-cut")
    note.wait_for(state="visible")
    assert "Download full export" in note.inner_text()
    code = page.locator("#export-code").text_content()
    assert "more characters not shown here" in code
    assert len(code) < 30_000 and "Requirement 2999" not in code
    assert page.get_by_role("button", name="Copy").is_disabled()

    with page.expect_download() as info:
        page.get_by_role("link", name="Download full export").click()
    with open(info.value.path(), encoding="utf-8") as handle:
        assert handle.read() == whole
