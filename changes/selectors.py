"""Reads of change requests, scoped to the caller through the prompt's access (docs/design.md,
Prompt change review): the owner and accounts with an active grant see a prompt's requests
(viewers read and comment, editors also open them); anyone else gets NotFound for every
request URL, exactly like a missing id. Share links open one version and never a request.
"""

from dataclasses import dataclass

from django.db.models import Prefetch, Q, QuerySet

from common.auth import Viewer
from common.selectors import object_get_or_not_found, object_id_parse
from playground.models import Prompt, Role
from playground.selectors import PromptAccess, prompt_access_get_for_user, prompt_list_visible
from reviews.models import Annotation, AnnotationAnchor, DesignDoc, Reply, Review
from reviews.selectors import review_list_for_doc

from .exceptions import NotFound
from .models import (
    ChangeNotice,
    ChangeRequest,
    GateRule,
    RequestedReviewer,
    RequestRevision,
    SuggestedEdit,
)

CHANGE = DesignDoc.Kind.CHANGE


@dataclass(frozen=True)
class RequestAccess:
    """A request and the caller's access to its prompt, checked now."""

    request: ChangeRequest
    access: PromptAccess
    user_id: int

    @property
    def is_author(self) -> bool:
        return self.request.author_id == self.user_id


def _requests() -> QuerySet[ChangeRequest]:
    return ChangeRequest.objects.select_related(
        "prompt", "label", "from_version", "to_version", "author", "doc", "merged_by", "merge_move"
    )


def request_get_for_user(
    *, user: Viewer, request_id: object, min_role: str = Role.VIEWER
) -> RequestAccess:
    """The request if the user may read its prompt (NotFound otherwise); Forbidden when they
    may read it but their role is below `min_role`."""
    if not user.is_authenticated:
        raise NotFound
    request = object_get_or_not_found(_requests(), pk=object_id_parse(request_id))
    access = prompt_access_get_for_user(user=user, prompt_id=request.prompt_id, min_role=min_role)
    return RequestAccess(request=request, access=access, user_id=user.pk)


def request_list_for_prompt(
    *, prompt: Prompt, status: str | None = None
) -> QuerySet[ChangeRequest]:
    """A prompt's requests, newest first (the caller authorised the prompt)."""
    requests = _requests().filter(prompt=prompt)
    if status:
        requests = requests.filter(status=status)
    return requests.order_by("-created_at", "-id")


def request_revisions(*, request: ChangeRequest) -> list[RequestRevision]:
    """The request's revisions, oldest first, with the version each renders (one query)."""
    return list(
        RequestRevision.objects.filter(request=request)
        .select_related("revision", "revision__author", "version")
        .order_by("revision__number")
    )


def request_current(*, request: ChangeRequest) -> RequestRevision:
    current = (
        RequestRevision.objects.filter(request=request)
        .select_related("revision", "version")
        .order_by("-revision__number")
        .first()
    )
    if current is None:  # a request is opened with its first revision
        raise NotFound
    return current


def request_reviewers(*, request: ChangeRequest) -> list[RequestedReviewer]:
    return list(RequestedReviewer.objects.filter(request=request).select_related("user"))


def request_reviews(*, user: Viewer, request: ChangeRequest) -> QuerySet[Review]:
    """The request's reviews the user may see: submitted ones and their own drafts."""
    return review_list_for_doc(user=user, doc=request.doc)


def review_in_request(*, user: Viewer, request: ChangeRequest, review_id: object) -> Review:
    """One of the request's reviews, if the user may see it (a draft: only its reviewer)."""
    return object_get_or_not_found(
        review_list_for_doc(user=user, doc=request.doc), pk=object_id_parse(review_id)
    )


def _annotations_visible(user: Viewer, request: ChangeRequest) -> QuerySet[Annotation]:
    return Annotation.objects.filter(
        Q(review__reviewer_id=user.pk) | Q(review__status=Review.Status.SUBMITTED),
        review__revision__doc_id=request.doc_id,
    )


@dataclass(frozen=True)
class AnnotationView:
    """An annotation of the request as the caller sees it, with where it sits on the viewed
    revision (None while re-anchoring has not reached it) and its suggestion, if any."""

    annotation: Annotation
    anchor: AnnotationAnchor | None
    suggestion_id: int | None
    suggestion_text: str | None
    suggestion_status: str | None
    replies: list[Reply]


def annotation_views(
    *, user: Viewer, request: ChangeRequest, viewed: RequestRevision
) -> list[AnnotationView]:
    """The request's annotations the user may see (submitted reviews and their own drafts),
    each with its anchor on `viewed` and its suggestion (three queries)."""
    rows = list(
        _annotations_visible(user, request)
        .select_related("author", "review", "review__reviewer", "revision", "suggested_edit")
        .prefetch_related(
            Prefetch(
                "anchors",
                queryset=AnnotationAnchor.objects.filter(revision_id=viewed.revision_id),
                to_attr="viewed_anchors",
            ),
            Prefetch(
                "replies",
                queryset=Reply.objects.select_related("author").order_by("created_at", "id"),
            ),
        )
        .order_by("id")
    )
    views = []
    for annotation in rows:
        anchors: list[AnnotationAnchor] = getattr(annotation, "viewed_anchors", [])
        suggestion = getattr(annotation, "suggested_edit", None)
        views.append(
            AnnotationView(
                annotation=annotation,
                anchor=anchors[0] if anchors else None,
                suggestion_id=suggestion.pk if suggestion is not None else None,
                suggestion_text=suggestion.text if suggestion is not None else None,
                suggestion_status=suggestion.status if suggestion is not None else None,
                replies=list(annotation.replies.all()),
            )
        )
    return views


def annotation_in_request(
    *, user: Viewer, request: ChangeRequest, annotation_id: object
) -> Annotation:
    """One of the request's annotations, if the user may see it."""
    return object_get_or_not_found(
        _annotations_visible(user, request).select_related("review", "revision", "author"),
        pk=object_id_parse(annotation_id),
    )


def gate_rule_for_label(*, label_id: int) -> GateRule | None:
    return (
        GateRule.objects.filter(label_id=label_id)
        .select_related("eval_testset")
        .prefetch_related("required_reviewers")
        .first()
    )


def notice_list_for_user(*, user: Viewer) -> QuerySet[ChangeNotice]:
    """The user's change-request inbox, newest first, limited to requests they may still read
    (a revoked grant hides them)."""
    if not user.is_authenticated:
        return ChangeNotice.objects.none()
    return (
        ChangeNotice.objects.filter(
            recipient_id=user.pk, request__prompt__in=prompt_list_visible(user=user).values("pk")
        )
        .select_related("request", "request__prompt", "request__label", "actor")
        .order_by("-created_at", "-id")
    )


def notice_unread_count(*, user: Viewer) -> int:
    if not user.is_authenticated:
        return 0
    return notice_list_for_user(user=user).filter(read_at__isnull=True).count()


def suggested_edit_id(*, annotation: Annotation) -> int | None:
    return SuggestedEdit.objects.filter(annotation=annotation).values_list("pk", flat=True).first()
