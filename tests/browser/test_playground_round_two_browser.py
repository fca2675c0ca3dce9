"""The playground's flows without a stumble (issue 23), in Chromium at 375 px and 1280 px.

Unsaved edits are guarded, every page fits a phone, empty variables are refused before
anything is sent, long texts stay in bounded boxes, labels check names as you type, addresses
name version numbers, and the smaller fixes (provider → model, Compare defaults, arrow keys in
the tree, rename and archive on the prompt page, the export's warnings, the fetch example).
Screenshots go to var/test-artifacts/<test>/.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.services import api_token_create
from playground.models import Label, Prompt, PromptVersion, Run, ShareLink
from playground.services import label_move, share_link_create, share_link_revoke
from tests.browser.test_accessibility import axe_source, axe_violations  # noqa: F401
from tests.browser.test_playground_browser import login
from tests.conftest import wait_for_quiet_network
from tests.factories import make_user
from tests.playground.factories import make_prompt, save

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 860}
WIDTHS = {"375": PHONE, "1280": DESKTOP}


@dataclass(frozen=True)
class World:
    prompt: Prompt
    v1: PromptVersion
    v2: PromptVersion
    v3: PromptVersion
    token: str
    revoked: str
    expired: str
    run: Run


def _world(username: str) -> World:
    """A prompt whose version ids differ from their numbers (another prompt saved first)."""
    owner = make_user(username)
    make_prompt(owner, title="An earlier prompt")
    make_prompt(owner, title="Another earlier prompt")
    prompt, v1 = make_prompt(
        owner, title="Design critic for the payments service with a rather long title"
    )
    v2 = save(
        owner, prompt, v1, message="cite passages", system="You are careful.\nCite passages.\n"
    ).version
    v3 = save(owner, prompt, v2, message="rank risks", system="Rank risks, worst first.\n").version
    label_move(actor=owner, prompt=prompt, name="staging", version=v2)
    api_token_create(actor=owner, expires_at=timezone.now() + timedelta(days=30))  # a key row
    _, token = share_link_create(actor=owner, prompt=prompt, access="public", version=v2)
    gone, revoked = share_link_create(actor=owner, prompt=prompt, access="public", version=v2)
    share_link_revoke(actor=owner, link=gone)
    old, expired = share_link_create(
        actor=owner,
        prompt=prompt,
        access="public",
        version=v2,
        expires_at=timezone.now() + timedelta(hours=1),
    )
    ShareLink.objects.filter(pk=old.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    now = timezone.now()
    run = Run.objects.create(  # a finished run with a long unbroken line in its output
        version=v3,
        created_by=owner,
        provider="echo",
        model="echo-1",
        variables={"design": "a CDN"},
        status=Run.Status.DONE,
        output="A long line: " + "x" * 400 + "\nand a short one.",
        input_tokens=12,
        output_tokens=40,
        started_at=now,
        first_token_at=now,
        finished_at=now,
    )
    return World(prompt, v1, v2, v3, token, revoked, expired, run)


def _page(new_page, size: dict[str, int]):
    page = new_page()
    page.set_viewport_size(size)
    return page


def _no_sideways_scroll(page, name: str) -> None:
    widths = page.evaluate("() => [document.scrollingElement.scrollWidth, window.innerWidth]")
    if widths[0] > widths[1]:  # name the culprits
        wide = page.evaluate(
            "() => Array.from(document.querySelectorAll('body *'))"
            ".filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1"
            " || el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX === 'visible')"
            ".slice(0, 6).map((el) => el.tagName + '.' + el.className)"
        )
        raise AssertionError(f"{name} scrolls sideways: {widths} {wide}")


def _open_tree(page) -> None:
    """On a phone the tree is a section behind its "Versions" button."""
    toggle = page.locator("#tree-toggle")
    if toggle.is_visible() and toggle.get_attribute("aria-expanded") != "true":
        toggle.click()


def _open_export(page) -> None:
    """The export panel remembers being open; open it only if it is closed."""
    if page.locator("#export-panel").get_attribute("open") is None:
        page.locator("#export-panel summary").click()


# --- 1. unsaved edits ---------------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_unsaved_edits_ask_before_they_are_lost(new_page, artifacts_dir, width):
    world = _world(f"ua{width}")
    page = _page(new_page, WIDTHS[width])
    login(page, f"ua{width}")
    page.goto(f"/playground/p/{world.prompt.pk}/v3/")
    system = page.get_by_label("System prompt")
    system.fill("A changed system prompt that is not saved yet.")

    # A version in the tree: the dialog, not a lost edit. Stay keeps the edit.
    _open_tree(page)
    page.locator("#version-tree .tree-link", has_text="v1").click()
    dialog = page.get_by_role("dialog", name="You have unsaved changes")
    dialog.wait_for()
    page.screenshot(path=artifacts_dir / f"unsaved-dialog-{width}.png")
    dialog.get_by_role("button", name="Stay").click()
    assert page.url.endswith(f"/playground/p/{world.prompt.pk}/v3/")
    assert system.input_value() == "A changed system prompt that is not saved yet."

    # Closing the tab asks through the browser (beforeunload).
    seen = []
    page.on("dialog", lambda d: (seen.append(d.type), d.dismiss()))
    page.close(run_before_unload=True)
    page.wait_for_function("() => true")
    assert seen == ["beforeunload"]
    assert not page.is_closed()

    # Discard follows the link; nothing is saved.
    _open_tree(page)
    page.locator("#version-tree .tree-link", has_text="v1").click()
    dialog.get_by_role("button", name="Discard changes").click()
    page.wait_for_url(f"**/playground/p/{world.prompt.pk}/v1/")
    assert PromptVersion.objects.filter(prompt=world.prompt).count() == 3

    # Save from the dialog saves the edit as a new version.
    page.get_by_label("System prompt").fill("Saved from the dialog.")
    page.locator(".label-badge", has_text="staging → v2").first.click()
    dialog.get_by_role("button", name="Save version").click()
    page.wait_for_url(f"**/playground/p/{world.prompt.pk}/v4/")
    assert PromptVersion.objects.get(prompt=world.prompt, number=4).parent_id == world.v1.pk

    # Nothing changed: links just go.
    page.locator(".label-badge", has_text="staging → v2").first.click()
    page.wait_for_url(f"**/playground/p/{world.prompt.pk}/v2/")

    # The new-prompt page guards what was typed the same way.
    page.goto("/playground/new/")
    page.get_by_label("Title").fill("Half-written")
    page.locator(".crumbs a", has_text="Playground").click()
    dialog.wait_for()
    assert "not created yet" in dialog.inner_text()
    page.screenshot(path=artifacts_dir / f"unsaved-new-{width}.png")
    dialog.get_by_role("button", name="Stay").click()
    assert page.get_by_label("Title").input_value() == "Half-written"


# --- 2. phones: nothing scrolls sideways, the editor is uncovered ------------------------------


def test_every_playground_page_fits_a_phone(new_page, artifacts_dir):
    world = _world("pho")
    run = world.run
    page = _page(new_page, PHONE)
    login(page, "pho")
    p = world.prompt.pk
    pages = {
        "list": "/playground/",
        "new": "/playground/new/",
        "prompt": f"/playground/p/{p}/v3/",
        "diff": f"/playground/p/{p}/diff/?a=v1&b=v3",
        "diff-split": f"/playground/p/{p}/diff/?a=v1&b=v3&view=split",
        "compare": f"/playground/p/{p}/compare/",
        "compare-with-runs": f"/playground/p/{p}/compare/?a=v3&b=v3&run_a={run.pk}&run_b={run.pk}",
        "run": f"/playground/runs/{run.pk}/",
        "api-keys": "/accounts/keys/",
        "shared": f"/s/{world.token}",
        "shared-revoked": f"/s/{world.revoked}",
    }
    for name, path in pages.items():
        page.goto(path)
        wait_for_quiet_network(page)
        _no_sideways_scroll(page, name)
        page.screenshot(path=artifacts_dir / f"{name}-375.png", full_page=True)
    # The API keys table is a stack of cards: its Revoke button is on screen.
    page.goto("/accounts/keys/")
    revoke_key = page.get_by_role("button", name=re.compile("^Revoke key"))
    kbox = revoke_key.bounding_box()
    assert kbox["x"] >= 0 and kbox["x"] + kbox["width"] <= PHONE["width"]

    # The prompt page: the tree is a closed section; the editor is on top of nothing.
    page.goto(f"/playground/p/{p}/v3/")
    toggle = page.locator("#tree-toggle")
    assert toggle.get_attribute("aria-expanded") == "false"
    assert not page.locator("#version-tree").is_visible()
    system = page.get_by_label("System prompt")
    system.scroll_into_view_if_needed()
    box = system.bounding_box()
    hit = page.evaluate(
        "([x, y]) => document.elementFromPoint(x, y).id",
        [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2],
    )
    assert hit == "system"
    system.fill("Typed on a phone.")
    assert system.input_value() == "Typed on a phone."
    commit = page.get_by_label("Commit message")
    commit.scroll_into_view_if_needed()
    assert commit.bounding_box()["width"] >= 280
    page.screenshot(path=artifacts_dir / "prompt-375-editing.png")

    # Opened, the tree's titles are readable, and it still does not scroll sideways.
    toggle.click()
    link = page.locator("#version-tree .tree-link", has_text="rank risks")
    assert link.bounding_box()["width"] >= 120
    assert "rank risks" in link.inner_text()
    _no_sideways_scroll(page, "prompt with the tree open")
    page.locator(".tree-panel").screenshot(path=artifacts_dir / "tree-375-open.png")

    # The share dialog: its tables are stacked cards, nothing cut off.
    page.get_by_role("button", name="Share").click()
    dialog = page.get_by_role("dialog", name="Share “Design critic")
    dialog.wait_for()
    overflow = page.evaluate(
        "() => { const d = document.getElementById('share-dialog');"
        " return [d.scrollWidth, d.clientWidth]; }"
    )
    assert overflow[0] <= overflow[1]
    revoke = dialog.get_by_role("button", name="Revoke").first
    revoke.scroll_into_view_if_needed()
    rbox = revoke.bounding_box()
    assert rbox["x"] >= 0 and rbox["x"] + rbox["width"] <= PHONE["width"]
    page.screenshot(path=artifacts_dir / "share-dialog-375.png")


def test_desktop_prompt_page_keeps_the_tree_beside_the_editor(new_page, artifacts_dir):
    world = _world("desk")
    page = _page(new_page, DESKTOP)
    login(page, "desk")
    page.goto(f"/playground/p/{world.prompt.pk}/v3/")
    assert not page.locator("#tree-toggle").is_visible()
    tree = page.locator("#version-tree").bounding_box()
    editor = page.locator("#editor-form").bounding_box()
    assert tree["x"] + tree["width"] <= editor["x"]
    _no_sideways_scroll(page, "prompt at 1280")
    page.screenshot(path=artifacts_dir / "prompt-1280.png")
    page.goto("/playground/")
    assert page.locator(".prompt-table thead").is_visible()  # a table, not cards
    page.screenshot(path=artifacts_dir / "list-1280.png")


# --- axe-core: every playground page, both widths -------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_playground_pages_have_no_axe_violations(
    new_page,
    artifacts_dir,
    width,
    axe_source,  # noqa: F811
):
    world = _world(f"axe{width}")
    page = _page(new_page, WIDTHS[width])
    login(page, f"axe{width}")
    p = world.prompt.pk
    found = {}
    for name, path in {
        "list": "/playground/",
        "new": "/playground/new/",
        "prompt": f"/playground/p/{p}/v3/",
        "diff": f"/playground/p/{p}/diff/?a=v1&b=v3",
        "diff-split": f"/playground/p/{p}/diff/?a=v1&b=v3&view=split",
        "compare": f"/playground/p/{p}/compare/",
        "api-keys": "/accounts/keys/",
        "shared": f"/s/{world.token}",
        "shared-revoked": f"/s/{world.revoked}",
        "shared-expired": f"/s/{world.expired}",
        "run": f"/playground/runs/{world.run.pk}/",
        "compare-with-runs": (
            f"/playground/p/{p}/compare/?a=v3&b=v3&run_a={world.run.pk}&run_b={world.run.pk}"
        ),
    }.items():
        page.goto(path)
        wait_for_quiet_network(page)
        found[name] = axe_violations(page, axe_source)
    # With the tree open (phones), the unsaved dialog and the share dialog open.
    page.goto(f"/playground/p/{p}/v3/")
    _open_tree(page)
    found["prompt, tree open"] = axe_violations(page, axe_source)
    page.get_by_label("System prompt").fill("changed")
    page.locator("#version-tree .tree-link", has_text="v1").click()
    page.get_by_role("dialog", name="You have unsaved changes").wait_for()
    found["unsaved dialog"] = axe_violations(page, axe_source)
    page.get_by_role("button", name="Stay").click()
    page.get_by_role("button", name="Share").click()
    page.locator("#share-dialog").wait_for()
    found["share dialog"] = axe_violations(page, axe_source)
    report = [f"{name}: {v}" for name, violations in found.items() for v in violations]
    assert report == [], "\n".join(report)


# --- 4. empty variables are refused, by name -----------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_an_empty_variable_is_refused_by_the_run_panel_and_the_export_panel(
    new_page, artifacts_dir, width
):
    owner = make_user(f"var{width}")
    prompt, _ = make_prompt(
        owner, title="Echo", provider="echo", model="echo-1", variables={"design": ""}
    )
    page = _page(new_page, WIDTHS[width])
    login(page, f"var{width}")
    page.goto(f"/playground/p/{prompt.pk}/v1/")
    page.get_by_role("button", name="Run", exact=True).click()
    status = page.locator("#run-form-status")
    page.wait_for_function(
        "() => document.getElementById('run-form-status').textContent.includes('variables.design')"
    )
    assert "{{design}} is used in the prompt but is empty" in status.inner_text()
    status.scroll_into_view_if_needed()
    page.screenshot(path=artifacts_dir / f"run-refused-{width}.png")

    _open_export(page)
    page.wait_for_function(
        "() => document.getElementById('export-status').textContent.includes('variables.design')"
    )
    assert "non-empty default" in page.locator("#export-status").inner_text()
    page.locator("#export-panel").screenshot(path=artifacts_dir / f"export-refused-{width}.png")

    _no_sideways_scroll(page, "prompt page with the refusals")
    # (A filled-in run goes: tests/playground/test_variables_required.py and
    # tests/browser/test_runs_browser.py, which runs against a server process.)


# --- 5. large versions: the replaced text, bounded loaded text, diff numbers and folds ----------


@pytest.mark.parametrize("width", WIDTHS)
def test_replace_with_file_says_so_where_the_text_was(new_page, artifacts_dir, width, tmp_path):
    world = _world(f"rep{width}")
    (tmp_path / "brief.txt").write_text("The brief, from a file.\n" * 50, encoding="utf-8")
    page = _page(new_page, WIDTHS[width])
    login(page, f"rep{width}")
    page.goto(f"/playground/p/{world.prompt.pk}/v3/")
    field = page.locator("[data-text-field='system']")
    field.get_by_label("Replace with file").set_input_files(tmp_path / "brief.txt")
    note = field.locator(".replace-note")
    note.wait_for()
    assert "Replaced by brief.txt (1.2 KB) when you save" in note.inner_text()
    assert not page.locator("textarea#system").is_visible()  # the old text is out of the way
    note_box, file_box = note.bounding_box(), field.locator(".replace-file").bounding_box()
    assert note_box["y"] < file_box["y"]  # where the text was, above the file picker
    field.scroll_into_view_if_needed()
    page.screenshot(path=artifacts_dir / f"replace-note-{width}.png")
    note.get_by_role("button", name="Keep the current text").click()
    assert page.locator("textarea#system").is_visible()
    assert page.locator("textarea#system").input_value() == "Rank risks, worst first.\n"
    assert field.locator(".replace-note").count() == 0

    # Chosen again and saved: the file's text is the new version's.
    field.get_by_label("Replace with file").set_input_files(tmp_path / "brief.txt")
    page.get_by_label("Commit message").fill("brief from a file")
    page.get_by_role("button", name="Save version").click()
    page.wait_for_url(f"**/playground/p/{world.prompt.pk}/v4/")


def test_long_text_loads_inside_a_bounded_box(new_page, artifacts_dir, settings):
    settings.PLAYGROUND_PAGE_FULL_TEXT_MAX_CHARS = 4_000
    owner = make_user("box")
    text = "".join(f"line {n:06d} of a long system prompt\n" for n in range(20_000))
    prompt, _ = make_prompt(owner, title="Long", system=text)
    page = _page(new_page, DESKTOP)
    login(page, "box")
    page.goto(f"/playground/p/{prompt.pk}/v1/")
    body = page.locator(".lazy-text-body").first
    height = body.bounding_box()["height"]
    assert height <= DESKTOP["height"] * 0.7 + 1
    # Scrolling the page to the end loads nothing more: only scrolling the text does.
    loaded = int(page.locator("[data-lazy-text]").first.get_attribute("data-loaded"))
    page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
    wait_for_quiet_network(page)
    assert int(page.locator("[data-lazy-text]").first.get_attribute("data-loaded")) == loaded
    body.evaluate("(el) => { el.scrollTop = el.scrollHeight; }")
    page.wait_for_function(
        "(n) => Number(document.querySelector('[data-lazy-text]').dataset.loaded) > n", arg=loaded
    )
    assert body.bounding_box()["height"] == height  # the box did not grow
    body.scroll_into_view_if_needed()
    page.screenshot(path=artifacts_dir / "bounded-text-1280.png")


@pytest.mark.parametrize("width", WIDTHS)
def test_diff_numbers_do_not_wrap_and_a_fold_opens_on_click(new_page, artifacts_dir, width):
    owner = make_user(f"dif{width}")
    lines = [f"{n}" for n in range(120_000)]
    prompt, v1 = make_prompt(owner, title="Numbers", system="\n".join(lines) + "\n")
    lines[110_000] = "CHANGED"
    save(owner, prompt, v1, system="\n".join(lines) + "\n")
    page = _page(new_page, WIDTHS[width])
    login(page, f"dif{width}")
    page.goto(f"/playground/p/{prompt.pk}/diff/?a=v1&b=v2")
    number = page.locator(".diff-row .diff-no", has_text="110001").first
    number.wait_for()
    single = page.evaluate(
        "(el) => parseFloat(getComputedStyle(el).lineHeight) || 20",
        number.element_handle(),
    )
    assert number.bounding_box()["height"] <= single * 1.5  # one line, not wrapped
    _no_sideways_scroll(page, "diff")
    page.screenshot(path=artifacts_dir / f"diff-numbers-{width}.png")
    # A fold too long to show at once offers no "Show all" (it stalled the page); a click on
    # its bar (not just its small links) opens its first lines.
    fold = page.locator(".diff-fold").last
    assert "9996 unchanged lines" in fold.inner_text()
    assert fold.locator(".diff-expand-all").count() == 0
    before = page.locator(".diff-row").count()
    fold.locator(".diff-fold-note").click()
    page.wait_for_function(
        "(n) => document.querySelectorAll('.diff-row').length > n", arg=before, timeout=60_000
    )
    assert page.locator(".diff-row").count() == before + 20
    assert "9976 unchanged lines" in page.locator(".diff-fold").last.inner_text()
    page.screenshot(path=artifacts_dir / f"diff-fold-opened-{width}.png")


# --- 7. labels -----------------------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_label_names_are_checked_as_you_type_and_kept(new_page, artifacts_dir, width):
    world = _world(f"lab{width}")
    page = _page(new_page, WIDTHS[width])
    problems = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    login(page, f"lab{width}")
    page.goto(f"/playground/p/{world.prompt.pk}/v2/")
    name = page.get_by_label("New label on v2")
    name.fill("bad name")
    assert name.evaluate("(el) => el.validity.patternMismatch") is True
    name.fill("release-2_b")
    assert name.evaluate("(el) => el.validity.valid") is True
    assert not [p for p in problems if "pattern" in p.lower()], problems
    # Bypassing the browser's check, the server's refusal keeps what was typed.
    name.evaluate("(el) => el.removeAttribute('pattern')")
    name.fill("bad name")
    page.get_by_role("button", name="Create label").click()
    page.locator("#label-error").wait_for()
    assert page.get_by_label("New label on v2").input_value() == "bad name"
    # An existing label on this very version: said so, no "Move from v2 to v2".
    page.get_by_label("New label on v2").fill("staging")
    page.get_by_role("button", name="Create label").click()
    page.wait_for_function(
        "() => document.getElementById('label-error').textContent.includes('already on v2')"
    )
    assert "from v2 to v2" not in page.locator("#labels-panel").inner_text()
    page.locator("#labels-panel").screenshot(path=artifacts_dir / f"label-exists-{width}.png")
    # An existing label elsewhere: offered as a move from where it is.
    page.goto(f"/playground/p/{world.prompt.pk}/v1/")
    page.get_by_label("New label on v1").fill("staging")
    page.get_by_role("button", name="Create label").click()
    page.get_by_role("button", name="Move “staging” from v2 to v1 anyway").wait_for()
    assert "already exists: it points at v2" in page.locator("#label-error").inner_text()
    page.locator("#labels-panel").screenshot(path=artifacts_dir / f"label-move-{width}.png")
    assert Label.objects.get(prompt=world.prompt, name="staging").version_id == world.v2.pk


# --- 8. addresses and names ----------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_addresses_name_version_numbers_and_ended_links_say_so(new_page, artifacts_dir, width):
    world = _world(f"adr{width}")
    assert world.v2.pk != 2  # ids and numbers differ here
    page = _page(new_page, WIDTHS[width])
    login(page, f"adr{width}")
    p = world.prompt.pk
    page.goto(f"/playground/p/{p}/v2/")
    assert page.locator(".version-head h2").inner_text().startswith("v2")
    card = page.locator(".version-head").inner_text()
    assert "child of v1" in card and "its parent" not in card
    _open_tree(page)
    href = page.locator("#version-tree .tree-link", has_text="v3").get_attribute("href")
    assert href == f"/playground/p/{p}/v3/"
    # An older link with the version's id still opens that version.
    page.goto(f"/playground/p/{p}/?v={world.v3.pk}")
    assert page.locator(".version-head h2").inner_text().startswith("v3")
    # Compare A → B from the tree: the diff's address names numbers.
    _open_tree(page)
    with page.expect_navigation():
        page.get_by_role("button", name="Compare A → B").click()
    query = dict(part.split("=") for part in page.url.split("?")[1].split("&"))
    assert page.url.split("?")[0].endswith(f"/playground/p/{p}/diff/")
    assert query == {"a": "v2", "b": "v3"}
    assert page.locator("h1").inner_text() == "v2 → v3"
    # The share dialog says which version a pinned link shows.
    page.goto(f"/playground/p/{p}/v2/")
    page.get_by_role("button", name="Share").click()
    option = page.locator("#link-scope option[value='version']").inner_text()
    assert option.startswith("v2") and "pinned" in option
    page.keyboard.press("Escape")

    visitor = _page(new_page, WIDTHS[width])
    for token, status, heading in (
        (world.revoked, 410, "This link was revoked"),
        (world.expired, 410, "This link has expired"),
        ("rl_" + "x" * 40, 404, "Not found"),
    ):
        response = visitor.goto(f"/s/{token}")
        assert response.status == status
        assert visitor.locator("h1").inner_text() == heading
        text = visitor.locator("main").inner_text()
        assert world.prompt.title not in text and "v2" not in text
        _no_sideways_scroll(visitor, heading)
        visitor.screenshot(path=artifacts_dir / f"link-{status}-{heading[:20]}-{width}.png")


# --- 9. the smaller things -----------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_smaller_fixes(new_page, artifacts_dir, width):
    world = _world(f"sm{width}")
    page = _page(new_page, WIDTHS[width])
    login(page, f"sm{width}")
    p = world.prompt.pk
    page.goto(f"/playground/p/{p}/v3/")

    # Another provider brings its default model.
    page.get_by_label("Provider").select_option("echo")
    assert page.get_by_label("Model", exact=True).input_value() == "echo-1"
    page.get_by_label("Provider").select_option("openai")
    assert page.get_by_label("Model", exact=True).input_value() == "gpt-4.1-mini"
    assert "gpt-4.1-mini" in page.locator("#model-note").inner_text()
    page.get_by_label("Provider").select_option("anthropic")  # back as it was
    page.get_by_label("Model", exact=True).fill("claude-sonnet-4-6")

    # Arrow keys move through the tree's versions.
    _open_tree(page)
    page.locator("#version-tree .tree-link", has_text="v3").focus()
    page.keyboard.press("ArrowDown")
    assert page.evaluate("() => document.activeElement.textContent").startswith("v2")
    page.keyboard.press("End")
    assert page.evaluate("() => document.activeElement.textContent").startswith("v1")
    page.keyboard.press("Home")
    assert page.evaluate("() => document.activeElement.textContent").startswith("v3")

    # The fetch example names a label the prompt has (main is on v3).
    _open_export(page)
    fetch = page.locator(".export-fetch").inner_text()
    assert "/labels/main/" in fetch and "production" not in fetch

    # Temperature and top_p together: the Anthropic export warns. The version is saved from
    # here, so first let the page's requests finish: the live server's in-memory SQLite locks a
    # table a request is reading ("database table is locked").
    wait_for_quiet_network(page)
    owner = world.prompt.owner
    both = save(
        owner,
        world.prompt,
        world.v3,
        message="both",
        params={"temperature": 0.5, "max_tokens": 512, "top_p": 0.9, "stop": []},
    )
    page.goto(f"/playground/p/{p}/v{both.version.number}/")
    _open_export(page)
    warnings = page.locator("#export-warnings")
    page.wait_for_function(
        "() => document.getElementById('export-warnings').textContent.includes('top_p')"
    )
    assert "refuse a call that sets both" in warnings.inner_text()
    page.locator("#export-panel").screenshot(path=artifacts_dir / f"export-top-p-{width}.png")

    # Compare: two different versions by default, the form roomy at this width.
    page.goto(f"/playground/p/{p}/compare/")
    a = page.get_by_label("Version").first.input_value()
    b = page.get_by_label("Version").nth(1).input_value()
    assert (a, b) == ("v3", f"v{both.version.number}")
    sides = page.locator(".compare-side")
    if width == "1280":
        first, second = sides.nth(0).bounding_box(), sides.nth(1).bounding_box()
        assert first["y"] == second["y"] and first["width"] >= 450
        variables = page.locator("#compare-form .run-variables").bounding_box()
        assert variables["y"] > first["y"] + first["height"]
    _no_sideways_scroll(page, "compare")
    page.screenshot(path=artifacts_dir / f"compare-{width}.png", full_page=True)

    # Rename and archive from the prompt page itself.
    page.goto(f"/playground/p/{p}/v3/")
    page.locator(".prompt-manage summary", has_text="Rename").click()
    page.get_by_label("New title for Design critic").fill("Payments critic")
    page.get_by_role("button", name="Save title").click()
    page.wait_for_selector("text=Renamed to “Payments critic”.")
    assert page.url.endswith(f"/playground/p/{p}/v3/")
    page.screenshot(path=artifacts_dir / f"renamed-{width}.png")
    page.get_by_role("button", name="Archive", exact=True).click()
    page.wait_for_selector("text=Archived “Payments critic”.")
    assert page.url.endswith("/playground/")
