"""Sign-in with a limit on failed attempts.

Failed attempts are counted in the shared cache per client address and per
(address, username); past the limit the form answers 429 with a message on the
form until the window passes. A successful sign-in clears the per-user count.

When the cache (Redis) cannot be reached the limit fails open, as the API's
rate limits do: owners can still sign in (passwords are still checked), and a
warning is logged. Refusing every sign-in would turn a cache outage into a
dashboard outage.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth.views import LoginView
from django.core.cache import cache

from petstore.http.clientaddress import client_address

log = logging.getLogger(__name__)


def _cache_call(action, *args, **kwargs):
    """Run a cache operation; on a cache outage log it and return None (fail open)."""
    try:
        return action(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - any backend error (connection refused, timeout)
        log.warning("Sign-in limit not applied, cache unavailable: %s", type(exc).__name__)
        return None


class ThrottledLoginView(LoginView):
    def _keys(self) -> list[str]:
        address = client_address(self.request)
        username = self.request.POST.get("username", "").strip().lower()[:150]
        return [f"signin:addr:{address}", f"signin:user:{address}:{username}"]

    def _blocked(self) -> bool:
        address_key, user_key = self._keys()
        counts = _cache_call(cache.get_many, [address_key, user_key]) or {}
        return (
            counts.get(address_key, 0) >= settings.SIGNIN_MAX_ATTEMPTS_PER_ADDRESS
            or counts.get(user_key, 0) >= settings.SIGNIN_MAX_ATTEMPTS
        )

    def post(self, request, *args, **kwargs):
        if self._blocked():
            form = self.get_form()
            minutes = max(1, settings.SIGNIN_WINDOW // 60)
            form.add_error(
                None,
                f"Too many failed sign-in attempts. Wait {minutes} minutes and try again.",
            )
            return self.render_to_response(self.get_context_data(form=form), status=429)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        for key in self._keys():
            _cache_call(self._count_failure, key)
        return super().form_invalid(form)

    def form_valid(self, form):
        _cache_call(cache.delete, self._keys()[1])
        return super().form_valid(form)

    @staticmethod
    def _count_failure(key: str) -> None:
        cache.add(key, 0, timeout=settings.SIGNIN_WINDOW)
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout=settings.SIGNIN_WINDOW)
