"""Issue 12 in Chromium: label controls, the version tree, folded diffs, share-dialog errors,
expiry time zones (a New York browser) and the 390 px header. Screenshots land in
var/test-artifacts/<test>/."""

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from playground.models import Label, PromptVersion, ShareLink
from playground.services import label_move
from tests.conftest import browser_context
from tests.factories import PASSWORD, make_user
from tests.playground.factories import make_prompt, save

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def login(page, username: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r".*/(?!accounts/login).*"))


def context_page(browser, live_server, **options):
    context = browser_context(browser, base_url=live_server.url, **options)
    return context, context.new_page()


def test_label_controls_and_the_tree(page, artifacts_dir):
    owner = make_user("ada")
    prompt, v1 = make_prompt(owner, title="Forked prompt")
    v2 = save(owner, prompt, v1, "two", system="two").version
    v3 = save(owner, prompt, v2, "three", system="three").version
    v4 = save(owner, prompt, v3, "four", system="four").version
    v5 = save(owner, prompt, v4, "five", system="five").version
    v6 = save(owner, prompt, v2, "branch from v2", system="six").version
    assert Label.objects.get(name="main").version == v5
    login(page, "ada")
    page.goto(f"/playground/p/{prompt.pk}/?v={v6.pk}")

    # The edge into v6 starts at v2's dot, not at v5's, and runs in its own lane.
    edge = page.locator(f"path.tree-edge[data-child='{v6.pk}']")
    v2_dot = page.locator(f"circle[data-version='{v2.pk}']")
    v5_dot = page.locator(f"circle[data-version='{v5.pk}']")
    start = re.match(r"M(\d+),(\d+)", edge.get_attribute("d")).groups()
    assert start == (v2_dot.get_attribute("cx"), v2_dot.get_attribute("cy"))
    assert page.locator(f"circle[data-version='{v6.pk}']").get_attribute(
        "cx"
    ) != v5_dot.get_attribute("cx")
    page.locator(".tree-panel").screenshot(path=artifacts_dir / "tree-forked.png")

    # One Tab stop per version: tabbing through the tree visits each version's link once.
    page.locator("#compare-button").focus()
    visited = []
    for _ in range(30):
        page.keyboard.press("Tab")
        focused = page.evaluate(
            "() => { const e = document.activeElement;"
            " const row = e.closest('.tree-row'); const graph = e.closest('.tree-graph');"
            " return {row: row ? row.dataset.number : null, graph: !!graph, tag: e.tagName,"
            " type: e.type || ''}; }"
        )
        assert not focused["graph"], "the graph must not take focus"
        if focused["row"] is None and visited:
            break
        if focused["tag"] == "A":
            visited.append(focused["row"])
    assert sorted(visited) == ["1", "2", "3", "4", "5", "6"], visited

    # Create a label on v6, move main here (compare-and-set), protect it, read the history.
    panel = page.locator("#labels-panel")
    panel.get_by_label("New label on v6").fill("staging")
    panel.get_by_role("button", name="Create label").click()
    page.wait_for_selector("text=Created “staging” at v6.")
    assert page.locator(".tree-row[data-number='6'] .label-staging").count() == 1
    # Someone moves main behind the page's back: the move says who, and offers a retry.
    label_move(actor=owner, prompt=prompt, name="main", version=v4)
    panel.locator(".label-item[data-label='main']").get_by_role("button", name="Move to v6").click()
    error = page.locator("#label-error")
    error.wait_for()
    assert "points at v4" in error.inner_text() and "ada moved it" in error.inner_text()
    page.screenshot(path=artifacts_dir / "label-conflict.png", full_page=True)
    error.get_by_role("button", name=re.compile("Move “main” from v4 to v6 anyway")).click()
    page.wait_for_selector("text=Moved “main” at v6.")
    assert Label.objects.get(name="main").version == v6
    panel.locator(".label-item[data-label='main']").get_by_role("button", name="Protect").click()
    page.wait_for_selector("text=“main” is protected")
    assert Label.objects.get(name="main").protected
    panel.locator("summary", has_text="Move history").click()
    history = panel.locator(".label-history").inner_text()
    assert "main: v4 → v6 by ada" in history and "staging: created → v6 by ada" in history
    panel.screenshot(path=artifacts_dir / "labels-panel.png")

    # A save with no change creates nothing, and says so.
    page.get_by_role("button", name="Save version").click()
    page.wait_for_selector("text=No changes — nothing saved.")
    assert PromptVersion.objects.filter(prompt=prompt).count() == 6


def test_folded_long_diff(page, artifacts_dir):
    owner = make_user("bo")
    text = "".join(
        f"Line {n:05d}: unchanged text of a long prompt, kept as it was.\n" for n in range(5000)
    )
    assert len(text.encode()) > 300_000
    prompt, v1 = make_prompt(owner, title="Long", system=text)
    edited = text.replace("Line 02000: unchanged", "Line 02000: EDITED").replace(
        "Line 04000: unchanged", "Line 04000: ALSO EDITED"
    )
    v2 = save(owner, prompt, v1, "edit", system=edited).version
    login(page, "bo")
    response = page.goto(f"/playground/p/{prompt.pk}/diff/?a={v1.pk}&b={v2.pk}")
    size = len(response.body())
    print(f"folded diff page: {size} bytes for a {len(text.encode())}-byte prompt")
    assert size < 60_000
    first = page.locator("ins", has_text="EDITED").first
    assert first.is_visible() and first.bounding_box()["y"] < 860, "the edit is on the first screen"
    page.screenshot(path=artifacts_dir / "diff-folded.png")

    # Expand the last 20 lines of the first fold, then all of it (fetched on demand).
    fold = page.locator(".diff-fold").first
    assert "1997 unchanged lines" in fold.inner_text()
    fold.get_by_role("button", name=re.compile("Show the last 20")).click()
    page.wait_for_selector(".diff-fold:has-text('1977 unchanged lines')")
    assert page.get_by_text("Line 01990: unchanged").is_visible()
    page.locator(".diff-fold").first.get_by_role("button", name=re.compile("Show all 1977")).click()
    page.wait_for_selector("text=Line 00000: unchanged")

    # Next / previous change.
    page.get_by_role("button", name="↓ Next change").click()
    page.get_by_role("button", name="↓ Next change").click()
    # The focused row is where the change starts: old line 4001 (its new text is the next row).
    focused = page.evaluate("() => document.activeElement.textContent")
    assert focused.startswith("4001") and "Line 04000" in focused
    assert page.locator("#diff-position").inner_text() == "Change 2 of 2"
    page.keyboard.press("p")
    assert page.evaluate("() => document.activeElement.textContent").startswith("2001")
    assert page.locator("#diff-position").inner_text() == "Change 1 of 2"

    # Side by side.
    page.get_by_role("link", name="Side by side").click()
    row = page.locator(".diff-split.diff-change").first
    assert "unchanged" in row.locator(".diff-old").inner_text()
    assert "EDITED" in row.locator(".diff-new").inner_text()
    page.screenshot(path=artifacts_dir / "diff-side-by-side.png")


def test_share_dialog_errors_and_new_york_expiry(browser, live_server, artifacts_dir):
    owner = make_user("cy")
    prompt, v1 = make_prompt(owner, title="Shared prompt")
    context, page = context_page(browser, live_server, timezone_id="America/New_York")
    try:
        login(page, "cy")
        page.goto(f"/playground/p/{prompt.pk}/")
        # Version times read in the browser's zone, with the zone named (the page's script
        # rewrites the server's UTC text once it runs).
        page.wait_for_function(
            "() => !document.querySelector('.tree-meta time').textContent.endsWith('UTC')"
        )
        row_time = page.locator(".tree-meta time").first.inner_text()
        assert re.search(r"EST|EDT|GMT-[45]", row_time), row_time
        page.get_by_role("button", name="Share").click()
        dialog = page.locator("#share-dialog")

        # A good link first, so that a stale "Link created" box could show.
        dialog.get_by_role("button", name="Create link").click()
        first_url = dialog.locator("#new-link-url").input_value()
        assert "/s/rl_" in first_url

        # An expiry in the past: the error shows at the field, the old link is gone.
        past = datetime.now(ZoneInfo("America/New_York")) - timedelta(hours=1)
        dialog.get_by_label(re.compile("^Expires")).fill(past.strftime("%Y-%m-%dT%H:%M"))
        dialog.get_by_role("button", name="Create link").click()
        error = dialog.locator("#link-error")
        error.wait_for()
        assert "must be in the future" in error.inner_text()
        assert dialog.locator("#new-link-url").count() == 0
        assert dialog.get_by_label(re.compile("^Expires")).get_attribute("aria-invalid") == "true"
        dialog.screenshot(path=artifacts_dir / "share-expiry-error.png")

        # An unknown username: at the username field.
        dialog.get_by_label("Username").fill("nobody-here")
        dialog.get_by_role("button", name="Share", exact=True).click()
        grant_error = dialog.locator("#grant-error")
        grant_error.wait_for()
        assert "no account named 'nobody-here'" in grant_error.inner_text()
        assert dialog.get_by_label("Username").input_value() == "nobody-here"
        dialog.screenshot(path=artifacts_dir / "share-username-error.png")

        # "now + 2 h" picked in New York is two hours from now, not refused as past.
        later = datetime.now(ZoneInfo("America/New_York")) + timedelta(hours=2)
        assert "(America/New_York)" in dialog.locator("label[for='link-expires']").inner_text()
        dialog.get_by_label(re.compile("^Expires")).fill(later.strftime("%Y-%m-%dT%H:%M"))
        dialog.get_by_role("button", name="Create link").click()
        dialog.locator("#new-link-url, #link-error").first.wait_for()
        assert dialog.locator("#link-error").count() == 0, dialog.locator(
            "#link-error"
        ).inner_text()
        assert dialog.locator("#new-link-url").input_value() != first_url
        link = ShareLink.objects.filter(expires_at__isnull=False).get()
        delta = link.expires_at - later.replace(second=0, microsecond=0)
        assert abs(delta.total_seconds()) < 1
        # Shown back in New York time, with the zone named (once the refreshed list is
        # localised: the new link's URL shows before the list is swapped in).
        page.wait_for_function(
            "() => { const t = document.querySelector('#share-dialog time.link-expiry');"
            " return t && !t.textContent.endsWith('UTC'); }"
        )
        shown = dialog.locator("time.link-expiry").inner_text()
        assert re.search(r"EST|EDT|GMT-[45]", shown), shown
        assert later.strftime("%H:%M") in shown, (shown, later)
        dialog.screenshot(path=artifacts_dir / "share-new-york.png")
    finally:
        context.close()


def test_narrow_header_menu_favicon_and_current_section(browser, live_server, artifacts_dir):
    make_user("dee")
    context, page = context_page(browser, live_server, viewport={"width": 390, "height": 844})
    try:
        login(page, "dee")
        missing = []
        page.on("response", lambda r: r.status == 404 and missing.append(r.url))
        page.goto("/questions/")
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= 390, f"the page is {width}px wide at 390px"
        toggle = page.get_by_role("button", name="Menu")
        assert toggle.get_attribute("aria-expanded") == "false"
        page.screenshot(path=artifacts_dir / "header-390-closed.png")
        toggle.click()
        assert toggle.get_attribute("aria-expanded") == "true"
        questions = page.get_by_role("link", name="Questions", exact=True)
        logout = page.get_by_role("button", name="Log out")
        for element in (questions, logout):
            box = element.bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390
        assert questions.get_attribute("aria-current") == "page"
        page.screenshot(path=artifacts_dir / "header-390-open.png")
        page.keyboard.press("Escape")
        assert toggle.get_attribute("aria-expanded") == "false"
        icon = page.request.get("/favicon.ico")
        assert icon.ok and "svg" in icon.headers["content-type"]
        assert not [url for url in missing if "favicon" in url]
    finally:
        context.close()


def test_export_panel_shows_warnings_above_the_code(page, artifacts_dir):
    owner = make_user("eve")
    prompt, _ = make_prompt(
        owner,
        title="Echo prompt",
        provider="echo",
        model="echo-1",
        messages=[{"role": "user", "content": "Review {{design}} for {{audience}}"}],
    )
    login(page, "eve")
    page.goto(f"/playground/p/{prompt.pk}/")
    page.locator("#export-panel summary").click()
    warnings = page.locator("#export-warnings")
    warnings.wait_for()
    text = warnings.inner_text()
    assert "{{audience}} is used but not declared" in text and "'echo-1'" in text
    # Above the code, and the code still sends the model as saved.
    code_box = page.locator("#export-code-panel").bounding_box()
    assert warnings.bounding_box()["y"] < code_box["y"]
    page.wait_for_function("() => document.getElementById('export-code').textContent.length > 0")
    assert "echo-1" in page.locator("#export-code").inner_text()
    page.locator("#export-panel").screenshot(path=artifacts_dir / "export-warnings.png")
    # A version for the API it is exported to, with its variables declared: no warnings.
    page.get_by_role("tab", name="OpenAI Chat Completions").click()
    assert "'echo-1'" in warnings.inner_text()


def test_prompt_list_search_rename_archive(page, artifacts_dir):
    owner = make_user("fay")
    make_prompt(owner, title="Alpha reviewer")
    beta, _ = make_prompt(owner, title="Beta critic")
    login(page, "fay")
    page.goto("/playground/")
    page.get_by_label("Search by title").fill("beta")
    page.get_by_role("button", name="Search").click()
    page.wait_for_url("**/playground/?q=beta*")  # count on the loaded results, not the old list
    assert page.locator(".prompt-row").count() == 1
    row = page.locator(f".prompt-row[data-prompt='{beta.pk}']")
    row.locator("summary", has_text="Rename").click()
    row.get_by_label("New title for Beta critic").fill("Beta critic, v2")
    row.get_by_role("button", name="Save").click()
    page.wait_for_selector("text=Renamed to “Beta critic, v2”.")
    page.screenshot(path=artifacts_dir / "list-renamed.png", full_page=True)
    page.get_by_role("button", name="Archive Beta critic, v2").click()
    page.wait_for_selector("text=Archived “Beta critic, v2”.")
    page.goto("/playground/")
    assert page.locator(".prompt-row").count() == 1
    page.get_by_role("link", name="Archived").click()
    page.wait_for_url("**/playground/?archived=1")
    assert page.locator(f".prompt-row[data-prompt='{beta.pk}']").count() == 1
    page.screenshot(path=artifacts_dir / "list-archived.png", full_page=True)
