from django.urls import path

from . import views

app_name = "changes"

urlpatterns = [
    path("<int:request_id>/", views.request_view, name="request"),
]
