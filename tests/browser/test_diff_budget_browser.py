"""The diff page of a diff past its budget, in real Chromium: the "too large to diff in full"
fold reads well, is axe-clean and fits a phone."""

import random

import pytest

from playground.services import prompt_create, prompt_version_create
from tests.browser.test_accessibility import axe_source, axe_violations  # noqa: F401 (fixture)
from tests.browser.test_playground_browser import login
from tests.factories import make_user
from tests.playground.factories import content

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _lines(rng: random.Random, count: int) -> str:
    return "".join(rng.choice("ab") + "\n" for _ in range(count))


def test_a_too_large_diff_is_a_clear_fold_at_both_widths(
    page,
    live_server,
    settings,
    axe_source,  # noqa: F811 (the fixture imported above)
):
    settings.PLAYGROUND_DIFF_BUDGET_LINES = 300
    rng = random.Random(3)
    owner = make_user("ada")
    old = [{"role": "user", "content": "Keep this line.\n" + _lines(rng, 200)} for _ in range(3)]
    new = [{"role": "user", "content": "Keep this line.\n" + _lines(rng, 200)} for _ in range(3)]
    prompt, v1 = prompt_create(actor=owner, title="Random", content=content(messages=old))
    v2 = prompt_version_create(
        actor=owner, prompt=prompt, parent=v1, content=content(messages=new)
    ).version

    login(page, "ada")
    for width in (375, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"/playground/p/{prompt.pk}/diff/?a={v1.pk}&b={v2.pk}")
        folds = page.locator(".diff-too-large")
        assert folds.count() == 3  # 400 differing lines a message: none fits 300
        note = folds.first.inner_text()
        assert "Too large to diff in full" in note
        assert "Lines 1–1 are unchanged; from line 2" in note
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        assert axe_violations(page, axe_source) == []
