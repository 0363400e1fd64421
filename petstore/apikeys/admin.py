from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest

from petstore.apikeys.models import ApiKey
from petstore.apikeys.services import api_key_issue, api_key_revoke


class RevokedFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("active", "Active"), ("revoked", "Revoked")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "active":
            return queryset.filter(revoked_at__isnull=True)
        if self.value() == "revoked":
            return queryset.filter(revoked_at__isnull=False)
        return queryset


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["display_prefix", "name", "user", "created_at", "last_used_at", "revoked_at"]
    list_filter = [RevokedFilter, "created_at"]
    search_fields = ["prefix", "name", "user__username"]
    list_select_related = ["user"]
    readonly_fields = ["display_prefix", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke"]

    def get_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> tuple[str, ...]:
        if obj is None:
            return ("user", "name")  # the key itself is generated on save
        return ("user", "name", *self.readonly_fields)

    def get_readonly_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> list[str]:
        return [*self.readonly_fields, "user"] if obj else []

    def save_model(self, request: HttpRequest, obj: ApiKey, form: ModelForm, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        issued = api_key_issue(user=obj.user, name=obj.name)
        obj.pk = issued.api_key.pk
        obj.__dict__.update(issued.api_key.__dict__)
        messages.warning(
            request,
            f"New API key for {obj.user}: {issued.plaintext} — copy it now, "
            "it is not stored and will not be shown again.",
        )

    def has_delete_permission(self, request: HttpRequest, obj: ApiKey | None = None) -> bool:
        return False  # revoke instead: keeps the audit trail (created, last used)

    @admin.action(description="Revoke selected API keys")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        revoked = sum(api_key_revoke(api_key=key) for key in queryset)
        self.message_user(request, f"Revoked {revoked} API key(s).", messages.SUCCESS)
