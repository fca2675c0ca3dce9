from django.urls import path

from .api import annotations, docs, export, reviews
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
]
