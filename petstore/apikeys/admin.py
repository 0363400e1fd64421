from __future__ import annotations

import secrets
from typing import Any
from weakref import WeakKeyDictionary

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.cache import add_never_cache_headers

from petstore.apikeys.models import ApiKey
from petstore.apikeys.services import IssuedKey, api_key_issue, api_key_revoke

# The add form's one-time tokens in the admin's session: a form sent twice (a reload of the
# page that showed a key resubmits it) issues no second key and shows none.
ISSUE_TOKENS_SESSION_KEY = "apikeys:issue-tokens"
ISSUE_TOKEN_FIELD = "issue_token"
_ISSUE_TOKENS_KEPT = 20  # add forms open at once in one session


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
    add_form_template = "admin/apikeys/apikey/add_form.html"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The key issued by a request, from save_model to response_add: held in memory for
        # the request only, never in a cookie, a message or the session.
        self._issued: WeakKeyDictionary[HttpRequest, IssuedKey] = WeakKeyDictionary()

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
        self._issued[request] = issued
        tokens = _issue_tokens(request)
        if (token := request.POST.get(ISSUE_TOKEN_FIELD)) in tokens:
            tokens.remove(token)  # spent: the same form sent again issues nothing
            request.session.modified = True

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """The add form carries a one-time token; a form whose token was used (sent again)
        or is unknown issues nothing and says so."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        tokens = _issue_tokens(request)
        if request.method == "POST":
            token = request.POST.get(ISSUE_TOKEN_FIELD, "")
            if token not in tokens:
                return self._issued_page(request, None, status=409)
        else:
            token = secrets.token_urlsafe(16)
            tokens[:] = [*tokens[-(_ISSUE_TOKENS_KEPT - 1) :], token]
            request.session.modified = True
        context = {**(extra_context or {}), "issue_token_field": ISSUE_TOKEN_FIELD}
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


def _issue_tokens(request: HttpRequest) -> list[str]:
    tokens: list[str] = request.session.setdefault(ISSUE_TOKENS_SESSION_KEY, [])
    return tokens
