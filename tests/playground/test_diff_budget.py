"""Diffs at a bounded cost: a budget per diff, a "too large" answer past it, and one computation
shared by the API, the page and its folds (playground.text.diffing, playground.text.ranges)."""

import random
import re

import pytest

from playground.text import ranges as playground_texts
from playground.text.diffing import DiffBudget, diff_cache, text_diff
from tests.factories import api_client_for, make_user
from tests.playground.factories import long_text, make_prompt, save

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _empty_diff_cache():
    diff_cache.clear()
    yield
    diff_cache.clear()


@pytest.fixture(autouse=True)
def _time_to_spare(settings):
    """The time budget is a safety net that depends on the machine's load: these tests hold it
    out of the way (one test sets it on purpose) and assert on the lines and rows budgets."""
    settings.PLAYGROUND_DIFF_BUDGET_SECONDS = 600.0


@pytest.fixture
def owner():
    return make_user("owner")


@pytest.fixture
def computations(monkeypatch):
    """Every diff actually computed (cache misses), with the budget each one ran under."""
    seen: list[DiffBudget] = []
    original = DiffBudget.from_settings

    def recording() -> DiffBudget:
        budget = original()
        seen.append(budget)
        return budget

    monkeypatch.setattr(DiffBudget, "from_settings", staticmethod(recording))
    return seen


def _random_lines(rng: random.Random, count: int) -> str:
    return "".join(rng.choice("ab") + "\n" for _ in range(count))


def _adversarial(owner, *, messages: int, lines: int):
    """The issue's input: `messages` messages of `lines` random `a`/`b` lines on each side."""
    rng = random.Random(21)
    old = [{"role": "user", "content": _random_lines(rng, lines)} for _ in range(messages)]
    new = [{"role": "user", "content": _random_lines(rng, lines)} for _ in range(messages)]
    prompt, v1 = make_prompt(owner, messages=old, variables={})
    v2 = save(owner, prompt, v1, messages=new, variables={}).version
    return prompt, v1, v2


def test_the_budget_holds_on_random_lines_and_says_what_was_left_out(owner, computations):
    # The attack had 21 such messages; 4 show the same (bench/abuse_diffs.py runs 21).
    prompt, v1, v2 = _adversarial(owner, messages=4, lines=8000)
    api = api_client_for(owner)

    body = api.get(f"/api/v1/versions/{v2.pk}/diff/", {"against": v1.pk}).json()

    (budget,) = computations
    assert budget.spent_lines <= budget.lines
    assert budget.spent_rows <= budget.rows
    assert body["complete"] is False
    too_large = [t for t in body["texts"] if t["too_large"]]
    # 16,000 differing lines a message: at most one of them fits a 20,000-line budget.
    assert len(too_large) >= 3
    first = too_large[-1]
    assert first["rows"] == []
    # Every line is accounted for: unchanged before, differing on each side, unchanged after.
    ends = first["lines_before"] + first["lines_after"]
    assert first["old_lines"] + ends == first["new_lines"] + ends == 8000
    assert first["old_lines"] > 7900
    # What the engine was given never exceeds the budget, whatever the input.
    assert sum(len(t["rows"]) for t in body["texts"]) <= budget.rows


def test_a_text_past_the_budget_is_a_too_large_fold_with_its_unchanged_ends(settings):
    settings.PLAYGROUND_DIFF_BUDGET_LINES = 10
    before = "head\n" + "".join(f"old {n}\n" for n in range(8)) + "tail 1\ntail 2\n"
    after = "head\n" + "".join(f"new {n}\n" for n in range(9)) + "tail 1\ntail 2\n"
    budget = DiffBudget.from_settings()
    diff = text_diff("system", before, after, limit=None, budget=budget)
    assert diff.too_large and diff.changed and diff.rows == []
    assert (diff.lines_before, diff.old_lines, diff.new_lines, diff.lines_after) == (1, 8, 9, 2)
    assert budget.spent_lines == 0
    (block,) = diff.blocks
    assert block.too_large and block.first_line == 2
    # A pair that fits the same budget is diffed as usual.
    small = text_diff("system", "a\nb\n", "a\nc\n", limit=None, budget=budget)
    assert not small.too_large and small.added == small.removed == 1
    assert budget.spent_lines == 2 + 4  # two differing lines, then "b", "c" and two line ends


def test_word_marks_past_the_budget_show_the_lines_whole(settings):
    settings.PLAYGROUND_DIFF_BUDGET_LINES = 3
    budget = DiffBudget.from_settings()
    diff = text_diff("system", "one two three\n", "one two four\n", limit=None, budget=budget)
    (row,) = diff.rows
    assert row["op"] == "change"
    assert row["words"] == [(-1, "one two three\n"), (1, "one two four\n")]


def test_one_computation_serves_the_api_the_page_and_every_fold(owner, computations, client):
    before = long_text(600)
    after = before.replace("Line 00300:", "Line 00300 EDITED:")
    prompt, v1 = make_prompt(owner, system=before)
    v2 = save(owner, prompt, v1, system=after).version
    api = api_client_for(owner)
    client.force_login(owner)

    body = api.get(f"/api/v1/versions/{v2.pk}/diff/", {"against": v1.pk, "limit": 1000}).json()
    page = client.get(f"/playground/p/{prompt.pk}/diff/?a={v1.pk}&b={v2.pk}")
    fold = client.get(
        f"/playground/p/{prompt.pk}/diff/rows/?a={v1.pk}&b={v2.pk}&field=system"
        "&start=0&end=297&dir=all"
    )
    again = api.get(f"/api/v1/versions/{v2.pk}/diff/", {"against": v1.pk, "limit": 1000}).json()

    assert len(computations) == 1  # computed once; the rest came from the cache
    assert again == body
    assert page.status_code == fold.status_code == 200
    (text,) = body["texts"]
    assert body["complete"] is True and not text["too_large"]
    # The page shows the same change the API reports, and the fold the same rows.
    changed = [row for row in text["rows"] if row["op"] != "equal"]
    assert [row["new_no"] for row in changed] == [301]
    assert "Show all 297" in page.content.decode()
    html = fold.content.decode()
    assert html.count('class="diff-row') == 297
    numbers = [int(n) for n in re.findall(r'<span class="diff-no">(\d+)</span>', html)[::2]]
    assert numbers == [row["old_no"] for row in text["rows"][0:297]]


def test_too_large_agrees_between_the_api_and_the_page(owner, computations, client, settings):
    settings.PLAYGROUND_DIFF_BUDGET_LINES = 50
    rng = random.Random(5)
    prompt, v1 = make_prompt(owner, system="keep\n" + _random_lines(rng, 40))
    v2 = save(owner, prompt, v1, system="keep\n" + _random_lines(rng, 40)).version
    api = api_client_for(owner)
    client.force_login(owner)
    body = api.get(f"/api/v1/versions/{v2.pk}/diff/", {"against": v1.pk}).json()
    html = client.get(f"/playground/p/{prompt.pk}/diff/?a={v1.pk}&b={v2.pk}").content.decode()
    assert len(computations) == 1
    (text,) = body["texts"]
    assert text["too_large"] and text["lines_before"] >= 1
    assert "Too large to diff in full" in html
    assert f"{text['old_lines']} lines before and {text['new_lines']} lines after differ" in html


def test_a_changed_budget_setting_is_not_served_an_old_answer(owner, computations, settings):
    prompt, v1 = make_prompt(owner, system="a\nb\nc\n")
    v2 = save(owner, prompt, v1, system="a\nx\nc\n").version
    playground_texts.version_content_diff(before=v1, after=v2)
    settings.PLAYGROUND_DIFF_BUDGET_LINES = 1
    diff = playground_texts.version_content_diff(before=v1, after=v2)
    assert len(computations) == 2
    assert diff["texts"][0].too_large and diff["complete"] is False


def test_the_diff_cache_is_bounded_in_bytes(owner, settings):
    settings.PLAYGROUND_DIFF_CACHE_BYTES = 4000
    prompt, v1 = make_prompt(owner, system=long_text(50))
    parent = v1
    for n in range(6):
        child = save(owner, prompt, parent, system=long_text(50 + n + 1)).version
        playground_texts.version_content_diff(before=v1, after=child)
        parent = child
    assert 0 < diff_cache.used <= 4000


def test_a_diff_past_its_time_is_marked_incomplete_and_kept(owner, computations, settings):
    settings.PLAYGROUND_DIFF_BUDGET_SECONDS = -1.0  # already spent: nothing is compared
    prompt, v1 = make_prompt(owner, system="a\nb\nc\n")
    v2 = save(owner, prompt, v1, system="a\nx\nc\n").version
    first = playground_texts.version_content_diff(before=v1, after=v2)
    assert first["complete"] is False and first["texts"][0].too_large
    assert computations[0].out_of_time and computations[0].spent_lines == 0
    again = playground_texts.version_content_diff(before=v1, after=v2)
    assert len(computations) == 1  # the expensive answer is not computed again
    assert again["texts"][0].too_large
