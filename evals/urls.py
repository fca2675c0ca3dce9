from django.urls import path

from . import views

app_name = "evals"

urlpatterns = [
    path("prompt/<int:prompt_id>/", views.prompt_evals_view, name="prompt"),
    path("testsets/<int:testset_id>/", views.testset_view, name="testset"),
    path("from-run/<int:run_id>/", views.run_to_testcase_view, name="from-run"),
    path("<int:evaluation_id>/", views.evaluation_view, name="evaluation"),
    path("<int:evaluation_id>/cancel", views.evaluation_cancel_view, name="cancel"),
    path(
        "<int:evaluation_id>/export.<str:fmt>",
        views.evaluation_export_view,
        name="export",
    ),
]
