"""The editor's large-text mode in Chromium: a 20 MB file uploaded with a progress bar, saved as
a version, shown without being put into the page; a cancelled upload saves nothing.

The upload is throttled through the DevTools protocol so the progress bar has time to move on
a loopback connection.
"""

import hashlib
from pathlib import Path

import pytest

from playground.models import PromptVersion, Upload
from tests.browser.test_accessibility import axe_source, axe_violations  # noqa: F401 (fixture)
from tests.browser.test_playground_browser import login
from tests.factories import make_user
from tests.playground.factories import make_prompt

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MB = 1024 * 1024


def big_file(path: Path, size: int) -> bytes:
    line = "line {:08d}: a long system prompt for the large-text editor, ünïcode included.\n"
    parts, total, number = [], 0, 0
    while total < size:
        text = line.format(number).encode()
        parts.append(text)
        total += len(text)
        number += 1
    data = b"".join(parts)
    path.write_bytes(data)
    return data


def throttle(page, bytes_per_second: int) -> None:
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send(
        "Network.emulateNetworkConditions",
        {
            "offline": False,
            "latency": 0,
            "downloadThroughput": -1,
            "uploadThroughput": bytes_per_second,
        },
    )


RECORD_PROGRESS = """() => {
  window.__progress = [];
  const bar = document.getElementById('upload-progress');
  new MutationObserver(() => {
    window.__progress.push(Number(bar.value));
    console.log('progress ' + bar.value);
  }).observe(bar, {attributes: true, attributeFilter: ['value']});
}"""


def record_progress(page) -> list[int]:
    """Progress values as the page shows them, kept here (the page navigates away)."""
    seen: list[int] = []
    page.on(
        "console",
        lambda msg: (
            seen.append(int(msg.text.split()[1])) if msg.text.startswith("progress ") else None
        ),
    )
    page.evaluate(RECORD_PROGRESS)
    return seen


@pytest.fixture
def editor(page, tmp_path):
    owner = make_user("ada")
    prompt, root = make_prompt(owner, title="Huge context")
    login(page, "ada")
    page.goto(f"/playground/p/{prompt.pk}/")
    return page, prompt, root


def test_upload_a_20_mb_file_with_progress_then_save(editor, tmp_path, artifacts_dir, axe_source):  # noqa: F811
    page, prompt, root = editor
    data = big_file(tmp_path / "context.txt", 20 * MB)
    throttle(page, 6 * MB)
    seen = record_progress(page)
    page.get_by_label("Replace with file").first.set_input_files(tmp_path / "context.txt")
    assert "context.txt" in page.locator("#upload-message").inner_text()
    page.get_by_label("Commit message").fill("20 MB context")
    page.get_by_role("button", name="Save version").click()
    page.wait_for_function("() => window.__progress && window.__progress.length >= 3")
    page.screenshot(path=artifacts_dir / "upload-progress.png", full_page=True)
    assert page.get_by_label("Uploading the system prompt").is_visible()
    assert page.locator("#upload-percent").inner_text().endswith("%")
    page.wait_for_selector(".tree-row-selected[data-number='2']", timeout=120_000)

    moving = [value for value in seen if 0 < value < 100]
    assert len(set(moving)) >= 3, seen
    assert moving == sorted(moving)
    assert 100 in seen

    version = PromptVersion.objects.get(prompt=prompt, number=2)
    assert version.parent_id == root.pk
    assert version.system_sha == hashlib.sha256(data).hexdigest()
    assert Upload.objects.get().used_at is not None

    # The saved page does not carry the 20 MB text: the editor keeps it by reference.
    html = page.content()
    assert len(html) < 1 * MB
    assert "Long text: " in page.locator("[data-text-field='system']").inner_text()
    page.screenshot(path=artifacts_dir / "saved-large.png", full_page=True)
    assert axe_violations(page, axe_source) == []

    # The lazy view shows the first screenful; scrolling loads later text, range by range.
    box = page.locator("[data-lazy-text]").first
    head = int(box.get_attribute("data-loaded"))
    assert 0 < head < 100_000
    assert "line 00000000:" in box.locator("pre").inner_text()
    later = f"line {head // 80 + 1500:08d}:"
    assert later not in box.locator("pre").inner_text()
    for _ in range(6):
        before = int(box.get_attribute("data-loaded"))
        box.locator(".lazy-text-sentinel").scroll_into_view_if_needed()
        page.wait_for_function(
            "(before) => Number(document.querySelector('[data-lazy-text]').dataset.loaded)"
            " > before",
            arg=before,
        )
    assert int(box.get_attribute("data-loaded")) > head + 100_000
    assert later in box.locator("pre").inner_text()
    box.locator(".lazy-text-bar").scroll_into_view_if_needed()
    page.screenshot(path=artifacts_dir / "lazy-view-scrolled.png")

    # Saving again with the long text untouched keeps it (by its sha), without uploading.
    page.get_by_label("Model").fill("claude-haiku-4-5")
    page.get_by_role("button", name="Save version").click()
    page.wait_for_selector(".tree-row-selected[data-number='3']")
    assert PromptVersion.objects.get(prompt=prompt, number=3).system_sha == version.system_sha
    assert Upload.objects.count() == 1


def test_cancel_an_upload_saves_nothing(editor, tmp_path, artifacts_dir, axe_source):  # noqa: F811
    page, prompt, _ = editor
    big_file(tmp_path / "slow.txt", 8 * MB)
    throttle(page, 1 * MB)
    page.evaluate(RECORD_PROGRESS)
    page.get_by_label("Replace with file").first.set_input_files(tmp_path / "slow.txt")
    page.get_by_role("button", name="Save version").click()
    page.wait_for_function("() => window.__progress.some(v => v > 0)")
    assert axe_violations(page, axe_source) == []
    page.screenshot(path=artifacts_dir / "upload-in-flight.png", full_page=True)
    # Keyboard: the Cancel button has the focus while the upload runs.
    assert page.evaluate("() => document.activeElement.id") == "upload-cancel"
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.getElementById('upload-message').textContent.includes('cancelled')"
    )
    message = page.locator("#upload-message").inner_text()
    assert "Nothing was saved" in message
    assert page.locator("#upload-status").is_hidden()
    page.screenshot(path=artifacts_dir / "upload-cancelled.png", full_page=True)
    assert PromptVersion.objects.filter(prompt=prompt).count() == 1
    # The form is as it was: the system prompt is still posted from its textarea.
    assert page.locator("textarea#system").get_attribute("name") == "system"
    assert page.locator("input[name='system_ref']").input_value() == ""


def test_text_over_the_threshold_typed_in_place_is_uploaded(editor, settings):
    page, prompt, _ = editor
    settings.EDITOR_UPLOAD_THRESHOLD_BYTES = 1000
    page.reload()
    text = "".join(f"typed line {i}\n" for i in range(200))
    page.get_by_label("System prompt").fill(text)
    page.get_by_role("button", name="Save version").click()
    page.wait_for_selector(".tree-row-selected[data-number='2']")
    version = PromptVersion.objects.get(prompt=prompt, number=2)
    assert version.system_sha == hashlib.sha256(text.encode()).hexdigest()
    assert Upload.objects.get().used_at is not None


def test_a_refused_upload_says_why_and_saves_nothing(editor, tmp_path, artifacts_dir, settings):
    page, prompt, _ = editor
    settings.UPLOAD_MAX_BYTES = 1 * MB
    big_file(tmp_path / "too-big.txt", 2 * MB)
    page.get_by_label("Replace with file").first.set_input_files(tmp_path / "too-big.txt")
    page.get_by_role("button", name="Save version").click()
    page.wait_for_function(
        "() => document.getElementById('upload-message').textContent.includes('Upload failed')"
    )
    message = page.locator("#upload-message").inner_text()
    assert f"at most {MB} bytes" in message
    assert "Nothing was saved" in message
    assert PromptVersion.objects.filter(prompt=prompt).count() == 1
    assert Upload.objects.count() == 0
    page.screenshot(path=artifacts_dir / "upload-refused.png")


def test_new_prompt_from_a_file(page, tmp_path):
    make_user("bo")
    login(page, "bo")
    data = big_file(tmp_path / "brief.txt", 2 * MB)
    page.goto("/playground/new/")
    page.get_by_label("Title").fill("From a file")
    page.get_by_label("Replace with file").first.set_input_files(tmp_path / "brief.txt")
    page.get_by_role("button", name="Create prompt").click()
    page.wait_for_selector(".tree-row-selected[data-number='1']")
    version = PromptVersion.objects.get(prompt__title="From a file")
    assert version.system_sha == hashlib.sha256(data).hexdigest()
