"""Settings → Notifications, webhooks: a project's endpoints (add, rotate the secret,
delete) and each endpoint's delivery log with Redeliver. The secret is shown once, in the
answer to the POST that made it (never stored in the session, never shown again)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from domains import tasks
from domains.dashboard.forms import NotificationsForm, WebhookForm
from domains.models import Delivery, Project, WebhookEndpoint
from domains.selectors import email_choices, webhook_deliveries, webhook_endpoints
from domains.services import webhooks

# Rows of a delivery log shown (newest first).
LOG_ROWS = 100


def _endpoint(request, pk: int) -> WebhookEndpoint:
    owned = WebhookEndpoint.objects.filter(project__in=Project.objects.for_owner(request.user))
    return get_object_or_404(owned.select_related("project"), pk=pk)


def settings_context(request, form: WebhookForm | None = None) -> dict[str, Any]:
    """The webhook part of Settings → Notifications: each project's endpoints, the form."""
    owned = Project.objects.for_owner(request.user).order_by("name", "slug")
    projects = [(project, list(webhook_endpoints(project))) for project in owned]
    return {
        "webhook_projects": projects,
        "webhook_form": form or WebhookForm(projects=owned),
    }


def _secret_page(request, endpoint: WebhookEndpoint, secret: str, made: bool):
    return render(
        request,
        "domains/webhook_secret.html",
        {"endpoint": endpoint, "secret": secret, "made": made},
    )


@login_required
@require_POST
def webhook_add(request):
    owned = Project.objects.for_owner(request.user)
    form = WebhookForm(request.POST, projects=owned)
    if form.is_valid():
        try:
            created = webhooks.endpoint_create(
                project=form.cleaned_data["project"],
                url=form.cleaned_data["url"],
                events=form.cleaned_data["events"],
            )
        except ValidationError as exc:
            code = exc.error_list[0].code
            field = "events" if code in ("webhook_events",) else "url"
            form.add_error(field, exc)
            status = 429 if code == "webhook_create_limit" else 400
        else:
            return _secret_page(request, created.endpoint, created.secret, made=True)
    else:
        status = 400
    email_form = NotificationsForm(initial={"email_events": sorted(email_choices(request.user.pk))})
    return render(
        request,
        "domains/notification_settings.html",
        {"form": email_form, **settings_context(request, form)},
        status=status,
    )


@login_required
@require_GET
def webhook_detail(request, pk: int):
    endpoint = _endpoint(request, pk)
    deliveries = webhook_deliveries(endpoint)[:LOG_ROWS]
    return render(
        request,
        "domains/webhook_detail.html",
        {"endpoint": endpoint, "deliveries": deliveries},
    )


@login_required
@require_POST
def webhook_rotate(request, pk: int):
    endpoint = _endpoint(request, pk)
    rotated = webhooks.endpoint_rotate_secret(endpoint=endpoint)
    return _secret_page(request, rotated.endpoint, rotated.secret, made=False)


@login_required
@require_POST
def webhook_delete(request, pk: int):
    endpoint = _endpoint(request, pk)
    webhooks.endpoint_delete(endpoint=endpoint)
    messages.success(request, f"Webhook endpoint {endpoint.url} deleted.")
    return redirect("dashboard:notification_settings")


@login_required
@require_POST
def webhook_redeliver(request, pk: int, delivery_pk: int):
    endpoint = _endpoint(request, pk)
    delivery: Delivery = get_object_or_404(webhook_deliveries(endpoint), pk=delivery_pk)
    try:
        steps = webhooks.delivery_redeliver(delivery=delivery)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        tasks.enqueue(steps)
        messages.success(request, "Redelivery queued: it is sent within seconds.")
    return redirect("dashboard:webhook_detail", pk=endpoint.pk)
