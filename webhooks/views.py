"""The webhooks page of a prompt (its owner only): register a URL (the secret is shown once,
in the answer to that POST), delete one, see each delivery's attempts, redeliver."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from common.auth import request_actor
from common.exceptions import DomainError, RateLimited
from playground.models import Role

from .pages import webhooks_page_build
from .selectors import delivery_get_for_user, webhook_get_for_user
from .services import delivery_redeliver, webhook_create, webhook_delete


@login_required
def prompt_webhooks_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    page = webhooks_page_build(user=request.user, prompt_id=prompt_id)
    context: dict[str, object] = {"page": page, "form": {"url": "", "events": []}}
    status = 200
    if request.method == "POST":
        url = request.POST.get("url", "")
        events = request.POST.getlist("events")
        try:
            created = webhook_create(
                actor=request_actor(request),
                prompt=page.prompt,
                role=Role.OWNER,
                url=url,
                events=events,
            )
        except RateLimited:
            raise
        except DomainError as error:
            context.update(error=error.message, form={"url": url, "events": events})
            status = 400
        else:
            # Rendered, not redirected: the secret is in this answer and nowhere else.
            page = webhooks_page_build(user=request.user, prompt_id=prompt_id)
            context.update(page=page, created=created.webhook, secret=created.secret)
            status = 201
    return render(request, "webhooks/prompt_webhooks.html", context, status=status)


@login_required
@require_POST
def webhook_delete_view(request: HttpRequest, webhook_id: int) -> HttpResponse:
    webhook = webhook_get_for_user(user=request.user, webhook_id=webhook_id)
    prompt_id = webhook.prompt_id
    webhook_delete(actor=request_actor(request), webhook=webhook)
    messages.success(request, "Webhook deleted.")
    return redirect("webhooks:prompt", prompt_id)


@login_required
@require_POST
def delivery_redeliver_view(request: HttpRequest, delivery_id: int) -> HttpResponse:
    delivery = delivery_get_for_user(user=request.user, delivery_id=delivery_id)
    again = delivery_redeliver(actor=request_actor(request), delivery=delivery)
    messages.success(request, f"Delivery #{delivery.pk} queued again as #{again.pk}.")
    return redirect("webhooks:prompt", delivery.webhook.prompt_id)
