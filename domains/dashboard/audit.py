"""The project's audit log page: every change, newest first, filtered as the API's
`GET .../audit-log` is (domains/filters.py), a page at a time."""

from __future__ import annotations

from urllib.parse import urlencode

from django.shortcuts import render
from django.views.decorators.http import require_GET

from domains.access import Permission
from domains.choices import AuditAction
from domains.dashboard.lookups import project_view
from domains.filters import AuditEntryFilter
from domains.models import ActorType, AuditEntry

PAGE_SIZE = 50


@project_view(Permission.AUDIT_READ)
@require_GET
def audit_log(request, project):
    found = AuditEntryFilter(request.GET, queryset=AuditEntry.objects.filter(project_id=project.pk))
    entries: list[AuditEntry] = []
    older = ""
    if found.is_valid():
        rows = found.qs.order_by("-id")
        before = request.GET.get("before", "")
        if before.isdigit():
            rows = rows.filter(id__lt=int(before))
        entries = list(rows[: PAGE_SIZE + 1])
        if len(entries) > PAGE_SIZE:
            entries = entries[:PAGE_SIZE]
            kept = {k: v for k, v in request.GET.items() if k != "before" and v}
            older = "?" + urlencode({**kept, "before": entries[-1].pk})
    context = {
        "project": project,
        "filters": found.form,
        "entries": entries,
        "older": older,
        "actions": AuditAction.choices,
        "actor_types": ActorType.choices,
    }
    return render(
        request, "domains/audit_log.html", context, status=200 if found.is_valid() else 400
    )
