"""The current password, asked again before what would let a session's holder keep the
account: the owner's address and the password itself.

A session cookie alone (taken from a browser, a shared computer or a copy of the sessions
table) opens the dashboard, but it does not say that its holder knows the password. The
session records when the password was last typed in it (at sign-in, on a form that asks
for it, on the password change); for REAUTHENTICATION_WINDOW after that the forms that
ask for it do not ask again, as GitHub's "sudo mode" does, so an owner who just signed in
is not asked twice.

The password is checked by `authenticate()`, so a wrong one is a failed sign-in: counted
and locked out by the sign-in limits (petstore/http/signin.py) exactly as on the sign-in
form, and a session's holder cannot guess the password here any faster than there.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from django import forms
from django.contrib.auth import authenticate
from django.contrib.auth import forms as auth_forms
from django.core.exceptions import ValidationError
from django.http import HttpRequest
from django.utils.text import format_lazy
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

# How long a typed password vouches for its session.
REAUTHENTICATION_WINDOW = timedelta(minutes=5)
# When the password was last typed in this session, in seconds since the epoch.
TYPED_AT = "petstore.password_typed_at"


def password_typed(request: HttpRequest) -> None:
    """The password was typed in this request: the window starts again."""
    request.session[TYPED_AT] = time.time()


def recently_typed(request: HttpRequest) -> bool:
    """Whether the password was typed in this session within the window."""
    typed_at = request.session.get(TYPED_AT)
    if not isinstance(typed_at, int | float):
        return False
    return 0 <= time.time() - typed_at < REAUTHENTICATION_WINDOW.total_seconds()


def password_check(request: HttpRequest, password: str) -> bool:
    """Whether `password` is the signed-in user's. A wrong one is a failed sign-in of that
    user from this client (counted, and a lock-out answered 429 by Axes' middleware); a
    right one starts the window."""
    user = request.user
    if not user.is_authenticated or not password:
        return False
    found = authenticate(request, username=user.get_username(), password=password)
    if found is None or found.pk != user.pk:
        return False
    password_typed(request)
    return True


def window_minutes() -> int:
    return int(REAUTHENTICATION_WINDOW.total_seconds() // 60)


class CurrentPasswordForm(forms.Form):
    """A form that asks for the current password, unless it was typed in this session
    within the window (then the field is not there at all)."""

    current_password = forms.CharField(
        label=gettext_lazy("Current password"),
        strip=False,
        required=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
        help_text=format_lazy(
            gettext_lazy(
                "Asked again after {minutes} minutes: a session taken from your browser "
                "should not be enough to do this."
            ),
            minutes=window_minutes(),
        ),
    )

    def __init__(self, *args: Any, request: HttpRequest, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.request = request
        if recently_typed(request):
            del self.fields["current_password"]

    def clean_current_password(self) -> str:
        password = self.cleaned_data.get("current_password") or ""
        if not password:
            raise ValidationError(
                _("Type your current password to make this change."), code="password_required"
            )
        if not password_check(self.request, password):
            raise ValidationError(
                _("That is not your current password."), code="password_incorrect"
            )
        return ""  # checked; kept nowhere


class PasswordChangeForm(auth_forms.PasswordChangeForm):
    """Django's form, with the old password checked through `password_check`: counted by
    the sign-in limits, where Django's own form checks it unthrottled."""

    def __init__(self, user: Any, *args: Any, request: HttpRequest, **kwargs: Any) -> None:
        super().__init__(user, *args, **kwargs)
        self.request = request

    def clean_old_password(self) -> str:
        old_password = self.cleaned_data["old_password"]
        if not password_check(self.request, old_password):
            raise ValidationError(
                self.error_messages["password_incorrect"], code="password_incorrect"
            )
        return old_password
