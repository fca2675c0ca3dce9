"""Flows round three (issue 33), in real Chromium at 1280 and 375 px: the diff after a 20 MB text
is attached, the estimator plots on a phone, and the smaller stumbles of item 7 that a page shows.
"""

import re
from typing import Any

import pytest

from tests.browser.test_review_desk_phone_browser import WIDTHS, context_page, login, sideways
from tests.conftest import ARTIFACTS
from tests.factories import make_user
from tests.playground.factories import make_prompt, save

# Screenshots to look at after a run (var/test-artifacts/, like the other browser tests).
SHOTS = ARTIFACTS / "flows-round-three-b"
SHOTS.mkdir(parents=True, exist_ok=True)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MB = 1024 * 1024


def attached_text(size: int) -> tuple[str, int]:
    """A text of about `size` characters of ~120-character lines, and its line count."""
    line = "attached {:07d}: a paragraph of the reference document, pasted whole as context.\n"
    parts: list[str] = []
    total = 0
    while total < size:
        part = line.format(len(parts))
        parts.append(part)
        total += len(part)
    return "".join(parts), len(parts)


@pytest.fixture
def attached(db) -> dict[str, Any]:
    owner = make_user("ada")
    text, lines = attached_text(20 * MB)
    prompt, v1 = make_prompt(owner, title="Attach", system="Answer from the attached document.")
    v2 = save(owner, prompt, v1, "attach the document", system=text).version
    return {"prompt": prompt, "v1": v1, "v2": v2, "lines": lines}


@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_the_diff_of_an_attached_20_mb_text_is_small_true_and_says_it_is_cut(
    browser, live_server, artifacts_dir, attached, width
):
    viewport = WIDTHS[width]
    prompt, lines = attached["prompt"], attached["lines"]
    context, page = context_page(browser, live_server, viewport)
    try:
        login(page, "ada")
        response = page.goto(f"/playground/p/{prompt.pk}/diff/?a=v1&b=v2")
        size = len(response.body())
        print(f"diff page after attaching a 20 MB text ({lines:,} lines): {size:,} bytes")
        assert size <= 300 * 1024
        # The header counts every added line (not just the ones the page compared).
        stat = page.locator(".diff-stat").first.inner_text()
        assert stat.startswith(f"+~{lines:,}"), stat
        assert "−1" in stat
        # The cut is stated at the top, on the first screen, above the first row.
        top = page.locator(".diff-cut-top")
        assert "is cut" in top.inner_text()
        assert top.bounding_box()["y"] < viewport["height"]
        note = page.locator(".diff-cut-note")
        first_row = page.locator(".diff-row").first
        assert note.bounding_box()["y"] < first_row.bounding_box()["y"]
        page.screenshot(path=artifacts_dir / f"diff-20mb-{width}.png")
        page.screenshot(path=SHOTS / f"diff-20mb-{width}.png")
        # Its links exist and work: the newer text downloads whole; the older one too; the
        # version pages open.
        links = {a.inner_text(): a.get_attribute("href") for a in note.locator("a").all()}
        assert set(links) == {"download v1’s text", "download v2’s text", "v1", "v2"}, links
        newer = page.request.get(links["download v2’s text"])
        assert newer.status == 200 and len(newer.body()) == len(attached_text(20 * MB)[0].encode())
        older = page.request.get(links["download v1’s text"])
        assert older.text() == "Answer from the attached document."
        assert page.request.get(links["v2"]).status == 200
        # The page shows a few hundred rows; the rest load on demand, the next batch at a time.
        shown = page.locator(".diff-row").count()
        assert 0 < shown <= 401  # 400 rows; a changed line shows as two
        page.get_by_role("button", name=re.compile("Show the next 400")).click()
        page.wait_for_function(f"() => document.querySelectorAll('.diff-row').length > {shown}")
        assert page.locator(".diff-row").count() <= shown + 400
        page.wait_for_selector(".diff-expand-next")
        scroll = sideways(page)
        assert scroll["scroll"] <= scroll["inner"], scroll
    finally:
        context.close()


FONT_SIZES = """() => [...document.querySelectorAll('.estimate-plot svg')].map((svg) => {
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const sizes = [...svg.querySelectorAll('text')].map(
    (t) => parseFloat(getComputedStyle(t).fontSize) * scale);
  return {width: svg.getBoundingClientRect().width, smallest: Math.min(...sizes),
          count: sizes.length};
})"""


@pytest.mark.parametrize("width", sorted(WIDTHS))
@pytest.mark.parametrize(
    "slug,charts",
    [("llm-inference-api", 4), ("checkpoint-distribution", 1), ("data-platform", 1)],
)
def test_estimator_plots_are_one_chart_per_svg_with_readable_text(
    browser, live_server, artifacts_dir, width, slug, charts
):
    context, page = context_page(browser, live_server, WIDTHS[width])
    try:
        page.goto(f"/questions/{slug}/")
        plot = page.locator(".estimate-plot")
        plot.scroll_into_view_if_needed()
        sizes = page.evaluate(FONT_SIZES)
        print(f"{slug} at {width} px: {sizes}")
        assert len(sizes) == charts
        for chart in sizes:
            assert chart["count"] > 3
            assert chart["smallest"] >= 11, chart
        boxes = [svg.bounding_box() for svg in plot.locator("svg").all()]
        if width == "375":
            # Stacked: one above the other, none side by side.
            assert all(b["x"] == boxes[0]["x"] for b in boxes)
        elif charts > 1:
            assert len({round(b["y"]) for b in boxes}) < len(boxes)  # side by side on a desktop
        scroll = sideways(page)
        assert scroll["scroll"] <= scroll["inner"], scroll
        plot.screenshot(path=artifacts_dir / f"plots-{slug}-{width}.png")
        plot.screenshot(path=SHOTS / f"plots-{slug}-{width}.png")
    finally:
        context.close()


@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_a_zero_pass_chip_is_not_green_and_the_tree_keeps_its_time(
    browser, live_server, artifacts_dir, settings, width
):
    from django.test import Client

    from tests.evals.test_views import _evaluate, _new_testset

    settings.EVAL_EAGER_MODE = settings.RUN_EAGER_MODE = "inline"
    settings.RUN_ECHO_DELAY_MS = 0
    owner = make_user("ada")
    prompt, v1 = make_prompt(owner, title="Chips", provider="echo", model="echo-1")
    v2 = save(
        owner,
        prompt,
        v1,
        "a much longer commit message for the second version",
        system="Be brief.",
        provider="echo",
        model="echo-1",
    ).version
    client = Client()
    client.force_login(owner)
    testset = _new_testset(client, prompt, b"design,expected\na cache,zzzz\na queue,qqqq\n")
    _evaluate(client, prompt, testset, [v1.pk, v2.pk])
    context, page = context_page(browser, live_server, WIDTHS[width])
    try:
        login(page, "ada")
        page.goto(f"/playground/p/{prompt.pk}/")
        toggle = page.locator(".tree-toggle")
        if toggle.is_visible() and toggle.get_attribute("aria-expanded") != "true":
            toggle.click()
        chip = page.locator("#version-tree .tree-badge").first
        assert chip.inner_text() == "0% pass"
        colours = chip.evaluate(
            "(el) => [getComputedStyle(el).backgroundColor, getComputedStyle(el).color]"
        )
        ok = page.evaluate(
            "() => getComputedStyle(document.documentElement).getPropertyValue('--ok').trim()"
        )
        print(f"0% chip at {width}: {colours}, --ok is {ok}")
        assert "tree-badge-bad" in (chip.get_attribute("class") or "")
        green = page.evaluate(
            """() => { const probe = document.createElement('span');
                probe.style.color = 'var(--ok)'; document.body.append(probe);
                const c = getComputedStyle(probe).color; probe.remove(); return c; }"""
        )
        assert colours[1] != green
        page.locator("#version-tree").screenshot(path=SHOTS / f"tree-chip-{width}.png")
        page.locator("#version-tree").screenshot(path=artifacts_dir / f"tree-chip-{width}.png")
        # Every row's time is whole inside its row (not clipped by the badge and labels).
        for row in page.locator("#version-tree .tree-row").all():
            time = row.locator(".tree-meta time")
            if not time.is_visible():
                continue  # phones keep the time in the row's tooltip and the version card
            inner = time.evaluate(
                "(el) => [el.getBoundingClientRect().right, el.scrollWidth, el.clientWidth]"
            )
            assert inner[0] <= row.bounding_box()["x"] + row.bounding_box()["width"] + 0.5, inner
    finally:
        context.close()


@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_the_smaller_stumbles_at_both_widths(browser, live_server, artifacts_dir, settings, width):
    """Item 7 where a page shows it: a login-only link says why to log in; a revoked link's page
    keeps "Log out"; the run page shows the request sent; a bad estimator input keeps the
    results."""
    from playground.runs.services import run_create, run_execute
    from playground.services import share_link_create, share_link_revoke

    settings.RUN_ECHO_DELAY_MS = 0
    viewport = WIDTHS[width]
    owner = make_user("ada")
    prompt, v1 = make_prompt(
        owner,
        title="Stumbles",
        provider="echo",
        model="echo-1",
        system="Review {{design}} briefly.",
        variables={"design": "a queue"},
    )
    _, login_token = share_link_create(actor=owner, prompt=prompt, access="login", version=v1)
    revoked, revoked_token = share_link_create(
        actor=owner, prompt=prompt, access="public", version=v1
    )
    share_link_revoke(actor=owner, link=revoked)
    run = run_create(actor=owner, version=v1, variables={"design": "a cache"}, enqueue=False).run
    run_execute(run_id=run.pk)

    anonymous_context, anonymous = context_page(browser, live_server, viewport)
    context, page = context_page(browser, live_server, viewport)
    try:
        anonymous.goto(f"/s/{login_token}")
        anonymous.wait_for_url("**/accounts/login/**")
        reason = anonymous.locator(".login-reason")
        assert "only for people with a Redline account" in reason.inner_text()
        assert reason.bounding_box()["y"] < viewport["height"]
        anonymous.screenshot(path=SHOTS / f"login-reason-{width}.png")
        anonymous.screenshot(path=artifacts_dir / f"login-reason-{width}.png")

        login(page, "ada")
        response = page.goto(f"/s/{revoked_token}")
        assert response.status == 410
        assert page.get_by_role("heading", name="This link was revoked").is_visible()
        toggle = page.locator(".nav-toggle")
        if toggle.is_visible():
            toggle.click()  # folded behind "Menu" on a phone
        assert page.get_by_role("button", name="Log out").is_visible()
        page.screenshot(path=SHOTS / f"revoked-{width}.png")

        page.goto(f"/playground/runs/{run.pk}/")
        summary = page.locator("#run-request summary")
        assert summary.inner_text().startswith("Request sent: POST ")
        summary.click()
        body = page.locator(".run-request-json")
        assert "Review a cache briefly." in body.inner_text()
        assert '"model": "echo-1"' in body.inner_text()
        page.locator("#run-request").screenshot(path=SHOTS / f"run-request-{width}.png")
        scroll = sideways(page)
        assert scroll["scroll"] <= scroll["inner"], scroll

        page.goto("/questions/llm-inference-api/")
        traffic = page.get_by_role("textbox", name="Traffic")
        traffic.fill("-5")
        alert = page.get_by_role("alert").filter(has_text="rate: must be positive")
        alert.wait_for()
        assert "last valid inputs" in alert.inner_text()
        assert page.locator(".estimate-figures").is_visible()
        assert page.locator(".estimate-plot svg").count() == 4
        page.locator(".estimator").screenshot(path=SHOTS / f"estimator-error-{width}.png")
    finally:
        context.close()
        anonymous_context.close()
