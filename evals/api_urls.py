from django.urls import path

from . import api

urlpatterns = [
    path(
        "prompts/<int:prompt_id>/testsets/", api.TestSetListCreateApi.as_view(), name="api-testsets"
    ),
    path(
        "prompts/<int:prompt_id>/testsets/import/",
        api.PromptfooImportApi.as_view(),
        name="api-testsets-import",
    ),
    path("testsets/<int:testset_id>/", api.TestSetDetailApi.as_view(), name="api-testset"),
    path(
        "testsets/<int:testset_id>/revisions/",
        api.TestSetReviseApi.as_view(),
        name="api-testset-revise",
    ),
    path(
        "testsets/<int:testset_id>/import/",
        api.TestSetImportApi.as_view(),
        name="api-testset-import",
    ),
    path(
        "testsets/<int:testset_id>/export/",
        api.TestSetExportApi.as_view(),
        name="api-testset-export",
    ),
    path("prompts/<int:prompt_id>/evals/", api.EvaluationListCreateApi.as_view(), name="api-evals"),
    path("evals/<int:evaluation_id>/", api.EvaluationDetailApi.as_view(), name="api-eval"),
    path(
        "evals/<int:evaluation_id>/results/",
        api.EvaluationResultsApi.as_view(),
        name="api-eval-results",
    ),
    path(
        "evals/<int:evaluation_id>/cancel/",
        api.EvaluationCancelApi.as_view(),
        name="api-eval-cancel",
    ),
]
