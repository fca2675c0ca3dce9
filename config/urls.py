from csp.decorators import csp_update
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from accounts import views as account_views
from config import views as config_views
from playground.views import public as playground_public

api_v1 = [
    path("auth/", include("accounts.api_urls")),
    path("", include("questionbank.api_urls")),
    path("", include("playground.api_urls")),
    path("", include("reviews.api_urls")),
    path("", include("evals.api_urls")),
    path("", include("critique.api_urls")),
    path("", include("changes.api_urls")),
    path("", include("webhooks.api_urls")),
]

urlpatterns = [
    # The API first: applications call it on their hot path, and resolving walks this list.
    path("api/v1/", include(api_v1)),
    path("", account_views.home, name="home"),
    path("accounts/", include("accounts.urls")),
    path("questions/", include("questionbank.urls")),
    path("playground/", include("playground.urls")),
    path("reviews/", include("reviews.urls")),
    path("evals/", include("evals.urls")),
    path("critique/", include("critique.urls")),
    path("changes/", include("changes.urls")),
    path("webhooks/", include("webhooks.urls")),
    path("s/resume", playground_public.shared_resume_view, name="shared-resume"),
    path("s/<str:token>", playground_public.shared_view, name="shared-page"),
    path("s/<str:token>/login", playground_public.shared_login_view, name="shared-login"),
    path("s/<str:token>/copy", playground_public.shared_copy_view, name="shared-copy"),
    path("admin/", admin.site.urls),
    # Browsers ask for /favicon.ico whatever the page says; point them at the static icon.
    path("favicon.ico", config_views.favicon),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path(
        "api/docs/",
        # The Swagger UI page ships one inline <style> block (no user content on that page);
        # its script is served as a file by the split view, so script-src stays 'self'.
        csp_update({"style-src": ["'unsafe-inline'"]})(
            SpectacularSwaggerSplitView.as_view(url_name="schema")
        ),
        name="swagger-ui",
    ),
]

handler404 = "config.views.not_found"
