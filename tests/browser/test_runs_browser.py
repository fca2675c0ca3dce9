"""Runs in real Chromium against the embedded default as `make run` serves it: a separate
server process on a SQLite file with eager tasks (runs on threads of the web process) and the
`echo` provider streaming token by token. Tokens must reach the page before the run is done;
then continue the conversation into a new version, compare two versions and two models, and
the htmx polling fallback with Cancel."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import Embedded
from tests.conftest import browser_context
from tests.factories import PASSWORD

pytestmark = [pytest.mark.browser]

CARD = "#run-current [data-run-card]"
# Slow enough that a run is still running when the page has connected to its stream, and for
# Cancel to arrive before the end.
ECHO_DELAY_MS = 120


@pytest.fixture
def page(browser, embedded):
    context = browser_context(browser, base_url=embedded.url)
    yield context.new_page()
    context.close()


def login(page, username: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


WATCH = """selector => {
    // Record the first moment a card shows output while its run is still running. A mutation
    // observer sees every intermediate state, which polling from the test could miss.
    window.__streamed = window.__streamed || {};
    const look = () => {
        const card = document.querySelector(selector);
        const output = card && card.querySelector('[data-run-output]');
        if (card && card.dataset.status === 'running' && output.textContent && !window.__streamed[selector]) {
            window.__streamed[selector] = output.textContent;
        }
    };
    new MutationObserver(look).observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
}"""


def _watch(page, selector: str = CARD) -> None:
    page.evaluate(WATCH, selector)


def _wait_streaming(page, selector: str = CARD) -> str:
    """Wait until the card showed streamed text while its run was still running; return it."""
    handle = page.wait_for_function(
        "selector => window.__streamed && window.__streamed[selector]", arg=selector
    )
    return handle.json_value()


def _wait_finished(page, selector: str = CARD) -> None:
    page.wait_for_function(
        "selector => { const c = document.querySelector(selector);"
        " return c && ['done', 'failed', 'cancelled'].includes(c.dataset.status); }",
        arg=selector,
    )


def _runs(embedded: Embedded, user: str, version_id: int) -> list[dict[str, Any]]:
    return embedded.api(user, f"/api/v1/versions/{version_id}/runs/")["results"]


def test_run_streams_then_continue_then_compare(page, embedded, artifacts_dir):
    prompt_id, v1 = embedded.data["prompts"]["ada"], embedded.data["versions"]["ada"]
    login(page, "ada")
    page.goto(f"/playground/p/{prompt_id}/")

    page.get_by_label("design", exact=True).fill("a chat service with one Redis node")
    _watch(page)
    page.get_by_role("button", name="Run", exact=True).click()

    partial = _wait_streaming(page)
    # Text is on the page while the run is still running: streamed live, not replayed.
    page.screenshot(path=artifacts_dir / "1-streaming.png", full_page=True)
    (run,) = _runs(embedded, "ada", v1)
    assert run["output"].startswith(partial)
    _wait_finished(page)
    run = embedded.api("ada", f"/api/v1/runs/{run['id']}/")
    assert run["status"] == "done"
    assert "a chat service with one Redis node" in run["output"]
    assert 0 < len(partial) < len(run["output"])
    assert page.locator(f"{CARD} [data-run-output]").text_content() == run["output"]
    stats = " ".join(page.locator(f"{CARD} [data-run-stats]").text_content().split())
    assert f"Output tokens {run['usage']['output_tokens']}" in stats.replace("tokens", "tokens ")
    assert "First token" in stats and "ms" in stats
    page.locator("#run-history").get_by_role("link", name=f"#{run['id']}").wait_for()
    page.screenshot(path=artifacts_dir / "2-done.png", full_page=True)

    # Continue: the next user turn becomes a new version, a child of v1, shown in the tree.
    page.get_by_label("Continue the conversation — the next user turn").fill(
        "Which risk would you fix first?"
    )
    page.get_by_role("button", name="Continue as a new version").click()
    page.wait_for_url(lambda url: url.endswith("/v2/"))  # addresses name version numbers
    versions = embedded.api("ada", f"/api/v1/prompts/{prompt_id}/versions/")
    versions = versions["results"] if isinstance(versions, dict) else versions
    (v2,) = [v["id"] for v in versions if v["parent"] == v1]
    assert page.url.endswith(f"/playground/p/{prompt_id}/v2/")
    assert "Saved v2" in page.locator(".messages").text_content()
    assert page.locator(".tree-panel").get_by_text("v2").count() >= 1
    child = embedded.api("ada", f"/api/v1/versions/{v2}/")["content"]["messages"]
    assert child[1:] == [
        {"role": "assistant", "content": run["output"]},
        {"role": "user", "content": "Which risk would you fix first?"},
    ]
    page.screenshot(path=artifacts_dir / "3-continued.png", full_page=True)

    # Compare v1 and v2 on the same variables, side by side, with a word diff.
    page.goto(f"/playground/p/{prompt_id}/compare/?a={v1}&b={v2}")
    page.get_by_label("design", exact=True).fill("a feed service")
    _watch(page, '[data-slot="a"] [data-run-card]')
    page.get_by_role("button", name="Run both").click()
    _wait_streaming(page, '[data-slot="a"] [data-run-card]')
    _wait_finished(page, '[data-slot="a"] [data-run-card]')
    _wait_finished(page, '[data-slot="b"] [data-run-card]')
    page.locator("#compare-diff").wait_for()
    run_a, run_b = _runs(embedded, "ada", v1)[0], _runs(embedded, "ada", v2)[0]
    assert run_a["variables"] == run_b["variables"] == {"design": "a feed service"}
    assert "1 turn" in page.locator('[data-slot="a"] [data-run-output]').text_content()
    assert "3 turns" in page.locator('[data-slot="b"] [data-run-output]').text_content()
    assert page.locator(".compare-diff-body ins").count() > 0
    assert f"run_a={run_a['id']}" in page.url and f"run_b={run_b['id']}" in page.url
    page.screenshot(path=artifacts_dir / "4-compare.png", full_page=True)
    # The permalink shows the same two runs and their diff, rendered by the server.
    page.reload()
    page.locator(".compare-diff-body ins").first.wait_for()


def test_one_version_on_two_models(page, embedded, artifacts_dir):
    prompt_id, v1 = embedded.data["prompts"]["lin"], embedded.data["versions"]["lin"]
    login(page, "lin")
    page.goto(f"/playground/p/{prompt_id}/compare/?a={v1}&b={v1}")
    page.locator("#compare-b-model").fill("echo-2")
    page.get_by_role("button", name="Run both").click()
    page.locator("#compare-diff").wait_for()
    assert sorted(r["model"] for r in _runs(embedded, "lin", v1)) == ["echo-1", "echo-2"]
    # Words: "echo-1" → "echo-2" differs in its last token only.
    assert page.locator(".compare-diff-body del").first.text_content() == "1"
    assert page.locator(".compare-diff-body ins").first.text_content() == "2"
    page.screenshot(path=artifacts_dir / "models.png", full_page=True)


def test_polling_fallback_without_event_source_and_cancel(page, embedded, artifacts_dir):
    prompt_id, version = embedded.data["prompts"]["kim"], embedded.data["versions"]["kim"]
    page.add_init_script("delete window.EventSource;")
    login(page, "vic")  # a viewer may run
    page.goto(f"/playground/p/{prompt_id}/")
    _watch(page)
    page.get_by_role("button", name="Run", exact=True).click()
    # htmx polls the card: text shows up while it runs.
    _wait_streaming(page)
    page.get_by_role("button", name="Cancel").click()
    _wait_finished(page)
    (run,) = _runs(embedded, "kim", version)
    assert run["status"] == "cancelled" and run["created_by"] == "vic"
    assert page.locator(f"{CARD} [data-run-status]").text_content() == "Cancelled"
    # A viewer cannot continue (it would save a version): no Continue form.
    assert page.get_by_role("button", name="Continue as a new version").count() == 0
    page.screenshot(path=artifacts_dir / "fallback-cancelled.png", full_page=True)
