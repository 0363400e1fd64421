"""Settings → API keys: the user's own keys (made, listed, revoked).

A new key is shown once, in the answer to the POST that made it, sent with no-store (never
in the session, a cookie or a message). The form carries a one-time token
(petstore/apikeys/issuetokens.py), so the same form sent again, as a reload of that answer
does, makes no second key and shows none. A key's scopes never exceed the user's role
(domains/services/keys.py decides), and a key is revoked only by its own user.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from domains.dashboard.forms import ApiKeyForm
from domains.models import Project
from domains.services import keys
from petstore.apikeys import issuetokens
from petstore.apikeys.models import ApiKey
from petstore.apikeys.services import IssuedKey

# The service's refusals, on the form field they are about.
_FIELD_OF_CODE = {
    "unknown_scope": "scopes",
    "key_scopes_empty": "scopes",
    "key_scope_not_allowed": "scopes",
    "key_lifetime": "days",
    "key_project": "project",
}


def _form(request, data: Any = None) -> ApiKeyForm:
    return ApiKeyForm(
        data,
        projects=Project.objects.for_member(request.user).order_by("name", "slug"),
        offered=keys.key_scopes_offered(user=request.user),
    )


def _page(
    request,
    form: ApiKeyForm,
    *,
    issued: IssuedKey | None = None,
    resent: bool = False,
    status: int = 200,
) -> HttpResponse:
    rows = (
        ApiKey.objects.active()
        .filter(user=request.user)
        .select_related("project_binding__project")
        .order_by("-created_at", "-pk")
    )
    context = {
        "form": form,
        "issue_token_field": issuetokens.FIELD,
        "issue_token": issuetokens.issue_token_new(request),
        "keys": [(key, getattr(key, "project_binding", None)) for key in rows],
        "issued": issued,
        "resent": resent,
        "now": timezone.now(),
    }
    response = render(request, "domains/api_keys.html", context, status=status)
    add_never_cache_headers(response)  # no-store: no cache or history keeps a key
    return response


@login_required
@require_http_methods(["GET", "POST"])
def api_keys(request):
    if request.method == "GET":
        return _page(request, _form(request))
    form = _form(request, request.POST)
    if not issuetokens.issue_token_open(request):
        # Sent again (a reload of the page that showed the key) or out of date.
        return _page(request, _form(request), resent=True, status=409)
    if form.is_valid():
        if not issuetokens.issue_token_spend(request):  # spent meanwhile: sent twice at once
            return _page(request, _form(request), resent=True, status=409)
        data = form.cleaned_data
        try:
            issued = keys.key_create(
                user=request.user,
                name=data["name"],
                project=data["project"],
                scopes=data["scopes"],
                days=data["days"],
            )
        except ValidationError as exc:
            form.add_error(_FIELD_OF_CODE.get(exc.error_list[0].code or ""), exc)
        else:
            return _page(request, _form(request), issued=issued)
    return _page(request, form, status=400)


@login_required
@require_http_methods(["GET", "POST"])
def api_key_revoke(request, pk: int):
    """A page that asks, and its POST that revokes: only the user's own active keys (any
    other is a 404)."""
    api_key = get_object_or_404(ApiKey.objects.active().filter(user=request.user), pk=pk)
    if request.method == "POST":
        keys.key_revoke(user=request.user, api_key=api_key)
        messages.success(
            request,
            _("API key %(prefix)s (%(name)s) revoked: it works no more.")
            % {"prefix": api_key.display_prefix, "name": api_key.name},
        )
        return redirect("dashboard:api_keys")
    return render(request, "domains/api_key_revoke.html", {"api_key": api_key})
