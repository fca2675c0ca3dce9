"""Issue #33 in Chromium, at 1280 and 375 px: the practice scorecard on an alternative that keeps
the pinned constraint (item 1), version numbers where ids leaked (item 2), the evaluation and
test-set pages' forms, buttons and results grid (item 5), and word diffs that keep their spaces
(item 6). Screenshots land in var/test-artifacts/<test>/."""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass

import pytest

from evals.models import Evaluation
from evals.services.evaluations import evaluation_create, evaluation_dispatch
from evals.services.testsets import RowInput
from evals.services.testsets import testset_create as new_testset  # not a test, despite its name
from playground.models import PromptVersion, Role
from playground.runs.services import run_create, run_execute
from playground.services import share_link_create
from reviews.models import Annotation, DesignDoc
from reviews.practice.services import mock_review_start
from reviews.seed import practice_docs_load, practice_keys_load
from tests.browser.test_accessibility import axe_source as axe_source  # noqa: F401 - a fixture
from tests.browser.test_accessibility import axe_violations
from tests.browser.test_flows_browser import login
from tests.browser.test_review_desk_phone_browser import drag_select
from tests.conftest import browser_context, wait_for_quiet_network
from tests.factories import make_user
from tests.playground.factories import make_prompt, save

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (1280, 375)
PRACTICE_TITLE = "Batched inference server for the public LLM API"
# Part of the trap's passage ("grouped by `max_tokens` bucket (256, 1024, 4096)"), one text node.
TRAP_PASSAGE = "bucket (256, 1024, 4096)"
# The alternative a new user wrote (issue #33): inside the pinned constraint, with a tradeoff.
ALTERNATIVE = (
    "Cap max_tokens per bucket by tier (free 1024, paid 4096) and flush a bucket when it is "
    "full or after 50 ms, without touching generate_batch."
)
TRADEOFF = "Free-tier answers longer than 1024 tokens are cut; batches fill less at night."
# Two system prompts of 22 and 16 words: the echo provider's replies differ in "22"/"16" words
# and "1 turn"/"3 turns", the shapes that ran together in issue #33.
SYSTEM_22 = " ".join(["word"] * 21) + " end."
SYSTEM_16 = " ".join(["word"] * 15) + " end."
THREE_TURNS = [
    {"role": "user", "content": "Review this design: {{design}}"},
    {"role": "assistant", "content": "Which part first?"},
    {"role": "user", "content": "The cache."},
]


@pytest.fixture
def inline(settings):
    settings.EVAL_EAGER_MODE = "inline"
    settings.RUN_EAGER_MODE = "inline"
    settings.RUN_ECHO_DELAY_MS = 0


@pytest.fixture(params=WIDTHS, ids=lambda width: f"{width}px")
def width(request) -> int:
    return int(request.param)


def _tab(browser, live_server, width: int):
    context = browser_context(
        browser, base_url=live_server.url, viewport={"width": width, "height": 860}
    )
    return context, context.new_page()


def _sideways(tab) -> int:
    return int(tab.evaluate("document.scrollingElement.scrollWidth - window.innerWidth"))


@dataclass(frozen=True)
class Evaluated:
    prompt_id: int
    versions: tuple[PromptVersion, ...]
    evaluation: Evaluation
    testset_id: int


def _evaluated(owner, *, rows: int = 6) -> Evaluated:
    """A prompt whose version ids are not its numbers (another prompt's throwaway versions come
    first), three versions, a test set of `rows` rows and a finished evaluation of v1 and v2."""
    other, parent = make_prompt(owner, title="Throwaway", provider="echo", model="echo-1")
    for n in range(12):
        parent = save(owner, other, parent, system=f"throwaway {n}").version
    prompt, v1 = make_prompt(
        owner, title="Checked critic", provider="echo", model="echo-1", system=SYSTEM_22
    )
    v2 = save(owner, prompt, v1, "shorter", provider="echo", model="echo-1", system=SYSTEM_16)
    v3 = save(
        owner,
        prompt,
        v2.version,
        "three turns",
        provider="echo",
        model="echo-1",
        system=SYSTEM_16,
        messages=THREE_TURNS,
    )
    versions = (v1, v2.version, v3.version)
    assert all(v.pk > 3 for v in versions), "ids must differ from numbers"
    revision = new_testset(
        actor=owner,
        prompt=prompt,
        role=Role.OWNER,
        name="Designs",
        rows=[
            RowInput(
                variables={"design": f"design number {n}: a cache in front of PostgreSQL"},
                expected="Echo" if n % 2 else "nothing-here",
                note="",
            )
            for n in range(1, rows + 1)
        ],
    )
    evaluation = evaluation_create(
        actor=owner,
        prompt=prompt,
        role=Role.OWNER,
        revision=revision,
        versions=[v1.pk, v3.version.pk],
        graders=[{"type": "contains"}],
    )
    evaluation_dispatch(evaluation_id=evaluation.pk)
    evaluation.refresh_from_db()
    assert evaluation.status == "done", evaluation.status
    return Evaluated(prompt.pk, versions, evaluation, revision.testset_id)


# --- item 5: the evaluation and test-set pages -----------------------------------------------

PRIMARY = ".button:not(.button-secondary):not(.button-danger)"


def _box(tab, selector: str) -> dict[str, float]:
    return tab.locator(selector).first.bounding_box()


def test_evaluation_pages_look_finished(
    browser, live_server, inline, settings, width, axe_source, artifacts_dir
):
    owner = make_user("ada")
    data = _evaluated(owner)
    one = new_testset(
        actor=owner,
        prompt=data.evaluation.prompt,
        role=Role.OWNER,
        name="One row",
        rows=[RowInput(variables={"design": "a queue"}, expected="", note="")],
    )
    # One evaluation still running (cells on a thread, a slow echo), to be cancelled.
    settings.EVAL_EAGER_MODE = "thread"
    settings.RUN_ECHO_DELAY_MS = 400
    queued = evaluation_create(
        actor=owner,
        prompt=data.evaluation.prompt,
        role=Role.OWNER,
        revision=one,
        versions=[data.versions[0].pk],
        graders=[{"type": "contains"}],
    )
    context, tab = _tab(browser, live_server, width)
    login(tab, "ada")
    problems: list[str] = []

    # The prompt's evaluations: text fields in the app's style, one primary button.
    tab.goto(f"/evals/prompt/{data.prompt_id}/")
    wait_for_quiet_network(tab)
    form_width = _box(tab, "#eval-form")["width"]
    for field in ("#testset-name", "#model-1", "#g-contains", "#g-latency", "#g-judge"):
        box = _box(tab, field)
        assert box["height"] >= 30, (field, box)  # was 21 px, unstyled
        assert box["width"] >= 0.5 * form_width, (field, box, form_width)
        border = tab.locator(field).evaluate("e => getComputedStyle(e).borderTopLeftRadius")
        assert border == "6px", (field, border)
    primary = tab.locator(f"main {PRIMARY}:visible")
    assert primary.count() == 1 and primary.inner_text() == "Start evaluation"
    problems += _axe_and_sideways(tab, axe_source, "prompt evaluations", width)
    tab.screenshot(path=artifacts_dir / f"prompt-evals-{width}.png", full_page=True)

    # A queued evaluation: Cancel and the exports are secondary; "1 row", not "1 rows".
    tab.goto(f"/evals/{queued.pk}/")
    wait_for_quiet_network(tab)
    cancel = tab.get_by_role("button", name="Cancel evaluation")
    assert "button-secondary" in (cancel.get_attribute("class") or "")
    assert tab.locator(f"main {PRIMARY}:visible").count() == 0
    assert "1 row × 1 column × 1 repeat" in tab.locator("main").inner_text()
    assert "1 rows" not in tab.locator("main").inner_text()
    cancel.click()
    tab.wait_for_selector("#eval-progress .status-cancelled")

    # The finished evaluation: the matrix is a grid on a wide screen, stacked on a phone.
    tab.goto(f"/evals/{data.evaluation.pk}/")
    wait_for_quiet_network(tab)
    assert tab.locator(".matrix-row").count() == 6
    headers = tab.locator("#matrix thead th").all_text_contents()
    assert headers[1:] == ["1. v1 · echo/echo-1", "2. v3 · echo/echo-1"], headers
    first = tab.locator(".matrix-row").first
    case = first.locator(".matrix-case").bounding_box()
    cells = [c.bounding_box() for c in first.locator(".matrix-cell").all()]
    assert len(cells) == 2
    if width == 1280:
        # One line per test case: the case and its two cells side by side.
        assert all(abs(c["y"] - case["y"]) < 2 for c in cells), (case, cells)
        assert case["x"] < cells[0]["x"] < cells[1]["x"]
        matrix = _box(tab, "#matrix")
        assert matrix["height"] < 6 * 200, matrix  # six cards took 2,740 px
    else:
        assert case["y"] < cells[0]["y"] < cells[1]["y"], (case, cells)
        assert abs(cells[0]["x"] - cells[1]["x"]) < 2
        label = first.locator(".matrix-cell").first.evaluate(
            "e => getComputedStyle(e, '::before').content"
        )
        assert "v1 · echo/echo-1" in label
    problems += _axe_and_sideways(tab, axe_source, "evaluation", width)
    tab.screenshot(path=artifacts_dir / f"evaluation-{width}.png", full_page=True)

    # The test set: styled fields, one primary button (saving), "1 row" in the revisions.
    tab.goto(f"/evals/testsets/{one.testset_id}/")
    wait_for_quiet_network(tab)
    assert _box(tab, "#testset-message")["height"] >= 30
    assert _box(tab, "#note-0")["height"] >= 30
    primary = tab.locator(f"main {PRIMARY}:visible")
    assert primary.count() == 1 and primary.inner_text() == "Save as revision 2"
    assert "r1 — 1 row" in tab.locator("main").inner_text()
    problems += _axe_and_sideways(tab, axe_source, "test set", width)
    tab.screenshot(path=artifacts_dir / f"testset-{width}.png", full_page=True)
    context.close()
    assert problems == [], "\n".join(problems)


# --- item 6: word diffs keep their spaces ----------------------------------------------------


def test_word_diffs_keep_the_space_between_words(
    browser, live_server, inline, width, axe_source, artifacts_dir
):
    owner = make_user("ada")
    data = _evaluated(owner, rows=1)
    v1, _, v3 = data.versions
    runs = []
    for version in (v1, v3):
        run = run_create(actor=owner, version=version, variables={}).run
        run_execute(run_id=run.pk)
        runs.append(run.pk)
    context, tab = _tab(browser, live_server, width)
    login(tab, "ada")
    problems: list[str] = []
    for name, path, where in (
        ("evaluation", f"/evals/{data.evaluation.pk}/?a=0&b=1", ".matrix-row .compare-diff-body"),
        (
            "compare",
            f"/playground/p/{data.prompt_id}/compare/?a=v1&b=v3&run_a={runs[0]}&run_b={runs[1]}",
            "#compare-diff .compare-diff-body",
        ),
    ):
        tab.goto(path)
        wait_for_quiet_network(tab)
        diff = tab.locator(where)
        shown = " ".join(diff.inner_text().split())
        # v1: one turn and 22 words of system prompt; v3: three turns and 16 words.
        assert "1 3 turn turns" in shown, shown
        assert "22 16 words" in shown, shown
        assert "turnturns" not in shown and "2216" not in shown
        assert diff.locator("del", has_text="turn").count() == 1
        assert diff.locator("ins", has_text="turns").count() == 1
        problems += _axe_and_sideways(tab, axe_source, name, width)
        diff.screenshot(path=artifacts_dir / f"{name}-{width}.png")
    context.close()
    assert problems == [], "\n".join(problems)


def _axe_and_sideways(tab, axe: str, name: str, width: int) -> list[str]:
    problems = [f"{name} @{width}: {v}" for v in axe_violations(tab, axe)]
    if _sideways(tab) > 0:
        problems.append(f"{name} @{width}: scrolls sideways by {_sideways(tab)} px")
    return problems


# --- item 1: the practice scorecard -------------------------------------------------------


def test_an_alternative_inside_the_pinned_constraint_is_not_a_trap(
    browser, live_server, width, axe_source, artifacts_dir
):
    practice_docs_load()  # the migrations' seed, flushed by earlier transactional tests
    practice_keys_load()
    pat = make_user("pat")
    doc = DesignDoc.objects.get(title=PRACTICE_TITLE)
    review, _ = mock_review_start(actor=pat, doc=doc)
    context, tab = _tab(browser, live_server, width)
    login(tab, "pat")
    tab.goto(f"/reviews/r/{review.pk}/")
    form = tab.locator("#annotate-form")
    drag_select(tab, "#doc-rendered", TRAP_PASSAGE)
    tab.wait_for_selector("#annotate-form.annotate-floating")
    form.get_by_label("Area").select_option(label="Scale & cost")
    form.get_by_label("Kind").select_option(label="Alternative")
    # The form offers the constraint link for an alternative too (it was "constraint" only).
    link = form.get_by_label("Pinned constraint")
    assert link.is_visible()
    form.get_by_label("Comment").fill(ALTERNATIVE)
    form.get_by_label("Tradeoff").fill(TRADEOFF)
    if width == 375:
        # On the phone the reviewer links the constraint; at 1280 the text alone says it.
        link.select_option(index=1)
    tab.screenshot(path=artifacts_dir / f"{width}-alternative.png")
    with tab.expect_event("load"):
        form.get_by_role("button", name="Add annotation").click()
    annotation = Annotation.objects.get(review=review)
    assert (annotation.kind, annotation.body) == ("alternative", ALTERNATIVE)
    assert bool(annotation.constraint) == (width == 375)

    tab.get_by_role("button", name="Submit review").click()
    tab.get_by_role("dialog").get_by_role("button", name="Yes, submit").click()
    tab.wait_for_selector("#review-status:has-text('Submitted')")
    tab.goto(f"/reviews/r/{review.pk}/debrief/")
    wait_for_quiet_network(tab)
    text = tab.locator("main").inner_text()
    assert "You broke the pinned constraint" not in text
    assert (
        "1"
        == tab.locator(".score-cell", has_text="Alternatives with a tradeoff")
        .locator("dd")
        .inner_text()
        .strip()
    )
    assert "Yes" in tab.locator(".score-cell", has_text="Inside the pinned constraint").inner_text()
    assert tab.locator('#found-list [data-item="longest-sequence-trap"]').count() == 1
    tab.screenshot(path=artifacts_dir / f"{width}-debrief.png", full_page=True)
    problems = _axe_and_sideways(tab, axe_source, "debrief", width)
    tab.goto(f"/reviews/r/{review.pk}/")
    wait_for_quiet_network(tab)
    problems += _axe_and_sideways(tab, axe_source, "submitted review", width)
    context.close()
    assert problems == [], "\n".join(problems)


# --- item 2: no database id where a version number is meant ------------------------------------

_VISIBLE_TEXT = """() => {
    const body = document.body.cloneNode(true);
    body.querySelectorAll("script, style, svg").forEach((e) => e.remove());
    const hrefs = Array.from(document.querySelectorAll("[href]"), (e) => e.getAttribute("href"));
    return body.textContent + "\\n" + hrefs.join("\\n");
}"""


def _leaks(text: str, ids: dict[int, int]) -> list[str]:
    """Where `text` names a version by its database id as if it were a number: "v14", `?v=14`,
    an ETag "v14-…", "version id"."""
    found = []
    for pk in ids:
        for pattern in (rf"(?<![\w/.-])v{pk}(?!\d)", rf"[?&]v={pk}(?!\d)"):
            found += [m.group(0) for m in re.finditer(pattern, text)]
    if re.search(r"version id\b", text, re.IGNORECASE):
        found.append("version id")
    return found


def test_no_database_id_where_a_version_number_is_meant(
    browser, live_server, inline, width, artifacts_dir
):
    owner = make_user("ada")
    data = _evaluated(owner, rows=2)
    ids = {v.pk: v.number for v in data.versions}
    assert not set(ids) & set(ids.values())
    run = run_create(actor=owner, version=data.versions[1], variables={}).run
    run_execute(run_id=run.pk)
    _, token = share_link_create(
        actor=owner, prompt=data.evaluation.prompt, access="public", version=data.versions[1]
    )
    context, tab = _tab(browser, live_server, width)
    login(tab, "ada")
    pages = {
        "prompt": f"/playground/p/{data.prompt_id}/",
        "diff": f"/playground/p/{data.prompt_id}/diff/?a=v1&b=v3",
        "compare": f"/playground/p/{data.prompt_id}/compare/?a=v1&b=v2",
        "evals": f"/evals/prompt/{data.prompt_id}/",
        "evals by link": f"/evals/prompt/{data.prompt_id}/?v=v2",
        "evaluation": f"/evals/{data.evaluation.pk}/",
        "testset": f"/evals/testsets/{data.testset_id}/",
        "run": f"/playground/runs/{run.pk}/",
        "shared link": f"/s/{token}",
        **{f"v{n}": f"/playground/p/{data.prompt_id}/v{n}/" for n in ids.values()},
    }
    leaks = {}
    for name, path in pages.items():
        response = tab.goto(path)
        assert response is not None and response.status == 200, (name, path)
        wait_for_quiet_network(tab)
        tab.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
        found = _leaks(tab.evaluate(_VISIBLE_TEXT), ids)
        if found:
            leaks[name] = found
    # The fetch example on v2's page shows v2's ETag, named by its number.
    tab.goto(f"/playground/p/{data.prompt_id}/v2/")
    assert re.search(r"If-None-Match: \"v2-[0-9a-f]+\"", tab.locator("body").text_content())
    # "Evaluate against…" preselects this version by number.
    tab.get_by_role("link", name="Evaluate against…").click()
    assert tab.url.endswith("?v=v2")
    checked = tab.locator("input[name=versions]:checked").evaluate_all(
        "els => els.map(e => e.closest('label').textContent.trim().split(' ')[0])"
    )
    assert checked == ["v2"]
    assert tab.get_by_label("LLM judge: the judge prompt's version number").is_visible()
    # The exports name the version as the page's column does.
    for fmt in ("csv", "json"):
        response = tab.request.get(f"/evals/{data.evaluation.pk}/export.{fmt}")
        assert response.status == 200
        body = response.text()
        if fmt == "csv":
            rows = list(csv.DictReader(io.StringIO(body)))
            versions = {(r["version"], int(r["version_id"])) for r in rows}
        else:
            versions = {(c["version"], c["version_id"]) for c in json.loads(body)}
        assert versions == {("v1", data.versions[0].pk), ("v3", data.versions[2].pk)}, fmt
        without_ids = re.sub(r'"?version_id"?[:,]\s*\d+', "", body)
        assert not re.search(rf"\"version\": ({'|'.join(map(str, ids))})\b", without_ids), fmt
    context.close()
    assert leaks == {}, leaks
