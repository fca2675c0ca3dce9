"""Drafts end to end through the services: the starter prompt on the fixture provider, the
suggestions it makes (anchored with the review desk's engine, or unanchored), accepting with
and without edits, rejecting, and who may do what."""

import pytest

from critique import services
from critique.models import CritiquePrompt, ReviewDraft, Suggestion
from critique.selectors import draft_get_for_user, suggestion_get_for_user
from playground.models import Run
from reviews.models import Annotation
from reviews.selectors import revision_text
from reviews.services import review_submit
from tests.critique.conftest import practice_review
from tests.factories import make_user
from tests.reviews.factories import make_doc, make_review

pytestmark = pytest.mark.django_db


def _draft(review, **kwargs):
    version = services.starter_version_ensure()
    draft = services.draft_create(
        actor=review.reviewer, review=review, version=version, provider="fixture", **kwargs
    )
    return draft


def test_the_starter_is_made_once_and_kept(practice):
    first = services.starter_version_ensure()
    again = services.starter_version_ensure()
    assert first.pk == again.pk
    assert CritiquePrompt.objects.filter(starter=True).count() == 1
    assert first.response_format["name"] == "critique"
    assert set(first.variables) == {"document", "constraints", "checklist"}


def test_a_draft_on_the_fixture_provider_suggests_anchored_annotations(
    practice, fixture_runs, django_capture_on_commit_callbacks
):
    review = practice_review("ann")
    with django_capture_on_commit_callbacks(execute=True):
        draft = _draft(review)
    draft = services.draft_sync(draft=draft)
    assert draft.status == "done", draft.error
    run = Run.objects.get(pk=draft.run_id)
    assert run.provider == "fixture" and run.model == "fixture-1"
    assert "The run id is the SHA-256" in run.variables["document"]
    suggestions = list(Suggestion.objects.filter(draft=draft).order_by("position"))
    assert len(suggestions) == 8
    text = revision_text(revision=review.revision)
    first = suggestions[0]
    assert first.anchored and first.rank == 1 and first.kind == "risk"
    assert text[first.start : first.end] == "The run id is the SHA-256 of the top-level YAML file"
    # Backticks dropped by the model still find the passage (folded), at its real offsets.
    secrets = suggestions[3]
    assert secrets.anchored
    assert text[secrets.start : secrets.end].startswith("Credentials for the data buckets")
    assert "`storage:`" in text[secrets.start : secrets.end]
    # A quote the document does not contain stays unanchored; whole-document items have none.
    made_up = suggestions[-1]
    assert made_up.exact and not made_up.anchored and made_up.start is None
    missing = suggestions[4]
    assert missing.exact == "" and not missing.anchored


def test_sync_is_idempotent(practice, fixture_runs, django_capture_on_commit_callbacks):
    review = practice_review("bo")
    with django_capture_on_commit_callbacks(execute=True):
        draft = _draft(review)
    for _ in range(3):
        draft = services.draft_sync(draft=ReviewDraft.objects.get(pk=draft.pk))
    assert Suggestion.objects.filter(draft=draft).count() == 8
    assert draft.suggestions_made == 8


def test_accept_edit_reject(practice, fixture_runs, django_capture_on_commit_callbacks):
    review = practice_review("cy")
    with django_capture_on_commit_callbacks(execute=True):
        draft = _draft(review)
    draft = services.draft_sync(draft=draft)
    suggestions = list(Suggestion.objects.filter(draft=draft).order_by("position"))
    actor = review.reviewer

    worst = services.suggestion_accept(actor=actor, suggestion=suggestions[0])
    assert worst.kind == "risk" and worst.rank == 1 and not worst.whole_document
    assert worst.exact == suggestions[0].exact

    edited = services.suggestion_accept(
        actor=actor,
        suggestion=suggestions[1],
        edits={"body": "Lists must replace.", "severity": "blocker"},
    )
    assert edited.body == "Lists must replace." and edited.severity == "blocker"

    # The constraint annotation names the pinned constraint as the model copied it.
    constraint = services.suggestion_accept(actor=actor, suggestion=suggestions[6])
    assert constraint.kind == "constraint"
    assert constraint.constraint == review.revision.doc.constraints[0]

    # Unanchored: a comment on the whole document, never another passage.
    unanchored = services.suggestion_accept(actor=actor, suggestion=suggestions[7])
    assert unanchored.whole_document and unanchored.start is None

    rejected = services.suggestion_reject(actor=actor, suggestion=suggestions[2])
    assert rejected.state == "rejected"
    assert services.suggestion_reject(actor=actor, suggestion=suggestions[2]).state == "rejected"
    with pytest.raises(services.Conflict):
        services.suggestion_accept(actor=actor, suggestion=suggestions[2])
    with pytest.raises(services.Conflict):
        services.suggestion_accept(actor=actor, suggestion=suggestions[0])
    with pytest.raises(services.Conflict):
        services.suggestion_reject(actor=actor, suggestion=suggestions[0])
    assert Annotation.objects.filter(review=review).count() == 4
    states = dict(Suggestion.objects.filter(draft=draft).values_list("position", "state"))
    assert states[0] == states[1] == states[6] == states[7] == "accepted"


def test_a_taken_rank_sends_the_risk_last(
    practice, fixture_runs, django_capture_on_commit_callbacks
):
    review = practice_review("di")
    with django_capture_on_commit_callbacks(execute=True):
        first = _draft(review)
    with django_capture_on_commit_callbacks(execute=True):
        second = _draft(review)
    services.draft_sync(draft=first)
    services.draft_sync(draft=second)
    one = Suggestion.objects.get(draft=first, position=0)
    two = Suggestion.objects.get(draft=second, position=0)
    assert services.suggestion_accept(actor=review.reviewer, suggestion=one).rank == 1
    assert services.suggestion_accept(actor=review.reviewer, suggestion=two).rank == 2


def test_only_the_reviewer_and_only_a_draft(
    practice, fixture_runs, django_capture_on_commit_callbacks
):
    review = practice_review("ed")
    other = make_user("fay")
    with django_capture_on_commit_callbacks(execute=True):
        draft = _draft(review)
    services.draft_sync(draft=draft)
    suggestion = Suggestion.objects.filter(draft=draft).first()
    with pytest.raises(services.NotFound):
        draft_get_for_user(user=other, draft_id=draft.pk)
    with pytest.raises(services.NotFound):
        suggestion_get_for_user(user=other, suggestion_id=suggestion.pk)
    with pytest.raises(services.NotFound):
        services.draft_create(
            actor=other,
            review=review,
            version=services.starter_version_ensure(),
            provider="fixture",
        )
    review_submit(actor=review.reviewer, review=review)
    review.refresh_from_db()
    from reviews.exceptions import ReviewLocked

    with pytest.raises(ReviewLocked):
        services.draft_create(
            actor=review.reviewer,
            review=review,
            version=services.starter_version_ensure(),
            provider="fixture",
        )


def test_a_document_with_no_recording_fails_the_draft(
    fixture_runs, django_capture_on_commit_callbacks
):
    author = make_user("gus")
    doc, _ = make_doc(author)
    review = make_review(make_user("hal"), doc.revisions.order_by("-number").first())
    with django_capture_on_commit_callbacks(execute=True):
        draft = _draft(review)
    draft = services.draft_sync(draft=draft)
    assert draft.status == "failed"
    assert "no recorded reply" in draft.error
    assert not Suggestion.objects.filter(draft=draft).exists()
