"""`Authorization: Bearer <key>` for every /v1 operation (rate limits: petstore.api.throttles,
the refused-key limit among them)."""

from __future__ import annotations

import ipaddress
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Q
from django.http import HttpRequest
from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from petstore.api.exceptions import KeyExpired
from petstore.api.throttles import FailedKeyThrottle
from petstore.apikeys import keycache
from petstore.apikeys.keyformat import hash_key, parse_key
from petstore.apikeys.models import ApiKey
from petstore.http.clientaddress import client_address

# last_used_at (with the client address, last_used_ip) is written at most once a minute per
# key: it answers "is this key still in use, and from where?" without turning every read
# into a write.
LAST_USED_RESOLUTION = timedelta(minutes=1)
# When this process last wrote last_used_at, per key prefix. The UPDATE itself is
# conditional, so several processes still write at most once a minute between them.
_last_touched: dict[str, datetime] = {}


class BearerKeyAuthentication(authentication.BaseAuthentication):
    """The key's row comes from petstore.apikeys.keycache (shared cache, then one lean query)."""

    keyword = "Bearer"
    www_authenticate_realm = "petstore"

    def authenticate(self, request: Request | HttpRequest) -> tuple[Any, ApiKey] | None:
        # Also called with Django's own request (listPets' hot path): only META is read.
        header = request.META.get("HTTP_AUTHORIZATION", "")
        scheme, _, token = header.partition(" ")
        if not header or scheme.lower() != self.keyword.lower():
            return None  # -> 401 "not provided" with WWW-Authenticate
        token = token.strip()
        parsed = parse_key(token) if token and " " not in token else None
        if parsed is None:
            raise exceptions.AuthenticationFailed("Malformed bearer token.")

        # Active keys of active users only, found by the whole key: a wrong secret for a
        # real prefix costs what an unknown prefix does (keycache.lookup). An address past
        # its refused keys is answered 429 before its key is looked up anywhere.
        failures = FailedKeyThrottle()
        key = keycache.lookup(
            parsed.prefix, hash_key(parsed.full), before_leaving=lambda: failures.check(request)
        )
        if key is None:
            failures.record(request)
            raise exceptions.AuthenticationFailed("Invalid or revoked API key.")
        if key.expires_at <= timezone.now():
            raise KeyExpired()
        self._touch(key, request)
        return key.user, key

    def authenticate_header(self, request: Request) -> str:
        return f'{self.keyword} realm="{self.www_authenticate_realm}"'

    @staticmethod
    def _touch(key: ApiKey, request: Request | HttpRequest) -> None:
        now = timezone.now()
        last = _last_touched.get(key.prefix)
        if last is not None and abs(now - last) < LAST_USED_RESOLUTION:
            return
        _last_touched[key.prefix] = now
        ApiKey.objects.filter(
            Q(last_used_at__isnull=True) | Q(last_used_at__lte=now - LAST_USED_RESOLUTION),
            pk=key.pk,
        ).update(last_used_at=now, last_used_ip=_address(request))


def _address(request: Request | HttpRequest) -> str | None:
    """The client's address as the column stores it; None when it is not an IP address."""
    try:
        return str(ipaddress.ip_address(client_address(request)))
    except ValueError:
        return None
