"""The export panel on the prompt page, driven in real Chromium."""

import pytest

from playground.exports.api_calls import Api, ExportFormat, VariablesMode, export_render
from playground.selectors import version_content
from playground.services import prompt_create
from tests.browser.test_playground_browser import login
from tests.factories import make_user
from tests.playground.factories import content

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


# Quotes, a shell expansion, non-ASCII and a placeholder: the page must show them verbatim.
SYSTEM = 'You review designs for "$TEAM" — rank risks, worst first.\nQuote the doc <exactly>.\n'


def _code(page) -> str:
    return page.locator("#export-code").text_content()


def _wait_for_code(page, expected: str) -> None:
    page.wait_for_function(
        "expected => document.getElementById('export-code').textContent === expected", arg=expected
    )


def _selected(page, name: str) -> str | None:
    return page.get_by_role("tab", name=name, exact=True).get_attribute("aria-selected")


def test_export_panel_tabs_copy_and_download(page, new_page, live_server, artifacts_dir):
    owner = make_user("grace")
    prompt, version = prompt_create(
        actor=owner,
        title="Cache reviewer",
        content=content(
            system=SYSTEM,
            messages=[
                {"role": "user", "content": "Review this design: {{design}}"},
                {"role": "assistant", "content": "Which read/write ratio?"},
                {"role": "user", "content": "90/10, p99 under 50 ms."},
            ],
        ),
    )
    stored = version_content(version=version)

    def expected(api: Api, fmt: ExportFormat, variables: VariablesMode = "substitute") -> str:
        return export_render(content=stored, api=api, format=fmt, variables=variables)

    login(page, "grace")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page.goto(f"/playground/p/{prompt.pk}/")

    # Closed until asked for; opening loads the version's own provider as curl.
    assert not page.locator("#export-code").is_visible()
    page.locator("#export-panel summary").click()
    _wait_for_code(page, expected("anthropic", "curl"))
    assert _selected(page, "Anthropic Messages") == "true"
    assert _selected(page, "curl") == "true"
    assert page.locator("#export-filename").inner_text() == "cache-reviewer-v1-anthropic.sh"

    # Format, then API: the code follows each switch.
    page.get_by_role("tab", name="Python").click()
    _wait_for_code(page, expected("anthropic", "python"))
    assert _selected(page, "Python") == "true"
    assert _selected(page, "curl") == "false"
    page.get_by_role("tab", name="OpenAI Chat Completions").click()
    _wait_for_code(page, expected("openai", "python"))
    assert _selected(page, "Anthropic Messages") == "false"
    labelled = page.locator("#export-code-panel").get_attribute("aria-labelledby")
    assert labelled == "export-tab-api-openai export-tab-format-python"

    # Keyboard: arrows move along the format tabs and activate them; End jumps to the last.
    page.get_by_role("tab", name="Python").focus()
    page.keyboard.press("ArrowRight")
    _wait_for_code(page, expected("openai", "typescript"))
    assert page.evaluate("document.activeElement.id") == "export-tab-format-typescript"

    # Placeholders kept: the TypeScript fills them from an editable block.
    page.get_by_label("Keep variables as placeholders").check()
    _wait_for_code(page, expected("openai", "typescript", "keep"))
    assert "const variables = {" in _code(page)
    page.get_by_role("tab", name="TypeScript").focus()
    page.keyboard.press("End")
    _wait_for_code(page, expected("openai", "json", "keep"))
    page.keyboard.press("Home")
    _wait_for_code(page, expected("openai", "curl", "keep"))
    assert "curl always sends" in page.locator("#export-note").inner_text()
    page.get_by_role("tab", name="Python").click()
    _wait_for_code(page, expected("openai", "python", "keep"))

    # Copy puts exactly the code on the clipboard.
    page.get_by_role("button", name="Copy").click()
    page.get_by_role("button", name="Copied").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == expected("openai", "python", "keep")
    page.locator(".panel", has=page.locator("#export-panel")).screenshot(
        path=artifacts_dir / "export-panel.png"
    )
    page.screenshot(path=artifacts_dir / "export-page.png", full_page=True)

    # Download fetches the same export as a named file.
    with page.expect_download() as info:
        page.get_by_role("link", name="Download").click()
    download = info.value
    assert download.suggested_filename == "cache-reviewer-v1-openai.py"
    with open(download.path(), encoding="utf-8") as handle:
        assert handle.read() == expected("openai", "python", "keep")

    # The choices and the open panel are remembered on the next page view.
    page.reload()
    _wait_for_code(page, expected("anthropic", "python", "keep"))  # API: the version's provider
    assert page.get_by_label("Keep variables as placeholders").is_checked()

    # Without the async Clipboard API, Copy falls back to a selected textarea and execCommand.
    fallback = new_page()
    login(fallback, "grace")
    fallback.add_init_script(
        """
        Object.defineProperty(navigator, "clipboard", { value: undefined });
        document.addEventListener("copy", () => {
          const area = document.activeElement;
          window.__copied = area.value.slice(area.selectionStart, area.selectionEnd);
        });
        """
    )
    fallback.goto(f"/playground/p/{prompt.pk}/")
    fallback.locator("#export-panel summary").click()
    fallback.get_by_role("tab", name="JSON").click()
    fallback.get_by_label("Keep variables as placeholders").uncheck()
    _wait_for_code(fallback, expected("anthropic", "json"))
    fallback.get_by_role("button", name="Copy").click()
    fallback.get_by_role("button", name="Copied").wait_for()
    assert fallback.evaluate("window.__copied") == expected("anthropic", "json")

    # A failed load says why and leaves nothing stale to copy; cached exports still show.
    fallback.route(
        "**/export/?*", lambda route: route.fulfill(status=404, json={"detail": "Not found."})
    )
    fallback.get_by_role("tab", name="TypeScript").click()
    fallback.get_by_text("Could not load the export: Not found.").wait_for()
    assert _code(fallback) == ""
    assert fallback.get_by_role("button", name="Copy").is_disabled()
    fallback.locator(".panel", has=fallback.locator("#export-panel")).screenshot(
        path=artifacts_dir / "export-panel-error.png"
    )
    fallback.get_by_role("tab", name="JSON").click()
    _wait_for_code(fallback, expected("anthropic", "json"))
    assert fallback.get_by_role("button", name="Copy").is_enabled()
