"""Settings → Notifications, webhooks: a project's endpoints (add, rotate the secret,
delete) and each endpoint's delivery log with Redeliver. The secret is shown once, in the
answer to the POST that made it (never stored in the session, never shown again)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from domains import access, tasks
from domains.access import Permission
from domains.dashboard.forms import NotificationsForm, WebhookForm
from domains.dashboard.lookups import endpoint_view
from domains.models import Delivery, Project, WebhookEndpoint
from domains.selectors import email_choices, webhook_deliveries, webhook_endpoints
from domains.services import webhooks

# Rows of a delivery log shown (newest first).
LOG_ROWS = 100


def _writable(request):
    """The user's projects whose webhooks their role lets them change."""
    return Project.objects.for_member(
        request.user, roles=access.roles_with(Permission.WEBHOOKS_WRITE)
    )


def settings_context(request, form: WebhookForm | None = None) -> dict[str, Any]:
    """The webhook part of Settings → Notifications: each project's endpoints, the form."""
    mine = Project.objects.for_member(request.user).order_by("name", "slug")
    projects = [(project, list(webhook_endpoints(project))) for project in mine]
    return {
        "webhook_projects": projects,
        "webhook_form": form or WebhookForm(projects=_writable(request)),
    }


# The session remembers which endpoint's secret the next visit to its secret page shows,
# and whether it was just made: never the secret itself, which the page reads from the row.
SHOW_SECRET = "webhook_secret_once"


def _to_secret_page(request, endpoint: WebhookEndpoint, *, made: bool):
    """After the POST that made or rotated the secret, a redirect to the page that shows it
    once: a reload of that page shows it no more, and posts nothing again."""
    request.session[SHOW_SECRET] = [endpoint.pk, made]
    return redirect("dashboard:webhook_secret", pk=endpoint.pk)


@login_required
@require_POST
def webhook_add(request):
    form = WebhookForm(request.POST, projects=_writable(request))
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
            return _to_secret_page(request, created.endpoint, made=True)
    else:
        status = 400
    email_form = NotificationsForm(initial={"email_events": sorted(email_choices(request.user.pk))})
    return render(
        request,
        "domains/notification_settings.html",
        {"form": email_form, **settings_context(request, form)},
        status=status,
    )


@endpoint_view(Permission.WEBHOOKS_READ)
@require_GET
def webhook_detail(request, endpoint: WebhookEndpoint):
    deliveries = webhook_deliveries(endpoint)[:LOG_ROWS]
    return render(
        request,
        "domains/webhook_detail.html",
        {"endpoint": endpoint, "deliveries": deliveries},
    )


@endpoint_view(Permission.WEBHOOKS_WRITE)
@require_POST
def webhook_rotate(request, endpoint: WebhookEndpoint):
    rotated = webhooks.endpoint_rotate_secret(endpoint=endpoint)
    return _to_secret_page(request, rotated.endpoint, made=False)


@endpoint_view(Permission.WEBHOOKS_WRITE)
@require_GET
def webhook_secret(request, endpoint: WebhookEndpoint):
    """The signing secret, shown on the first visit after it was made or rotated."""
    shown = request.session.get(SHOW_SECRET)
    once = isinstance(shown, list) and len(shown) == 2 and shown[0] == endpoint.pk
    if once:
        del request.session[SHOW_SECRET]
    return render(
        request,
        "domains/webhook_secret.html",
        {
            "endpoint": endpoint,
            "secret": endpoint.secret if once else None,
            "made": bool(once and shown[1]),
        },
    )


@endpoint_view(Permission.WEBHOOKS_WRITE)
@require_http_methods(["GET", "POST"])
def webhook_delete(request, endpoint: WebhookEndpoint):
    """GET asks to confirm; the confirmation's POST deletes."""
    if request.method == "GET":
        return render(
            request,
            "domains/confirm_delete.html",
            {
                "what": _("the webhook endpoint %(url)s") % {"url": endpoint.url},
                "effect": _("Its delivery log goes with it; events are no longer sent there."),
                "cancel": reverse("dashboard:webhook_detail", kwargs={"pk": endpoint.pk}),
            },
        )
    webhooks.endpoint_delete(endpoint=endpoint)
    messages.success(request, _("Webhook endpoint %(url)s deleted.") % {"url": endpoint.url})
    return redirect("dashboard:notification_settings")


@endpoint_view(Permission.DELIVERIES_REDELIVER)
@require_POST
def webhook_redeliver(request, endpoint: WebhookEndpoint, delivery_pk: int):
    delivery: Delivery = get_object_or_404(webhook_deliveries(endpoint), pk=delivery_pk)
    try:
        steps = webhooks.delivery_redeliver(delivery=delivery)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        tasks.enqueue(steps)
        messages.success(request, _("Redelivery queued: it is sent within seconds."))
    return redirect("dashboard:webhook_detail", pk=endpoint.pk)
