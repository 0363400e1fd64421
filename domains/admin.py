"""Staff screens: projects, deploys, domains (with Re-verify), redirects, certificates, events,
and API keys with the project a key is limited to."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest
from django.template.loader import render_to_string

from domains import tasks
from domains.models import (
    AuditEntry,
    Certificate,
    Deploy,
    Domain,
    DomainEvent,
    Project,
    Redirect,
)
from domains.services.custom_domains import domain_remove
from domains.services.keys import key_create, key_scopes_clean
from domains.services.projects import (
    project_audited_fields,
    project_changes_record,
    project_delete,
    project_set_primary,
    validate_primary,
)
from domains.services.redirects import redirect_delete, redirect_save, validate_redirect
from petstore.apikeys.admin import ApiKeyAddForm, ApiKeyAdmin
from petstore.apikeys.models import ApiKey
from petstore.apikeys.services import IssuedKey


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
        before = project_audited_fields(obj) if change else None
        super().save_model(request, obj, form, change)
        project_changes_record(project=obj, before=before)
        if chosen != obj.primary_domain:
            project_set_primary(project=obj, domain=chosen, actor=request.user)

    def delete_model(self, request, obj: Project) -> None:
        project_delete(project=obj)

    def delete_queryset(self, request, queryset):
        for project in queryset:
            project_delete(project=project)


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
    list_filter = ("ca_directory", "issuer")
    search_fields = ("san", "serial")
    readonly_fields = (
        "domain",
        "ca_directory",
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


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    """Read-only for everyone, superusers included: the rows are written by the services
    and the database refuses to change them (migration domains.0022)."""

    list_display = (
        "at", "project_id", "actor_type", "actor_username", "actor_key_prefix", "action",
        "target", "ip",
    )  # fmt: skip
    list_filter = ("actor_type", "action")
    search_fields = ("target", "actor_username", "actor_key_prefix", "request_id")
    date_hierarchy = "at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: AuditEntry | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: AuditEntry | None = None) -> bool:
        return False


class ProjectApiKeyAddForm(ApiKeyAddForm):
    """The add form with the project a key may be limited to; its scopes are checked
    against the user's role there (or on all their projects)."""

    project = forms.ModelChoiceField(
        Project.objects.order_by("slug"),
        required=False,
        empty_label="All of the user's projects",
        help_text="Limit the key to one project the user is a member of.",
    )

    field_order = ["user", "name", "project", "scopes", "days"]

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        user, chosen = data.get("user"), data.get("project")
        if user is None or "scopes" not in data:
            return data
        project = None
        if chosen is not None:
            project = Project.objects.for_member(user).filter(pk=chosen.pk).first()
            if project is None:
                self.add_error("project", f"{user} is no member of {chosen.slug}.")
                return data
        data["project"] = project  # with the user's role on it
        try:
            data["scopes"] = key_scopes_clean(user=user, project=project, scopes=data["scopes"])
        except ValidationError as exc:
            self.add_error("scopes", exc)
        return data


class ProjectApiKeyAdmin(ApiKeyAdmin):
    """The platform's key admin, with the project of a key limited to one, issued through
    domains/services/keys.py (a key never exceeds its user's role)."""

    add_form = ProjectApiKeyAddForm
    list_display = [*ApiKeyAdmin.list_display[:3], "project", *ApiKeyAdmin.list_display[3:]]
    list_select_related = ["user", "project_binding__project"]
    readonly_fields = ["project", *ApiKeyAdmin.readonly_fields]

    @admin.display(description="project")
    def project(self, obj: ApiKey) -> str:
        binding = getattr(obj, "project_binding", None)
        return binding.project.slug if binding is not None else "all of the user's"

    def issue(self, request: HttpRequest, form: forms.ModelForm) -> IssuedKey:
        data = form.cleaned_data
        return key_create(
            user=data["user"],
            name=data["name"],
            project=data["project"],
            scopes=data["scopes"],
            days=data["days"],
        )


admin.site.unregister(ApiKey)
admin.site.register(ApiKey, ProjectApiKeyAdmin)
