"""Staff screens: projects, deploys, domains (with Re-verify), redirects, certificates, events."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest
from django.template.loader import render_to_string

from domains import tasks
from domains.models import Certificate, Deploy, Domain, DomainEvent, Project, Redirect
from domains.services.custom_domains import domain_remove
from domains.services.projects import project_set_primary, validate_primary
from domains.services.redirects import redirect_delete, redirect_save, validate_redirect


class DeployInline(admin.TabularInline):
    model = Deploy
    extra = 0
    fields = ("created_at", "succeeded")
    readonly_fields = ("created_at",)
    show_change_link = True


class ReadOnlyInline(admin.TabularInline):
    """Rows shown for reference only: every field read-only, none deleted from here."""

    extra = 0
    can_delete = False

    def get_readonly_fields(self, request, obj=None):
        return self.fields


class DomainInline(ReadOnlyInline):
    model = Domain
    fields = ("hostname", "state", "check_code", "cert_state")
    show_change_link = True


class ProjectAdminForm(forms.ModelForm):
    """The primary domain obeys the same rules as the dashboard's (projects.validate_primary):
    the choices are the project's own domains, and the rules run before anything is saved."""

    class Meta:
        model = Project
        fields = ("slug", "name", "owner", "plan", "primary_domain")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields.get("primary_domain")
        if isinstance(field, forms.ModelChoiceField):
            field.queryset = Domain.objects.filter(project_id=self.instance.pk or 0)

    def clean(self) -> dict[str, Any] | None:
        data = super().clean() or {}
        primary = data.get("primary_domain")
        if primary is not None and "primary_domain" in self.changed_data:
            try:
                validate_primary(self.instance, primary)
            except ValidationError as refused:
                self.add_error("primary_domain", refused)
        return data


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    form = ProjectAdminForm
    list_display = ("slug", "name", "owner", "plan", "primary_domain", "created_at")
    list_filter = ("plan",)
    search_fields = ("slug", "name", "owner__username")
    raw_id_fields = ("owner",)
    inlines = [DomainInline, DeployInline]

    def save_model(self, request, obj: Project, form: Any, change: bool) -> None:
        # The primary domain changes only through project_set_primary (its rules, its
        # Activity line); the other fields are saved as they are.
        chosen = obj.primary_domain
        obj.primary_domain = Project.objects.get(pk=obj.pk).primary_domain if change else None
        super().save_model(request, obj, form, change)
        if chosen != obj.primary_domain:
            project_set_primary(project=obj, domain=chosen, actor=request.user)


@admin.register(Deploy)
class DeployAdmin(admin.ModelAdmin):
    list_display = ("pk", "project", "succeeded", "created_at")
    list_filter = ("succeeded",)
    search_fields = ("project__slug",)
    raw_id_fields = ("project",)


@admin.action(description="Re-verify (check DNS now and restart the 48-hour window)")
def reverify(modeladmin, request, queryset):
    for domain in queryset.select_related("project"):
        tasks.request_check(domain=domain, actor=request.user)
    modeladmin.message_user(
        request, f"Re-verify queued for {queryset.count()} domain(s).", messages.SUCCESS
    )


class CertificateInline(ReadOnlyInline):
    model = Certificate
    fields = ("serial", "san", "not_before", "not_after")


@admin.register(Domain)
class DomainAdmin(admin.ModelAdmin):
    list_display = (
        "hostname", "project", "state", "check_code", "checked_at", "next_check_at",
        "cert_state", "verified_at",
    )  # fmt: skip
    list_filter = ("state", "cert_state", "check_code", "is_apex")
    search_fields = ("hostname", "project__slug")
    actions = [reverify]
    inlines = [CertificateInline]
    # State changes go through the services (Re-verify, the tasks), never a hand edit, and
    # a claim never moves to another project (that project never proved the name).
    readonly_fields = (
        "project", "verification_token", "failing_since", "check_requested_at",
        "hostname", "is_apex", "state", "check_code", "check_message", "check_expected",
        "check_found", "checked_at", "next_check_at", "check_attempts", "window_started_at",
        "verified_at", "cert_state", "cert_requested_at", "cert_code", "cert_message",
        "created_at", "what_the_dns_says",
    )  # fmt: skip
    # The stored diagnosis is shown as the owner's page shows it, never as raw JSON to edit.
    exclude = ("check_diagnosis",)

    @admin.display(description="What the DNS says")
    def what_the_dns_says(self, obj: Domain) -> str:
        if not obj.check_diagnosis:
            return "Not asked yet: the next check of a domain not live yet asks."
        return render_to_string("domains/_doctor_admin.html", {"domain": obj})

    def has_add_permission(self, request):
        return False  # adding goes through domain_add's rules (dashboard or `adddomain`)

    def delete_model(self, request, obj):
        domain_remove(domain=obj, actor=request.user)

    def delete_queryset(self, request, queryset):
        for domain in queryset.select_related("project"):
            domain_remove(domain=domain, actor=request.user)


class RedirectAdminForm(forms.ModelForm):
    """Staff edits obey the same rules as the dashboard's (redirects.validate_redirect)."""

    class Meta:
        model = Redirect
        fields = ("project", "from_domain", "to_domain", "status")

    def clean(self) -> dict[str, Any] | None:
        data = super().clean() or {}
        project, from_domain, to_domain = (
            data.get("project"),
            data.get("from_domain"),
            data.get("to_domain"),
        )
        if project and from_domain and to_domain:
            existing = self.instance if self.instance.pk else None
            validate_redirect(project, from_domain, to_domain, data.get("status", 0), existing)
        return data


@admin.register(Redirect)
class RedirectAdmin(admin.ModelAdmin):
    form = RedirectAdminForm
    list_display = ("from_domain", "to_domain", "status", "project")
    list_filter = ("status",)
    search_fields = ("from_domain__hostname", "to_domain__hostname", "project__slug")
    raw_id_fields = ("project", "from_domain", "to_domain")

    def save_model(self, request, obj: Redirect, form: Any, change: bool) -> None:
        redirect_save(
            project=obj.project,
            from_domain=obj.from_domain,
            to_domain=obj.to_domain,
            status=obj.status,
            redirect=obj if change else None,
            actor=request.user,
        )

    def delete_model(self, request, obj: Redirect) -> None:
        redirect_delete(redirect=obj, actor=request.user)


@admin.register(Certificate)
class CertificateAdmin(admin.ModelAdmin):
    list_display = ("san", "issuer", "serial", "not_before", "not_after", "renew_after", "domain")
    list_filter = ("issuer",)
    search_fields = ("san", "serial")
    readonly_fields = (
        "domain",
        "issuer",
        "serial",
        "san",
        "not_before",
        "not_after",
        "renew_after",
        "renewal_info_at",
        "pem",
        "created_at",
    )
    exclude = ("key_pem",)

    def has_add_permission(self, request):
        return False


@admin.register(DomainEvent)
class DomainEventAdmin(admin.ModelAdmin):
    list_display = ("created_at", "hostname", "action", "actor", "project")
    list_filter = ("action",)
    search_fields = ("hostname", "project__slug", "message")
    readonly_fields = (
        "project", "domain", "hostname", "actor", "action", "message", "created_at",
    )  # fmt: skip

    def has_delete_permission(self, request: HttpRequest, obj: DomainEvent | None = None) -> bool:
        return False  # the audit trail is kept whole

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
