"""Issue 16 in Chromium: the version tree of a long history is a window (the newest versions,
the selected one and its ancestors, gaps between); "Show older versions" draws more of it from
the keyboard, focus lands on the first version revealed, and the page passes axe throughout.
Screenshots land in var/test-artifacts/<test>/."""

import re

import pytest

from tests.browser.test_accessibility import axe_source, axe_violations  # noqa: F401
from tests.browser.test_playground_browser import login
from tests.factories import make_user
from tests.playground.factories import make_prompt, save

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_show_older_versions(page, settings, axe_source, artifacts_dir):  # noqa: F811
    settings.PLAYGROUND_TREE_WINDOW = 6
    settings.PLAYGROUND_TREE_ANCESTRY = 3
    owner = make_user("ada")
    prompt, v1 = make_prompt(owner, title="Long history")
    versions = [v1]
    for n in range(2, 21):
        parent = v1 if n % 5 == 0 else versions[-1]  # every fifth save forks from v1
        versions.append(save(owner, prompt, parent, f"edit {n}", system=f"s{n}").version)
    v8 = versions[7]
    login(page, "ada")
    page.goto(f"/playground/p/{prompt.pk}/?v={v8.pk}")

    def drawn() -> list[int]:
        return [
            int(n)
            for n in page.locator(".tree-row").evaluate_all(
                "rows => rows.map(r => r.dataset.number)"
            )
        ]

    # v15..v20 (the newest six), a gap, then v8 and three of its ancestors, a gap (v1..v4).
    assert drawn() == [20, 19, 18, 17, 16, 15, 8, 7, 6, 5]
    gaps = page.locator(".tree-gap")
    assert gaps.nth(0).inner_text().startswith("… 6 older versions")  # v9..v14
    assert gaps.nth(1).inner_text().startswith("… 4 older versions")  # v1..v4
    assert page.locator(".tree-row-selected").get_attribute("data-number") == "8"
    # v15 and v5 fork from v1, which is not drawn: each has a stub and names v1.
    v5, v15 = versions[4], versions[14]
    for child in (v5, v15):
        assert page.locator(f"path.tree-stub[data-child='{child.pk}']").count() == 1
        row = page.locator(f".tree-row[data-version='{child.pk}']")
        assert row.locator(".tree-from").inner_text() == "from v1"
    # v6's parent v5 is drawn: a real edge from v5's dot.
    edge = page.locator(f"path.tree-edge[data-child='{versions[5].pk}']")
    start = re.match(r"M(\d+),(\d+)", edge.get_attribute("d")).groups()
    v5_dot = page.locator(f"circle[data-version='{v5.pk}']")
    assert start == (v5_dot.get_attribute("cx"), v5_dot.get_attribute("cy"))
    page.locator(".tree-panel").screenshot(path=artifacts_dir / "tree-window.png")
    assert axe_violations(page, axe_source) == []

    # Keyboard: Tab to "Show older versions", Enter; focus lands on v14, the first revealed.
    button = page.get_by_role("button", name="Show 6 older versions")
    page.locator(".tree-row[data-number='15'] .tree-link").focus()
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.id") == "tree-older":
            break
    assert page.evaluate("() => document.activeElement.id") == "tree-older"
    page.keyboard.press("Enter")
    page.wait_for_selector(".tree-row[data-number='14']")
    page.wait_for_function(
        "() => document.activeElement.closest('.tree-row')?.dataset.number === '14'"
    )
    assert drawn()[:12] == list(range(20, 8, -1))
    page.locator(".tree-panel").screenshot(path=artifacts_dir / "tree-window-more.png")
    assert axe_violations(page, axe_source) == []

    # Again until everything is drawn: no gap, no button left.
    button = page.locator("#tree-older")
    while button.count():
        before = len(drawn())
        button.click()
        page.wait_for_function(f"() => document.querySelectorAll('.tree-row').length > {before}")
    assert drawn() == list(range(20, 0, -1))
    assert page.locator(".tree-gap").count() == 0
    assert page.locator(".tree-stub").count() == 0
    assert page.locator("path.tree-edge").count() == 19
    # Now v1 is drawn: v15's line starts at v1's dot.
    edge = page.locator(f"path.tree-edge[data-child='{v15.pk}']")
    start = re.match(r"M(\d+),(\d+)", edge.get_attribute("d")).groups()
    v1_dot = page.locator(f"circle[data-version='{v1.pk}']")
    assert start == (v1_dot.get_attribute("cx"), v1_dot.get_attribute("cy"))
    page.locator(".tree-panel").screenshot(path=artifacts_dir / "tree-window-all.png")
