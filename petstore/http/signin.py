"""Limits on failed sign-ins, on every login form (the dashboard's and the admin's).

django-axes records each failed attempt in the database (visible to staff in
the admin under "Axes") and refuses further sign-ins once a count reaches its
limit, whatever the password. Three counts, each with its own limit, within
SIGNIN_WINDOW seconds of the latest failure:

- per (username, address), SIGNIN_MAX_ATTEMPTS: someone guessing one account;
- per address, SIGNIN_MAX_ATTEMPTS_PER_ADDRESS: one client trying many accounts;
- per username, SIGNIN_MAX_ATTEMPTS_PER_USERNAME: many addresses guessing one account.

Axes compares one number with one limit, so `SignInLimits.get_failures` reports
the tightest count on the scale of SIGNIN_MAX_ATTEMPTS (its AXES_FAILURE_LIMIT).
Attempts made while locked out are not counted (AXES_RESET_COOL_OFF_ON_FAILURE_
DURING_LOCKOUT off), so one client can add at most SIGNIN_MAX_ATTEMPTS to an
account's count: locking an owner out takes many addresses, not one stranger.
The address is petstore.http.clientaddress.client_address (NUM_PROXIES).

The counts live in the database, not the cache: a Redis outage changes nothing here.
"""

from __future__ import annotations

from datetime import timedelta

from axes.handlers.database import AxesDatabaseHandler
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _


def _limits() -> list[int]:
    """One limit per count, in the order of settings.AXES_LOCKOUT_PARAMETERS."""
    return [
        settings.SIGNIN_MAX_ATTEMPTS,
        settings.SIGNIN_MAX_ATTEMPTS_PER_ADDRESS,
        settings.SIGNIN_MAX_ATTEMPTS_PER_USERNAME,
    ]


def failure_limit(request: HttpRequest, credentials: dict | None) -> int:
    return settings.SIGNIN_MAX_ATTEMPTS


def window(request: HttpRequest | None) -> timedelta:
    return timedelta(seconds=settings.SIGNIN_WINDOW)


def username(request: HttpRequest, credentials: dict | None) -> str:
    """The name the counts use: as typed, trimmed and lower-cased ("Alice " is alice)."""
    raw = (credentials or {}).get("username") or request.POST.get("username", "")
    return str(raw).strip().lower()[:150]


class SignInLimits(AxesDatabaseHandler):
    def get_failures(self, request, credentials: dict | None = None) -> int:
        """SIGNIN_MAX_ATTEMPTS minus the attempts left on the count closest to its limit."""
        counts = [
            attempts.aggregate(total=Sum("failures_since_start"))["total"] or 0
            for attempts in self.get_user_attempts(request, credentials)
        ]
        left = min(limit - count for limit, count in zip(_limits(), counts, strict=True))
        return settings.SIGNIN_MAX_ATTEMPTS - left

    def reset_user_attempts(self, request, credentials: dict | None = None) -> int:
        """A successful sign-in clears that user's failures from that address only:
        clearing the address's or the username's whole count would let someone who
        owns one account wipe the failures they made guessing others."""
        deleted, _ = AccessAttempt.objects.filter(
            username=username(request, credentials), ip_address=request.axes_ip_address
        ).delete()
        return deleted


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None, credentials: dict | None
) -> HttpResponse:
    """The sign-in form again (dashboard or admin), its message saying why, with a 429."""
    minutes = max(1, settings.SIGNIN_WINDOW // 60)
    message = _("Too many failed sign-in attempts. Wait %(minutes)d minutes and try again.") % {
        "minutes": minutes
    }
    context = getattr(original_response, "context_data", None)
    if not isinstance(original_response, TemplateResponse) or not context or "form" not in context:
        return HttpResponse(message, status=429, content_type="text/plain; charset=utf-8")
    form = context["form"]
    form.errors.clear()  # not "wrong password": the password was never checked
    form.add_error(None, message)
    # Rendered now: Axes' middleware runs after the template responses are rendered.
    return TemplateResponse(request, original_response.template_name, context, status=429).render()
