from django.urls import path

from . import views

app_name = "changes"

urlpatterns = [
    path("inbox/", views.inbox_view, name="inbox"),
    path("p/<int:prompt_id>/", views.list_view, name="list"),
    path("p/<int:prompt_id>/new/", views.new_view, name="new"),
    path("p/<int:prompt_id>/gate/<slug:name>/", views.gate_view, name="gate"),
    path("<int:request_id>/", views.request_view, name="request"),
    path("<int:request_id>/annotate/", views.annotate_view, name="annotate"),
    path("<int:request_id>/submit/", views.submit_view, name="submit"),
    path("<int:request_id>/accept/", views.accept_view, name="accept"),
    path(
        "<int:request_id>/suggestions/<int:suggestion_id>/reject/",
        views.reject_view,
        name="reject",
    ),
    path(
        "<int:request_id>/annotations/<int:annotation_id>/",
        views.thread_view,
        name="thread",
    ),
    path("<int:request_id>/merge/", views.merge_view, name="merge"),
    path("<int:request_id>/close/", views.close_view, name="close"),
]
