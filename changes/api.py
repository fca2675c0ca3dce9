"""The change-request API under /api/v1/ (docs/api.md, Change requests). Every request URL
authorises through the prompt's access first: a stranger gets 404 on each."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.auth import request_actor
from common.fields import StrictSerializer
from common.limits import TITLE_MAX_CHARS
from playground.exceptions import ContentInvalid, NotFound
from playground.models import LABEL_NAME_MAX_CHARS, Prompt, PromptVersion, Role
from playground.selectors import label_list, prompt_access_get_for_user, version_in_prompt
from reviews.api.fields import choice_field
from reviews.api.serializers import PositionSerializer, QuoteSerializer
from reviews.models import Annotation, AnnotationAnchor, Area, Review, Verdict
from reviews.selectors import revision_text
from reviews.services.annotations import TEXT_MAX_CHARS
from reviews.services.reviews import SUMMARY_MAX_CHARS
from reviews.services.threads import REPLY_MAX_CHARS

from .gate import gate_evaluate
from .models import DESCRIPTION_MAX_CHARS, SUGGESTION_MAX_CHARS, ChangeNotice, ChangeRequest
from .selectors import (
    RequestAccess,
    annotation_in_request,
    annotation_views,
    gate_rule_for_label,
    notice_list_for_user,
    request_current,
    request_get_for_user,
    request_list_for_prompt,
    request_reviewers,
    request_reviews,
    request_revisions,
    review_in_request,
    suggested_edit_id,
)
from .services import (
    ACCEPT_IDS_MAX,
    change_annotate,
    change_annotation_status,
    change_close,
    change_merge,
    change_open,
    change_push,
    change_reply,
    change_review_start,
    change_review_submit,
    gate_rules_delete,
    gate_rules_set,
    notices_mark_read,
    suggested_edit_reject,
    suggestions_accept,
)

USERNAME_MAX_CHARS = 150


def _version(prompt: Prompt, value: Any, field: str) -> PromptVersion:
    try:
        return version_in_prompt(prompt=prompt, version_id=value)
    except NotFound:
        raise ContentInvalid(f"{field}: no such version in this prompt.", field=field) from None


# --- output ------------------------------------------------------------------------------------


class ChangeRuleSerializer(serializers.Serializer[dict[str, Any]]):
    rule = serializers.CharField()
    holds = serializers.BooleanField()
    message = serializers.CharField()


class ChangeGateSerializer(serializers.Serializer[dict[str, Any]]):
    holds = serializers.BooleanField(help_text="Every rule holds: the request may be merged.")
    rules = ChangeRuleSerializer(many=True)


class ChangeRevisionOutSerializer(serializers.Serializer[dict[str, Any]]):
    number = serializers.IntegerField(help_text="The revision of the request's text: 1, 2, …")
    version = serializers.IntegerField(help_text="The version it renders (id).")
    version_number = serializers.IntegerField()
    created_at = serializers.DateTimeField()


class ChangeMergeOutSerializer(serializers.Serializer[dict[str, Any]]):
    move = serializers.IntegerField(help_text="The label move's id in the move log.")
    via = serializers.CharField()
    merged_by = serializers.CharField()
    merged_at = serializers.DateTimeField()


class ChangeRequestSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()
    prompt = serializers.IntegerField()
    label = serializers.CharField()  # type: ignore[assignment]
    status = choice_field(ChangeRequest.Status.values)
    title = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    author = serializers.CharField()
    from_version = serializers.IntegerField(help_text="Where the label pointed when opened (id).")
    from_number = serializers.IntegerField()
    to_version = serializers.IntegerField(help_text="The version under review (id).")
    to_number = serializers.IntegerField()
    reviewers = serializers.ListField(child=serializers.CharField())
    revisions = ChangeRevisionOutSerializer(many=True)
    created_at = serializers.DateTimeField()
    merge = ChangeMergeOutSerializer(allow_null=True)


def _request_json(target: RequestAccess, *, full: bool = True) -> dict[str, Any]:
    request = target.request
    body: dict[str, Any] = {
        "id": request.pk,
        "prompt": request.prompt_id,
        "label": request.label.name,
        "status": request.status,
        "title": request.title,
        "description": request.description,
        "author": request.author.get_username(),
        "from_version": request.from_version_id,
        "from_number": request.from_version.number,
        "to_version": request.to_version_id,
        "to_number": request.to_version.number,
        "created_at": request.created_at,
        "reviewers": [],
        "revisions": [],
        "merge": None,
    }
    if full:
        body["reviewers"] = [r.user.get_username() for r in request_reviewers(request=request)]
        body["revisions"] = [
            {
                "number": r.revision.number,
                "version": r.version_id,
                "version_number": r.version.number,
                "created_at": r.revision.created_at,
            }
            for r in request_revisions(request=request)
        ]
    move = request.merge_move
    if move is not None and request.merged_at is not None and request.merged_by is not None:
        body["merge"] = {
            "move": move.pk,
            "via": move.via,
            "merged_by": request.merged_by.get_username(),
            "merged_at": request.merged_at,
        }
    return body


def _fresh(request: Request, request_id: int) -> dict[str, Any]:
    return _request_json(request_get_for_user(user=request.user, request_id=request_id))


# --- requests ---------------------------------------------------------------------------------


class ChangeRequestListCreateApi(APIView):
    class InputSerializer(StrictSerializer):
        label = serializers.SlugField(max_length=LABEL_NAME_MAX_CHARS)  # type: ignore[assignment]
        to = serializers.CharField(
            max_length=TITLE_MAX_CHARS, help_text="The version to promote: `v9` or an id."
        )
        from_ = serializers.CharField(
            required=False,
            max_length=TITLE_MAX_CHARS,
            help_text="Where the label points now (checked): `v7` or an id.",
        )
        title = serializers.CharField(required=False, allow_blank=True, max_length=TITLE_MAX_CHARS)
        description = serializers.CharField(
            required=False, allow_blank=True, max_length=DESCRIPTION_MAX_CHARS
        )
        reviewers = serializers.ListField(
            child=serializers.CharField(max_length=USERNAME_MAX_CHARS), required=False
        )

        def to_internal_value(self, data: Any) -> Any:
            if isinstance(data, dict) and "from" in data:
                data = {**{k: v for k, v in data.items() if k != "from"}, "from_": data["from"]}
            return super().to_internal_value(data)

    @extend_schema(
        responses=ChangeRequestSerializer(many=True),
        parameters=[
            OpenApiParameter(
                "status",
                {"type": "string", "enum": ChangeRequest.Status.values},
                description="Only requests in this state.",
            )
        ],
        description="The prompt's newest 100 requests, newest first.",
    )
    def get(self, request: Request, prompt_id: int) -> Response:
        access = prompt_access_get_for_user(user=request.user, prompt_id=prompt_id)
        status_filter = request.query_params.get("status") or None
        if status_filter is not None and status_filter not in ChangeRequest.Status.values:
            raise ContentInvalid(
                f"status: one of {', '.join(ChangeRequest.Status.values)}.", field="status"
            )
        rows = request_list_for_prompt(prompt=access.prompt, status=status_filter)[:100]
        return Response(
            [
                _request_json(
                    RequestAccess(request=r, access=access, user_id=request.user.pk or 0),
                    full=False,
                )
                for r in rows
            ]
        )

    @extend_schema(request=InputSerializer, responses={201: ChangeRequestSerializer})
    def post(self, request: Request, prompt_id: int) -> Response:
        access = prompt_access_get_for_user(
            user=request.user, prompt_id=prompt_id, min_role=Role.EDITOR
        )
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        opened = change_open(
            actor=request_actor(request),
            access=access,
            label_name=values["label"],
            to_version=_version(access.prompt, values["to"], "to"),
            from_version=_version(access.prompt, values["from_"], "from")
            if "from_" in values
            else None,
            title=values.get("title", ""),
            description=values.get("description", ""),
            reviewers=values.get("reviewers"),
        )
        return Response(_fresh(request, opened.pk), status=status.HTTP_201_CREATED)


class ChangeRequestDetailApi(APIView):
    @extend_schema(responses=ChangeRequestSerializer)
    def get(self, request: Request, request_id: int) -> Response:
        return Response(_fresh(request, request_id))


class ChangeTextSerializer(serializers.Serializer[dict[str, Any]]):
    revision = serializers.IntegerField()
    version = serializers.IntegerField()
    version_number = serializers.IntegerField()
    text = serializers.CharField(help_text="The version rendered for review (Markdown).")
    segments = serializers.ListField(
        child=serializers.ListField(child=serializers.JSONField()),
        help_text="[field, start, end] of each field's text in `text`.",
    )


class ChangeRequestTextApi(APIView):
    @extend_schema(
        responses=ChangeTextSerializer,
        parameters=[
            OpenApiParameter(
                "r",
                {"type": "integer", "minimum": 1},
                description="A revision number of the request (default: the current one).",
            )
        ],
    )
    def get(self, request: Request, request_id: int) -> Response:
        """The reviewable text of the current revision, or of revision `?r=<number>`."""
        target = request_get_for_user(user=request.user, request_id=request_id)
        revisions = request_revisions(request=target.request)
        wanted = request.query_params.get("r")
        chosen = revisions[-1]
        if wanted is not None:
            match = [r for r in revisions if str(r.revision.number) == wanted]
            if not match:
                raise ContentInvalid("r: no such revision of this request.", field="r")
            chosen = match[0]
        return Response(
            {
                "revision": chosen.revision.number,
                "version": chosen.version_id,
                "version_number": chosen.version.number,
                "text": revision_text(revision=chosen.revision),
                "segments": chosen.segments,
            }
        )


class ChangePushApi(APIView):
    class InputSerializer(StrictSerializer):
        version = serializers.CharField(
            max_length=TITLE_MAX_CHARS, help_text="A child of the version under review."
        )

    @extend_schema(request=InputSerializer, responses={201: ChangeRequestSerializer})
    def post(self, request: Request, request_id: int) -> Response:
        target = request_get_for_user(
            user=request.user, request_id=request_id, min_role=Role.EDITOR
        )
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        version = _version(target.request.prompt, data.validated_data["version"], "version")
        change_push(actor=request_actor(request), target=target, version=version)
        return Response(_fresh(request, request_id), status=status.HTTP_201_CREATED)


class ChangeGateApi(APIView):
    @extend_schema(responses=ChangeGateSerializer)
    def get(self, request: Request, request_id: int) -> Response:
        """Every gate rule of the request's label, whether it holds now, and why."""
        target = request_get_for_user(user=request.user, request_id=request_id)
        result = gate_evaluate(request=target.request)
        return Response({"holds": result.holds, "rules": [r.as_json() for r in result.rules]})


class ChangeMergeApi(APIView):
    @extend_schema(request=None, responses={200: ChangeRequestSerializer})
    def post(self, request: Request, request_id: int) -> Response:
        """Move the label (compare-and-set) when every rule holds; 409 naming the failing rules
        otherwise, or when the label moved since the request was opened."""
        target = request_get_for_user(
            user=request.user, request_id=request_id, min_role=Role.EDITOR
        )
        change_merge(actor=request_actor(request), target=target)
        return Response(_fresh(request, request_id))


class ChangeCloseApi(APIView):
    @extend_schema(request=None, responses={200: ChangeRequestSerializer})
    def post(self, request: Request, request_id: int) -> Response:
        target = request_get_for_user(user=request.user, request_id=request_id)
        change_close(actor=request_actor(request), target=target)
        return Response(_fresh(request, request_id))


# --- reviews, annotations, threads, suggestions ------------------------------------------------


class ChangeReviewOutSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()
    reviewer = serializers.CharField()
    status = choice_field(Review.Status.values)
    verdict = choice_field(["", *Verdict.values])
    revision = serializers.IntegerField(help_text="The request revision's number it reviews.")
    summary = serializers.CharField(allow_blank=True)
    submitted_at = serializers.DateTimeField(allow_null=True)


def _review_json(review: Review) -> dict[str, Any]:
    return {
        "id": review.pk,
        "reviewer": review.reviewer.get_username(),
        "status": review.status,
        "verdict": review.verdict,
        "revision": review.revision.number,
        "summary": review.summary,
        "submitted_at": review.submitted_at,
    }


class ChangeReviewListCreateApi(APIView):
    @extend_schema(responses=ChangeReviewOutSerializer(many=True))
    def get(self, request: Request, request_id: int) -> Response:
        """Submitted reviews and the caller's own drafts (drafts are private)."""
        target = request_get_for_user(user=request.user, request_id=request_id)
        reviews = request_reviews(user=request.user, request=target.request)
        return Response([_review_json(r) for r in reviews])

    @extend_schema(
        request=None, responses={201: ChangeReviewOutSerializer, 200: ChangeReviewOutSerializer}
    )
    def post(self, request: Request, request_id: int) -> Response:
        """Start (201) or resume (200) the caller's draft review of the current revision."""
        target = request_get_for_user(user=request.user, request_id=request_id)
        review, created = change_review_start(actor=request_actor(request), target=target)
        review = review_in_request(user=request.user, request=target.request, review_id=review.pk)
        return Response(_review_json(review), status=201 if created else 200)


class ChangeAnnotationInSerializer(StrictSerializer):
    quote = QuoteSerializer(required=False)
    position = PositionSerializer(required=False)
    kind = choice_field(Annotation.Kind.values)
    severity = serializers.ChoiceField(choices=Annotation.Severity.values)
    area = serializers.ChoiceField(choices=Area.values, required=False)
    body = serializers.CharField(max_length=TEXT_MAX_CHARS)
    tradeoff = serializers.CharField(required=False, allow_blank=True, max_length=TEXT_MAX_CHARS)
    suggestion = serializers.CharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        max_length=SUGGESTION_MAX_CHARS,
        help_text="A replacement text for the passage (a suggested edit).",
    )


class ChangeAnchorOutSerializer(serializers.Serializer[dict[str, Any]]):
    status = choice_field(AnnotationAnchor.Status.values)
    start = serializers.IntegerField(allow_null=True)
    end = serializers.IntegerField(allow_null=True)
    score = serializers.FloatField()


class ChangeSuggestionOutSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()
    text = serializers.CharField(allow_blank=True)
    status = choice_field(["pending", "accepted", "rejected"])


class ChangeReplyOutSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()
    author = serializers.CharField()
    body = serializers.CharField()
    created_at = serializers.DateTimeField()


class ChangeAnnotationOutSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()
    review = serializers.IntegerField()
    author = serializers.CharField()
    revision = serializers.IntegerField(help_text="The request revision it was made on.")
    exact = serializers.CharField(allow_blank=True)
    kind = serializers.CharField()
    severity = serializers.CharField()
    status = serializers.CharField()
    body = serializers.CharField()
    anchor = ChangeAnchorOutSerializer(
        allow_null=True, help_text="Where it sits on the current revision (null: not yet known)."
    )
    suggestion = ChangeSuggestionOutSerializer(allow_null=True)
    replies = ChangeReplyOutSerializer(many=True)


class ChangeAnnotationListCreateApi(APIView):
    @extend_schema(responses=ChangeAnnotationOutSerializer(many=True))
    def get(self, request: Request, request_id: int) -> Response:
        """The annotations the caller may see, anchored on the current revision."""
        target = request_get_for_user(user=request.user, request_id=request_id)
        current = request_current(request=target.request)
        views = annotation_views(user=request.user, request=target.request, viewed=current)
        return Response(
            [
                {
                    "id": v.annotation.pk,
                    "review": v.annotation.review_id,
                    "author": v.annotation.author.get_username(),
                    "revision": v.annotation.revision.number,
                    "exact": v.annotation.exact,
                    "kind": v.annotation.kind,
                    "severity": v.annotation.severity,
                    "status": v.annotation.status,
                    "body": v.annotation.body,
                    "anchor": None
                    if v.anchor is None
                    else {
                        "status": v.anchor.status,
                        "start": v.anchor.start,
                        "end": v.anchor.end,
                        "score": v.anchor.score,
                    },
                    "suggestion": None
                    if v.suggestion_id is None
                    else {
                        "id": v.suggestion_id,
                        "text": v.suggestion_text,
                        "status": v.suggestion_status,
                    },
                    "replies": [
                        {
                            "id": reply.pk,
                            "author": reply.author.get_username(),
                            "body": reply.body,
                            "created_at": reply.created_at,
                        }
                        for reply in v.replies
                    ],
                }
                for v in views
            ]
        )


class ChangeReviewAnnotationCreateApi(APIView):
    class CreatedSerializer(serializers.Serializer[dict[str, Any]]):
        id = serializers.IntegerField()
        exact = serializers.CharField(allow_blank=True, help_text="The passage as stored.")
        start = serializers.IntegerField(allow_null=True)
        suggestion = serializers.IntegerField(allow_null=True, help_text="The suggested edit.")

    @extend_schema(request=ChangeAnnotationInSerializer, responses={201: CreatedSerializer})
    def post(self, request: Request, request_id: int, review_id: int) -> Response:
        """Annotate a passage of the review's revision (its reviewer, while a draft)."""
        target = request_get_for_user(user=request.user, request_id=request_id)
        review = review_in_request(user=request.user, request=target.request, review_id=review_id)
        data = ChangeAnnotationInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        quote = values.get("quote") or {}
        position = values.get("position") or {}
        annotation = change_annotate(
            actor=request_actor(request),
            target=target,
            review=review,
            kind=values["kind"],
            severity=values["severity"],
            body=values["body"],
            area=values.get("area", Area.GOALS),
            exact=quote.get("exact"),
            prefix=quote.get("prefix", ""),
            suffix=quote.get("suffix", ""),
            start=position.get("start"),
            end=position.get("end"),
            tradeoff=values.get("tradeoff", ""),
            suggestion=values.get("suggestion"),
        )
        return Response(
            {
                "id": annotation.pk,
                "exact": annotation.exact,
                "start": annotation.start,
                "suggestion": suggested_edit_id(annotation=annotation),
            },
            status=status.HTTP_201_CREATED,
        )


class ChangeReviewSubmitApi(APIView):
    class InputSerializer(StrictSerializer):
        verdict = choice_field(Verdict.values)
        summary = serializers.CharField(
            required=False, allow_blank=True, max_length=SUMMARY_MAX_CHARS
        )

    @extend_schema(request=InputSerializer, responses={200: ChangeReviewOutSerializer})
    def post(self, request: Request, request_id: int, review_id: int) -> Response:
        target = request_get_for_user(user=request.user, request_id=request_id)
        review = review_in_request(user=request.user, request=target.request, review_id=review_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        review = change_review_submit(
            actor=request_actor(request),
            target=target,
            review=review,
            verdict=data.validated_data["verdict"],
            summary=data.validated_data.get("summary"),
        )
        review = review_in_request(user=request.user, request=target.request, review_id=review.pk)
        return Response(_review_json(review))


class ChangeAnnotationStatusApi(APIView):
    class InputSerializer(StrictSerializer):
        status = serializers.ChoiceField(choices=Annotation.Status.values)

    class OutputSerializer(serializers.Serializer[dict[str, Any]]):
        id = serializers.IntegerField()
        status = serializers.CharField()

    @extend_schema(request=InputSerializer, responses={200: OutputSerializer})
    def patch(self, request: Request, request_id: int, annotation_id: int) -> Response:
        """Resolve, drop or reopen (the request's author or the annotation's)."""
        target = request_get_for_user(user=request.user, request_id=request_id)
        annotation = annotation_in_request(
            user=request.user, request=target.request, annotation_id=annotation_id
        )
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        change_annotation_status(
            actor=request_actor(request),
            target=target,
            annotation=annotation,
            status=data.validated_data["status"],
        )
        return Response({"id": annotation.pk, "status": data.validated_data["status"]})


class ChangeReplyCreateApi(APIView):
    class InputSerializer(StrictSerializer):
        body = serializers.CharField(max_length=REPLY_MAX_CHARS)

    @extend_schema(request=InputSerializer, responses={201: ChangeReplyOutSerializer})
    def post(self, request: Request, request_id: int, annotation_id: int) -> Response:
        """Reply under an annotation of a submitted review; @username notifies that account."""
        target = request_get_for_user(user=request.user, request_id=request_id)
        annotation = annotation_in_request(
            user=request.user, request=target.request, annotation_id=annotation_id
        )
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        reply = change_reply(
            actor=request_actor(request),
            target=target,
            annotation=annotation,
            body=data.validated_data["body"],
        )
        return Response(
            {
                "id": reply.pk,
                "author": request.user.get_username(),
                "body": reply.body,
                "created_at": reply.created_at,
            },
            status=status.HTTP_201_CREATED,
        )


class ChangeAcceptOutSerializer(serializers.Serializer[dict[str, Any]]):
    version = serializers.IntegerField(help_text="The new child version (id).")
    version_number = serializers.IntegerField()
    revision = serializers.IntegerField(help_text="The request's new revision number.")
    accepted = serializers.ListField(child=serializers.IntegerField())


class ChangeSuggestionAcceptApi(APIView):
    class InputSerializer(StrictSerializer):
        ids = serializers.ListField(
            child=serializers.IntegerField(), min_length=1, max_length=ACCEPT_IDS_MAX
        )
        message = serializers.CharField(
            required=False, allow_blank=True, max_length=TITLE_MAX_CHARS
        )

    @extend_schema(request=InputSerializer, responses={201: ChangeAcceptOutSerializer})
    def post(self, request: Request, request_id: int) -> Response:
        """Accept one or several suggestions at once: one child version with every edit
        applied, pushed to the request (the request's author)."""
        target = request_get_for_user(
            user=request.user, request_id=request_id, min_role=Role.EDITOR
        )
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        result = suggestions_accept(
            actor=request_actor(request),
            target=target,
            ids=data.validated_data["ids"],
            message=data.validated_data.get("message", ""),
        )
        return Response(
            {
                "version": result.version.pk,
                "version_number": result.version.number,
                "revision": result.revision.revision.number,
                "accepted": result.accepted,
            },
            status=status.HTTP_201_CREATED,
        )


class ChangeSuggestionRejectApi(APIView):
    @extend_schema(request=None, responses={200: ChangeSuggestionOutSerializer})
    def post(self, request: Request, request_id: int, suggestion_id: int) -> Response:
        target = request_get_for_user(
            user=request.user, request_id=request_id, min_role=Role.EDITOR
        )
        edit = suggested_edit_reject(
            actor=request_actor(request), target=target, suggestion_id=suggestion_id
        )
        return Response({"id": edit.pk, "text": edit.text, "status": edit.status})


# --- gate rules, inbox ------------------------------------------------------------------------


class ChangeGateRuleSerializer(serializers.Serializer[dict[str, Any]]):
    label = serializers.CharField()  # type: ignore[assignment]
    gated = serializers.BooleanField()
    required_approvals = serializers.IntegerField()
    required_reviewers = serializers.ListField(child=serializers.CharField())
    no_blockers = serializers.BooleanField()
    eval_testset = serializers.IntegerField(allow_null=True)
    eval_graders = serializers.ListField(child=serializers.DictField())
    eval_threshold = serializers.FloatField(allow_null=True)


class ChangeGateRuleApi(APIView):
    class InputSerializer(StrictSerializer):
        required_approvals = serializers.IntegerField(min_value=0, max_value=20, default=1)
        required_reviewers = serializers.ListField(
            child=serializers.CharField(max_length=USERNAME_MAX_CHARS), required=False
        )
        no_blockers = serializers.BooleanField(default=True)
        eval_testset = serializers.IntegerField(required=False, allow_null=True)
        eval_graders = serializers.ListField(child=serializers.DictField(), required=False)
        eval_threshold = serializers.FloatField(
            required=False, allow_null=True, min_value=0, max_value=1
        )

    def _answer(self, prompt: Prompt, name: str) -> Response:
        label = label_list(prompt=prompt).filter(name=name).first()
        if label is None:
            raise NotFound
        rule = gate_rule_for_label(label_id=label.pk)
        return Response(
            {
                "label": label.name,
                "gated": label.gated,
                "required_approvals": rule.required_approvals if rule else 1,
                "required_reviewers": [u.get_username() for u in rule.required_reviewers.all()]
                if rule
                else [],
                "no_blockers": rule.no_blockers if rule else False,
                "eval_testset": rule.eval_testset_id if rule else None,
                "eval_graders": rule.eval_graders if rule else [],
                "eval_threshold": rule.eval_threshold if rule else None,
            }
        )

    @extend_schema(responses=ChangeGateRuleSerializer)
    def get(self, request: Request, prompt_id: int, name: str) -> Response:
        access = prompt_access_get_for_user(user=request.user, prompt_id=prompt_id)
        return self._answer(access.prompt, name)

    @extend_schema(request=InputSerializer, responses={200: ChangeGateRuleSerializer})
    def put(self, request: Request, prompt_id: int, name: str) -> Response:
        """Set the label's gate rules and gate it (owner only; the label must be protected)."""
        access = prompt_access_get_for_user(
            user=request.user, prompt_id=prompt_id, min_role=Role.OWNER
        )
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        gate_rules_set(
            actor=request_actor(request),
            access=access,
            label_name=name,
            required_approvals=values["required_approvals"],
            required_reviewers=values.get("required_reviewers"),
            no_blockers=values["no_blockers"],
            eval_testset=values.get("eval_testset"),
            eval_graders=values.get("eval_graders"),
            eval_threshold=values.get("eval_threshold"),
        )
        return self._answer(access.prompt, name)

    @extend_schema(request=None, responses={200: ChangeGateRuleSerializer})
    def delete(self, request: Request, prompt_id: int, name: str) -> Response:
        """Remove the rules and lift the gate (owner only)."""
        access = prompt_access_get_for_user(
            user=request.user, prompt_id=prompt_id, min_role=Role.OWNER
        )
        gate_rules_delete(actor=request_actor(request), access=access, label_name=name)
        return self._answer(access.prompt, name)


class ChangeNoticeSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()
    kind = choice_field(ChangeNotice.Kind.values)
    request = serializers.IntegerField()
    title = serializers.CharField()
    actor = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    read = serializers.BooleanField()


class ChangeInboxApi(APIView):
    @extend_schema(responses=ChangeNoticeSerializer(many=True))
    def get(self, request: Request) -> Response:
        """The caller's change-request inbox (review requested, mentioned, review submitted)."""
        if not request.user.is_authenticated:
            raise NotFound
        return Response(
            [
                {
                    "id": n.pk,
                    "kind": n.kind,
                    "request": n.request_id,
                    "title": n.request.title,
                    "actor": n.actor.get_username() if n.actor else None,
                    "created_at": n.created_at,
                    "read": n.read_at is not None,
                }
                for n in notice_list_for_user(user=request.user)[:100]
            ]
        )

    class ReadSerializer(serializers.Serializer[dict[str, Any]]):
        changed = serializers.IntegerField(help_text="Entries marked read.")

    @extend_schema(request=None, responses={200: ReadSerializer})
    def post(self, request: Request) -> Response:
        """Mark every entry read."""
        return Response({"changed": notices_mark_read(actor=request_actor(request))})
