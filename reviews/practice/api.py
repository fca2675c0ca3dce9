"""`GET /api/v1/reviews/{id}/scorecard/`: a submitted practice review against its answer key.

404 for a draft, for anyone but the reviewer, and for a document without a key: the key is
never revealed before submit.
"""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .scoring import Scorecard
from .selectors import ScorecardPage, scorecard_get_for_user


class ScorecardItemSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.CharField(help_text="The planted item's id.")
    kind = serializers.CharField(help_text="risk, missing, already-considered, constraint-trap")
    area = serializers.CharField()
    severity = serializers.CharField()
    found = serializers.BooleanField()
    matched_annotations = serializers.ListField(child=serializers.IntegerField())
    fell_into_trap = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="Alternatives on a constraint trap's passage that break the pinned constraint.",
    )
    misfiled_annotations = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="Annotations that would find the item but are filed under another area.",
    )
    misfiled_areas = serializers.ListField(
        child=serializers.CharField(), help_text="The areas those annotations are filed under."
    )
    credit = serializers.FloatField(
        help_text="1 found; 0.5 found only under another area (partial credit); 0 missed."
    )
    quote = serializers.CharField(allow_blank=True)
    explanation = serializers.CharField()
    good_comment = serializers.CharField()


class RankedRiskSerializer(serializers.Serializer[dict[str, Any]]):
    annotation = serializers.IntegerField()
    rank = serializers.IntegerField()
    severity = serializers.CharField()
    item = serializers.CharField(allow_null=True)
    item_severity = serializers.CharField(allow_null=True)


class DisagreementSerializer(serializers.Serializer[dict[str, Any]]):
    above = serializers.CharField()
    above_severity = serializers.CharField()
    below = serializers.CharField()
    below_severity = serializers.CharField()


class ScorecardSerializer(serializers.Serializer[dict[str, Any]]):
    review = serializers.IntegerField()
    doc = serializers.IntegerField()
    items = ScorecardItemSerializer(many=True)
    found = serializers.IntegerField(help_text="Items found in their own area.")
    # Not `partial`: that is a serializer's own attribute.
    found_elsewhere = serializers.IntegerField(help_text="Items found only under another area.")
    credit = serializers.FloatField(help_text="found + 0.5 × found_elsewhere.")
    total = serializers.IntegerField()
    score = serializers.FloatField(help_text="credit / total, 0–1.")
    led_with_worst = serializers.BooleanField()
    worst = serializers.CharField(help_text="The planted risk the key rates worst.")
    ranking = RankedRiskSerializer(many=True)
    ranking_disagreements = DisagreementSerializer(many=True)
    alternatives_with_tradeoff = serializers.IntegerField()
    noticed_already_considered = serializers.IntegerField()
    respected_constraint = serializers.BooleanField()
    checklist_swept = serializers.BooleanField()
    checklist_unset = serializers.ListField(child=serializers.CharField())
    minutes_taken = serializers.FloatField(allow_null=True)
    timed = serializers.BooleanField()


def scorecard_data(page: ScorecardPage) -> dict[str, Any]:
    card: Scorecard = page.scorecard
    return {
        "review": page.review.pk,
        "doc": page.doc.pk,
        "items": [
            {
                "id": item.id,
                "kind": item.kind,
                "area": item.area,
                "severity": item.severity,
                "found": item.found,
                "matched_annotations": list(item.matched_annotations),
                "fell_into_trap": list(item.trapped_by),
                "misfiled_annotations": list(item.misfiled),
                "misfiled_areas": list(item.misfiled_areas),
                "credit": item.credit,
                "quote": item.quote,
                "explanation": item.explanation,
                "good_comment": item.good_comment,
            }
            for item in card.items
        ],
        "found": card.found,
        "found_elsewhere": card.partial,
        "credit": card.credit,
        "total": card.total,
        "score": round(card.score, 3),
        "led_with_worst": card.led_with_worst,
        "worst": card.worst,
        "ranking": [
            {
                "annotation": risk.annotation,
                "rank": risk.rank,
                "severity": risk.severity,
                "item": risk.item,
                "item_severity": risk.item_severity,
            }
            for risk in card.ranking
        ],
        "ranking_disagreements": [
            {
                "above": d.above,
                "above_severity": d.above_severity,
                "below": d.below,
                "below_severity": d.below_severity,
            }
            for d in card.disagreements
        ],
        "alternatives_with_tradeoff": card.alternatives_with_tradeoff,
        "noticed_already_considered": card.noticed_already_considered,
        "respected_constraint": card.respected_constraint,
        "checklist_swept": card.checklist_swept,
        "checklist_unset": list(card.checklist_unset),
        "minutes_taken": card.minutes_taken,
        "timed": page.timed,
    }


class ReviewScorecardApi(APIView):
    """The reviewer's scorecard of a submitted review of a practice document."""

    @extend_schema(
        summary="Scorecard of a submitted practice review",
        description=(
            "Each planted item of the document's answer key, found or not, with the annotations "
            "that matched it; whether the review led with the worst risk, offered alternatives "
            "with a tradeoff, noticed what the author already considered, stayed inside the "
            "pinned constraint and swept the checklist; minutes taken. Only the reviewer, only "
            "after submit (404 otherwise, and for documents without an answer key)."
        ),
        responses=ScorecardSerializer,
    )
    def get(self, request: Request, review_id: int) -> Response:
        page = scorecard_get_for_user(user=request.user, review_id=review_id)
        return Response(ScorecardSerializer(scorecard_data(page)).data)
