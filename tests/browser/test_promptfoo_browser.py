"""A promptfoo config imported from the test-set page in Chromium, at 1280 and 375 px: the
shipped examples/promptfooconfig.yaml goes through the "Import rows" form, its tests become
rows that show their graders, the page stays axe-clean with no sideways scroll, and the
"Export promptfooconfig.yaml" link gives the rows back as a config."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest
import yaml

from tests.browser.conftest import ROOT, Embedded
from tests.browser.test_accessibility import axe_source as axe_source  # noqa: F401 - a fixture
from tests.browser.test_evals_browser import _check_page, _post, _resized
from tests.browser.test_runs_browser import login, page  # noqa: F401

pytestmark = [pytest.mark.browser]

EXAMPLE = ROOT / "examples" / "promptfooconfig.yaml"


def _get_text(server: Embedded, user: str, path: str) -> str:
    request = urllib.request.Request(
        server.url + path, headers={"Authorization": f"Token {server.data['tokens'][user]}"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 (loopback)
        return response.read().decode()


def test_import_a_promptfoo_config_from_the_test_set_page_at_both_widths(
    page,  # noqa: F811 - the fixture imported above
    embedded,
    axe_source,
    artifacts_dir: Path,
):
    prompt = embedded.data["prompts"]["lin"]
    made = _post(
        embedded,
        "lin",
        f"/api/v1/prompts/{prompt}/testsets/",
        {"name": "From promptfoo", "rows": [{"variables": {"design": "a single VM"}}]},
    )
    testset = made["id"]
    login(page, "lin")
    problems: list[str] = []
    for revision, width in ((2, 1280), (3, 375)):
        page.goto(f"/evals/testsets/{testset}/")
        _resized(page, width)
        page.get_by_label("promptfoo config").set_input_files(str(EXAMPLE))
        page.get_by_role("button", name="Import").click()
        rows = 1 + 4 * (revision - 1)
        page.wait_for_selector(f"text=Saved revision {revision} with {rows} rows")
        # the imported rows show their own graders; the typed row has none
        shown = page.locator(".row-graders").all_inner_texts()
        assert len(shown) == rows - 1
        assert "5 graders" in shown[0]
        assert "threshold 0.6" in shown[1]
        problems += _check_page(page, f"promptfoo-import-r{revision}", axe_source, artifacts_dir)

    body = embedded.api("lin", f"/api/v1/testsets/{testset}/")
    assert [r["variables"]["design"] for r in body["rows"][:2]] == [
        "a single VM",
        "a cache in front of PostgreSQL",
    ]
    assert body["rows"][1]["graders"][2] == {
        "type": "contains",
        "value": "postgresql",
        "ignore_case": True,
    }

    # The export link gives a config with the imported rows' assertions back.
    href = page.get_by_role("link", name="Export promptfooconfig.yaml").get_attribute("href")
    assert href is not None
    config = yaml.safe_load(_get_text(embedded, "lin", href))
    assert [t["vars"]["design"] for t in config["tests"]][:2] == [
        "a single VM",
        "a cache in front of PostgreSQL",
    ]
    assert {"type": "icontains", "value": "postgresql"} in config["tests"][1]["assert"]
    assert problems == []
