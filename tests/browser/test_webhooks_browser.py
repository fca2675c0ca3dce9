"""The webhooks page in Chromium against the embedded default (issue #32): add a webhook (its
secret shown once), see a delivery reach a loopback receiver with its attempt logged, redeliver
it — axe-clean at 1280 and 375 px, no sideways scroll on a phone."""

from __future__ import annotations

import json
import os
import urllib.request

import pytest

from tests.browser.conftest import CONTENT, Embedded
from tests.browser.test_accessibility import axe_source as axe_source  # noqa: F401 - a fixture
from tests.browser.test_accessibility import axe_violations
from tests.browser.test_runs_browser import login, page  # noqa: F401
from tests.webhooks.receiver import receiver_running

pytestmark = [pytest.mark.browser]

WIDTHS = (1280, 375)


@pytest.fixture(scope="module", autouse=True)
def _loopback_allowed():
    """The embedded server (started after this, with the environment it finds) may send to the
    receiver on loopback."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WEBHOOK_ALLOW_PRIVATE_URLS", "1")
        yield


def _check(tab, name: str, axe: str, artifacts_dir) -> list[str]:
    problems = []
    for width in WIDTHS:
        tab.set_viewport_size({"width": width, "height": 860})
        tab.evaluate(
            "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
        )
        problems += [f"{name} @{width}: {v}" for v in axe_violations(tab, axe)]
        sideways = tab.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")
        if sideways > 0:
            problems.append(f"{name} @{width}: scrolls sideways by {sideways} px")
        tab.screenshot(path=artifacts_dir / f"{name}-{width}.png", full_page=True)
    tab.set_viewport_size({"width": 1280, "height": 860})
    return problems


def _save_version(server: Embedded, user: str) -> None:
    prompt, parent = server.data["prompts"][user], server.data["versions"][user]
    request = urllib.request.Request(
        f"{server.url}/api/v1/prompts/{prompt}/versions/",
        data=json.dumps({"parent": parent, "content": {**CONTENT, "system": "Be brief."}}).encode(),
        headers={
            "Authorization": f"Token {server.data['tokens'][user]}",
            "Content-Type": "application/json",
        },
    )
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 (loopback)
        assert response.status == 201


def test_add_a_webhook_see_its_delivery_and_redeliver(
    page,  # noqa: F811 - the fixture imported above
    embedded,
    axe_source,
    artifacts_dir,
):
    assert os.environ["WEBHOOK_ALLOW_PRIVATE_URLS"] == "1"
    prompt = embedded.data["prompts"]["ada"]
    problems: list[str] = []
    with receiver_running() as receiver:
        login(page, "ada")
        page.goto(f"/playground/p/{prompt}/")
        page.get_by_role("link", name="Webhooks").click()
        page.wait_for_url(f"**/webhooks/prompt/{prompt}/")
        page.get_by_text("No webhooks yet.").wait_for()
        problems += _check(page, "webhooks-empty", axe_source, artifacts_dir)

        page.get_by_label("Payload URL").fill(receiver.url)
        page.get_by_label("An evaluation finished").uncheck()
        page.get_by_role("button", name="Add webhook").click()
        secret = page.get_by_label("Signing secret").input_value()
        assert secret.startswith("whsec_")
        problems += _check(page, "webhooks-secret", axe_source, artifacts_dir)

        _save_version(embedded, "ada")
        receiver.wait_for(2)  # version.created and label.moved (main moved)
        page.goto(f"/webhooks/prompt/{prompt}/")
        # Shown once: the page read again has no secret.
        assert secret not in page.content()
        page.get_by_text("HTTP 200").first.wait_for()
        rows = page.locator("table.stack-table tbody tr")
        assert rows.count() == 2
        problems += _check(page, "webhooks-deliveries", axe_source, artifacts_dir)

        first = rows.last.locator("td").first.inner_text().split()[0]  # "#<id>"
        page.get_by_role("button", name=f"Redeliver delivery {first[1:]}").click()
        page.get_by_text(f"Delivery {first} queued again").wait_for()
        receiver.wait_for(3)
        assert receiver.requests[2].body in (receiver.requests[0].body, receiver.requests[1].body)
        problems += _check(page, "webhooks-redelivered", axe_source, artifacts_dir)

        # A URL Redline will not send to is refused with the form's message, kept in the form
        # (the browser's own URL check is taken off to reach the server's).
        page.get_by_label("Payload URL").fill("ftp://example.com/hook")
        page.evaluate("document.getElementById('webhook-url').type = 'text'")
        page.get_by_role("button", name="Add webhook").click()
        page.get_by_role("alert").wait_for()
        assert "https://" in page.get_by_role("alert").inner_text()
        problems += _check(page, "webhooks-error", axe_source, artifacts_dir)
    assert problems == []
