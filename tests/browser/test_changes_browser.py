"""Prompt change review in a real browser (issue #34), at 1280 and 375 px: alice asks for a
review of v9 to become `production` (gated, at v7); bob annotates two passages, suggests an
edit and requests changes; alice accepts the suggestion (a child version appears and the other
annotation re-anchors); the evaluation of that version passes; bob approves; alice merges and
the move log names the request. The request page is axe-clean with no sideways scroll."""

import pytest

from changes.models import ChangeRequest
from changes.selectors import request_get_for_user
from changes.services import gate_rules_set
from evals.services import testsets
from evals.services.evaluations import evaluation_create, evaluation_dispatch
from playground.models import Label, LabelMove, Role
from playground.selectors import prompt_access_get_for_user
from playground.services import grant_set, label_move, prompt_create, prompt_version_create
from tests.browser.test_accessibility import axe_source, axe_violations  # noqa: F401
from tests.browser.test_playground_browser import login
from tests.conftest import wait_for_quiet_network
from tests.factories import make_user
from tests.playground.factories import content

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RISKY = "Always name the riskiest component first."
ASK = "Review this design: {{design}}"
ROWS = [
    {"variables": {"design": "a cache"}, "expected": "cache"},
    {"variables": {"design": "a queue"}, "expected": "queue"},
]
GRADERS = [{"type": "contains"}]

SELECT = """(needle) => {
  const pre = document.getElementById('change-text');
  const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    const at = node.data.indexOf(needle);
    if (at >= 0) {
      const range = document.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + needle.length);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      pre.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
      return true;
    }
  }
  return false;
}"""


def _setup(settings):
    settings.RUN_ECHO_DELAY_MS = 0
    settings.RUN_EAGER_MODE = "inline"
    settings.EVAL_EAGER_MODE = "inline"
    alice, bob = make_user("alice"), make_user("bob")
    prompt, version = prompt_create(
        actor=alice,
        title="Design critic",
        content=content(provider="echo", model="echo-1", system="You are a careful reviewer.\n"),
    )
    for number in range(2, 10):  # v2 … v9 in one line of descent
        system = f"You are a careful reviewer (draft {number}).\n"
        if number >= 8:
            system += f"Answer in short paragraphs.\n{RISKY}\n"
        version = prompt_version_create(
            actor=alice,
            prompt=prompt,
            parent=version,
            content=content(provider="echo", model="echo-1", system=system),
        ).version
        if number == 7:
            label_move(actor=alice, prompt=prompt, name="production", version=version)
    grant_set(actor=alice, prompt=prompt, username="bob", role=Role.VIEWER)
    testset = testsets.testset_create(
        actor=alice,
        prompt=prompt,
        role=Role.OWNER,
        name="smoke",
        rows=testsets.testset_rows_parse(ROWS),
    )
    access = prompt_access_get_for_user(user=alice, prompt_id=prompt.pk)
    gate_rules_set(
        actor=alice,
        access=access,
        label_name="production",
        required_approvals=1,
        required_reviewers=["bob"],
        no_blockers=True,
        eval_testset=testset.testset_id,
        eval_graders=GRADERS,
        eval_threshold=0.9,
    )
    return alice, bob, prompt, testset


def _annotate(page, passage: str, kind: str, severity: str, body: str, suggestion: str = ""):
    assert page.evaluate(SELECT, passage)
    form = page.locator("#annotate-form")
    assert form.get_by_label("Passage").input_value() == passage
    form.get_by_label("Kind").select_option(kind)
    form.get_by_label("Severity").select_option(severity)
    form.get_by_label("Comment").fill(body)
    if suggestion:
        form.get_by_label("Suggest a replacement").check()
        form.get_by_label("Replacement text").fill(suggestion)
    form.get_by_role("button", name="Add to my review").click()
    page.wait_for_load_state()


def _submit(page, verdict: str):
    panel = page.locator("#my-review")
    panel.get_by_label(verdict).check()
    panel.get_by_role("button", name="Submit review").click()
    page.wait_for_load_state()


def _check_layout(page, axe_source, width: int, artifacts_dir, name: str) -> list[str]:  # noqa: F811
    wait_for_quiet_network(page)
    problems = []
    wide = page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")
    if wide > 0:
        problems.append(f"{name} at {width}px scrolls sideways by {wide}px")
    problems += [f"{name} at {width}px: {v}" for v in axe_violations(page, axe_source)]
    page.screenshot(path=artifacts_dir / f"{name}-{width}.png", full_page=True)
    return problems


@pytest.mark.parametrize("width", [1280, 375])
def test_request_review_suggest_accept_evaluate_approve_merge(
    new_page,
    artifacts_dir,
    settings,
    width,
    axe_source,  # noqa: F811
):
    alice_user, _, prompt, testset = _setup(settings)
    viewport = {"width": width, "height": 900}
    alice = new_page()
    alice.set_viewport_size(viewport)
    login(alice, "alice")
    alice.goto(f"/playground/p/{prompt.pk}/v9/")
    alice.get_by_role("link", name="Request review").click()
    alice.get_by_label("Label to move to v9").select_option("production")
    alice.get_by_label("Description").fill("Name the riskiest component first.")
    alice.get_by_label("Reviewers").fill("bob")
    alice.get_by_role("button", name="Open request").click()
    alice.wait_for_url("**/changes/*/")
    request = ChangeRequest.objects.get()
    url = f"/changes/{request.pk}/"
    assert "Move production from v7 to v9" in alice.locator("h1").inner_text()
    problems = _check_layout(alice, axe_source, width, artifacts_dir, "1-opened")

    bob = new_page()
    bob.set_viewport_size(viewport)
    login(bob, "bob")
    bob.goto("/changes/inbox/")
    bob.get_by_role("link", name="Your review was requested").click()
    bob.wait_for_url(f"**{url}")
    _annotate(bob, RISKY, "risk", "major", "Too absolute.", "Name the riskiest component first.")
    _annotate(bob, ASK, "question", "minor", "Should the design be quoted?")
    assert bob.locator(".change-mark").count() == 2
    problems += _check_layout(bob, axe_source, width, artifacts_dir, "2-bob-draft")
    _submit(bob, "Request changes")
    assert "Request changes on r1" in bob.locator(".review-verdicts").inner_text()

    alice.goto(url)
    alice.get_by_label("Accept this suggestion").check()
    alice.get_by_role("button", name="Accept checked suggestions").click()
    alice.wait_for_load_state()
    assert "Saved v10" in alice.locator(".messages").inner_text()
    request.refresh_from_db()
    assert request.to_version.number == 10 and request.to_version.parent.number == 9
    cards = alice.locator(".change-card")
    question = cards.filter(has_text="Should the design be quoted?")
    assert question.locator(".anchor-badge").inner_text() == "exact"
    assert "Resolved" in cards.filter(has_text="Too absolute.").inner_text()
    assert "Name the riskiest component first." in alice.locator("#change-text").inner_text()
    problems += _check_layout(alice, axe_source, width, artifacts_dir, "3-accepted")

    # The evaluation of v10 runs (the echo provider answers inline) and passes both rows.
    evaluation = evaluation_create(
        actor=alice_user,
        prompt=prompt,
        role=Role.OWNER,
        revision=testset,
        versions=[request.to_version_id],
        graders=GRADERS,
    )
    evaluation_dispatch(evaluation_id=evaluation.pk)

    bob.goto(url)
    _submit(bob, "Approve")
    alice.goto(url)
    gate = alice.locator("#gate")
    assert gate.locator(".gate-fails").count() == 0, gate.inner_text()
    assert "passed v10 at 100%" in gate.inner_text()
    problems += _check_layout(alice, axe_source, width, artifacts_dir, "4-ready")
    alice.get_by_role("button", name="Merge: move production to v10").click()
    alice.wait_for_load_state()
    assert f"change request #{request.pk}" in alice.locator("#merged-note").inner_text()
    label = Label.objects.get(prompt=prompt, name="production")
    assert label.version_id == request.to_version_id
    move = LabelMove.objects.filter(label=label).order_by("-id").first()
    assert move.via == f"change request #{request.pk}"
    problems += _check_layout(alice, axe_source, width, artifacts_dir, "5-merged")
    alice.goto(f"/playground/p/{prompt.pk}/")
    alice.locator(".label-history summary").click()
    assert f"via change request #{request.pk}" in alice.locator(".label-history").inner_text()
    alice.locator("#labels-panel").screenshot(path=artifacts_dir / f"6-move-log-{width}.png")
    assert request_get_for_user(user=alice_user, request_id=request.pk).request.status == "merged"
    assert problems == [], "\n".join(problems)
