"""Review-desk pages: list, new doc, doc page with revisions, review page, checklist, submit,
seed documents on the question page."""

import re

import pytest
from django.test import Client

from reviews.models import ChecklistItem, DesignDoc, DocRevision, Review
from reviews.seed import SYSTEM_USERNAME, practice_docs_load
from reviews.services import (
    annotation_reattach,
    annotation_update,
    doc_revision_create,
    review_submit,
    review_update,
)
from tests.factories import make_user
from tests.reviews.factories import DOC, annotate, make_review

pytestmark = pytest.mark.django_db

TENANT = "Tenant keys are hashed at rest and compared in constant time."


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_pages_need_a_login(review):
    client = Client()
    for url in (
        "/reviews/",
        "/reviews/new/",
        f"/reviews/d/{review.revision.doc_id}/",
        f"/reviews/r/{review.pk}/",
    ):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")


def test_home_and_nav_link_to_the_review_desk(reviewer):
    html = client_for(reviewer).get("/").content.decode()
    assert 'href="/reviews/"' in html
    assert "Open the review desk" in html


def test_list_page_shows_docs_and_my_reviews(doc, review, reviewer):
    html = client_for(reviewer).get("/reviews/").content.decode()
    assert "Inference gateway" in html
    assert f'href="/reviews/r/{review.pk}/"' in html
    assert "(latest r1)" in html


def test_new_doc_page(author):
    client = client_for(author)
    assert client.get("/reviews/new/").status_code == 200
    bad = client.post("/reviews/new/", {"title": "", "body": "# x"})
    assert bad.status_code == 400
    assert "title" in bad.content.decode()
    response = client.post(
        "/reviews/new/",
        {
            "title": "Cache",
            "question": "review-design-doc",
            "constraints": "No new databases.\n\n  Keep the API.  \n",
            "body": "# Cache\r\n\r\nWe add a cache.\r\n",
        },
    )
    doc = DesignDoc.objects.get(title="Cache")
    assert response.status_code == 302
    assert response["Location"] == f"/reviews/d/{doc.pk}/"
    assert doc.constraints == ["No new databases.", "Keep the API."]
    assert doc.question.slug == "review-design-doc"


def test_doc_page_revisions_start_review_and_revise(doc, author, reviewer):
    design, r1 = doc
    page = client_for(reviewer).get(f"/reviews/d/{design.pk}/")
    html = page.content.decode()
    assert page.status_code == 200
    assert 'id="h-security"' in html
    assert "Start review of r1" in html
    assert "New revision" not in html  # only the author revises

    started = client_for(reviewer).post(f"/reviews/d/{design.pk}/review/", {"revision": r1.pk})
    review = Review.objects.get(reviewer=reviewer)
    assert started["Location"] == f"/reviews/r/{review.pk}/"
    again = client_for(reviewer).post(f"/reviews/d/{design.pk}/review/", {"revision": r1.pk})
    assert again["Location"] == started["Location"]
    assert Review.objects.count() == 1

    forbidden = client_for(reviewer).post(f"/reviews/d/{design.pk}/revise/", {"body": "# x"})
    assert forbidden.status_code == 403
    owner = client_for(author)
    assert "New revision" in owner.get(f"/reviews/d/{design.pk}/").content.decode()
    empty = owner.post(f"/reviews/d/{design.pk}/revise/", {"body": "  "})
    assert empty.status_code == 400
    assert "empty" in empty.content.decode()
    saved = owner.post(
        f"/reviews/d/{design.pk}/revise/", {"body": DOC + "\nMore.\n", "message": "more"}
    )
    r2 = DocRevision.objects.get(doc=design, number=2)
    assert saved["Location"] == f"/reviews/d/{design.pk}/?r={r2.number}"
    page = owner.get(saved["Location"]).content.decode()
    assert 'aria-current="page" title="more' in page
    assert "r2" in page
    old = owner.get(f"/reviews/d/{design.pk}/?r={r1.number}")
    assert old.status_code == 200
    assert ">More.</span>" not in old.content.decode()
    assert owner.get(f"/reviews/d/{design.pk}/?r=99").status_code == 404
    # Old links named the revision by its id: they still land on it, under its number.
    legacy = owner.get(f"/reviews/d/{design.pk}/?rev={r1.pk}")
    assert legacy.status_code == 302
    assert legacy["Location"] == f"/reviews/d/{design.pk}/?r=1"
    assert owner.get(f"/reviews/d/{design.pk}/?rev=999999").status_code == 404

    owner.post(f"/reviews/d/{design.pk}/constraints/", {"constraints": "Fixed batch size"})
    assert DesignDoc.objects.get(pk=design.pk).constraints == ["Fixed batch size"]


def test_review_page_draft_is_private(review, reviewer):
    annotate(review, TENANT, area="security", body="Rotation policy?")
    mine = client_for(reviewer).get(f"/reviews/r/{review.pk}/")
    html = mine.content.decode()
    assert mine.status_code == 200
    assert 'id="annotate-form"' in html
    assert "Submit review" in html
    assert 'class="hl" data-ann="' in html
    assert "Rotation policy?" in html

    other = client_for(make_user("other"))
    hidden = other.get(f"/reviews/r/{review.pk}/")
    missing = other.get("/reviews/r/999999/")
    assert hidden.status_code == missing.status_code == 404
    assert hidden.content == missing.content


def test_checklist_form_htmx_and_plain(review, reviewer):
    client = client_for(reviewer)
    data = {"status-goals": "covered", "note-goals": "clear", "status-security": "gap"}
    partial = client.post(f"/reviews/r/{review.pk}/checklist/", data, HTTP_HX_REQUEST="true")
    html = partial.content.decode()
    assert partial.status_code == 200
    assert 'id="checklist-panel"' in html
    assert '<strong data-coverage="covered">1</strong>' in html
    assert '<strong data-coverage="gap">1</strong>' in html
    assert "Saved" in html
    assert ChecklistItem.objects.get(review=review, area="goals").note == "clear"

    plain = client.post(f"/reviews/r/{review.pk}/checklist/", {"status-goals": "na"})
    assert plain.status_code == 302
    assert ChecklistItem.objects.get(review=review, area="goals").status == "na"
    assert (
        client_for(make_user("x")).post(f"/reviews/r/{review.pk}/checklist/", data).status_code
        == 404
    )


def test_submit_then_read_only_for_everyone(review, reviewer, author):
    annotate(review, TENANT, area="security")
    client = client_for(reviewer)
    response = client.post(f"/reviews/r/{review.pk}/submit/", {"summary": "Ship it after fixes."})
    assert response.status_code == 302
    review.refresh_from_db()
    assert review.status == "submitted"
    assert review.summary == "Ship it after fixes."

    html = client_for(author).get(f"/reviews/r/{review.pk}/").content.decode()
    assert "Export Markdown" in html
    assert f"/api/v1/reviews/{review.pk}/export/?format=json" in html
    assert 'id="annotate-form"' not in html
    assert "Save checklist" not in html
    assert "status-select" in html  # the doc's author may resolve it
    third = client_for(make_user("third")).get(f"/reviews/r/{review.pk}/").content.decode()
    assert "Ship it after fixes." in third
    assert "status-select" not in third


def test_revision_switcher_shows_where_annotations_landed(
    review, reviewer, author, django_capture_on_commit_callbacks
):
    kept = annotate(review, "Each decode replica holds a 40 GB paged KV cache", area="scale-cost")
    orphan = annotate(review, TENANT, area="security", body="Rotation?")
    review_submit(actor=reviewer, review=review)
    with django_capture_on_commit_callbacks(execute=True):
        r2, _ = doc_revision_create(
            actor=author, doc=review.revision.doc, body="# Preface\n\n" + DOC.replace(TENANT, "")
        )
    html = client_for(reviewer).get(f"/reviews/r/{review.pk}/?r={r2.number}").content.decode()
    assert "Orphans in r2" in html
    # untouched by the revision (only shifted by the preface): still exact
    assert f'data-ann-id="{kept.pk}" data-anchor-status="exact"' in html
    assert f'data-ann-id="{orphan.pk}" data-anchor-status="orphaned"' in html
    assert "r1 exact</span> → <span" in html
    assert "r2 exact" in html
    assert f'data-ann="{kept.pk}"' in html
    assert f'data-ann="{orphan.pk}"' not in html
    # the orphan's own author may re-attach it
    assert f'data-reattach="/api/v1/annotations/{orphan.pk}/reattach/"' in html


def test_question_page_links_the_practice_docs(reviewer):
    practice_docs_load()  # present from the migration unless a transactional test flushed it
    docs = DesignDoc.objects.filter(practice=True, author__username=SYSTEM_USERNAME)
    assert docs.count() == 6
    assert {d.question.slug for d in docs} == {
        "llm-inference-api",
        "prompt-playground",
        "checkpoint-distribution",
        "one-to-one-chat",
        "data-platform",
        "ml-config",
    }
    assert all(len(d.constraints) == 1 for d in docs)
    html = client_for(reviewer).get("/questions/review-design-doc/").content.decode()
    for design in docs:
        assert f'href="/reviews/d/{design.pk}/"' in html
        assert design.title in html
    tied = client_for(reviewer).get("/questions/prompt-playground/").content.decode()
    assert "Prompt playground with versions and share links" in tied
    assert "Batched inference server" not in tied
    anonymous = Client().get("/questions/review-design-doc/").content.decode()
    assert "Log in to review the design documents" in anonymous
    assert practice_docs_load() == 0  # loading again creates nothing


def test_practice_docs_are_incomplete_on_purpose():
    practice_docs_load()
    from reviews.seed import practice_docs_read

    inference, playground, *_ = practice_docs_read()
    assert "generate_batch(requests, max_batch=32)" in inference["body"]
    assert "rollback" not in inference["body"].lower()
    assert "revocation takes effect\nwhen these caches expire" in playground["body"].lower()


def test_admin_lists_everything_and_revisions_are_read_only(review):
    annotate(review, TENANT, area="security")
    admin = make_user("root")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client = client_for(admin)
    for model in ("designdoc", "docrevision", "review", "annotation", "annotationanchor"):
        assert client.get(f"/admin/reviews/{model}/").status_code == 200
    revision_url = f"/admin/reviews/docrevision/{review.revision_id}/change/"
    page = client.get(revision_url)
    assert page.status_code == 200
    assert 'name="_save"' not in page.content.decode()
    assert client.get("/admin/reviews/docrevision/add/").status_code == 403
    assert (
        client.post(f"/admin/reviews/docrevision/{review.revision_id}/delete/").status_code == 403
    )
    assert (
        client.get(f"/admin/reviews/designdoc/{review.revision.doc_id}/change/").status_code == 200
    )


def test_new_doc_form_rejects_an_unknown_question_like_the_api(reviewer):
    client = client_for(reviewer)
    response = client.post(
        "/reviews/new/", {"title": "Cache", "question": "no-such-question", "body": "# Cache\n"}
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert "unknown question &#x27;no-such-question&#x27;" in html
    assert 'value="Cache"' in html  # the form keeps what was typed
    assert not DesignDoc.objects.filter(title="Cache").exists()


def test_not_yours_and_forbidden_are_answered_once_for_pages(doc, reviewer, author):
    """Selectors raise NotFound and services Forbidden; the middleware answers 404 / 403."""
    other = client_for(reviewer)
    missing = other.get("/reviews/d/999999/")
    hidden_draft = other.get(f"/reviews/r/{make_review(author, doc.revision).pk}/")
    assert missing.status_code == 404
    assert hidden_draft.status_code == 404
    assert hidden_draft.content == missing.content
    not_author = other.post(f"/reviews/d/{doc.design.pk}/revise/", {"body": "# Mine now\n"})
    assert not_author.status_code == 403
    assert DocRevision.objects.filter(doc=doc.design).count() == 1


def test_risks_open_first_closed_ones_marked(review, reviewer):
    worst = annotate(review, body="Worst risk", rank=1)
    second = annotate(review, body="Second risk", rank=2)
    third = annotate(review, body="Third risk", rank=3)
    annotation_update(actor=reviewer, annotation=worst, changes={"status": "resolved"})
    annotation_update(actor=reviewer, annotation=third, changes={"status": "dropped"})
    html = client_for(reviewer).get(f"/reviews/r/{review.pk}/").content.decode()
    risks = html[html.index('id="risk-list"') :]
    risks = risks[: risks.index("</ol>")]
    order = re.findall(r'data-id="(\d+)" data-status="(\w+)"', risks)
    assert order == [
        (str(second.pk), "open"),
        (str(worst.pk), "resolved"),
        (str(third.pk), "dropped"),
    ]
    assert risks.count("risk-closed") == 2
    assert ">resolved</span>" in risks
    assert ">dropped</span>" in risks


def test_na_area_with_annotations_warns(review, reviewer):
    annotate(review, area="security", kind="question", body="Who rotates the keys?")
    client = client_for(reviewer)
    response = client.post(
        f"/reviews/r/{review.pk}/checklist/",
        {"status-security": "na", "note-security": "", "status-migration": "na"},
        HTTP_HX_REQUEST="true",
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "“Security” is marked N/A, but 1 annotation is filed under it." in html
    assert "Migration” is marked N/A" not in html  # no annotations there: no warning
    review_update(
        actor=reviewer, review=review, checklist=[{"area": "security", "status": "covered"}]
    )
    page = client.get(f"/reviews/r/{review.pk}/").content.decode()
    assert "is marked N/A" not in page


def test_missing_title_is_reported_at_the_field(author):
    response = client_for(author).post("/reviews/new/", {"title": "  ", "body": "# Doc\n"})
    html = response.content.decode()
    assert response.status_code == 400
    field = html[html.index('id="title"') :]
    assert 'aria-invalid="true"' in field[: field.index(">")]
    assert '<p class="field-error" id="title-error" role="alert">' in html
    assert 'class="form-errors"' not in html


def test_a_hand_reattached_anchor_is_shown_as_such(
    review, reviewer, author, django_capture_on_commit_callbacks
):
    orphan = annotate(review, TENANT, area="security", body="Rotation?")
    review_submit(actor=reviewer, review=review)
    replacement = "Tenant secrets live in the vault and rotate weekly."
    with django_capture_on_commit_callbacks(execute=True):
        r2, _ = doc_revision_create(
            actor=author, doc=review.revision.doc, body=DOC.replace(TENANT, replacement)
        )
    body = DOC.replace(TENANT, replacement)
    start = body.index(replacement)
    with django_capture_on_commit_callbacks(execute=True):
        annotation_reattach(
            actor=reviewer,
            annotation=orphan,
            revision=r2,
            start=start,
            end=start + len(replacement),
        )
    html = client_for(reviewer).get(f"/reviews/r/{review.pk}/?r={r2.number}").content.decode()
    assert f'data-ann-id="{orphan.pk}" data-anchor-status="reattached"' in html
    badge = re.search(
        r'<span class="anchor-status anchor-reattached" title="Where[^>]*>([^<]*)<', html
    )
    assert badge is not None and badge.group(1) == "re-attached by hand"
    assert "1 re-attached by hand</span>" in html  # the counts above the cards
    assert "r2 re-attached by hand</span>" in html
    assert "None: every annotation found its passage." in html  # no longer an orphan
