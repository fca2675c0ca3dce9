from django.urls import path

from .practice import views as practice_views
from .views import documents, reviews, threads

app_name = "reviews"
urlpatterns = [
    path("", documents.doc_list_view, name="list"),
    path("new/", documents.doc_new_view, name="new"),
    path("d/<int:doc_id>/", documents.doc_detail_view, name="doc"),
    path("d/<int:doc_id>/revise/", documents.doc_revise_view, name="revise"),
    path("d/<int:doc_id>/constraints/", documents.doc_constraints_view, name="constraints"),
    path("d/<int:doc_id>/review/", documents.review_start_view, name="start"),
    path("r/<int:review_id>/", reviews.review_detail_view, name="review"),
    path("r/<int:review_id>/cards/", reviews.review_cards_view, name="cards"),
    path("r/<int:review_id>/risks/", reviews.review_risks_view, name="risks"),
    path("r/<int:review_id>/checklist/", reviews.review_checklist_view, name="checklist"),
    path("r/<int:review_id>/submit/", reviews.review_submit_view, name="submit"),
    path("d/<int:doc_id>/diff/", threads.revision_diff_view, name="diff"),
    path("a/<int:annotation_id>/reply/", threads.reply_create_view, name="reply"),
    path("a/<int:annotation_id>/edit/", threads.annotation_edit_view, name="annotation_edit"),
    path("replies/<int:reply_id>/edit/", threads.reply_edit_view, name="reply_edit"),
    path("inbox/", threads.inbox_view, name="inbox"),
    path("inbox/read/", threads.inbox_read_view, name="inbox_read"),
    path("inbox/<int:item_id>/", threads.inbox_open_view, name="inbox_open"),
    path("practice/", practice_views.progress_view, name="practice"),
    path("d/<int:doc_id>/practice/", practice_views.practice_start_view, name="practice-start"),
    path("r/<int:review_id>/debrief/", practice_views.debrief_view, name="debrief"),
]
