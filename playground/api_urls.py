from django.urls import include, path

from .api import export, fetch, prompts, sharing, texts, uploads
from .runs import api as runs

urlpatterns = [
    path("uploads/", uploads.UploadCreateApi.as_view(), name="api-uploads"),
    path("uploads/put/<str:token>/", uploads.UploadPutApi.as_view(), name="api-upload-put"),
    path("prompts/<int:prompt_id>/links/", sharing.LinkListCreateApi.as_view(), name="api-links"),
    path("links/<int:link_id>/", sharing.LinkRevokeApi.as_view(), name="api-link-revoke"),
    path(
        "prompts/<int:prompt_id>/grants/", sharing.GrantListCreateApi.as_view(), name="api-grants"
    ),
    path(
        "prompts/<int:prompt_id>/grants/<str:username>/",
        sharing.GrantRevokeApi.as_view(),
        name="api-grant-revoke",
    ),
    path(
        "prompts/<int:prompt_id>/access-log/", sharing.AccessLogApi.as_view(), name="api-access-log"
    ),
    path("shared/<str:token>/", sharing.SharedVersionApi.as_view(), name="api-shared"),
    path("shared/<str:token>/text/", texts.SharedTextApi.as_view(), name="api-shared-text"),
    path(
        "shared/<str:token>/text/download/",
        texts.SharedTextDownloadApi.as_view(),
        name="api-shared-text-download",
    ),
    path("prompts/", prompts.PromptListCreateApi.as_view(), name="api-prompt-list"),
    path("prompts/<int:prompt_id>/", prompts.PromptDetailApi.as_view(), name="api-prompt-detail"),
    path(
        "prompts/<int:prompt_id>/versions/",
        prompts.PromptVersionListCreateApi.as_view(),
        name="api-prompt-versions",
    ),
    # `prompts/<id>/versions/<number>/`: a version by its number (the module says why).
    path("", include("playground.api.numbers")),
    path(
        "prompts/<int:prompt_id>/labels/", prompts.LabelListCreateApi.as_view(), name="api-labels"
    ),
    path(
        "prompts/<int:prompt_id>/labels/<slug:name>/",
        prompts.LabelMoveApi.as_view(),
        name="api-label-move",
    ),
    path(
        "prompts/<int:prompt_id>/labels/<slug:name>/version/",
        fetch.label_version_view,
        name="api-label-version",
    ),
    path("versions/<int:version_id>/", fetch.version_detail_view, name="api-version-detail"),
    path(
        "versions/<int:version_id>/text/", texts.VersionTextApi.as_view(), name="api-version-text"
    ),
    path(
        "versions/<int:version_id>/text/download/",
        texts.VersionTextDownloadApi.as_view(),
        name="api-version-text-download",
    ),
    path(
        "versions/<int:version_id>/diff/", prompts.VersionDiffApi.as_view(), name="api-version-diff"
    ),
    path(
        "versions/<int:version_id>/export/",
        export.VersionExportApi.as_view(),
        name="api-version-export",
    ),
    path(
        "versions/<int:version_id>/revert/",
        prompts.VersionRevertApi.as_view(),
        name="api-version-revert",
    ),
]

urlpatterns += [
    path(
        "versions/<int:version_id>/runs/",
        runs.VersionRunListCreateApi.as_view(),
        name="api-version-runs",
    ),
    path("runs/<int:run_id>/", runs.RunDetailApi.as_view(), name="api-run-detail"),
    path("runs/<int:run_id>/request/", runs.RunRequestApi.as_view(), name="api-run-request"),
    path("runs/<int:run_id>/stream/", runs.RunStreamApi.as_view(), name="api-run-stream"),
    path("runs/<int:run_id>/cancel/", runs.RunCancelApi.as_view(), name="api-run-cancel"),
    path("runs/<int:run_id>/continue/", runs.RunContinueApi.as_view(), name="api-run-continue"),
]
