from django.urls import path

from .api import annotations, docs, export, reviews, threads
from .practice.api import ReviewScorecardApi

urlpatterns = [
    path("docs/", docs.DocListCreateApi.as_view(), name="api-doc-list"),
    path("docs/<int:doc_id>/", docs.DocDetailApi.as_view(), name="api-doc-detail"),
    path(
        "docs/<int:doc_id>/revisions/",
        docs.DocRevisionListCreateApi.as_view(),
        name="api-doc-revisions",
    ),
    path(
        "revisions/<int:revision_id>/",
        docs.RevisionDetailApi.as_view(),
        name="api-revision-detail",
    ),
    path("reviews/", reviews.ReviewListCreateApi.as_view(), name="api-review-list"),
    path("reviews/<int:review_id>/", reviews.ReviewDetailApi.as_view(), name="api-review-detail"),
    path(
        "reviews/<int:review_id>/submit/",
        reviews.ReviewSubmitApi.as_view(),
        name="api-review-submit",
    ),
    path(
        "reviews/<int:review_id>/ranking/",
        reviews.ReviewRankingApi.as_view(),
        name="api-review-ranking",
    ),
    path(
        "reviews/<int:review_id>/export/",
        export.ReviewExportApi.as_view(),
        name="api-review-export",
    ),
    path(
        "reviews/<int:review_id>/scorecard/",
        ReviewScorecardApi.as_view(),
        name="api-review-scorecard",
    ),
    path(
        "reviews/<int:review_id>/annotations/",
        annotations.AnnotationListCreateApi.as_view(),
        name="api-review-annotations",
    ),
    path(
        "annotations/<int:annotation_id>/",
        annotations.AnnotationDetailApi.as_view(),
        name="api-annotation-detail",
    ),
    path(
        "annotations/<int:annotation_id>/anchors/",
        annotations.AnnotationAnchorsApi.as_view(),
        name="api-annotation-anchors",
    ),
    path(
        "annotations/<int:annotation_id>/reattach/",
        annotations.AnnotationReattachApi.as_view(),
        name="api-annotation-reattach",
    ),
    path(
        "annotations/<int:annotation_id>/replies/",
        threads.AnnotationReplyListCreateApi.as_view(),
        name="api-annotation-replies",
    ),
    path(
        "annotations/<int:annotation_id>/history/",
        threads.AnnotationHistoryApi.as_view(),
        name="api-annotation-history",
    ),
    path("replies/<int:reply_id>/", threads.ReplyDetailApi.as_view(), name="api-reply-detail"),
    path(
        "replies/<int:reply_id>/history/",
        threads.ReplyHistoryApi.as_view(),
        name="api-reply-history",
    ),
    path("docs/<int:doc_id>/reviews/", threads.DocReviewListApi.as_view(), name="api-doc-reviews"),
    path(
        "revisions/<int:revision_id>/diff/",
        threads.RevisionDiffApi.as_view(),
        name="api-revision-diff",
    ),
    path("inbox/", threads.InboxListApi.as_view(), name="api-inbox"),
    path("inbox/read/", threads.InboxReadApi.as_view(), name="api-inbox-read"),
]
