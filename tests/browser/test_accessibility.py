"""Every main page passes axe-core's WCAG 2 A and AA rules with zero violations.

axe-core is vendored (tests/browser/vendor/axe-core/, the unmodified axe.min.js of the pinned
release with its licence, checked against its SHA-256), so the test needs no npm registry; it is
evaluated in the page through the DevTools protocol, so the page's own Content-Security-Policy
does not have to allow it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from playground.services import prompt_version_create, share_link_create
from reviews.selectors import revision_text
from reviews.services import annotation_create
from tests.browser.test_playground_browser import login
from tests.conftest import wait_for_quiet_network
from tests.factories import make_user
from tests.playground.factories import content, make_prompt
from tests.reviews.factories import make_doc, make_review, span_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE_VERSION = "4.11.0"
AXE_FILE = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"
AXE_SHA256 = "e9e5863c33a874f09bc01acd9234b7e3c871479f5eef8802fa582544465e6d01"
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


@pytest.fixture(scope="session")
def axe_source() -> str:
    """The vendored axe-core, the pinned release byte for byte (no registry at test time)."""
    data = AXE_FILE.read_bytes()
    assert hashlib.sha256(data).hexdigest() == AXE_SHA256, (
        f"{AXE_FILE} is not axe-core {AXE_VERSION}"
    )
    source = data.decode("utf-8")
    assert source.startswith(f"/*! axe v{AXE_VERSION}")
    return source


@dataclass(frozen=True)
class Violation:
    rule: str
    impact: str
    help: str
    targets: list[str]

    def __str__(self) -> str:
        return f"{self.rule} ({self.impact}): {self.help} at {', '.join(self.targets[:4])}"


def axe_violations(page: Any, axe_source: str) -> list[Violation]:
    """axe-core's WCAG violations on the page as it is now. The script is evaluated once per
    document (a later call on the same document, at another width, reuses it); only the
    violations are collected in full and sent back (`resultTypes`: the passes, the
    incomplete and the inapplicable rules are still run, but each keeps one node, and all of
    them used to cross the DevTools protocol for nothing)."""
    if not page.evaluate("() => typeof window.axe?.run === 'function'"):
        page.evaluate(axe_source)
    violations = page.evaluate(
        """(tags) => axe.run(document, {runOnly: {type: 'tag', values: tags},
                                       resultTypes: ['violations']})
                       .then((result) => result.violations)""",
        WCAG_TAGS,
    )
    return [
        Violation(
            rule=v["id"],
            impact=v.get("impact") or "",
            help=v["help"],
            targets=[" ".join(map(str, node["target"])) for node in v["nodes"]],
        )
        for v in violations
    ]


def _pages(owner_name: str) -> dict[str, str]:
    """Build one of everything through the services; return page name -> path."""
    owner = make_user(owner_name)
    prompt, root = make_prompt(owner, title="Careful reviewer")
    child = prompt_version_create(
        actor=owner,
        prompt=prompt,
        parent=root,
        content=content(system="You are a careful reviewer.\nCite the passage.\n"),
        message="cite passages",
    ).version
    prompt_version_create(
        actor=owner, prompt=prompt, parent=root, content=content(model="claude-haiku-4-5")
    )
    _, token = share_link_create(actor=owner, prompt=prompt, access="public", version=child)
    doc, revision = make_doc(owner)
    review = make_review(owner, revision)
    text = revision_text(revision=revision)
    passage = text.split("\n\n")[2][:60].strip()
    start, end = span_of(text, passage)
    annotation_create(
        actor=owner,
        review=review,
        area="failure-modes",
        kind="risk",
        severity="major",
        body="What happens when this fails?",
        start=start,
        end=end,
    )
    return {
        "home": "/",
        "questions": "/questions/",
        "question": "/questions/llm-inference-api/",
        "playground": "/playground/",
        "new prompt": "/playground/new/",
        "prompt": f"/playground/p/{prompt.pk}/",
        "diff": f"/playground/p/{prompt.pk}/diff/?a={root.pk}&b={child.pk}",
        "shared": f"/s/{token}",
        "reviews": "/reviews/",
        "new doc": "/reviews/new/",
        "doc": f"/reviews/d/{doc.pk}/",
        "review": f"/reviews/r/{review.pk}/",
        # issue #23: the rest of the desk and the estimators (both widths in
        # tests/browser/test_review_desk_phone_browser.py).
        "doc r1": f"/reviews/d/{doc.pk}/?r=1",
        "inbox": "/reviews/inbox/",
        "practice": "/reviews/practice/",
        "storage estimator": "/questions/data-platform/",
        "checkpoint estimator": "/questions/checkpoint-distribution/",
    }


def test_main_pages_have_no_wcag_violations(new_page, axe_source, artifacts_dir: Path):
    paths = _pages("ada")
    anonymous = new_page()
    found: dict[str, list[Violation]] = {}
    for name in ("home", "questions", "question"):
        anonymous.goto(paths[name])
        found[f"{name} (anonymous)"] = axe_violations(anonymous, axe_source)
    for name, path in (("log in", "/accounts/login/"), ("sign up", "/accounts/signup/")):
        anonymous.goto(path)
        found[name] = axe_violations(anonymous, axe_source)

    page = new_page()
    login(page, "ada")
    for name, path in paths.items():
        response = page.goto(path)
        assert response is not None, f"{name}: {path}"
        assert response.status == 200, f"{name}: {path}"
        wait_for_quiet_network(page)
        found[name] = axe_violations(page, axe_source)
        page.screenshot(path=artifacts_dir / f"{name.replace(' ', '-')}.png", full_page=True)

    report = [f"{name}: {v}" for name, violations in found.items() for v in violations]
    assert report == [], "\n".join(report)
