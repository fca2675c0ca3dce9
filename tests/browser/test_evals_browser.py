"""Evaluations in Chromium against the embedded default as `make run` serves it (a server
process on a SQLite file, cells run on a thread of the web process with the echo provider):
build a test set in the table editor, import a CSV, start an evaluation, watch its progress bar,
filter failures, diff two columns, the pass rates in the prompt's version tree — axe-clean at
375 and 1280 px, no sideways scroll on a phone."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import Error as PlaywrightError

from tests.browser.conftest import CONTENT, Embedded
from tests.browser.test_accessibility import axe_source as axe_source  # noqa: F401 - a fixture
from tests.browser.test_accessibility import axe_violations
from tests.browser.test_runs_browser import login, page  # noqa: F401

pytestmark = [pytest.mark.browser]

WIDTHS = (1280, 375)
# Six cells of about 30 echo tokens, one at a time on SQLite: at `make run`'s 30 ms a token the
# evaluation takes seconds, long enough for the page (it polls once a second) to see the bar move.
ECHO_DELAY_MS = 30


def _sideways(tab) -> int:
    return tab.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")


def _resized(tab, width: int) -> None:
    """The viewport at `width`, once the page has drawn two frames at it (media queries,
    resize listeners and layout have run)."""
    tab.set_viewport_size({"width": width, "height": 860})
    tab.evaluate(
        "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"
    )


def _check_page(tab, name: str, axe: str, artifacts_dir: Path) -> list[str]:
    problems = []
    for width in WIDTHS:
        _resized(tab, width)
        problems += [f"{name} @{width}: {v}" for v in axe_violations(tab, axe)]
        overflow = _sideways(tab)
        if overflow > 0:
            problems.append(f"{name} @{width}: scrolls sideways by {overflow} px")
        tab.screenshot(path=artifacts_dir / f"{name}-{width}.png", full_page=True)
    tab.set_viewport_size({"width": 1280, "height": 860})
    return problems


def _post(server: Embedded, user: str, path: str, body: dict) -> dict:
    request = urllib.request.Request(
        server.url + path,
        data=json.dumps(body).encode(),
        headers={
            "Authorization": f"Token {server.data['tokens'][user]}",
            "Content-Type": "application/json",
        },
    )
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 (loopback)
        return json.loads(response.read())


def test_build_a_test_set_import_evaluate_and_read_the_matrix(
    page,  # noqa: F811 - the fixture imported above
    embedded,
    axe_source,
    artifacts_dir,
):
    prompt = embedded.data["prompts"]["ada"]
    parent = embedded.data["versions"]["ada"]
    _post(
        embedded,
        "ada",
        f"/api/v1/prompts/{prompt}/versions/",
        {"parent": parent, "content": {**CONTENT, "system": "Answer in one line."}},
    )
    login(page, "ada")
    problems: list[str] = []

    # A new test set, then rows typed into the table editor.
    page.goto(f"/evals/prompt/{prompt}/")
    page.get_by_label("Name").fill("Designs")
    page.get_by_role("button", name="Create test set").click()
    page.wait_for_selector("#testset-table")
    page.get_by_label("Row 1, design").fill("a cache in front of PostgreSQL")
    page.get_by_label("Row 1, expected output").fill("cache")
    page.get_by_role("button", name="Add a row").click()
    added = page.locator("#testset-table tbody tr").last
    added.locator("textarea").first.fill("a queue between services")
    added.locator("textarea").nth(1).fill("queue")
    page.get_by_label("What changed").fill("two designs")
    page.get_by_role("button", name="Save as revision 2").click()
    page.wait_for_selector("text=Saved revision 2 with 2 rows")
    testset = int(page.url.rstrip("/").split("/")[-1])
    saved = embedded.api("ada", f"/api/v1/testsets/{testset}/?revision=2")
    assert [r["variables"]["design"] for r in saved["rows"]] == [
        "a cache in front of PostgreSQL",
        "a queue between services",
    ]
    problems += _check_page(page, "testset", axe_source, artifacts_dir)

    # Import a CSV: its rows are added after the table's.
    page.get_by_label("CSV (a header row").set_input_files(
        files=[
            {
                "name": "more.csv",
                "mimeType": "text/csv",
                "buffer": b"design,expected\na CDN for images,nothing-here\n",
            }
        ]
    )
    page.get_by_role("button", name="Import").click()
    page.wait_for_selector("text=Saved revision 3 with 3 rows")

    # Start an evaluation of both versions, graded on the expected text, and watch the bar.
    page.goto(f"/evals/prompt/{prompt}/")
    problems += _check_page(page, "prompt-evals", axe_source, artifacts_dir)
    page.get_by_role("button", name="Start evaluation").click()
    page.wait_for_selector("#eval-bar")
    seen: list[float] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            value = page.evaluate(
                "() => { const b = document.getElementById('eval-bar'); return b ? b.value : -1 }"
            )
            if value >= 0:
                seen.append(value)
            if page.locator("#eval-progress[data-finished=true]").count():
                break
        except PlaywrightError:  # the page reloads itself once the last cell is in
            break
        page.wait_for_timeout(200)
    page.wait_for_selector("#matrix")
    evaluation = embedded.api("ada", f"/api/v1/prompts/{prompt}/evals/")[0]
    assert evaluation["status"] == "done"
    assert evaluation["progress"] == {"done": 6, "total": 6}
    assert seen == sorted(seen), "the bar only moves forward"
    assert len(set(seen)) >= 2, f"the bar moved while the page watched: {seen}"
    problems += _check_page(page, "evaluation", axe_source, artifacts_dir)

    # Only failures: the CDN row, whose expected text echo never says.
    page.get_by_role("link", name="Only failures").click()
    page.wait_for_selector("text=1 of 3 rows")
    assert page.locator(".matrix-row").count() == 1
    assert "a CDN for images" in page.locator(".matrix-row").inner_text()
    problems += _check_page(page, "evaluation-failures", axe_source, artifacts_dir)

    # A word diff of the two columns' outputs, row by row.
    page.get_by_role("link", name="All rows").click()
    page.get_by_label("Diff the output of column").select_option("0")
    page.get_by_label("against column").select_option("1")
    page.get_by_role("button", name="Show word diff").click()
    page.wait_for_selector(".matrix-row .compare-diff-body")
    assert page.locator(".matrix-row .compare-diff-body del").count() >= 1
    assert page.locator(".matrix-row .compare-diff-body ins").count() >= 1
    problems += _check_page(page, "evaluation-diff", axe_source, artifacts_dir)

    # The prompt's page: each version's pass rate beside it in the tree, linking back here.
    page.goto(f"/playground/p/{prompt}/")
    badges = page.locator("#version-tree .tree-badge")
    assert badges.count() == 2
    assert badges.first.inner_text() == "66% pass"  # 2 of the 3 rows, in each column
    assert badges.first.get_attribute("href") == f"/evals/{evaluation['id']}/"
    for width in WIDTHS:
        _resized(page, width)
        toggle = page.locator(".tree-toggle")
        if toggle.is_visible() and toggle.get_attribute("aria-expanded") != "true":
            toggle.click()  # the tree is a section you open on a phone
            page.evaluate("() => new Promise((done) => requestAnimationFrame(done))")
        assert badges.first.is_visible(), f"the badge is hidden at {width} px"
        box, row = badges.first.bounding_box(), page.locator(".tree-row").first.bounding_box()
        assert box and row and box["x"] + box["width"] <= row["x"] + row["width"] + 1, (
            f"the badge runs out of its row at {width} px"
        )
        problems += [f"tree @{width}: {v}" for v in axe_violations(page, axe_source)]
        if _sideways(page) > 0:
            problems.append(f"tree @{width}: scrolls sideways by {_sideways(page)} px")
        page.screenshot(path=artifacts_dir / f"tree-badges-{width}.png", full_page=True)

    assert problems == [], "\n".join(problems)
