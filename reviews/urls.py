from django.urls import path

from . import views, views_threads
from .practice import views as practice_views

app_name = "reviews"
urlpatterns = [
    path("", views.doc_list_view, name="list"),
    path("new/", views.doc_new_view, name="new"),
    path("d/<int:doc_id>/", views.doc_detail_view, name="doc"),
    path("d/<int:doc_id>/revise/", views.doc_revise_view, name="revise"),
    path("d/<int:doc_id>/constraints/", views.doc_constraints_view, name="constraints"),
    path("d/<int:doc_id>/review/", views.review_start_view, name="start"),
    path("r/<int:review_id>/", views.review_detail_view, name="review"),
    path("r/<int:review_id>/cards/", views.review_cards_view, name="cards"),
    path("r/<int:review_id>/risks/", views.review_risks_view, name="risks"),
    path("r/<int:review_id>/checklist/", views.review_checklist_view, name="checklist"),
    path("r/<int:review_id>/submit/", views.review_submit_view, name="submit"),
    path("d/<int:doc_id>/diff/", views_threads.revision_diff_view, name="diff"),
    path("a/<int:annotation_id>/reply/", views_threads.reply_create_view, name="reply"),
    path("a/<int:annotation_id>/edit/", views_threads.annotation_edit_view, name="annotation_edit"),
    path("replies/<int:reply_id>/edit/", views_threads.reply_edit_view, name="reply_edit"),
    path("inbox/", views_threads.inbox_view, name="inbox"),
    path("inbox/read/", views_threads.inbox_read_view, name="inbox_read"),
    path("inbox/<int:item_id>/", views_threads.inbox_open_view, name="inbox_open"),
    path("practice/", practice_views.progress_view, name="practice"),
    path("d/<int:doc_id>/practice/", practice_views.practice_start_view, name="practice-start"),
    path("r/<int:review_id>/debrief/", practice_views.debrief_view, name="debrief"),
]
