from django.urls import path

from . import api

urlpatterns = [
    path(
        "reviews/<int:review_id>/drafts/",
        api.ReviewDraftCreateApi.as_view(),
        name="api-review-drafts",
    ),
    path("review-drafts/<int:draft_id>/", api.ReviewDraftDetailApi.as_view(), name="api-draft"),
    path(
        "suggestions/<int:suggestion_id>/accept/",
        api.SuggestionAcceptApi.as_view(),
        name="api-suggestion-accept",
    ),
    path(
        "suggestions/<int:suggestion_id>/reject/",
        api.SuggestionRejectApi.as_view(),
        name="api-suggestion-reject",
    ),
]
