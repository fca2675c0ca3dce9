"""Issue 12's review-desk items: closed risks marked and sorted after open ones, a warning for
an N/A area that has annotations, the missing-title error at its field."""

import re

import pytest
from django.test import Client

from reviews.services import annotation_update, review_update
from tests.reviews.factories import annotate

pytestmark = pytest.mark.django_db


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


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
    assert ">resolved</span>" in risks and ">dropped</span>" in risks


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
