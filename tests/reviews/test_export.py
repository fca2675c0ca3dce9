"""Export of a submitted review: ranked risks first, orphans last, Markdown and JSON alike."""

import pytest

from reviews.services import (
    annotation_update,
    doc_revision_create,
    review_risks_rank,
    review_submit,
    review_update,
)
from tests.factories import api_client_for, make_user
from tests.reviews.factories import CONSTRAINT, DOC, annotate, make_doc, make_review

pytestmark = pytest.mark.django_db

TENANT = "Tenant keys are hashed at rest and compared in constant time."


@pytest.fixture
def submitted(django_capture_on_commit_callbacks):
    author, reviewer = make_user("author"), make_user("reviewer")
    doc, r1 = make_doc(author)
    review = make_review(reviewer, r1)
    minor = annotate(
        review, "Prefix sharing lets tenants", severity="minor", body="Cross-tenant leak?"
    )
    worst = annotate(
        review, "Evicted sequences are recomputed", severity="blocker", body="Eviction storms."
    )
    nit = annotate(review, "Latency budget", severity="nit", body="p99 only?")
    unranked = annotate(review, "Decode replicas", severity="major", body="Scale-down drains?")
    review_risks_rank(
        actor=reviewer, review=review, order=[worst.pk, minor.pk, nit.pk, unranked.pk]
    )
    for risk in (nit, unranked):
        annotation_update(actor=reviewer, annotation=risk, changes={"rank": None})
    missing = annotate(review, None, kind="missing", area="migration", body="No migration plan.")
    alternative = annotate(
        review,
        "The router terminates TLS",
        kind="alternative",
        area="alternatives",
        body="Terminate TLS at the load balancer.",
        tradeoff="One more hop, but certificates live in one place.",
    )
    considered = annotate(
        review,
        "we shed load instead",
        kind="already-considered",
        area="failure-modes",
        body="Good.",
    )
    constraint = annotate(
        review,
        "Serve 2,000 concurrent streams",
        kind="constraint",
        area="scale-cost",
        body="Fits the fixed fleet.",
        constraint=CONSTRAINT,
    )
    question = annotate(review, "Zürich", kind="question", area="rollout-rollback", body="Why?")
    gone = annotate(review, TENANT, area="security", severity="blocker", body="Rotation?")
    review_update(
        actor=reviewer,
        review=review,
        checklist=[
            {"area": "goals", "status": "covered"},
            {"area": "rollout-rollback", "status": "gap", "note": "rollback is a flag flip"},
            {"area": "migration", "status": "na"},
        ],
    )
    review_submit(actor=reviewer, review=review, summary="Eviction first.")
    with django_capture_on_commit_callbacks(execute=True):
        doc_revision_create(actor=author, doc=doc, body=DOC.replace(TENANT, ""))
    ids = {
        "worst": worst.pk,
        "minor": minor.pk,
        "unranked": unranked.pk,
        "nit": nit.pk,
        "missing": missing.pk,
        "alternative": alternative.pk,
        "considered": considered.pk,
        "constraint": constraint.pk,
        "question": question.pk,
        "gone": gone.pk,
    }
    return review, ids, make_user("reader")


def test_json_export_order(submitted):
    review, ids, reader = submitted
    response = api_client_for(reader).get(f"/api/v1/reviews/{review.pk}/export/?format=json")
    assert response.status_code == 200
    data = response.json()
    assert list(data) == [
        "review",
        "risks",
        "missing",
        "alternatives",
        "already_considered",
        "constraints",
        "questions",
        "checklist",
        "orphans",
    ]
    # Rank 1 first; unranked risks after the ranked ones, worst severity first.
    assert [r["id"] for r in data["risks"]] == [
        ids["worst"],
        ids["minor"],
        ids["unranked"],
        ids["nit"],
    ]
    # The blocker on the tenant passage, added later, took rank 2 by severity (before the
    # minor); it is an orphan now, listed last.
    assert [r["rank"] for r in data["risks"]] == [1, 3, None, None]
    assert [m["id"] for m in data["missing"]] == [ids["missing"]]
    assert data["alternatives"][0]["tradeoff"].startswith("One more hop")
    assert [c["id"] for c in data["already_considered"]] == [ids["considered"]]
    assert data["constraints"][0]["constraint"] == CONSTRAINT
    assert data["checklist"]["coverage"] == {"covered": 1, "gap": 1, "na": 1, "unset": 5}
    # The deleted passage's risk is listed once, last, with its quote.
    assert [o["id"] for o in data["orphans"]] == [ids["gone"]]
    assert data["orphans"][0]["quote"] == TENANT
    assert data["orphans"][0]["anchor"]["status"] == "orphaned"
    assert ids["gone"] not in [r["id"] for r in data["risks"]]
    assert data["review"]["revision_number"] == 1
    assert data["review"]["latest_revision_number"] == 2


def test_markdown_export_order(submitted):
    review, ids, reader = submitted
    response = api_client_for(reader).get(f"/api/v1/reviews/{review.pk}/export/?format=markdown")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert 'filename="inference-gateway-r1-review-' in response["Content-Disposition"]
    text = response.content.decode()
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == [
        "## Summary",
        "## Ranked risks",
        "## Missing",
        "## Alternatives",
        "## Already considered",
        "## Against the pinned constraints",
        "## Questions",
        "## Checklist coverage",
        "## Orphans",
    ]
    risks = text[text.index("## Ranked risks") : text.index("## Missing")]
    assert risks.index("Eviction storms.") < risks.index("Cross-tenant leak?")
    assert risks.index("Cross-tenant leak?") < risks.index("Scale-down drains?")
    assert risks.index("Scale-down drains?") < risks.index("p99 only?")
    assert risks.splitlines()[2].startswith("1. **[blocker] Failure modes** — Eviction storms.")
    assert "Tradeoff: One more hop" in text
    assert "| Rollout & rollback | Gap | rollback is a flag flip |" in text
    orphans = text[text.index("## Orphans") :]
    assert TENANT in orphans
    assert "Rotation?" in orphans
    assert "Rotation?" not in risks


def test_quotes_are_as_of_the_revision_named_and_threads_come_along(
    django_capture_on_commit_callbacks,
):
    """Issue 33: the export printed r1 quotes under "anchors as of r2" and left out replies."""
    from reviews.models import AnnotationAnchor
    from reviews.services.threads import reply_create

    author, reviewer = make_user("author"), make_user("reviewer")
    doc, r1 = make_doc(author)
    review = make_review(reviewer, r1)
    risk = annotate(review, "Zürich", severity="major", body="Why one region first?")
    review_submit(actor=reviewer, review=review, summary="One question.")
    reply_create(actor=author, annotation=risk, body="Latency to our\nlargest tenant.")
    reply_create(actor=reviewer, annotation=risk, body="Fair enough.")
    with django_capture_on_commit_callbacks(execute=True):
        doc_revision_create(actor=author, doc=doc, body=DOC.replace("Zürich", "Zurich"))
    anchor = AnnotationAnchor.objects.get(annotation=risk, revision__number=2)
    assert anchor.status != "orphaned"

    reader = api_client_for(make_user("reader"))
    data = reader.get(f"/api/v1/reviews/{review.pk}/export/?format=json").json()
    (item,) = data["risks"]
    assert data["review"]["latest_revision_number"] == 2
    assert item["quote"] == "Zurich"  # the passage as it reads in r2, where the anchor is
    assert item["original_quote"] == "Zürich"
    assert [(r["author"], r["body"]) for r in item["replies"]] == [
        ("author", "Latency to our\nlargest tenant."),
        ("reviewer", "Fair enough."),
    ]
    text = reader.get(f"/api/v1/reviews/{review.pk}/export/?format=markdown").content.decode()
    assert "anchors as of r2" in text
    assert "> Zurich" in text and "Zürich" not in text
    assert "Reply from author: Latency to our largest tenant." in text
    assert text.index("Reply from author") < text.index("Reply from reviewer: Fair enough.")
