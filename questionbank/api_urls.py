from django.urls import path

from .api import QuestionDetailApi, QuestionListApi

urlpatterns = [
    path("questions/", QuestionListApi.as_view(), name="api-question-list"),
    path("questions/<slug:slug>/", QuestionDetailApi.as_view(), name="api-question-detail"),
]
