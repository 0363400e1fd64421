"""What a key may do: the scope each operation names, checked against the key's own.

A view states the scope of each method (`BaseAPIView.scopes`, or `required_scope()` where
it is derived, as the domains API derives it from its role table). A key without it is
answered 403 `insufficient_scope` with RFC 6750's `WWW-Authenticate`; a method that names no
scope is refused to every key (fail closed), and tests/petstore/api/test_scopes.py checks
that every operation of the URL configuration names one.
"""

from __future__ import annotations

from typing import Any, Protocol

from django.http import HttpRequest
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from petstore.api.authentication import BearerKeyAuthentication
from petstore.api.exceptions import InsufficientScope
from petstore.apikeys.models import ApiKey


class ScopedView(Protocol):
    def required_scope(self, request: Request) -> str | None: ...


class KeyScopes(BasePermission):
    def has_permission(self, request: Request | HttpRequest, view: Any) -> bool:
        # Also called with Django's own request (listPets' hot path): method and auth only.
        key = getattr(request, "auth", None)
        method = (request.method or "").lower()
        if not isinstance(key, ApiKey) or method == "options" or not hasattr(view, method):
            # IsAuthenticated has answered already; OPTIONS changes nothing; a method the
            # view does not have is DRF's 405.
            return True
        scope = view.required_scope(request)
        if scope is None:
            return False  # -> 403 forbidden: the operation names no scope
        if not key.has_scope(scope):
            raise InsufficientScope(scope, BearerKeyAuthentication.www_authenticate_realm)
        return True
