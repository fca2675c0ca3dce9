from django.urls import path

from . import api

urlpatterns = [
    path(
        "prompts/<int:prompt_id>/changes/",
        api.ChangeRequestListCreateApi.as_view(),
        name="api-change-requests",
    ),
    path(
        "prompts/<int:prompt_id>/labels/<slug:name>/gate/",
        api.ChangeGateRuleApi.as_view(),
        name="api-label-gate",
    ),
    path("changes/inbox/", api.ChangeInboxApi.as_view(), name="api-change-inbox"),
    path("changes/<int:request_id>/", api.ChangeRequestDetailApi.as_view(), name="api-change"),
    path(
        "changes/<int:request_id>/text/", api.ChangeRequestTextApi.as_view(), name="api-change-text"
    ),
    path("changes/<int:request_id>/push/", api.ChangePushApi.as_view(), name="api-change-push"),
    path("changes/<int:request_id>/gate/", api.ChangeGateApi.as_view(), name="api-change-gate"),
    path("changes/<int:request_id>/merge/", api.ChangeMergeApi.as_view(), name="api-change-merge"),
    path("changes/<int:request_id>/close/", api.ChangeCloseApi.as_view(), name="api-change-close"),
    path(
        "changes/<int:request_id>/reviews/",
        api.ChangeReviewListCreateApi.as_view(),
        name="api-change-reviews",
    ),
    path(
        "changes/<int:request_id>/reviews/<int:review_id>/annotations/",
        api.ChangeReviewAnnotationCreateApi.as_view(),
        name="api-change-review-annotations",
    ),
    path(
        "changes/<int:request_id>/reviews/<int:review_id>/submit/",
        api.ChangeReviewSubmitApi.as_view(),
        name="api-change-review-submit",
    ),
    path(
        "changes/<int:request_id>/annotations/",
        api.ChangeAnnotationListCreateApi.as_view(),
        name="api-change-annotations",
    ),
    path(
        "changes/<int:request_id>/annotations/<int:annotation_id>/",
        api.ChangeAnnotationStatusApi.as_view(),
        name="api-change-annotation",
    ),
    path(
        "changes/<int:request_id>/annotations/<int:annotation_id>/replies/",
        api.ChangeReplyCreateApi.as_view(),
        name="api-change-replies",
    ),
    path(
        "changes/<int:request_id>/suggestions/accept/",
        api.ChangeSuggestionAcceptApi.as_view(),
        name="api-change-suggestions-accept",
    ),
    path(
        "changes/<int:request_id>/suggestions/<int:suggestion_id>/reject/",
        api.ChangeSuggestionRejectApi.as_view(),
        name="api-change-suggestion-reject",
    ),
]
