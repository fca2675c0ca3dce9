"""The review page (reviews/pages/reviews.py) with many annotations: every annotation is highlighted and
counted, the first REVIEW_CARDS_WINDOW cards and risks are on the page, the rest load on demand
(cards by batch or up to one annotation, risks all at once), for the reviewer only."""

import re

import pytest

from reviews.models import Annotation
from reviews.services import annotation_create, review_risks_rank
from tests.factories import make_user
from tests.reviews.factories import DOC, make_doc, make_review

pytestmark = pytest.mark.django_db

WORDS = [m.span() for m in re.finditer(r"[A-Za-z]{5,}", DOC)]
AREAS = ["scale-cost", "failure-modes"]  # in checklist order: scale & cost comes first


@pytest.fixture
def window(settings):
    settings.REVIEW_CARDS_WINDOW = 8
    return 8


def build(count: int):
    author = make_user("author")
    doc, r1 = make_doc(author)
    review = make_review(make_user("reviewer"), r1)
    annotations = []
    for index in range(count):
        start, end = WORDS[index * 3]
        annotations.append(
            annotation_create(
                actor=review.reviewer,
                review=review,
                start=start,
                end=end,
                area=AREAS[index % 2],
                kind="risk" if index % 3 else "question",
                severity="major",
                body=f"Comment {index}",
            )
        )
    return review, annotations


def cards(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<li class="ann ann-[^"]*"[^>]* data-ann-id="(\d+)"', html)]


def test_first_cards_and_risks_on_the_page_the_rest_on_demand(client, window):
    review, annotations = build(21)
    client.force_login(review.reviewer)
    html = client.get(f"/reviews/r/{review.pk}/").content.decode()
    by_area = [a.pk for area in AREAS for a in annotations if a.area == area]
    # Every annotation highlighted and counted; the first 8 cards in area order.
    assert len(set(re.findall(r'<mark[^>]* data-ann="(\d+)', html))) == 21
    assert 'id="areas-title">Annotations by area <span class="muted small">21</span>' in html
    assert cards(html) == by_area[:8]
    assert "Show more annotations" in html
    assert "13 more" in html
    # Risks: the worst 8 listed, the others named in data-rest for the ranking.
    risks = [a.pk for a in annotations if a.kind == "risk"]
    listed = [int(n) for n in re.findall(r'class="risk-item[^"]*" data-id="(\d+)"', html)]
    rest = re.search(r'id="risk-list" data-rest="([\d,]+)"', html).group(1)
    assert listed == risks[:8]
    assert [int(n) for n in rest.split(",")] == risks[8:]
    assert f"Show all {len(risks)} risks" in html

    # The next batch goes on with the same area without a second heading.
    more = client.get(f"/reviews/r/{review.pk}/cards/?offset=8").content.decode()
    assert cards(more) == by_area[8:16]
    assert more.count('class="area-title"') == 1  # only failure modes starts here
    assert "offset=16" in more
    assert "5 more" in more
    last = client.get(f"/reviews/r/{review.pk}/cards/?offset=16").content.decode()
    assert cards(last) == by_area[16:]
    assert "Show more annotations" not in last
    # Up to one annotation further down: everything from the offset through it.
    upto = client.get(f"/reviews/r/{review.pk}/cards/?offset=8&until={by_area[18]}")
    assert cards(upto.content.decode()) == by_area[8:19]
    # All risks at once.
    every = client.get(f"/reviews/r/{review.pk}/risks/").content.decode()
    assert [int(n) for n in re.findall(r'data-id="(\d+)"', every)] == risks


def test_ranking_from_a_partial_list_sends_every_risk(client, window):
    """What review.js sends: the listed risks reordered, then data-rest unchanged."""
    review, annotations = build(21)
    risks = [a.pk for a in annotations if a.kind == "risk"]
    order = [risks[1], risks[0], *risks[2:8], *risks[8:]]
    assert review_risks_rank(actor=review.reviewer, review=review, order=order) == order
    client.force_login(review.reviewer)
    html = client.get(f"/reviews/r/{review.pk}/").content.decode()
    listed = [int(n) for n in re.findall(r'class="risk-item[^"]*" data-id="(\d+)"', html)]
    assert listed == order[:8]
    assert Annotation.objects.get(pk=risks[1]).rank == 1


@pytest.mark.parametrize("query", ["offset=x", "offset=-1", "until=1e3", "offset=9999999999"])
def test_cards_reject_bad_numbers(client, window, query):
    review, _ = build(3)
    client.force_login(review.reviewer)
    response = client.get(f"/reviews/r/{review.pk}/cards/?{query}")
    assert response.status_code == 400
    assert query.split("=")[0].encode() in response.content


def test_a_draft_reviews_cards_and_risks_are_404_for_others(client, window):
    review, _ = build(3)
    client.force_login(make_user("mallory"))
    assert client.get(f"/reviews/r/{review.pk}/cards/").status_code == 404
    assert client.get(f"/reviews/r/{review.pk}/risks/").status_code == 404
