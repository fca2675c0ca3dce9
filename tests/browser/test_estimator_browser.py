"""The estimator panels in real Chromium: typing updates results and plots through htmx."""

import pytest

from tests.browser.test_accessibility import axe_source, axe_violations  # noqa: F401, F811

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def gpus_shown(page) -> str:
    return page.locator('[data-figure="gpus"] .estimate-value').inner_text()


def test_changing_traffic_updates_gpu_count_and_plot(page, artifacts_dir):
    page.goto("/questions/llm-inference-api/")
    panel = page.locator(".estimator")
    panel.scroll_into_view_if_needed()
    assert gpus_shown(page) == "8"
    plot = page.locator(".estimate-plot svg")
    assert plot.count() == 4  # one chart per SVG (issue 33)
    assert all(svg.get_attribute("role") == "img" for svg in plot.all())
    desc_before = page.locator(".estimate-plot .chart-group-desc").text_content()
    assert "2,000 requests/s" in desc_before  # captions group thousands (issue #23)
    panel.screenshot(path=artifacts_dir / "batching-preset.png")

    traffic = page.get_by_role("textbox", name="Traffic")
    traffic.fill("5000")
    page.wait_for_function(
        "() => document.querySelector('[data-figure=\"gpus\"] .estimate-value').textContent === '20'"
    )
    assert gpus_shown(page) == "20"
    desc_after = page.locator(".estimate-plot .chart-group-desc").text_content()
    assert desc_after != desc_before
    assert "5,000 requests/s" in desc_after
    page.locator(".estimator").screenshot(path=artifacts_dir / "batching-5000.png")

    # A bad value names its field and keeps the last valid results (issue 33: it used to wipe
    # them); fixing it replaces the error with the new results.
    traffic.fill("-1")
    page.get_by_role("alert").filter(has_text="rate: must be positive").wait_for()
    assert page.locator(".estimate-plot svg").count() == 4
    assert gpus_shown(page) == "20"
    assert "last valid inputs" in page.get_by_role("alert").inner_text()
    traffic.fill("250")
    page.wait_for_function(
        "() => document.querySelector('[data-figure=\"gpus\"] .estimate-value')?.textContent === '1'"
    )
    assert page.get_by_role("alert").count() == 0
    low = page.locator(".estimate-plot .chart-group-desc").text_content()
    assert "the timeout, not the traffic, sets the latency" in low


def test_practice_mode_hides_the_answer_until_checked(page, artifacts_dir):
    page.goto("/questions/checkpoint-distribution/")
    page.get_by_label("Practice mode").check()
    page.get_by_role("button", name="Check my answers").wait_for()
    assert page.locator(".estimate-figures").count() == 0
    assert page.locator(".estimate-plot svg").count() == 0
    page.get_by_label("Lower bound").fill("320")
    page.get_by_label("Tree levels").fill("8")
    page.get_by_label("Tree levels").press("Enter")  # Enter checks, like the button
    page.get_by_role("status").filter(has_text="1 of 2 right.").wait_for()
    assert "✓ right: 320" in page.locator(".practice").inner_text()
    assert "✗ the answer is 7" in page.locator(".practice").inner_text()
    assert page.locator(".estimate-figures").is_visible()
    assert page.locator(".estimate-plot svg").count() == 1
    page.locator(".estimator").screenshot(path=artifacts_dir / "checkpoint-practice.png")


def test_storage_panel(page, artifacts_dir):
    page.goto("/questions/data-platform/")
    assert "1.89 PB" in page.locator('[data-figure="total_bytes"]').inner_text()
    page.get_by_role("textbox", name="Retention").fill("30")
    page.wait_for_function(
        "() => document.querySelector('[data-figure=\"total_bytes\"]').textContent.includes('156 TB')"
    )
    page.locator(".estimator").screenshot(path=artifacts_dir / "storage.png")


def test_source_marks_on_the_question_page(page, artifacts_dir):
    page.goto("/questions/checkpoint-distribution/")
    legend = page.locator(".source-legend")
    assert "reported by the question pool" in legend.inner_text()
    assert page.locator(".depth-list .src-pool").first.is_visible()
    assert page.locator(".depth-list .practice-note").first.is_visible()
    page.locator("details.probe summary").first.click()
    assert page.locator("details.probe[open] .look-for .src").first.is_visible()
    page.screenshot(path=artifacts_dir / "checkpoint-sources.png", full_page=False)


def test_estimator_states_pass_axe(page, axe_source):  # noqa: F811 - the imported fixture
    """The estimator panels in every state a user reaches (axe-core WCAG 2 A/AA, as for the
    main pages in test_accessibility.py)."""
    found = []
    page.goto("/questions/checkpoint-distribution/")
    found += [f"checkpoint: {v}" for v in axe_violations(page, axe_source)]
    page.get_by_label("Practice mode").check()
    page.get_by_role("button", name="Check my answers").wait_for()
    found += [f"checkpoint practice: {v}" for v in axe_violations(page, axe_source)]
    page.get_by_label("Lower bound").fill("300")
    page.get_by_role("button", name="Check my answers").click()
    page.get_by_role("status").filter(has_text="0 of 1 right.").wait_for()
    found += [f"checkpoint checked: {v}" for v in axe_violations(page, axe_source)]
    page.goto("/questions/data-platform/")
    page.get_by_role("textbox", name="Retention").fill("-1")
    page.get_by_role("alert").wait_for()
    found += [f"storage with an error: {v}" for v in axe_violations(page, axe_source)]
    assert found == [], "\n".join(found)
