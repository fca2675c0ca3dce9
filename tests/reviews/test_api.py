"""The review desk's HTTP API end to end (docs/api.md): shapes, bad input, who sees what."""

import pytest

from reviews.models import (
    Annotation,
    AnnotationAnchor,
    ChecklistItem,
    DesignDoc,
    DocRevision,
    Review,
)
from tests.factories import api_client_for
from tests.reviews.factories import CONSTRAINT, DOC, annotate, span_of

pytestmark = pytest.mark.django_db

KV = "Each decode replica holds a 40 GB paged KV cache"
DUP = "Requests longer than the context window are rejected with HTTP 413 before they reach a GPU."


def snapshot() -> dict[str, list]:
    """Every row the review desk writes, to show that a refused request wrote nothing."""
    return {
        model.__name__: list(model.objects.order_by("pk").values())
        for model in (DesignDoc, DocRevision, Review, ChecklistItem, Annotation, AnnotationAnchor)
    }


# --- the happy path -------------------------------------------------------------------------------


def test_doc_review_annotate_submit_export_through_the_api(author, reviewer):
    api = api_client_for(author)
    created = api.post(
        "/api/v1/docs/",
        {
            "title": "Gateway",
            "body": DOC,
            "question": "llm-inference-api",
            "constraints": [CONSTRAINT],
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    doc = created.json()
    assert {"id", "title", "latest_revision"} <= set(doc)
    assert doc["question"] == "llm-inference-api"
    assert doc["constraints"] == [CONSTRAINT]

    detail = api.get(f"/api/v1/docs/{doc['id']}/").json()
    assert [r["number"] for r in detail["revisions"]] == [1]
    assert detail["revisions"][0]["id"] == doc["latest_revision"]
    assert api.get(f"/api/v1/revisions/{doc['latest_revision']}/").json()["body"] == DOC

    rapi = api_client_for(reviewer)
    review = rapi.post("/api/v1/reviews/", {"revision": doc["latest_revision"]}, format="json")
    assert review.status_code == 201
    body = review.json()
    assert body["status"] == "draft"
    assert len(body["checklist"]) == 8
    assert body["checklist"][0] == {"area": "goals", "status": "", "note": ""}
    again = rapi.post("/api/v1/reviews/", {"revision": doc["latest_revision"]}, format="json")
    assert again.status_code == 200
    assert again.json()["id"] == body["id"]

    start, end = span_of(DOC, KV)
    annotation = rapi.post(
        f"/api/v1/reviews/{body['id']}/annotations/",
        {
            "quote": {"exact": KV},
            "position": {"start": start, "end": end},
            "area": "scale-cost",
            "kind": "risk",
            "severity": "blocker",
            "body": "40 GB per replica leaves no room for long contexts.",
        },
        format="json",
    )
    assert annotation.status_code == 201, annotation.json()
    a = annotation.json()
    assert a["quote"]["exact"] == KV
    assert len(a["quote"]["prefix"]) >= 32
    assert a["position"] == {"start": start, "end": end}
    assert a["rank"] == 1
    assert a["anchors"] == [
        {
            "revision": doc["latest_revision"],
            "revision_number": 1,
            "status": "exact",
            "start": start,
            "end": end,
            "score": 1.0,
            "manual": False,
        }
    ]
    whole = rapi.post(
        f"/api/v1/reviews/{body['id']}/annotations/",
        {"area": "migration", "kind": "missing", "severity": "major", "body": "No migration."},
        format="json",
    ).json()
    assert whole["whole_document"]
    assert whole["quote"] is None
    assert whole["position"] is None

    patched = rapi.patch(
        f"/api/v1/reviews/{body['id']}/",
        {"summary": "Fix KV sizing first.", "checklist": [{"area": "goals", "status": "covered"}]},
        format="json",
    )
    assert patched.status_code == 200
    assert patched.json()["coverage"] == {"covered": 1, "gap": 0, "na": 0, "unset": 7}

    submitted = rapi.post(f"/api/v1/reviews/{body['id']}/submit/", {}, format="json")
    assert submitted.status_code == 200
    assert submitted.json()["status"] == "submitted"
    twice = rapi.post(f"/api/v1/reviews/{body['id']}/submit/", {}, format="json")
    assert twice.status_code == 200
    assert twice.json()["submitted_at"] == submitted.json()["submitted_at"]

    # The author reads the submitted review, resolves the risk, exports it.
    shown = api.get(f"/api/v1/reviews/{body['id']}/").json()
    assert [x["id"] for x in shown["annotations"]] == [a["id"], whole["id"]]
    resolved = api.patch(f"/api/v1/annotations/{a['id']}/", {"status": "resolved"}, format="json")
    assert resolved.status_code == 200
    assert resolved.json()["status"] == "resolved"
    assert resolved.json()["status_changed_by"] == "author"
    md = api.get(f"/api/v1/reviews/{body['id']}/export/?format=markdown")
    assert md.status_code == 200
    assert md["Content-Type"].startswith("text/markdown")
    assert md.content.decode().startswith("# Review: Gateway (r1)")
    js = api.get(f"/api/v1/reviews/{body['id']}/export/?format=json")
    assert js.status_code == 200
    assert js.json()["risks"][0]["id"] == a["id"]


def test_revisions_are_immutable_over_the_api(doc, author):
    api = api_client_for(author)
    for method in ("put", "patch", "delete"):
        assert (
            getattr(api, method)(
                f"/api/v1/revisions/{doc.revision.pk}/", {}, format="json"
            ).status_code
            == 405
        )


def test_ranking_endpoint_reorders_atomically(review):
    one = annotate(review, KV)
    two = annotate(review, "Tenant keys are hashed at rest")
    api = api_client_for(review.reviewer)
    response = api.post(
        f"/api/v1/reviews/{review.pk}/ranking/", {"order": [two.pk, one.pk]}, format="json"
    )
    assert response.status_code == 200
    assert response.json() == {"order": [two.pk, one.pk]}
    ranks = dict(Annotation.objects.values_list("pk", "rank"))
    assert (ranks[two.pk], ranks[one.pk]) == (1, 2)


def test_constraint_annotation_by_index_and_question_page_style_values(review):
    api = api_client_for(review.reviewer)
    response = api.post(
        f"/api/v1/reviews/{review.pk}/annotations/",
        {
            "area": "scale-cost",
            "kind": "constraint",
            "severity": "minor",
            "body": "Works within the fixed fleet.",
            "constraint": 0,
        },
        format="json",
    )
    assert response.status_code == 201
    assert response.json()["constraint"] == CONSTRAINT


# --- bad input: 400/403/404 with `detail`, nothing written -------------------------------------------


def _annotation_payload(**changes):
    payload = {
        "area": "failure-modes",
        "kind": "risk",
        "severity": "major",
        "body": "A comment.",
    }
    payload.update(changes)
    return payload


BAD_ANNOTATIONS = {
    "quote not in the revision": (
        {"quote": {"exact": "This sentence is not in the document."}},
        "does not occur",
    ),
    "ambiguous quote without context": ({"quote": {"exact": DUP}}, "occurs 2 times"),
    "position past the end": ({"position": {"start": 10, "end": len(DOC) + 5}}, "out of range"),
    "position reversed": ({"position": {"start": 50, "end": 40}}, "out of range"),
    "negative position": ({"position": {"start": -1, "end": 4}}, "position.start"),
    "quote does not match the position": (
        {"quote": {"exact": KV}, "position": {"start": 0, "end": len(KV)}},
        "not the quote",
    ),
    "alternative without tradeoff": (
        {"kind": "alternative", "quote": {"exact": KV}},
        "tradeoff",
    ),
    "constraint annotation without a constraint": (
        {"kind": "constraint", "quote": {"exact": KV}},
        "pinned constraints",
    ),
    "constraint that is not pinned": (
        {"kind": "constraint", "constraint": "Use Rust.", "quote": {"exact": KV}},
        "pinned constraints",
    ),
    "unknown kind": ({"kind": "rant"}, "kind"),
    "rank on a non-risk": ({"kind": "question", "rank": 2}, "only risks"),
}


@pytest.mark.parametrize("case", list(BAD_ANNOTATIONS))
def test_bad_annotations_are_refused_and_write_nothing(review, case):
    changes, message = BAD_ANNOTATIONS[case]
    before = snapshot()
    response = api_client_for(review.reviewer).post(
        f"/api/v1/reviews/{review.pk}/annotations/", _annotation_payload(**changes), format="json"
    )
    assert response.status_code == 400, response.json()
    assert message in response.json()["detail"]
    assert snapshot() == before


def test_rank_collisions_are_refused_and_write_nothing(review):
    one = annotate(review, KV)
    two = annotate(review, "Tenant keys are hashed at rest")
    api = api_client_for(review.reviewer)
    before = snapshot()
    on_create = api.post(
        f"/api/v1/reviews/{review.pk}/annotations/",
        _annotation_payload(quote={"exact": "Prefix sharing lets tenants"}, rank=1),
        format="json",
    )
    on_patch = api.patch(f"/api/v1/annotations/{two.pk}/", {"rank": 1}, format="json")
    duplicate_order = api.post(
        f"/api/v1/reviews/{review.pk}/ranking/", {"order": [one.pk, one.pk]}, format="json"
    )
    partial_order = api.post(
        f"/api/v1/reviews/{review.pk}/ranking/", {"order": [two.pk]}, format="json"
    )
    for response, message in (
        (on_create, "already taken"),
        (on_patch, "already taken"),
        (duplicate_order, "every risk"),
        (partial_order, "every risk"),
    ):
        assert response.status_code == 400, response.json()
        assert message in response.json()["detail"]
    assert on_patch.json()["field"] == "rank"
    assert snapshot() == before


def test_editing_a_submitted_review_is_refused_and_writes_nothing(review):
    annotation = annotate(review, KV)
    api = api_client_for(review.reviewer)
    assert api.post(f"/api/v1/reviews/{review.pk}/submit/", {}, format="json").status_code == 200
    before = snapshot()
    attempts = [
        api.patch(f"/api/v1/reviews/{review.pk}/", {"summary": "late"}, format="json"),
        api.patch(
            f"/api/v1/reviews/{review.pk}/",
            {"checklist": [{"area": "goals", "status": "gap"}]},
            format="json",
        ),
        api.post(
            f"/api/v1/reviews/{review.pk}/annotations/",
            _annotation_payload(quote={"exact": KV}),
            format="json",
        ),
        api.post(
            f"/api/v1/reviews/{review.pk}/ranking/", {"order": [annotation.pk]}, format="json"
        ),
        api.delete(f"/api/v1/annotations/{annotation.pk}/"),
    ]
    for response in attempts:
        assert response.status_code == 400, response.json()
        assert response.json()["detail"] == "Submitted reviews cannot be edited."
    # The annotation's content may still be corrected by its author (#15: tests/reviews/
    # test_threads_api.py), but its rank is part of the submitted review.
    rank = api.patch(f"/api/v1/annotations/{annotation.pk}/", {"rank": 2}, format="json")
    assert rank.status_code == 400
    assert rank.json()["detail"] == "rank: a submitted review's ranking cannot change."
    assert snapshot() == before


def test_status_change_by_someone_else_is_forbidden(review, third, author):
    annotation = annotate(review, KV)
    api_client_for(review.reviewer).post(f"/api/v1/reviews/{review.pk}/submit/", {}, format="json")
    before = snapshot()
    response = api_client_for(third).patch(
        f"/api/v1/annotations/{annotation.pk}/", {"status": "dropped"}, format="json"
    )
    assert response.status_code == 403
    assert "author" in response.json()["detail"]
    other_edits = [
        api_client_for(third).patch(
            f"/api/v1/reviews/{review.pk}/", {"summary": "x"}, format="json"
        ),
        api_client_for(author).post(
            f"/api/v1/docs/{review.revision.doc_id}/revisions/", {"body": ""}, format="json"
        ),
        api_client_for(third).post(
            f"/api/v1/docs/{review.revision.doc_id}/revisions/", {"body": "# Mine\n"}, format="json"
        ),
        api_client_for(third).patch(
            f"/api/v1/docs/{review.revision.doc_id}/", {"constraints": []}, format="json"
        ),
    ]
    assert [r.status_code for r in other_edits] == [403, 400, 403, 403]
    assert all(r.json()["detail"] for r in other_edits)
    assert snapshot() == before


def test_bad_review_and_doc_input(author, review):
    api = api_client_for(author)
    before = snapshot()
    cases = [
        (api.post("/api/v1/reviews/", {"revision": 999999}, format="json"), 400, "revision"),
        (api.post("/api/v1/docs/", {"title": "", "body": "x"}, format="json"), 400, "title"),
        (api.post("/api/v1/docs/", {"title": "T", "body": "   "}, format="json"), 400, "empty"),
        (
            api.post(
                "/api/v1/docs/", {"title": "T", "body": "x", "question": "nope"}, format="json"
            ),
            400,
            "question",
        ),
        (
            api_client_for(review.reviewer).patch(
                f"/api/v1/reviews/{review.pk}/",
                {"checklist": [{"area": "goals", "status": "maybe"}]},
                format="json",
            ),
            400,
            "checklist",
        ),
        (api.get(f"/api/v1/reviews/{review.pk}/export/?format=markdown"), 404, "Not found."),
        (
            api_client_for(review.reviewer).get(f"/api/v1/reviews/{review.pk}/export/?format=pdf"),
            400,
            "format",
        ),
        (
            api_client_for(review.reviewer).get(
                f"/api/v1/reviews/{review.pk}/export/?format=markdown"
            ),
            400,
            "Only submitted reviews",
        ),
    ]
    for response, status, message in cases:
        assert response.status_code == status, response.content
        assert response["Content-Type"].startswith("application/json")
        assert message in response.json()["detail"]
    assert snapshot() == before


def test_reattach_checks(review, author):
    annotation = annotate(review, KV)
    api = api_client_for(review.reviewer)
    response = api.post(
        f"/api/v1/annotations/{annotation.pk}/reattach/",
        {"revision": review.revision_id, "position": {"start": 0, "end": 5}},
        format="json",
    )
    assert response.status_code == 400
    assert "after the one" in response.json()["detail"]


# --- who sees what ---------------------------------------------------------------------------------


def test_someone_elses_draft_is_indistinguishable_from_a_missing_one(review, third):
    annotation = annotate(review, KV)
    api = api_client_for(third)
    pairs = [
        (f"/api/v1/reviews/{review.pk}/", "/api/v1/reviews/999999/"),
        (f"/api/v1/reviews/{review.pk}/annotations/", "/api/v1/reviews/999999/annotations/"),
        (f"/api/v1/annotations/{annotation.pk}/", "/api/v1/annotations/999999/"),
        (f"/api/v1/annotations/{annotation.pk}/anchors/", "/api/v1/annotations/999999/anchors/"),
        (
            f"/api/v1/reviews/{review.pk}/export/?format=json",
            "/api/v1/reviews/999999/export/?format=json",
        ),
    ]
    for hidden, missing in pairs:
        a, b = api.get(hidden), api.get(missing)
        assert a.status_code == b.status_code == 404
        assert a.content == b.content == b'{"detail":"Not found."}'
    patch = api.patch(f"/api/v1/annotations/{annotation.pk}/", {"status": "dropped"}, format="json")
    assert patch.status_code == 404
    assert patch.content == api.get("/api/v1/reviews/999999/").content
    assert review.pk not in [r["id"] for r in api.get("/api/v1/reviews/").json()["results"]]


def test_a_submitted_review_is_readable_by_every_signed_in_account(review, third):
    annotate(review, KV)
    api_client_for(review.reviewer).post(f"/api/v1/reviews/{review.pk}/submit/", {}, format="json")
    api = api_client_for(third)
    shown = api.get(f"/api/v1/reviews/{review.pk}/")
    assert shown.status_code == 200
    assert len(shown.json()["annotations"]) == 1
    assert review.pk in [r["id"] for r in api.get("/api/v1/reviews/").json()["results"]]
    # ...and every document too (anyone may review any doc).
    assert api.get(f"/api/v1/docs/{review.revision.doc_id}/").status_code == 200


def test_anonymous_gets_401(review):
    api = api_client_for(None)
    for url in (
        "/api/v1/docs/",
        f"/api/v1/docs/{review.revision.doc_id}/",
        f"/api/v1/reviews/{review.pk}/",
        "/api/v1/reviews/",
    ):
        response = api.get(url)
        assert response.status_code == 401
        assert response.json()["detail"]
