from django.urls import path

from . import views

app_name = "critique"

urlpatterns = [
    path(
        "drafts/<int:draft_id>/suggestions/",
        views.draft_suggestions_view,
        name="draft-suggestions",
    ),
    path("copy/", views.starter_copy_view, name="copy"),
    path("score/", views.practice_score_view, name="score"),
]
