from __future__ import annotations

from typing import Any
from weakref import WeakKeyDictionary

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.cache import add_never_cache_headers

from petstore.apikeys import issuetokens
from petstore.apikeys.models import DEFAULT_KEY_DAYS, MAX_KEY_DAYS, ApiKey
from petstore.apikeys.scopes import Scope
from petstore.apikeys.services import IssuedKey, api_key_issue, api_key_revoke


class ApiKeyAddForm(forms.ModelForm):
    """The add form: who, a label, the scopes and the days until the key ends."""

    scopes = forms.MultipleChoiceField(
        choices=Scope.choices, widget=forms.CheckboxSelectMultiple, required=True
    )
    days = forms.IntegerField(
        min_value=1,
        max_value=MAX_KEY_DAYS,
        initial=DEFAULT_KEY_DAYS,
        help_text=f"Days until the key ends (at most {MAX_KEY_DAYS}).",
    )

    class Meta:
        model = ApiKey
        fields = ["user", "name", "scopes"]


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
    list_display = [
        "display_prefix", "name", "user", "scopes_shown", "created_at", "expires_at",
        "last_used_at", "last_used_ip", "revoked_at",
    ]  # fmt: skip
    list_filter = [RevokedFilter, "created_at", "expires_at"]
    search_fields = ["prefix", "name", "user__username"]
    list_select_related = ["user"]
    readonly_fields = [
        "display_prefix", "scopes_shown", "created_at", "expires_at", "last_used_at",
        "last_used_ip", "expiry_told_at", "revoked_at",
    ]  # fmt: skip
    actions = ["revoke"]
    add_form_template = "admin/apikeys/apikey/add_form.html"
    add_form = ApiKeyAddForm

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The key issued by a request, from save_model to response_add: held in memory for
        # the request only, never in a cookie, a message or the session.
        self._issued: WeakKeyDictionary[HttpRequest, IssuedKey] = WeakKeyDictionary()

    def get_form(
        self, request: HttpRequest, obj: ApiKey | None = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        if obj is None:
            kwargs["form"] = self.add_form
        return super().get_form(request, obj, change, **kwargs)

    def get_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> tuple[str, ...]:
        if obj is None:
            return tuple(self.add_form.base_fields)  # the key itself is generated on save
        return ("user", "name", *self.readonly_fields)

    @admin.display(description="scopes")
    def scopes_shown(self, obj: ApiKey) -> str:
        return " ".join(obj.scopes)

    def issue(self, request: HttpRequest, form: forms.ModelForm) -> IssuedKey:
        """The key the add form asks for (a subclass may issue it another way)."""
        data = form.cleaned_data
        return api_key_issue(
            user=data["user"], name=data["name"], scopes=data["scopes"], days=data["days"]
        )

    def get_readonly_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> list[str]:
        return [*self.readonly_fields, "user"] if obj else []

    def save_model(self, request: HttpRequest, obj: ApiKey, form: ModelForm, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        issued = self.issue(request, form)
        obj.pk = issued.api_key.pk
        obj.__dict__.update(issued.api_key.__dict__)
        self._issued[request] = issued
        issuetokens.issue_token_spend(request)  # the same form sent again issues nothing

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """The add form carries a one-time token; a form whose token was used (sent again)
        or is unknown issues nothing and says so."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        if request.method == "POST":
            if not issuetokens.issue_token_open(request):
                return self._issued_page(request, None, status=409)
            token = request.POST[issuetokens.FIELD]
        else:
            token = issuetokens.issue_token_new(request)
        context = {**(extra_context or {}), "issue_token_field": issuetokens.FIELD}
        context["issue_token"] = token
        return super().add_view(request, form_url, context)

    def response_add(
        self, request: HttpRequest, obj: ApiKey, post_url_continue: str | None = None
    ) -> HttpResponse:
        # The key is shown in this very response, never through a redirect (which would
        # carry it in a cookie or a stored message).
        return self._issued_page(request, self._issued.pop(request, None))

    def _issued_page(
        self, request: HttpRequest, issued: IssuedKey | None, *, status: int = 200
    ) -> HttpResponse:
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "API key issued" if issued else "No key issued",
            "issued": issued,
        }
        response = TemplateResponse(
            request, "admin/apikeys/apikey/issued.html", context, status=status
        )
        add_never_cache_headers(response)  # no-store: no cache or history keeps the key
        return response

    def has_delete_permission(self, request: HttpRequest, obj: ApiKey | None = None) -> bool:
        return False  # revoke instead: keeps the audit trail (created, last used)

    @admin.action(description="Revoke selected API keys")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        revoked = sum(api_key_revoke(api_key=key) for key in queryset)
        self.message_user(request, f"Revoked {revoked} API key(s).", messages.SUCCESS)
