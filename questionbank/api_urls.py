from django.urls import path

from .api import QuestionDetailApi, QuestionEstimateApi, QuestionListApi

urlpatterns = [
    path("questions/", QuestionListApi.as_view(), name="api-question-list"),
    path("questions/<slug:slug>/", QuestionDetailApi.as_view(), name="api-question-detail"),
    path(
        "questions/<slug:slug>/estimate/",
        QuestionEstimateApi.as_view(),
        name="api-question-estimate",
    ),
]
