"""Dashboard views: thin. Each one finds the member's object (a project they are no
member of is a 404; one whose role does not allow the view, a 403: domains/access.py),
validates a form, calls one service from domains/services/ (or reads through
domains/selectors.py) and renders or redirects. The rules and the audit trail live in
the services."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db.models import Count
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from domains import tasks
from domains.access import Permission
from domains.choices import CertCode
from domains.dashboard import webhooks
from domains.dashboard.forms import (
    DomainAddForm,
    NotificationsForm,
    PrimaryForm,
    RedirectForm,
    RemoveForm,
)
from domains.dashboard.lookups import domain_view, project_view
from domains.dashboard.presenters import (
    dns_position,
    domain_activity,
    domain_status_payload,
    project_page_context,
)
from domains.models import Domain, Project, Redirect
from domains.selectors import (
    domain_last_told,
    domain_troubleshoot,
    email_choices,
    is_contested,
    project_domains_structure,
    removal_effects,
)
from domains.services import custom_domains, notifications, projects, redirects

# --- lookups: domains/dashboard/lookups.py --------------------------------------


def _redirect_entry(project: Project, pk: int) -> Redirect:
    return get_object_or_404(Redirect.objects.filter(project=project), pk=pk)


def _to_project(project: Project):
    return redirect("dashboard:project_domains", slug=project.slug)


def _to_domain(domain: Domain):
    return redirect("dashboard:domain_detail", slug=domain.project.slug, hostname=domain.hostname)


# --- screens -----------------------------------------------------------------


@login_required
@require_GET
def home(request):
    projects = (
        Project.objects.for_member(request.user)
        .annotate(domain_count=Count("domains"))
        .order_by("name")
    )
    return render(request, "domains/home.html", {"projects": projects})


@project_view(Permission.DOMAINS_READ)
@require_GET
def project_domains(request, project):
    return render(request, "domains/project_domains.html", project_page_context(project))


@project_view(Permission.DOMAINS_ADD)
@require_http_methods(["GET", "POST"])
def domain_add(request, project):
    form = DomainAddForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            domain = custom_domains.domain_add(
                project=project, hostname=form.cleaned_data["hostname"], actor=request.user
            )
        except ValidationError as exc:
            form.add_error("hostname", exc)
        else:
            messages.success(
                request,
                _("%(hostname)s was added. Create the DNS record below, then choose Verify.")
                % {"hostname": domain.hostname_unicode},
            )
            return _to_domain(domain)
    context = project_page_context(project, add_form=form)
    status = 400 if form.errors else 200
    return render(request, "domains/project_domains.html", context, status=status)


@domain_view(Permission.DOMAINS_READ)
@require_GET
def domain_detail(request, domain):
    troubleshooting = None
    if domain.needs_troubleshooting:
        # The spec's steps with what the last checks found; Re-verify runs them again.
        troubleshooting = domain_troubleshoot(domain=domain)
    context = {
        "project": domain.project,
        "domain": domain,
        "status": domain_status_payload(domain),
        "certificate": domain.certificate,
        "records": domain.dns_records(contested=is_contested(domain)),
        "dns_position": dns_position(domain),
        "troubleshooting": troubleshooting,
        "ca_refused": domain.cert_code == CertCode.CA_REFUSED,
        **domain_activity(domain),
        # When the owner was last told about this domain (its last mailed event).
        "last_told": domain_last_told(domain),
    }
    return render(request, "domains/domain_detail.html", context)


@domain_view(Permission.DOMAINS_READ)
@require_GET
def domain_status(request, domain):
    return JsonResponse(domain_status_payload(domain))


@domain_view(Permission.DOMAINS_VERIFY)
@require_POST
def domain_verify(request, domain):
    try:
        tasks.request_check(domain=domain, actor=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        # Said the same whether the broker took the task or not: the request is
        # recorded either way, and the sweep runs any check that was never queued. The
        # page's Status line says what happens now; the flash only confirms the click.
        messages.info(request, _("Check queued."))
    return _to_domain(domain)


@domain_view(Permission.DOMAINS_REMOVE)
@require_http_methods(["GET", "POST"])
def domain_remove(request, domain):
    project = domain.project
    form = RemoveForm(request.POST or None, project=project, domain=domain)
    if request.method == "POST" and form.is_valid():
        target = form.cleaned_data["redirect_to"]
        try:
            if form.redirect_instead:
                # Keep the domain and send its traffic on: inbound links keep working.
                redirects.redirect_instead_of_removal(
                    project=project, domain=domain, to_domain=target, actor=request.user
                )
                messages.success(
                    request,
                    _("%(hostname)s now redirects to %(target)s (301).")
                    % {"hostname": domain.hostname_unicode, "target": target.hostname_unicode},
                )
                return _to_project(project)
            custom_domains.domain_remove(domain=domain, actor=request.user)
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(
                request,
                _("%(hostname)s was removed and no longer serves traffic.")
                % {"hostname": domain.hostname_unicode},
            )
            return _to_project(project)
    existing = Redirect.objects.filter(from_domain=domain).select_related("to_domain").first()
    context = {
        "project": project,
        "domain": domain,
        "form": form,
        "existing_redirect": existing,
        "effects": removal_effects(domain),
    }
    return render(
        request, "domains/domain_remove.html", context, status=400 if form.errors else 200
    )


@project_view(Permission.PRIMARY_SET)
@require_POST
def primary_set(request, project):
    form = PrimaryForm(request.POST, project=project)
    if form.is_valid():
        domain = form.cleaned_data["domain"]
        try:
            projects.project_set_primary(project=project, domain=domain, actor=request.user)
        except ValidationError as exc:
            form.add_error("domain", exc)
        else:
            name = domain.hostname_unicode if domain else project.platform_host
            messages.success(request, _("The primary domain is now %(name)s.") % {"name": name})
            return _to_project(project)
    context = project_page_context(project, primary_form=form)
    return render(request, "domains/project_domains.html", context, status=400)


def _redirect_form_view(request, project, entry=None):
    initial = {}
    if entry is not None:
        initial = {
            "from_domain": entry.from_domain,
            "to_domain": entry.to_domain,
            "status": entry.status,
        }
    elif request.GET.get("from"):
        initial["from_domain"] = project.domains.filter(hostname=request.GET["from"]).first()
    form = RedirectForm(request.POST or None, project=project, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            redirects.redirect_save(
                project=project,
                from_domain=form.cleaned_data["from_domain"],
                to_domain=form.cleaned_data["to_domain"],
                status=form.cleaned_data["status"],
                redirect=entry,
                actor=request.user,
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, _("The redirect was saved."))
            return _to_project(project)
    return render(
        request,
        "domains/redirect_form.html",
        {"project": project, "form": form, "entry": entry},
        status=400 if form.errors else 200,
    )


@project_view(Permission.REDIRECTS_WRITE)
@require_http_methods(["GET", "POST"])
def redirect_add(request, project):
    return _redirect_form_view(request, project)


@project_view(Permission.REDIRECTS_WRITE)
@require_http_methods(["GET", "POST"])
def redirect_edit(request, project, pk):
    return _redirect_form_view(request, project, _redirect_entry(project, pk))


@project_view(Permission.REDIRECTS_WRITE)
@require_http_methods(["GET", "POST"])
def redirect_delete(request, project, pk):
    """GET asks to confirm; the confirmation's POST deletes."""
    if request.method == "GET":
        entry = _redirect_entry(project, pk)
        return render(
            request,
            "domains/confirm_delete.html",
            {
                "project": project,
                "what": (
                    _("the redirect from %(from)s to %(to)s")
                    % {
                        "from": entry.from_domain.hostname_unicode,
                        "to": entry.to_domain.hostname_unicode,
                    }
                ),
                "effect": _("%(hostname)s then serves the project itself.")
                % {"hostname": entry.from_domain.hostname_unicode},
                "cancel": reverse("dashboard:project_domains", kwargs={"slug": project.slug}),
            },
        )
    redirects.redirect_delete(redirect=_redirect_entry(project, pk), actor=request.user)
    messages.success(request, _("The redirect was deleted."))
    return _to_project(project)


@project_view(Permission.DOMAINS_READ)
@require_GET
def project_structure(request, project):
    return JsonResponse({"domains": project_domains_structure(project=project)})


@login_required
@require_http_methods(["GET", "POST"])
def notification_settings(request):
    """Settings → Notifications: which events reach the signed-in user by email."""
    if request.method == "POST":
        form = NotificationsForm(request.POST)
        if form.is_valid():
            try:
                notifications.notification_preference_save(
                    user=request.user, email_events=form.cleaned_data["email_events"]
                )
            except ValidationError as exc:
                form.add_error("email_events", exc)
            else:
                messages.success(request, _("Notification choices saved."))
                return redirect("dashboard:notification_settings")
    else:
        form = NotificationsForm(initial={"email_events": sorted(email_choices(request.user.pk))})
    context = {"form": form, **webhooks.settings_context(request)}
    return render(request, "domains/notification_settings.html", context)
