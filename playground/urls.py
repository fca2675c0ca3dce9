from django.urls import path

from .runs import views as run_views
from .views import labels, prompts, sharing, versions

app_name = "playground"
urlpatterns = [
    path("", prompts.prompt_list_view, name="list"),
    path("new/", prompts.prompt_new_view, name="new"),
    path("p/<int:prompt_id>/", prompts.prompt_detail_view, name="prompt"),
    # Addresses name a version by its number (v7 is "v7" on screen); `?v=<id>` still works.
    path("p/<int:prompt_id>/v<int:number>/", prompts.prompt_detail_view, name="version"),
    path("p/<int:prompt_id>/tree/", prompts.prompt_tree_view, name="tree"),
    path("p/<int:prompt_id>/save/", versions.prompt_save_view, name="save"),
    path("p/<int:prompt_id>/update/", prompts.prompt_update_view, name="update"),
    path("p/<int:prompt_id>/diff/", versions.version_diff_view, name="diff"),
    path("p/<int:prompt_id>/diff/rows/", versions.version_diff_rows_view, name="diff-rows"),
    path(
        "p/<int:prompt_id>/revert/<int:version_id>/",
        versions.version_revert_view,
        name="revert",
    ),
]

urlpatterns += [
    path("p/<int:prompt_id>/labels/", labels.label_move_view, name="label-move"),
    path(
        "p/<int:prompt_id>/labels/<slug:name>/protect/",
        labels.label_protect_view,
        name="label-protect",
    ),
]

urlpatterns += [
    path("p/<int:prompt_id>/share/", sharing.share_panel_view, name="share"),
    path("p/<int:prompt_id>/share/links/", sharing.share_link_create_view, name="link-create"),
    path(
        "p/<int:prompt_id>/share/links/<int:link_id>/revoke/",
        sharing.share_link_revoke_view,
        name="link-revoke",
    ),
    path("p/<int:prompt_id>/share/grants/", sharing.grant_create_view, name="grant-create"),
    path(
        "p/<int:prompt_id>/share/grants/<str:username>/revoke/",
        sharing.grant_revoke_view,
        name="grant-revoke",
    ),
]

urlpatterns += [
    path("runs/<int:run_id>/", run_views.run_detail_view, name="run"),
    path("runs/<int:run_id>/card/", run_views.run_card_view, name="run-card"),
    path("runs/<int:run_id>/cancel/", run_views.run_cancel_view, name="run-cancel"),
    path("runs/<int:run_id>/continue/", run_views.run_continue_view, name="run-continue"),
    path("v/<int:version_id>/runs/", run_views.run_history_view, name="run-history"),
    path("v/<int:version_id>/run/", run_views.run_start_view, name="run-start"),
    path("p/<int:prompt_id>/compare/", run_views.compare_view, name="compare"),
    path("p/<int:prompt_id>/compare/diff/", run_views.compare_diff_view, name="compare-diff"),
]
