"""Practice end to end through the database: answer keys from the data migration, timed mock
reviews with attempts, the scorecard API (who sees it, its fields), the debrief and progress
pages, and no answer-key leak on any surface before submit."""

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from reviews.models import AnswerKey, Area, DesignDoc, PlantedItem, Review, TimedReview
from reviews.practice.services import mock_review_start
from reviews.seed import SYSTEM_USERNAME, practice_docs_load, practice_keys_load
from reviews.selectors import revision_text
from reviews.services import annotation_create, review_create, review_submit, review_update
from tests.factories import api_client_for, make_user
from tests.reviews.factories import make_doc

pytestmark = pytest.mark.django_db

INFERENCE = "Batched inference server for the public LLM API"
CAPACITY = "serve about 170 requests per second in steady state"
POLLING = "One batcher process per GPU pulls from the queues every 20 ms."
TRAP = "grouped by `max_tokens` bucket (256, 1024, 4096)"
CONSIDERED = "We considered static batching with a fixed window of 100 ms and rejected it"
SCORECARD_FIELDS = {
    "items",
    "found",
    "total",
    "led_with_worst",
    "alternatives_with_tradeoff",
    "noticed_already_considered",
    "respected_constraint",
    "checklist_swept",
    "minutes_taken",
}
ITEM_FIELDS = {"id", "kind", "area", "found", "matched_annotations", "explanation"}


@pytest.fixture
def practice_doc() -> DesignDoc:
    practice_docs_load()  # present from the migrations unless a transactional test flushed them
    practice_keys_load()
    return DesignDoc.objects.get(author__username=SYSTEM_USERNAME, title=INFERENCE)


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def passage(review: Review, quote: str, **values) -> object:
    text = revision_text(revision=review.revision)
    start = text.index(quote)
    values.setdefault("severity", "major")
    values.setdefault("body", f"About: {quote[:30]}")
    return annotation_create(
        actor=review.reviewer, review=review, start=start, end=start + len(quote), **values
    )


def whole(review: Review, **values) -> object:
    values.setdefault("severity", "major")
    return annotation_create(actor=review.reviewer, review=review, **values)


# --- keys and mock reviews ------------------------------------------------------------------------


def test_the_migration_loads_a_key_for_every_practice_document(practice_doc):
    keys = AnswerKey.objects.select_related("doc")
    assert keys.count() == 6
    assert all(k.doc.practice for k in keys)
    assert {k.minutes for k in keys} == {45}
    assert PlantedItem.objects.filter(key__doc=practice_doc).count() == 10
    worst = PlantedItem.objects.get(key__doc=practice_doc, slug=practice_doc.answer_key.worst)
    assert worst.kind == "risk"
    assert worst.severity == "blocker"
    assert practice_keys_load() == 6
    assert AnswerKey.objects.count() == 6  # reload replaces


def test_a_timed_review_starts_resumes_and_counts_attempts(practice_doc):
    user = make_user("ada")
    review, created = mock_review_start(actor=user, doc=practice_doc)
    assert created
    assert review.attempt == 1
    assert review.status == "draft"
    timer = TimedReview.objects.get(review=review)
    assert timer.minutes_allowed == 45
    assert timer.started_at == review.created_at
    assert review.checklist.count() == 8

    again, created = mock_review_start(actor=user, doc=practice_doc)
    assert (again.pk, created) == (review.pk, False)  # the draft in progress is resumed

    review_submit(actor=user, review=review)
    second, created = mock_review_start(actor=user, doc=practice_doc)
    assert created
    assert second.attempt == 2
    assert second.pk != review.pk
    assert Review.objects.filter(reviewer=user).count() == 2


def test_an_untimed_draft_gets_its_clock_and_a_plain_doc_has_no_practice(practice_doc, author):
    user = make_user("bob")
    draft, _ = review_create(actor=user, revision=practice_doc.revisions.get())
    assert not TimedReview.objects.filter(review=draft).exists()
    resumed, created = mock_review_start(actor=user, doc=practice_doc)
    assert resumed.pk == draft.pk
    assert not created
    assert TimedReview.objects.filter(review=draft).exists()

    plain, _ = make_doc(author)
    with pytest.raises(Exception, match="no answer key"):
        mock_review_start(actor=user, doc=plain)
    response = client_for(user).post(f"/reviews/d/{plain.pk}/practice/")
    assert response.status_code == 302
    assert response["Location"] == f"/reviews/d/{plain.pk}/"
    assert not Review.objects.filter(revision__doc=plain).exists()


def test_start_button_timer_and_scorecard_link_on_the_pages(practice_doc):
    user = make_user("cy")
    client = client_for(user)
    page = client.get(f"/reviews/d/{practice_doc.pk}/").content.decode()
    assert "Start a timed review" in page
    assert "45 minutes on the clock" in page
    assert client.get("/reviews/practice/").status_code == 200
    started = client.post(f"/reviews/d/{practice_doc.pk}/practice/")
    review = Review.objects.get(reviewer=user)
    assert started["Location"] == f"/reviews/r/{review.pk}/"
    page = client.get(f"/reviews/d/{practice_doc.pk}/").content.decode()
    assert "Resume your review on the clock" in page
    html = client.get(started["Location"]).content.decode()
    assert 'id="practice-timer"' in html
    assert 'data-minutes="45"' in html
    assert "js/practice-timer.js" in html
    assert "See your scorecard" not in html
    review_submit(actor=user, review=review)
    html = client.get(started["Location"]).content.decode()
    assert "data-ended=" in html
    assert f'href="/reviews/r/{review.pk}/debrief/"' in html
    # another reader of the submitted review gets no scorecard link
    other = client_for(make_user("dee")).get(started["Location"]).content.decode()
    assert "See your scorecard" not in other


# --- the scorecard API ----------------------------------------------------------------------------


def test_scorecard_visibility_draft_other_user_and_after_submit(practice_doc):
    user, other = make_user("eve"), make_user("fay")
    review, _ = mock_review_start(actor=user, doc=practice_doc)
    url = f"/api/v1/reviews/{review.pk}/scorecard/"
    api = api_client_for(user)

    draft = api.get(url)
    assert draft.status_code == 404
    assert draft.json() == {"detail": "Not found."}
    assert api_client_for(None).get(url).status_code == 401
    review_submit(actor=user, review=review)
    assert api_client_for(other).get(url).status_code == 404  # submitted, but not theirs
    assert api_client_for(other).get(f"/api/v1/reviews/{review.pk}/").status_code == 200
    assert api.get("/api/v1/reviews/999999/scorecard/").status_code == 404

    response = api.get(url)
    assert response.status_code == 200
    body = response.json()
    assert SCORECARD_FIELDS <= set(body)
    assert body["total"] == 10
    assert body["found"] == 0
    assert len(body["items"]) == 10
    assert all(ITEM_FIELDS <= set(item) for item in body["items"])
    assert body["led_with_worst"] is False
    assert body["respected_constraint"] is True
    assert body["checklist_swept"] is False
    assert isinstance(body["minutes_taken"], float)

    # the debrief page follows the same rule
    assert client_for(user).get(f"/reviews/r/{review.pk}/debrief/").status_code == 200
    assert client_for(other).get(f"/reviews/r/{review.pk}/debrief/").status_code == 404


def test_a_plain_document_has_no_scorecard(author, reviewer):
    _, revision = make_doc(author)
    review, _ = review_create(actor=reviewer, revision=revision)
    review_submit(actor=reviewer, review=review)
    assert (
        api_client_for(reviewer).get(f"/api/v1/reviews/{review.pk}/scorecard/").status_code == 404
    )


def test_scorecard_of_a_real_review_through_the_api(practice_doc):
    user = make_user("gus")
    review, _ = mock_review_start(actor=user, doc=practice_doc)
    minor = passage(review, POLLING, area="scale-cost", kind="risk", body="20 ms polling")
    worst = passage(review, CAPACITY, area="scale-cost", kind="risk", body="7x short")
    considered = passage(
        review, CONSIDERED, area="alternatives", kind="already-considered", severity="nit"
    )
    trap = passage(
        review,
        TRAP,
        area="scale-cost",
        kind="alternative",
        body="Use continuous batching instead.",
        tradeoff="New runtime, but GPUs stay busy.",
    )
    gap = whole(review, area="rollout-rollback", kind="missing", body="No rollback plan.")
    review_update(
        actor=user,
        review=review,
        checklist=[{"area": area, "status": "covered"} for area in Area.values],
    )
    review_submit(actor=user, review=review)

    body = api_client_for(user).get(f"/api/v1/reviews/{review.pk}/scorecard/").json()
    items = {item["id"]: item for item in body["items"]}
    assert items["capacity-shortfall"]["found"]
    assert items["capacity-shortfall"]["matched_annotations"] == [worst.pk]
    assert items["polling-interval"]["matched_annotations"] == [minor.pk]
    assert items["static-batching-considered"]["matched_annotations"] == [considered.pk]
    assert items["no-rollback"]["matched_annotations"] == [gap.pk]
    assert items["longest-sequence-trap"]["fell_into_trap"] == [trap.pk]
    assert not items["longest-sequence-trap"]["found"]
    assert body["found"] == 4
    assert body["total"] == 10
    assert body["led_with_worst"] is False  # the 20 ms polling risk was ranked first
    assert body["ranking"][0]["item"] == "polling-interval"
    assert body["ranking_disagreements"][0]["below"] == "capacity-shortfall"
    assert body["respected_constraint"] is False
    assert body["alternatives_with_tradeoff"] == 0
    assert body["noticed_already_considered"] == 1
    assert body["checklist_swept"] is True

    html = client_for(user).get(f"/reviews/r/{review.pk}/debrief/").content.decode()
    assert "What you missed" in html
    assert "What you found" in html
    assert "You broke the pinned constraint" in html
    assert "Use continuous batching" in html
    assert "You put <strong>polling-interval</strong> (minor) above" in html
    missed = html.split('id="missed-list"')[1].split("</ul>")[0]
    assert 'data-item="no-admission-control"' in missed
    assert "capacity-shortfall" not in missed


def test_the_planted_passage_filed_under_another_area_is_named_with_half_credit(practice_doc):
    user = make_user("hal")
    review, _ = mock_review_start(actor=user, doc=practice_doc)
    misfiled = passage(review, CAPACITY, area="observability", kind="risk", body="7x short")
    review_submit(actor=user, review=review)

    body = api_client_for(user).get(f"/api/v1/reviews/{review.pk}/scorecard/").json()
    item = next(i for i in body["items"] if i["id"] == "capacity-shortfall")
    assert item["found"] is False
    assert item["misfiled_annotations"] == [misfiled.pk]
    assert item["misfiled_areas"] == ["observability"]
    assert item["credit"] == 0.5
    assert (body["found"], body["found_elsewhere"], body["credit"]) == (0, 1, 0.5)
    assert body["score"] == round(0.5 / body["total"], 3)

    html = client_for(user).get(f"/reviews/r/{review.pk}/debrief/").content.decode()
    partial = html.split('id="partial-list"')[1].split("</ul>")[0]
    assert 'data-item="capacity-shortfall"' in partial
    assert "Found, but filed under Observability" in html
    assert "+ 1 under another area" in html
    missed = html.split('id="missed-list"')[1].split("</ul>")[0]
    assert "capacity-shortfall" not in missed


# --- progress over time ---------------------------------------------------------------------------


def test_progress_lists_attempts_per_question_with_score_and_time(practice_doc):
    user = make_user("hal")
    first, _ = mock_review_start(actor=user, doc=practice_doc)
    review_submit(actor=user, review=first)
    second, _ = mock_review_start(actor=user, doc=practice_doc)
    passage(second, CAPACITY, area="scale-cost", kind="risk")
    review_submit(actor=user, review=second)
    chat = DesignDoc.objects.get(title="One-to-one messaging for the support app")
    mock_review_start(actor=user, doc=chat)  # in progress

    html = client_for(user).get("/reviews/practice/").content.decode()
    assert "Design an LLM inference API" in html
    assert "Design one-to-one chat" in html
    assert html.index("Design an LLM inference API") < html.index("Design one-to-one chat")
    assert html.count(f'href="/reviews/r/{first.pk}/debrief/"') == 1
    assert "<strong>0 / 10</strong>" in html
    assert "<strong>1 / 10</strong>" in html
    assert "best 1 / 10" in html
    assert "in progress" in html
    assert "Continue" in html
    # other people's mock reviews are not listed
    assert "hal" not in client_for(make_user("ivy")).get("/reviews/practice/").content.decode()


def test_progress_page_queries_do_not_grow_with_attempts(practice_doc):
    user = make_user("jo")
    client = client_for(user)

    def attempts(n: int) -> int:
        for _ in range(n):
            review, _ = mock_review_start(actor=user, doc=practice_doc)
            passage(review, CAPACITY, area="scale-cost", kind="risk")
            review_submit(actor=user, review=review)
        client.get("/reviews/practice/")
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/reviews/practice/").status_code == 200
        return len(captured.captured_queries)

    few = attempts(2)
    many = attempts(8)
    print("progress page queries for 2 and 10 mock reviews:", few, many)
    assert many == few


# --- the key never leaks before submit --------------------------------------------------------------

MARKER = "ZQX-ANSWER-KEY-MARKER-7731"


def test_the_answer_key_never_leaks_before_submit(practice_doc):
    PlantedItem.objects.filter(key__doc=practice_doc, slug="capacity-shortfall").update(
        explanation=f"{MARKER} explanation", good_comment=f"{MARKER} comment"
    )
    PlantedItem.objects.filter(key__doc=practice_doc, slug="no-rollback").update(
        slug=f"{MARKER.lower()}-slug"
    )
    user = make_user("kit")
    review, _ = mock_review_start(actor=user, doc=practice_doc)
    passage(review, CAPACITY, area="scale-cost", kind="risk", body="Capacity is short.")
    revision = review.revision
    api, client = api_client_for(user), client_for(user)

    surfaces = {
        "doc list API": api.get("/api/v1/docs/"),
        "doc API": api.get(f"/api/v1/docs/{practice_doc.pk}/"),
        "revisions API": api.get(f"/api/v1/docs/{practice_doc.pk}/revisions/"),
        "revision API": api.get(f"/api/v1/revisions/{revision.pk}/"),
        "reviews API": api.get(f"/api/v1/reviews/?doc={practice_doc.pk}"),
        "review API": api.get(f"/api/v1/reviews/{review.pk}/"),
        "annotations API": api.get(f"/api/v1/reviews/{review.pk}/annotations/"),
        "export markdown": api.get(f"/api/v1/reviews/{review.pk}/export/?format=markdown"),
        "export json": api.get(f"/api/v1/reviews/{review.pk}/export/?format=json"),
        "scorecard API": api.get(f"/api/v1/reviews/{review.pk}/scorecard/"),
        "question API": api.get("/api/v1/questions/llm-inference-api/"),
        "schema": api.get("/api/schema/"),
        "doc page": client.get(f"/reviews/d/{practice_doc.pk}/"),
        "review page": client.get(f"/reviews/r/{review.pk}/"),
        "review page source": client.get(f"/reviews/r/{review.pk}/?r={revision.number}"),
        "debrief page": client.get(f"/reviews/r/{review.pk}/debrief/"),
        "progress page": client.get("/reviews/practice/"),
        "desk": client.get("/reviews/"),
        "question page": client.get("/questions/review-design-doc/"),
    }
    for name, response in surfaces.items():
        assert response.status_code in (200, 400, 404), (name, response.status_code)
        assert MARKER.encode() not in response.content, name
        assert MARKER.lower().encode() not in response.content, name
    assert surfaces["scorecard API"].status_code == 404
    assert surfaces["debrief page"].status_code == 404
    assert surfaces["export json"].status_code == 400  # drafts are not exported

    review_submit(actor=user, review=review)
    after = api.get(f"/api/v1/reviews/{review.pk}/scorecard/")
    assert after.status_code == 200
    assert MARKER in after.content.decode()
    assert MARKER in client.get(f"/reviews/r/{review.pk}/debrief/").content.decode()
    # the export and the review itself still carry none of the key
    assert (
        MARKER not in api.get(f"/api/v1/reviews/{review.pk}/export/?format=json").content.decode()
    )
    assert MARKER not in api.get(f"/api/v1/reviews/{review.pk}/").content.decode()
    # and someone else reading the submitted review sees none of it either
    other = api_client_for(make_user("lou"))
    assert MARKER not in other.get(f"/api/v1/reviews/{review.pk}/").content.decode()
    assert other.get(f"/api/v1/reviews/{review.pk}/scorecard/").status_code == 404


def test_scorecard_queries_do_not_grow_with_annotations(practice_doc):
    text = revision_text(revision=practice_doc.revisions.get())
    words = [(m.start(), m.end()) for m in re.finditer(r"[A-Za-z]{6,}", text)]
    counts = []
    for n in (3, 30):
        user = make_user(f"q{n}")
        review, _ = mock_review_start(actor=user, doc=practice_doc)
        for index in range(n):
            start, end = words[(index * 5) % len(words)]
            annotation_create(
                actor=user,
                review=review,
                start=start,
                end=end,
                area="scale-cost",
                kind="risk" if index % 2 else "question",
                severity="major",
                body=f"Comment {index}",
            )
        review_submit(actor=user, review=review)
        api, client = api_client_for(user), client_for(user)
        for fetch, url in (
            (api.get, f"/api/v1/reviews/{review.pk}/scorecard/"),
            (client.get, f"/reviews/r/{review.pk}/debrief/"),
        ):
            fetch(url)
            with CaptureQueriesContext(connection) as captured:
                assert fetch(url).status_code == 200
            counts.append(len(captured.captured_queries))
    print("scorecard API, debrief page for 3 and 30 annotations:", counts)
    assert counts[:2] == counts[2:], counts


def test_answer_keys_are_read_only_in_the_admin(practice_doc):
    admin = make_user("root")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client = client_for(admin)
    key = practice_doc.answer_key
    assert client.get("/admin/reviews/answerkey/").status_code == 200
    page = client.get(f"/admin/reviews/answerkey/{key.pk}/change/")
    assert page.status_code == 200
    assert 'name="_save"' not in page.content.decode()
    assert "capacity-shortfall" in page.content.decode()
    assert client.get("/admin/reviews/answerkey/add/").status_code == 403
    assert client.get("/admin/reviews/timedreview/").status_code == 200
