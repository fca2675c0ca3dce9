from django.contrib.auth import views as auth_views
from django.urls import path

from . import views

urlpatterns = [
    path("signup/", views.signup, name="signup"),
    path("login/", views.ThrottledLoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("keys/", views.api_keys_view, name="api-keys"),
    path("keys/<int:token_id>/revoke/", views.api_key_revoke_view, name="api-key-revoke"),
]
