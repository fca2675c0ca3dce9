from datetime import timedelta
from typing import Any

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from common.auth import request_actor
from common.exceptions import RateLimited

from .forms import SignUpForm
from .models import USERNAME_MAX_CHARS
from .selectors import api_token_get_for_user, api_token_list_for_user
from .services import api_token_create, api_token_revoke
from .throttle import (
    login_failure_record,
    login_throttle_check,
    signup_attempt_record,
    signup_throttle_check,
)


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html")


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("home")
    if request.method == "POST":
        signup_throttle_check(request=request)  # 429 with Retry-After (DomainErrorMiddleware)
        signup_attempt_record(request=request)
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("home")
    return render(
        request, "registration/signup.html", {"form": form}, status=400 if form.errors else 200
    )


def _posted_username(request: HttpRequest) -> str:
    """The username a log-in form posted, as the throttle counts it."""
    return str(request.POST.get("username", ""))[:USERNAME_MAX_CHARS]


class ThrottledLoginView(LoginView):
    """Django's log-in, with failed attempts throttled per account and per client address."""

    redirect_authenticated_user = True

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        username = _posted_username(request)
        try:
            login_throttle_check(request=request, username=username)
        except RateLimited as error:
            form = self.get_form()
            response = self.render_to_response(
                self.get_context_data(form=form, throttle_message=error.message), status=429
            )
            response["Retry-After"] = str(error.retry_after)
            return response
        return super().post(request, *args, **kwargs)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        """With `?next=`, why the visitor is here (issue 33: a bare log-in page said nothing)."""
        context = super().get_context_data(**kwargs)
        next_url = self.get_redirect_url()
        if next_url == reverse("shared-resume"):
            context["login_reason"] = (
                "The prompt shared through this link is only for people with a Redline account. "
                "Log in, or sign up, and you will be taken straight to it."
            )
        elif next_url:
            context["login_reason"] = (
                "That page is only for signed-in people. Log in, or sign up, and you will be "
                "taken back to it."
            )
        return context

    def form_invalid(self, form: AuthenticationForm) -> HttpResponse:
        username = _posted_username(self.request)
        login_failure_record(request=self.request, username=username)
        return super().form_invalid(form)


KEY_EXPIRY_CHOICES = (("", "Never"), ("30", "30 days"), ("90", "90 days"), ("365", "1 year"))


@login_required
@require_http_methods(["GET", "POST"])
def api_keys_view(request: HttpRequest) -> HttpResponse:
    """The account's API keys: list, create (shown once), revoke."""
    new_key = ""
    error = ""
    if request.method == "POST":
        days = request.POST.get("expires_in_days", "")
        if days not in {value for value, _ in KEY_EXPIRY_CHOICES}:
            error = "Choose an expiry from the list."
        else:
            expires_at = timezone.now() + timedelta(days=int(days)) if days else None
            _, new_key = api_token_create(actor=request_actor(request), expires_at=expires_at)
    return render(
        request,
        "accounts/api_keys.html",
        {
            "tokens": api_token_list_for_user(user=request.user),
            "new_key": new_key,
            "error": error,
            "expiry_choices": KEY_EXPIRY_CHOICES,
            "now": timezone.now(),
        },
        status=400 if error else 200,
    )


@login_required
@require_POST
def api_key_revoke_view(request: HttpRequest, token_id: int) -> HttpResponse:
    token = api_token_get_for_user(user=request.user, token_id=token_id)
    api_token_revoke(actor=request_actor(request), token=token)
    messages.success(request, f"Revoked the key {token.key_prefix}…; it no longer works.")
    return redirect("api-keys")
