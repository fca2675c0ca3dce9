from django.urls import path

from . import views

app_name = "questionbank"
urlpatterns = [
    path("", views.question_list_view, name="list"),
    path("<slug:slug>/", views.question_detail_view, name="detail"),
    path("<slug:slug>/estimate/", views.question_estimate_view, name="estimate"),
]
